import { createHash } from 'node:crypto';

/**
 * Stream names of the access aggregates, and of the reservation streams that make values unique across
 * aggregates (DESIGN.md: reserve in a dedicated stream appended with the expectation "no stream").
 *
 * Reservation streams are named by a SHA-256 of the normalised value, so e-mail addresses and host names
 * (personal or not yet public data) do not appear in stream names, and any character is safe.
 */
export const tenantStream = (tenantId: string): string => `tenant-${tenantId}`;
export const projectStream = (projectId: string): string => `project-${projectId}`;
export const userStream = (userId: string): string => `user-${userId}`;
/** All agent and public keys of one project: one stream, so the one-active-key rule holds under concurrency. */
export const projectKeysStream = (projectId: string): string => `project-keys-${projectId}`;

/** Reserve before user.created: an e-mail address belongs to one user in the whole system. */
export const userEmailReservationStream = (normalisedEmail: string): string => `reservation-user-email-${digest(normalisedEmail)}`;
/** Reserve before project.created: a project slug is unique in the whole system (it names the hosted contact pages). */
export const projectSlugReservationStream = (slug: string): string => `reservation-project-slug-${digest(slug)}`;
/** Reserve each added domain before project.domains-changed: a host resolves to one project only. */
export const customDomainReservationStream = (hostname: string): string => `reservation-custom-domain-${digest(hostname)}`;

function digest(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

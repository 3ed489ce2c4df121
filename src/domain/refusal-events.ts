import { z } from 'zod';
import { defineEvent } from '../event-store/event-catalog.ts';
import { APPROVAL_RULES } from './approval-policy.ts';

/**
 * Refused writes, for the audit trail: a write the caller's role, its agent key's scope or the project's approval
 * policy refused (403 FORBIDDEN, HUMAN_APPROVAL_REQUIRED, FOUR_EYES_REQUIRED). The actor in the metadata is the
 * one refused.
 *
 * Aggregated, so that a flood of refusals cannot bloat the log (src/application/refusal-recorder.ts): per actor,
 * operation and code, the first refusal of a window is appended at once (`repeated: false`, count 1), and the
 * further ones of that window are counted and appended as one event when it ends (`repeated: true`, count n,
 * with the times of the first and last of them and up to ten of the subjects they named).
 *
 * Streams: the first refusal of a window about an entry the service loaded goes to that entry's stream (its
 * history shows it); every other to `write-refusals-{projectId}`, or `write-refusals-tenant-{tenantId}` for a
 * write that acted in no project (a member invitation without X-Project-Id).
 */
export const projectRefusalsStream = (projectId: string): string => `write-refusals-${projectId}`;
export const tenantRefusalsStream = (tenantId: string): string => `write-refusals-tenant-${tenantId}`;

export const REFUSAL_CODES = ['FORBIDDEN', 'HUMAN_APPROVAL_REQUIRED', 'FOUR_EYES_REQUIRED'] as const;
export type RefusalCode = (typeof REFUSAL_CODES)[number];
/** role: a console session's role; scope: an agent key's scope (or what no key may do); policy: the approval policy. */
export const REFUSAL_REASONS = ['role', 'scope', 'policy'] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

const id = z.uuid();
const instant = z.iso.datetime({ precision: 3 });

/** What a refusal was about: ids only, as the service loaded them or the request named them. */
export const refusalSubjectSchema = z.object({
  entryId: id.optional(),
  formSetId: id.optional(),
  revisionId: id.optional(),
  revision: z.int().positive().optional(),
  masterId: id.optional(),
  assetId: id.optional(),
  contactFormId: id.optional(),
});

export const MAX_REFUSAL_SUBJECTS = 10;

export const writeRefused = defineEvent({
  type: 'write.refused',
  version: 1,
  schema: z.object({
    tenantId: id,
    /** The project the write acted in; absent for a write that acted in none. */
    projectId: id.optional(),
    /** The admin API operation (its operationId, e.g. publishRevision, setApprovalPolicy). */
    operation: z.string().min(1).max(100),
    code: z.enum(REFUSAL_CODES),
    reason: z.enum(REFUSAL_REASONS),
    /** With reason policy: the rule that refused. */
    rule: z.enum(APPROVAL_RULES).optional(),
    /** The first refusal's message, as the caller got it. */
    message: z.string().min(1).max(2000),
    /** What the first refusal was about. */
    subject: refusalSubjectSchema.optional(),
    /** With repeated: the distinct subjects the counted refusals named (at most ten). */
    subjects: z.array(refusalSubjectSchema).max(MAX_REFUSAL_SUBJECTS).optional(),
    /** How many refusals this event stands for: 1 for the first of a window. */
    count: z.int().positive(),
    /** When the first and the last of them were refused. */
    firstAt: instant,
    lastAt: instant,
    /** false: the first refusal of its window, appended at once; true: the further refusals of the window, counted. */
    repeated: z.boolean(),
  }),
});

export type WriteRefused = z.output<typeof writeRefused.schema>;

export const refusalEvents = [writeRefused];

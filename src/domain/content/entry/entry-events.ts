import { z } from 'zod';
import { defineEvent, type EventDefinition } from '../../../event-store/event-catalog.ts';
import type { DomainEvent } from '../../decider.ts';
import { SLUG_MAX_LENGTH, SLUG_PATTERN } from './slug.ts';
import { EXTERNAL_ID_MAX, ENTITY_TYPE_MAX, IMPORT_PATH_MAX, SOURCE_TYPE_MAX } from './import-metadata.ts';
import { APPROVAL_RULES } from '../../approval-policy.ts';

/**
 * The events of one entry's life: creation, revisions (each holding the full snapshot), the approval
 * workflow of spec section 3, renames, import metadata, assignment and deletion. All of an entry's
 * events live in one stream, `entry-${entryId}`, and every event carries entryId, projectId and
 * formSetId, so a projection can file it without reading any other stream.
 */
export const entryStream = (entryId: string): string => `entry-${entryId}`;

const id = z.string().uuid();
/** UTC, ISO 8601 with milliseconds: 2026-11-22T10:15:30.123Z. */
const instant = z.iso.datetime({ precision: 3 });
const revisionNumber = z.number().int().positive();
const scope = { entryId: id, projectId: id, formSetId: id };
const revisionRef = { revisionId: id, revision: revisionNumber };
const slug = z.string().min(1).max(SLUG_MAX_LENGTH).regex(SLUG_PATTERN);

/** Field values keyed by field key; per-locale fields hold an object keyed by locale. */
export const snapshotSchema = z.record(z.string(), z.unknown());
export type Snapshot = z.infer<typeof snapshotSchema>;

export const externalIdentitySchema = z.object({
  sourceType: z.string().min(1).max(SOURCE_TYPE_MAX).optional(),
  entityType: z.string().min(1).max(ENTITY_TYPE_MAX).optional(),
  externalId: z.string().min(1).max(EXTERNAL_ID_MAX),
});
export type ExternalIdentity = z.infer<typeof externalIdentitySchema>;

const importPath = z.string().min(1).max(IMPORT_PATH_MAX);

/** A new entry. Its first revision, if it has content, follows as entry.revision-saved in the same append. */
export const entryCreated = defineEvent({
  type: 'entry.created',
  version: 1,
  schema: z.object({
    ...scope,
    slug,
    importPath: importPath.optional(),
    external: externalIdentitySchema.optional(),
    /** Set when the entry is a duplicate: the source entry and the revision whose values were copied. */
    duplicatedFrom: z.object({ entryId: id, revisionId: id.optional(), revision: revisionNumber.optional() }).optional(),
  }),
});

/** A save: a new revision, always status draft, holding the full snapshot. */
export const entryRevisionSaved = defineEvent({
  type: 'entry.revision-saved',
  version: 1,
  schema: z.object({
    ...scope,
    ...revisionRef,
    snapshot: snapshotSchema,
    savedAt: instant,
    /** Set when the revision restores an older one's snapshot. */
    restoredFrom: z.object(revisionRef).optional(),
  }),
});

/** draft -> pending_review. */
export const entryRevisionSubmitted = defineEvent({
  type: 'entry.revision-submitted',
  version: 1,
  schema: z.object({ ...scope, ...revisionRef }),
});

/**
 * What an approval records of the project's approval policy (absent on approvals recorded before it was): the
 * policy in force, and the rules of the project's usual policy (each rule on once it has been on) that were off
 * at the time and would have refused this approval: the audit log's flag for an approval made while a rule was off.
 */
const approvalPolicyRecord = {
  policyInForce: z.object({ humanApproval: z.boolean(), fourEyes: z.boolean() }).optional(),
  wouldHaveBeenRefusedBy: z.array(z.enum(APPROVAL_RULES)).min(1).optional(),
};

/** pending_review -> scheduled: approved with a publish date; the scheduled job publishes it once publishAt has passed. */
export const entryRevisionApproved = defineEvent({
  type: 'entry.revision-approved',
  version: 1,
  schema: z.object({ ...scope, ...revisionRef, publishAt: instant, ...approvalPolicyRecord }),
});

export const PUBLISH_TRIGGERS = ['approve', 'publish', 'schedule'] as const;
export type PublishTrigger = (typeof PUBLISH_TRIGGERS)[number];

/**
 * The revision goes live. `supersedes` names the revision that was live until now and is superseded by
 * this event (no separate event): present means the spec's entry.updated, absent entry.published.
 */
export const entryRevisionPublished = defineEvent({
  type: 'entry.revision-published',
  version: 1,
  schema: z.object({
    ...scope,
    ...revisionRef,
    publishedAt: instant,
    trigger: z.enum(PUBLISH_TRIGGERS),
    supersedes: id.optional(),
    /** With trigger schedule: the publish time the revision was approved for (publishedAt may lag it). */
    publishAt: instant.optional(),
    ...approvalPolicyRecord,
  }),
});

const inFlight = z.enum(['pending_review', 'scheduled']);

/**
 * pending_review or scheduled -> rejected (a scheduled publish is cancelled). `rule`: the rule of the approval
 * policy in force at the publish time that refused the approval of a scheduled revision (the scheduled job
 * rejects it instead of publishing it; the reason says why).
 */
export const entryRevisionRejected = defineEvent({
  type: 'entry.revision-rejected',
  version: 1,
  schema: z.object({ ...scope, ...revisionRef, from: inFlight, reason: z.string().min(1).max(2000).optional(), rule: z.enum(APPROVAL_RULES).optional() }),
});

/** pending_review or scheduled -> draft (a scheduled publish is cancelled). */
export const entryRevisionWithdrawn = defineEvent({
  type: 'entry.revision-withdrawn',
  version: 1,
  schema: z.object({ ...scope, ...revisionRef, from: inFlight }),
});

/** rejected -> draft. */
export const entryRevisionReopened = defineEvent({
  type: 'entry.revision-reopened',
  version: 1,
  schema: z.object({ ...scope, ...revisionRef }),
});

/** The slug changed; `from` keeps answering with a 301 to `to`. */
export const entrySlugChanged = defineEvent({
  type: 'entry.slug-changed',
  version: 1,
  schema: z.object({ ...scope, from: slug, to: slug }),
});

/** The entry's import metadata as a whole after the change (null: none). */
export const entryImportMetadataSet = defineEvent({
  type: 'entry.import-metadata-set',
  version: 1,
  schema: z.object({ ...scope, importPath: importPath.nullable(), external: externalIdentitySchema.nullable() }),
});

/** Assigned to a user for review (Business plan and above); null unassigns. */
export const entryAssigned = defineEvent({
  type: 'entry.assigned',
  version: 1,
  schema: z.object({ ...scope, userId: z.string().min(1).max(200).nullable() }),
});

/**
 * The entry is gone: its revisions and snapshots leave every read model and the public API answers 404.
 * Carries the slugs (current and former) so their reservations can be released without another read.
 */
export const entryDeleted = defineEvent({
  type: 'entry.deleted',
  version: 1,
  schema: z.object({ ...scope, slug, previousSlugs: z.array(slug) }),
});

export { APPROVAL_RULES, type ApprovalRule } from '../../approval-policy.ts';

/**
 * An approval or publication the project's approval policy refused (the decider's HUMAN_APPROVAL_REQUIRED or
 * FOUR_EYES_REQUIRED), recorded on the entry's stream for the audit trail; the actor is the one refused. It
 * changes nothing: no projection of content folds it, and it is not one of `entryEvents`. Written by versions
 * before refusals were recorded as `write.refused` (src/domain/refusal-events.ts); kept to read their history.
 */
export const entryRevisionApprovalRefused = defineEvent({
  type: 'entry.revision-approval-refused',
  version: 1,
  schema: z.object({ ...scope, ...revisionRef, action: z.enum(['approve', 'publish']), rule: z.enum(APPROVAL_RULES), message: z.string().min(1).max(2000) }),
});

export const entryEvents = [
  entryCreated,
  entryRevisionSaved,
  entryRevisionSubmitted,
  entryRevisionApproved,
  entryRevisionPublished,
  entryRevisionRejected,
  entryRevisionWithdrawn,
  entryRevisionReopened,
  entrySlugChanged,
  entryImportMetadataSet,
  entryAssigned,
  entryDeleted,
];

type EventOf<D> = D extends EventDefinition<infer Type, infer Data> ? DomainEvent<Type, Data> : never;
/** Any entry event, discriminated by type. */
export type EntryEvent = EventOf<(typeof entryEvents)[number]>;
export type EntryEventType = EntryEvent['type'];
export type EntryEventOf<T extends EntryEventType> = Extract<EntryEvent, { type: T }>;

/**
 * The snapshot an event read back by position carries when it is the entry.revision-saved a read model names
 * (a revision's save: content's StoredRevisionDoc.snapshotAt, public content's SnapshotRef); undefined for
 * anything else, which the reader reports as a read model that does not match its log.
 */
export function savedSnapshot(event: { type: string; data: unknown } | null | undefined): Snapshot | undefined {
  if (event?.type !== entryRevisionSaved.type) return undefined;
  return (event.data as { snapshot?: Snapshot } | null)?.snapshot;
}

import type { Plan } from '../domain/plans.ts';
import type { ApprovalPolicy } from '../domain/access/project-decider.ts';
import type { AuditFlag } from '../audit/audit-flags.ts';
import type { AuditRecord } from '../audit/audit-record.ts';
import type { InReviewStatus, RevisionStatus } from '../domain/content/entry/entry-workflow.ts';
import type { ContentLocales } from '../domain/content/form-set/locale-code.ts';
import type { ENTRY_LIST_SORTS, FormSetDoc } from '../../projections/content.ts';
import type { PageRequest } from './keyset-page.ts';

/*
 * What the content use cases take and answer: the project a request acts in, form sets, revisions and entry
 * heads as the read models hold them, the lists' queries, and the audit trail's records as history items.
 */

/** The project a request acts in, as the access read model holds it. */
export interface ProjectView {
  projectId: string;
  tenantId: string;
  plan: Plan;
  contentLocales: ContentLocales;
  /** Absent on documents folded before approval policies existed (then both rules are off). */
  approvalPolicy?: ApprovalPolicy | undefined;
  /** Each rule on once it has been on in the project (absent: as approvalPolicy); see ProjectDoc in projections/access.ts. */
  usualApprovalPolicy?: ApprovalPolicy | undefined;
}

/** A form set as the admin API reads it: the content read model's document without its times. */
export type FormSetView = Pick<FormSetDoc, 'formSetId' | 'projectId' | 'slug' | 'name' | 'description' | 'definition' | 'version'>;

export interface RevisionView {
  revisionId: string;
  entryId: string;
  projectId: string;
  formSetId: string;
  revision: number;
  status: string;
  snapshot: Record<string, unknown>;
  savedAt: string;
  publishAt: string | null;
  publishedAt: string | null;
}

/** What a save reads of the entry's read-model document. */
export interface EntryDocHead {
  entryId: string;
  formSetId: string;
  projectId: string;
  latestRevision?: { revisionId: string; revision?: number } | null;
}

export type RevisionAction = 'submit' | 'approve' | 'reject' | 'withdraw' | 'reopen' | 'publish';

/** One revision's outcome in a bulk schedule: never hidden, each answered on its own. */
export type BulkScheduleResult =
  | { revisionId: string; ok: true; entryId: string; revision: number; status: string; publishAt: string | null }
  | { revisionId: string; ok: false; error: { code: string; message: string; hint?: string } };

/** One event of an entry's history, as the audit trail holds it. */
export interface HistoryItem {
  position: string;
  eventId: string;
  type: string;
  /** A human name for the event: created, revision saved, submitted for review, ... */
  kind: string;
  actor: { type: string; id: string };
  occurredAt: string;
  revisionId: string | null;
  revision: number | null;
  /** entry.revision-saved of a restore: the older revision whose values it brought back; null otherwise. */
  restoredFrom: { revisionId: string; revision: number } | null;
  /** What the audit log flags of the event (src/audit/audit-flags.ts), when anything. */
  flag?: AuditFlag;
  /** A refused write: the operation, code, reason, rule and how many refusals the record stands for. */
  refusal?: RefusalRecord;
}

export interface RefusalRecord {
  operation: string;
  code: string;
  reason: string;
  rule?: string;
  count: number;
  repeated: boolean;
  firstAt: string;
  lastAt: string;
}

export interface AuditLogQuery extends PageRequest {
  actor?: string | undefined;
  entryId?: string | undefined;
  /** Inclusive lower bound, UTC ISO. */
  from?: string | undefined;
  /** Exclusive upper bound, UTC ISO. */
  to?: string | undefined;
}

/** The entry list's filters and sort (all optional): see listEntries. */
export interface EntryListQuery extends PageRequest {
  status?: RevisionStatus | undefined;
  assignee?: string | undefined;
  updatedBy?: string | undefined;
  /** Inclusive lower bound, UTC ISO. */
  updatedFrom?: string | undefined;
  /** Exclusive upper bound, UTC ISO. */
  updatedTo?: string | undefined;
  q?: string | undefined;
  sort: `${keyof typeof ENTRY_LIST_SORTS}:${'asc' | 'desc'}`;
}

export interface ReviewQueueQuery extends PageRequest {
  assignee?: string | undefined;
  formSetId?: string | undefined;
  status?: InReviewStatus | undefined;
}

/** Audit-trail record kinds, by event type; other events show their type. */
const EVENT_KINDS: Record<string, string> = {
  'entry.created': 'created',
  'entry.revision-saved': 'revision saved',
  'entry.revision-submitted': 'submitted for review',
  'entry.revision-approved': 'approved and scheduled',
  'entry.revision-published': 'published',
  'entry.revision-rejected': 'rejected',
  'entry.revision-withdrawn': 'withdrawn',
  'entry.revision-reopened': 'reopened',
  'entry.slug-changed': 'slug changed',
  'entry.import-metadata-set': 'import metadata set',
  'entry.assigned': 'assigned',
  'entry.deleted': 'deleted',
  'entry.revision-approval-refused': 'approval refused by the approval policy',
  'write.refused': 'write refused',
};

export function eventKind(type: string): string {
  return EVENT_KINDS[type] ?? type;
}

export function historyItem(record: AuditRecord): HistoryItem {
  const type = record.type;
  return {
    position: record.position,
    eventId: record.eventId,
    type,
    kind: eventKind(type),
    actor: record.actor,
    occurredAt: record.occurredAt,
    revisionId: record.subject?.revisionId ?? null,
    revision: record.subject?.revision ?? null,
    restoredFrom: record.restoredFrom ?? null,
    ...(record.flag ? { flag: record.flag } : {}),
    ...(record.refusal ? { refusal: record.refusal as unknown as RefusalRecord } : {}),
  };
}

/**
 * The entry aggregate's commands and the context a decision is made in (see entry-decider.ts).
 */
import type { ApprovalPolicy } from '../../access/project-decider.ts';
import type { KeyIssuers } from '../../access/people.ts';
import type { Plan } from '../../plans.ts';
import type { ExternalIdentity, Snapshot } from './entry-events.ts';
import type { RecordedRevision } from './entry-state.ts';
import type { EntryPrincipal } from './entry-workflow.ts';
import type { TimeInput } from './utc-instant.ts';

export interface EntryContext {
  principal: EntryPrincipal;
  plan: Plan;
  /**
   * The project's approval policy; absent: both rules off (the spec's behaviour), and approval events record
   * nothing of it. Given: every approval event records it (policyInForce).
   */
  approvalPolicy?: ApprovalPolicy;
  /**
   * The project's usual policy: each rule on once it has been on in the project (default: approvalPolicy). An
   * approval a rule of it would have refused, made while that rule was off, records it (wouldHaveBeenRefusedBy).
   */
  usualApprovalPolicy?: ApprovalPolicy;
  /** Who issued each of the project's agent keys: four eyes compares people, and a key acts for its issuer. */
  keyIssuers?: KeyIssuers;
  /** The command's time: savedAt and publishedAt, and "has publishAt passed". */
  now: Date;
}

export interface CreateEntry {
  type: 'create';
  entryId: string;
  projectId: string;
  formSetId: string;
  slug: string;
  /** The first revision's id and field values (already validated against the form set). */
  initialRevision?: { revisionId: string; snapshot: Snapshot };
  importPath?: string;
  external?: ExternalIdentity;
  duplicatedFrom?: { entryId: string; revisionId?: string; revision?: number };
}

export interface SaveRevision {
  type: 'saveRevision';
  entryId: string;
  /** Id of the new revision. */
  revisionId: string;
  /** Full field values, already validated against the form set by the caller. */
  snapshot: Snapshot;
  /** The revision number the edit was based on; REVISION_CONFLICT when a newer revision exists. */
  expectedRevision?: number;
}

export interface RestoreRevision {
  type: 'restoreRevision';
  entryId: string;
  /** Id of the new revision. */
  revisionId: string;
  /** The old revision whose snapshot becomes the new draft. */
  fromRevisionId: string;
  /** That revision as recorded, when it is not the latest (the aggregate holds only the latest snapshot). */
  source?: { revision: number; snapshot: Snapshot };
  expectedRevision?: number;
}

/** A workflow trigger aimed at one revision. `revision`, when given, must be that revision's number. */
export interface RevisionCommand {
  entryId: string;
  revisionId: string;
  revision?: number;
  /** The named revision as recorded, when it may be an older one (see RecordedRevision). */
  recorded?: RecordedRevision;
}

export interface SubmitForReview extends RevisionCommand {
  type: 'submitForReview';
}
export interface Approve extends RevisionCommand {
  type: 'approve';
  /** Absent: publish now. Present: schedule for that time (must be after context.now). */
  publishAt?: TimeInput;
}
/** POST /revisions/{revisionId}/publish: id and number as save_revision returned them. */
export interface Publish extends RevisionCommand {
  type: 'publish';
  revision: number;
}
export interface Reject extends RevisionCommand {
  type: 'reject';
  reason?: string;
}
export interface Withdraw extends RevisionCommand {
  type: 'withdraw';
}
export interface Reopen extends RevisionCommand {
  type: 'reopen';
}
/** The scheduled publishing job. With revisionId, only that revision may be published. */
export interface PublishScheduled {
  type: 'publishScheduled';
  entryId: string;
  revisionId?: string;
}
export interface Rename {
  type: 'rename';
  entryId: string;
  slug: string;
}
/** Replaces what is given: undefined keeps the current value, null clears it. */
export interface SetImportMetadata {
  type: 'setImportMetadata';
  entryId: string;
  importPath?: string | null;
  external?: ExternalIdentity | null;
}
export interface Assign {
  type: 'assign';
  entryId: string;
  userId: string | null;
}
export interface DeleteEntry {
  type: 'delete';
  entryId: string;
}

export type EntryCommand =
  | CreateEntry
  | SaveRevision
  | RestoreRevision
  | SubmitForReview
  | Approve
  | Publish
  | Reject
  | Withdraw
  | Reopen
  | PublishScheduled
  | Rename
  | SetImportMetadata
  | Assign
  | DeleteEntry;

export const REJECTION_REASON_MAX = 2000;

/**
 * The entry aggregate's state (see entry-decider.ts): bounded whatever the length of the history, it holds the
 * entry's identity, its latest revision in full and a reference to the live one.
 */
import type { EventActor } from '../../decider.ts';
import type { ExternalIdentity, Snapshot } from './entry-events.ts';
import type { RevisionStatus } from './entry-workflow.ts';

export interface RevisionRef {
  revisionId: string;
  revision: number;
}

export interface RevisionState extends RevisionRef {
  status: RevisionStatus;
  snapshot: Snapshot;
  /** The revision's updatedAt. */
  savedAt: string;
  /** Set while scheduled, kept once published by the job. */
  publishAt: string | null;
  publishedAt: string | null;
  restoredFrom: RevisionRef | null;
  rejectionReason: string | null;
  /** Who saved it (its last editor: a revision is never edited after its save). Null when unknown. */
  savedBy: EventActor | null;
  /** Who submitted it for review, while it is pending_review or scheduled (and after it was published). */
  submittedBy: EventActor | null;
  /** Who approved it for a publish time, while it is scheduled (and after the job published it). */
  approvedBy: EventActor | null;
}

export interface ExistingEntry {
  exists: true;
  /** A deleted entry refuses every command with NOT_FOUND. */
  deleted: boolean;
  entryId: string;
  projectId: string;
  formSetId: string;
  slug: string;
  /** Former slugs, oldest first, each answered with a 301 to the current one. Never holds the current slug. */
  previousSlugs: string[];
  importPath: string | null;
  external: ExternalIdentity | null;
  duplicatedFrom: { entryId: string; revisionId?: string | undefined; revision?: number | undefined } | null;
  assignee: string | null;
  /** How many revisions the entry has: the latest revision's number (0 before the first save). */
  revisionCount: number;
  /** The newest revision, whatever its status, with its snapshot. */
  latest: RevisionState | null;
  /** The revision in status published (what the public API serves), if any. */
  live: LiveRevision | null;
}

export interface LiveRevision extends RevisionRef {
  publishedAt: string;
}

/**
 * A revision that is neither the entry's latest nor its live one, as the caller read it (the admin read
 * model's revision document, checked to belong to the entry). The aggregate keeps no older revisions.
 */
export interface RecordedRevision extends RevisionRef {
  status: RevisionStatus;
}

export type EntryState = { exists: false } | ExistingEntry;

/**
 * The version of EntryState's shape and of what evolve folds into it, kept with stored snapshots of it
 * (AggregateSnapshots): raise it with any change to either, and snapshots of the old shape are ignored.
 */
export const ENTRY_STATE_VERSION = 3;

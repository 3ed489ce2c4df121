/**
 * The entry aggregate: an entry, its revisions (each a full snapshot) and the approval workflow of spec
 * section 3. Pure: ids arrive in commands, time in the context.
 *
 * The state is bounded, whatever the length of the history: it holds the entry's identity, its latest
 * revision in full (every workflow trigger acts on it: only the latest revision moves) and a reference to
 * the live one. An older revision a command names is described by the command itself (`recorded`, from
 * the admin read model): the decision needs it only to tell "stale" (REVISION_CONFLICT) from "not this
 * entry's" (NOT_FOUND), and a restore takes the old snapshot from it. So folding, snapshotting and
 * caching an entry cost the same at 10 and at 10,000 revisions.
 *
 * Error codes:
 * - NOT_FOUND: the entry does not exist, was deleted (every command, for every caller), belongs to
 *   another project than the agent key's, or the revision id is not one of its revisions;
 * - FORBIDDEN: the caller may not pull the trigger (see ENTRY_PERMISSIONS), checked before any state;
 * - PLAN_REQUIRED: assigning below the Business plan;
 * - VALIDATION_ERROR: slug rules, import-metadata limits, publishAt, reason, revision number;
 * - REVISION_CONFLICT: only for a stale view: expectedRevision is not the latest number, the revision
 *   number sent does not match the revision id, or the revision named is not the entry's latest
 *   (superseded revisions, earlier drafts);
 * - CONFLICT: the latest revision's status does not accept the trigger (message names both, hint lists
 *   what is allowed), saving while the latest revision is pending_review or scheduled, an entry or
 *   revision id already in use;
 * - HUMAN_APPROVAL_REQUIRED, FOUR_EYES_REQUIRED (ApprovalRefused): the project's approval policy refuses the
 *   approval or publication, or (humanApproval) an agent key's change to what the public site serves: renaming,
 *   deleting or changing the import metadata of a live entry, withdrawing a scheduled revision
 *   (EntryContext.approvalPolicy; both rules off by default). Four eyes compares people: an agent key acts for
 *   the person who issued it (EntryContext.keyIssuers, ../../access/people.ts).
 */
import type { Decider } from '../../decider.ts';
import { DomainError } from '../../domain-error.ts';
import type { EntryEvent } from './entry-events.ts';
import type { CreateEntry, EntryCommand, EntryContext } from './entry-commands.ts';
import { requireEntry, subjectOf } from './entry-decision-checks.ts';
import { decideCreate } from './entry-create-decision.ts';
import { evolve, initialState } from './entry-evolve.ts';
import { decideAssign, decideDelete, decideImportMetadata, decideRename } from './entry-metadata-decisions.ts';
import { decideApprove, decidePublish, decidePublishScheduled } from './entry-publication-decisions.ts';
import { decideReject, decideReopen, decideSubmit, decideWithdraw } from './entry-review-decisions.ts';
import { decideRestore, decideSave } from './entry-revision-decisions.ts';
import type { EntryState, ExistingEntry } from './entry-state.ts';

export { validateSlug } from './slug.ts';
export { toUtcInstant, type TimeInput } from './utc-instant.ts';
export { ApprovalRefused } from '../../approval-policy.ts';
export { ENTRY_STATE_VERSION, type EntryState, type ExistingEntry, type LiveRevision, type RecordedRevision, type RevisionRef, type RevisionState } from './entry-state.ts';
export {
  REJECTION_REASON_MAX,
  type Approve,
  type Assign,
  type CreateEntry,
  type DeleteEntry,
  type EntryCommand,
  type EntryContext,
  type Publish,
  type PublishScheduled,
  type Reject,
  type Rename,
  type Reopen,
  type RestoreRevision,
  type SaveRevision,
  type SetImportMetadata,
  type SubmitForReview,
  type Withdraw,
} from './entry-commands.ts';
export { duplicateEntry, knowsRevision, latestRevision, liveRevision, publishOutcome, scheduledRevision, type PublishOutcome } from './entry-state-queries.ts';

// ---------------------------------------------------------------------------------------------------
// Decide: each command's decision is in a module of its own (entry-*-decision(s).ts); this composes them.

function decide(command: EntryCommand, state: EntryState, context: EntryContext): EntryEvent[] {
  if (command.type === 'create') return decideCreate(command, state, context);
  const entry = requireEntry(state, command.entryId, context.principal);
  try {
    return decideOnEntry(command, entry, context);
  } catch (error) {
    // A refusal names the entry it refused (the audit record files it in the entry's history).
    if (error instanceof DomainError) error.about(subjectOf(entry));
    throw error;
  }
}

function decideOnEntry(command: Exclude<EntryCommand, CreateEntry>, entry: ExistingEntry, context: EntryContext): EntryEvent[] {
  switch (command.type) {
    case 'saveRevision':
      return decideSave(entry, command, context);
    case 'restoreRevision':
      return decideRestore(entry, command, context);
    case 'submitForReview':
      return decideSubmit(entry, command, context);
    case 'approve':
      return decideApprove(entry, command, context);
    case 'publish':
      return decidePublish(entry, command, context);
    case 'reject':
      return decideReject(entry, command, context);
    case 'withdraw':
      return decideWithdraw(entry, command, context);
    case 'reopen':
      return decideReopen(entry, command, context);
    case 'publishScheduled':
      return decidePublishScheduled(entry, command, context);
    case 'rename':
      return decideRename(entry, command, context);
    case 'setImportMetadata':
      return decideImportMetadata(entry, command, context);
    case 'assign':
      return decideAssign(entry, command, context);
    case 'delete':
      return decideDelete(entry, command, context);
  }
}

/** The entry aggregate: stream `entry-${entryId}` (see entryStream). */
export const entryDecider: Decider<EntryState, EntryCommand, EntryEvent, EntryContext> = { initialState, evolve, decide };

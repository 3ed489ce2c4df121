/**
 * The workflow triggers aimed at a revision (submit, approve, publish, reject, withdraw, reopen): the checks
 * they share, in order (transition), and the approval policy's four-eyes rule and record.
 */
import { conflict, notFound, revisionConflict } from '../../domain-error.ts';
import { NO_KEY_ISSUERS, principalAsActor } from '../../access/people.ts';
import { ApprovalRefused, requirePersonFor } from '../../approval-policy.ts';
import type { EntryEvent } from './entry-events.ts';
import { approverPhrase, fourEyesSentence, objectionsTo, policyRecord, type Objections } from './approval-checks.ts';
import type { EntryContext, RevisionCommand } from './entry-commands.ts';
import { authorize, RELOAD, subjectOf } from './entry-decision-checks.ts';
import type { ExistingEntry, RecordedRevision, RevisionState } from './entry-state.ts';
import { allowedTriggers, isTransitionAllowed, type WorkflowTrigger } from './entry-workflow.ts';

/**
 * Checks shared by every trigger aimed at a revision, in this order:
 * 1. NOT_FOUND: the revision does not belong to this entry;
 * 2. FORBIDDEN: the principal may not pull the trigger;
 * 3. VALIDATION_ERROR: the command's own input (publishAt, reason);
 * 4. REVISION_CONFLICT: the given number is not that revision's number;
 * 5. (publish only) the revision is live already: no events, the route answers already_published;
 * 6. REVISION_CONFLICT: the revision is not the entry's latest (the caller's view is stale; this is
 *    always the case for superseded revisions and for earlier drafts);
 * 7. CONFLICT: the latest revision's status does not accept the trigger (naming both).
 */
export function transition(
  entry: ExistingEntry,
  command: RevisionCommand,
  trigger: Exclude<WorkflowTrigger, 'scheduled_publish'>,
  context: EntryContext,
  then: (target: RevisionState) => EntryEvent[],
  validateInput?: () => void,
): EntryEvent[] {
  const named = namedRevision(entry, command);
  if (!named) throw notFound(`Revision ${command.revisionId} does not belong to entry ${entry.slug}.`);
  authorize(context.principal, trigger, entry.formSetId, subjectOf(entry, named));
  if (trigger === 'approve' || trigger === 'publish') {
    requirePersonFor(context.principal, context.approvalPolicy, trigger, subjectOf(entry, named), `${trigger} revisions`);
  }
  validateInput?.();
  if (command.revision !== undefined && command.revision !== named.revision) {
    throw revisionConflict(`Revision id ${command.revisionId} is revision ${named.revision}, not ${command.revision}.`, RELOAD);
  }
  if (trigger === 'publish' && entry.live?.revisionId === named.revisionId) return [];
  const latest = entry.latest!;
  if (latest.revisionId !== named.revisionId) {
    throw revisionConflict(
      `Revision ${named.revision} (${named.status}) is not the latest revision of entry ${entry.slug}; the latest is revision ${latest.revision} (${latest.status}).`,
      RELOAD,
    );
  }
  if (!isTransitionAllowed(latest.status, trigger)) throw statusConflict(latest, trigger);
  if (trigger === 'approve' || trigger === 'publish') requireFourEyes(entry, latest, trigger, context);
  // A person approved it for its time: an agent key may not take that back (a revision in review it may).
  if (trigger === 'withdraw' && latest.status === 'scheduled') {
    requirePersonFor(context.principal, context.approvalPolicy, 'withdraw', subjectOf(entry, latest), 'withdraw a scheduled revision (it was approved for publication)');
  }
  return then(latest);
}

/** What the approval policy's rules say of the principal approving or publishing the revision. */
export function objectionsOfPrincipal(target: RevisionState, context: EntryContext): Objections {
  const approver = context.principal.kind === 'system' ? null : principalAsActor(context.principal);
  return objectionsTo(approver, target, context.keyIssuers ?? NO_KEY_ISSUERS);
}

/**
 * fourEyes: whoever approves or publishes is another person than the revision's last editor and its submitter.
 * People, not credentials: an agent key acts for the person who issued it.
 */
function requireFourEyes(entry: ExistingEntry, target: RevisionState, action: 'approve' | 'publish', context: EntryContext): void {
  if (!context.approvalPolicy?.fourEyes || context.principal.kind === 'system') return;
  const objection = objectionsOfPrincipal(target, context).fourEyes;
  if (objection === null) return;
  throw new ApprovalRefused(
    'fourEyes',
    action,
    subjectOf(entry, target),
    `The project's approval policy requires four eyes (fourEyes is on): ${approverPhrase(context.principal.kind, objection)}${fourEyesSentence(objection, target.revision)}, so someone else must ${action} it.`,
    'approvalPolicy.fourEyes: ask another tenant_admin to approve or publish this revision (it is in the review queue).',
  );
}

/** What an approval event records of the policy (nothing when the context carries no policy). */
export function approvalRecord(objections: Objections, context: EntryContext): ReturnType<typeof policyRecord> | Record<string, never> {
  if (!context.approvalPolicy) return {};
  return policyRecord(objections, context.approvalPolicy, context.usualApprovalPolicy ?? context.approvalPolicy);
}

/** The revision a command names: the latest, the live one, or an older one as the command recorded it. */
function namedRevision(entry: ExistingEntry, command: RevisionCommand): RecordedRevision | undefined {
  if (entry.latest?.revisionId === command.revisionId) return entry.latest;
  if (entry.live?.revisionId === command.revisionId) return { ...entry.live, status: 'published' };
  const recorded = command.recorded;
  if (recorded?.revisionId === command.revisionId && recorded.revision < entry.revisionCount) return recorded;
  return undefined;
}

function statusConflict(target: RevisionState, trigger: WorkflowTrigger): Error {
  const allowed = allowedTriggers(target.status);
  let hint = allowed.length > 0 ? `From ${target.status} the allowed actions are: ${allowed.join(', ')}.` : `No action applies to a ${target.status} revision.`;
  if (trigger === 'publish' && target.status === 'draft') hint = 'Submit it for review first: save_revision, then submit_entry_for_review, then publish_revision.';
  if (trigger === 'publish' && target.status === 'scheduled') {
    hint = `The scheduled job publishes it once ${target.publishAt} has passed; to publish now, withdraw it, submit it again and publish.`;
  }
  if (target.status === 'published') hint = 'Save a new revision to change the live content.';
  return conflict(`Revision ${target.revision} is ${target.status}: ${trigger} is not allowed from ${target.status}.`, hint);
}

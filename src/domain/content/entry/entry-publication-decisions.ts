/**
 * The entry aggregate's decisions that publish a revision: approving it (now, or for a time), publishing it,
 * and the scheduled job's publication of what was approved for its time.
 */
import { invalid } from '../../domain-error.ts';
import { NO_KEY_ISSUERS } from '../../access/people.ts';
import { fourEyesSentence, objectionsTo, refusingRules } from './approval-checks.ts';
import type { Approve, EntryContext, Publish, PublishScheduled } from './entry-commands.ts';
import { authorize, event, refOf, scopeOf } from './entry-decision-checks.ts';
import type { EntryEvent, PublishTrigger } from './entry-events.ts';
import type { ExistingEntry, RevisionState } from './entry-state.ts';
import { scheduledRevision } from './entry-state-queries.ts';
import { approvalRecord, objectionsOfPrincipal, transition } from './entry-transitions.ts';
import { toUtcInstant } from './utc-instant.ts';

export function decideApprove(entry: ExistingEntry, command: Approve, context: EntryContext): EntryEvent[] {
  let publishAt: string | undefined;
  const parsePublishAt = (): void => {
    if (command.publishAt === undefined) return;
    publishAt = toUtcInstant(command.publishAt, 'publishAt');
    if (Date.parse(publishAt) <= context.now.getTime()) {
      throw invalid(`publishAt ${publishAt} is not in the future (now is ${context.now.toISOString()})`, 'Approve without a publish date to publish now.');
    }
  };
  return transition(
    entry,
    command,
    'approve',
    context,
    (target) =>
      publishAt === undefined
        ? [published(entry, target, 'approve', context, approvalRecord(objectionsOfPrincipal(target, context), context))]
        : [event('entry.revision-approved', { ...scopeOf(entry), ...refOf(target), publishAt, ...approvalRecord(objectionsOfPrincipal(target, context), context) })],
    parsePublishAt,
  );
}

/**
 * POST /revisions/{id}/publish. Publishing is approving without a date under the route's name: it moves
 * pending_review to published, and nothing else. From draft it is refused (CONFLICT; the flow is save,
 * submit, publish, and an agent may do all three); from scheduled too (the table publishes a scheduled
 * revision only by the job; withdraw it to publish sooner). The live revision: no events (already_published).
 */
export function decidePublish(entry: ExistingEntry, command: Publish, context: EntryContext): EntryEvent[] {
  const checkNumber = (): void => {
    if (!Number.isInteger(command.revision) || command.revision < 1) throw invalid('revision must be a positive integer (the number save_revision returned)');
  };
  return transition(entry, command, 'publish', context, (target) => [published(entry, target, 'publish', context, approvalRecord(objectionsOfPrincipal(target, context), context))], checkNumber);
}

/**
 * The scheduled job publishes what a person approved for its time, under the policy in force at that time: an
 * approval the policy now refuses (an agent key's under humanApproval; under fourEyes, one by the person who
 * wrote or submitted the revision, such as an approval made while fourEyes was off) is not published. The
 * revision is rejected instead, with the rule and why, so it leaves the schedule and its author is told.
 */
export function decidePublishScheduled(entry: ExistingEntry, command: PublishScheduled, context: EntryContext): EntryEvent[] {
  authorize(context.principal, 'scheduled_publish', entry.formSetId);
  const target = scheduledRevision(entry);
  if (!target || target.publishAt === null) return [];
  if (command.revisionId !== undefined && command.revisionId !== target.revisionId) return [];
  if (Date.parse(target.publishAt) > context.now.getTime()) return [];
  const objections = objectionsTo(target.approvedBy, target, context.keyIssuers ?? NO_KEY_ISSUERS);
  const refusing = context.approvalPolicy ? refusingRules(objections, context.approvalPolicy) : [];
  if (refusing.length > 0) {
    const rule = refusing[0]!;
    const reason =
      rule === 'humanApproval'
        ? `Not published at ${target.publishAt}: the approval policy in force requires a person to approve (humanApproval is on), and revision ${target.revision} was approved by an agent key. A person must approve it: reopen it and submit it again.`
        : `Not published at ${target.publishAt}: the approval policy in force requires four eyes (fourEyes is on), and the person who approved revision ${target.revision} is ${fourEyesSentence(objections.fourEyes!, target.revision)}. Another person must approve it: reopen it and submit it again.`;
    return [event('entry.revision-rejected', { ...scopeOf(entry), ...refOf(target), from: 'scheduled', reason, rule })];
  }
  return [published(entry, target, 'schedule', context, approvalRecord(objections, context))];
}

function published(entry: ExistingEntry, target: RevisionState, trigger: PublishTrigger, context: EntryContext, record: ReturnType<typeof approvalRecord>): EntryEvent {
  const supersedes = entry.live !== null && entry.live.revisionId !== target.revisionId ? entry.live.revisionId : undefined;
  return event('entry.revision-published', {
    ...scopeOf(entry),
    ...refOf(target),
    publishedAt: context.now.toISOString(),
    trigger,
    ...(supersedes === undefined ? {} : { supersedes }),
    ...(trigger === 'schedule' && target.publishAt !== null ? { publishAt: target.publishAt } : {}),
    ...record,
  });
}

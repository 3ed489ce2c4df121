/**
 * The entry aggregate's review decisions on the latest revision: submit it for review, reject it, withdraw it
 * (back to draft), reopen it. Each is a transition (entry-transitions.ts); approving and publishing are in
 * entry-publication-decisions.ts.
 */
import { invalid } from '../../domain-error.ts';
import { REJECTION_REASON_MAX, type EntryContext, type Reject, type Reopen, type SubmitForReview, type Withdraw } from './entry-commands.ts';
import { event, refOf, scopeOf } from './entry-decision-checks.ts';
import type { EntryEvent } from './entry-events.ts';
import type { ExistingEntry } from './entry-state.ts';
import { transition } from './entry-transitions.ts';

export function decideSubmit(entry: ExistingEntry, command: SubmitForReview, context: EntryContext): EntryEvent[] {
  return transition(entry, command, 'submit_for_review', context, (target) => [event('entry.revision-submitted', { ...scopeOf(entry), ...refOf(target) })]);
}

export function decideReject(entry: ExistingEntry, command: Reject, context: EntryContext): EntryEvent[] {
  const reason = command.reason?.trim();
  const checkReason = (): void => {
    if (reason !== undefined && reason.length > REJECTION_REASON_MAX) throw invalid(`reason must be at most ${REJECTION_REASON_MAX} characters (it has ${reason.length})`);
  };
  return transition(
    entry,
    command,
    'reject',
    context,
    (target) => [
      event('entry.revision-rejected', {
        ...scopeOf(entry),
        ...refOf(target),
        from: target.status as 'pending_review' | 'scheduled',
        ...(reason ? { reason } : {}),
      }),
    ],
    checkReason,
  );
}

export function decideWithdraw(entry: ExistingEntry, command: Withdraw, context: EntryContext): EntryEvent[] {
  return transition(entry, command, 'withdraw', context, (target) => [
    event('entry.revision-withdrawn', { ...scopeOf(entry), ...refOf(target), from: target.status as 'pending_review' | 'scheduled' }),
  ]);
}

export function decideReopen(entry: ExistingEntry, command: Reopen, context: EntryContext): EntryEvent[] {
  return transition(entry, command, 'reopen', context, (target) => [event('entry.revision-reopened', { ...scopeOf(entry), ...refOf(target) })]);
}

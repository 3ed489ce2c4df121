import type { EventLog } from '../event-store/event-log.ts';
import { WrongExpectedVersionError } from '../event-store/errors.ts';
import { REVIEW_NOTICES_POLICY_CHANGES_STREAM, REVIEW_NOTICES_STREAM, reviewNoticesPolicyChangesStarted, reviewNoticesStarted } from '../domain/review-notice/review-notice-events.ts';

/**
 * Appends review-notices.started once per log (the first start of a projector with review notices), before
 * the service takes writes: workflow events after it are notified, the history before it never is; and
 * review-notices.policy-changes-started the same way for approval policy changes. Later starts find the
 * streams and append nothing.
 */
export async function markReviewNoticesStarted(log: EventLog): Promise<void> {
  for (const [stream, type] of [
    [REVIEW_NOTICES_STREAM, reviewNoticesStarted.type],
    [REVIEW_NOTICES_POLICY_CHANGES_STREAM, reviewNoticesPolicyChangesStarted.type],
  ] as const) {
    try {
      await log.append(stream, [{ type, data: {} }], 'no_stream', { actor: { type: 'system', id: 'review-notices' } });
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error;
    }
  }
}

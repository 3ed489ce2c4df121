import type { EventLog } from '../event-store/event-log.ts';
import { WrongExpectedVersionError } from '../event-store/errors.ts';
import { REVIEW_NOTICES_STREAM, reviewNoticesStarted } from '../domain/review-notice/review-notice-events.ts';

/**
 * Appends review-notices.started once per log (the first start of a projector with review notices), before
 * the service takes writes: workflow events after it are notified, the history before it never is. Later
 * starts find the stream and append nothing.
 */
export async function markReviewNoticesStarted(log: EventLog): Promise<void> {
  try {
    await log.append(REVIEW_NOTICES_STREAM, [{ type: reviewNoticesStarted.type, data: {} }], 'no_stream', { actor: { type: 'system', id: 'review-notices' } });
  } catch (error) {
    if (!(error instanceof WrongExpectedVersionError)) throw error;
  }
}

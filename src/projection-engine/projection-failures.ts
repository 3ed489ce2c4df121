/**
 * A projection failure (the event a projector could not fold) in JSON-safe form, for logs and answers.
 */
import { encodePosition } from '../event-store/position.ts';
import type { ProjectionFailure } from '../read-models/read-model-store.ts';

export function describeFailure(failure: ProjectionFailure): FailureDescription {
  return {
    eventId: failure.eventId,
    eventType: failure.eventType,
    streamId: failure.streamId,
    position: encodePosition(failure.position),
    message: failure.message,
    failedAt: failure.failedAt,
  };
}

/** A projection failure in JSON-safe form (the position as a fixed-width string). */
export interface FailureDescription {
  eventId: string;
  eventType: string;
  streamId: string;
  position: string;
  message: string;
  failedAt: string;
}

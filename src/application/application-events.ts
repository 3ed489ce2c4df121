import { z } from 'zod';
import { defineEvent } from '../event-store/event-catalog.ts';

/** A unique name (a slug within its form set, an e-mail address) claimed by its owner. */
export const reservationClaimed = defineEvent({
  type: 'reservation.claimed',
  version: 1,
  schema: z.object({ scope: z.string().min(1).max(200), key: z.string().min(1).max(2000), ownerId: z.string().min(1).max(200) }),
});

/** The name is free again (the owner was deleted or renamed away from it). */
export const reservationReleased = defineEvent({
  type: 'reservation.released',
  version: 1,
  schema: z.object({ scope: z.string(), key: z.string(), ownerId: z.string() }),
});

/** An idempotent operation began: the ids it will create are fixed here, before any effect. */
export const idempotencyStarted = defineEvent({
  type: 'idempotency.started',
  version: 1,
  schema: z.object({
    scope: z.string().min(1).max(300),
    operation: z.string().min(1).max(100),
    /** SHA-256 of the request that carried the key: a key resent with another request is refused. */
    requestHash: z.string().regex(/^[0-9a-f]{64}$/),
    reservedIds: z.record(z.string(), z.string()),
  }),
});

/**
 * The running attempt ended without a result (the operation failed: a slug clash, a store outage, ...), so the
 * key may be tried again at once. `reason` is the error's code or name, never its message.
 */
export const idempotencyAttemptFailed = defineEvent({
  type: 'idempotency.attempt-failed',
  version: 1,
  schema: z.object({ reason: z.string().min(1).max(100) }),
});

/** Another attempt with the same reserved ids began: after a failed one, or after one that went silent (its lease ran out). */
export const idempotencyRetried = defineEvent({
  type: 'idempotency.retried',
  version: 1,
  schema: z.object({}),
});

/** The operation finished; resending its key returns this result. */
export const idempotencyCompleted = defineEvent({
  type: 'idempotency.completed',
  version: 1,
  schema: z.object({ status: z.number().int(), body: z.unknown() }),
});

export const applicationEvents = [reservationClaimed, reservationReleased, idempotencyStarted, idempotencyAttemptFailed, idempotencyRetried, idempotencyCompleted];

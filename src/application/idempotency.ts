import { createHash, randomUUID } from 'node:crypto';
import { stringify as stableJson } from 'safe-stable-stringify';
import type { Actor, RecordedEvent } from '../event-store/event-store.ts';
import type { EventLog } from '../event-store/event-log.ts';
import { StreamNotFoundError, WrongExpectedVersionError } from '../event-store/errors.ts';
import { collect } from '../event-store/event-store.ts';
import { DomainError } from '../domain/domain-error.ts';
import { systemClock, type Clock } from '../clock.ts';
import { IdempotencyInProgressError } from './application-errors.ts';
import { idempotencyAttemptFailed, idempotencyCompleted, idempotencyRetried, idempotencyStarted } from './application-events.ts';

export interface IdempotentResult {
  status: number;
  body: unknown;
}

export interface IdempotentRequest {
  /** Whose key space: a project id. */
  scope: string;
  /** What was asked: create_entry, save_revision, apply_blueprint, ... */
  operation: string;
  /** The client's key (Idempotency-Key header or idempotencyKey body field). */
  key: string;
  /** The request as sent, without the key: the same key with another request is refused. */
  request: unknown;
  /** Names of the ids the operation will create (e.g. ['entryId', 'revisionId']). */
  ids: readonly string[];
  actor: Actor;
}

export interface IdempotencyOptions {
  clock?: Clock;
  /**
   * How long an attempt that has recorded neither a result nor a failure counts as still running in another
   * process. Past it the attempt is presumed dead (its process crashed) and a resent request takes over, with
   * the same reserved ids. Default DEFAULT_ATTEMPT_LEASE_MS.
   */
  attemptLeaseMs?: number;
}

const MAX_KEY_LENGTH = 255;
/** Longer than any operation takes (a media source fetch is bounded by 30 s by default). */
export const DEFAULT_ATTEMPT_LEASE_MS = 60_000;
/** What a request that finds the key in progress elsewhere is told to wait before sending again. */
const IN_PROGRESS_RETRY_AFTER_SECONDS = 1;

interface Leader {
  requestHash: string;
  result: Promise<IdempotentResult & { replayed: boolean }>;
}

/** Requests in progress per event log (one per process), by key stream: later ones with the same key wait for the first. */
const inFlightByLog = new WeakMap<EventLog, Map<string, Leader>>();

/**
 * Runs an operation once per idempotency key, also across restarts, crashes and concurrent requests:
 * 1. the key is claimed in its own stream, fixing the ids the operation will create;
 * 2. the operation runs with those ids (so a retry after a crash re-runs it against the same ids and
 *    the aggregates see their own earlier work, e.g. "entry already exists with this id");
 * 3. the result is recorded; a resent key returns it. An attempt that fails records that it failed, so the
 *    key may be tried again at once.
 *
 * Concurrent requests with one key: in this process the later ones wait for the first and get its result
 * (or its error). A request that finds an attempt running in another process (recorded, with no result or
 * failure yet, younger than the lease) is refused with IdempotencyInProgressError, retryable after a second,
 * the way Stripe answers it. An attempt older than the lease is presumed dead and taken over.
 *
 * A key resent with a different request is a CONFLICT; an over-long key is a VALIDATION_ERROR.
 */
export class Idempotency {
  readonly #clock: Clock;
  readonly #leaseMs: number;

  constructor(
    private readonly log: EventLog,
    options: IdempotencyOptions = {},
  ) {
    this.#clock = options.clock ?? systemClock;
    this.#leaseMs = options.attemptLeaseMs ?? DEFAULT_ATTEMPT_LEASE_MS;
  }

  async run(request: IdempotentRequest, operation: (ids: Record<string, string>) => Promise<IdempotentResult>): Promise<IdempotentResult & { replayed: boolean }> {
    if (request.key.length === 0 || request.key.length > MAX_KEY_LENGTH) {
      throw new DomainError('VALIDATION_ERROR', `Idempotency key must be 1 to ${MAX_KEY_LENGTH} characters.`);
    }
    const streamId = `idempotency-${createHash('sha256').update(`${request.scope}\u0000${request.operation}\u0000${request.key}`).digest('hex')}`;
    // Keys sorted: equal requests hash equally whatever their key order.
    const requestHash = createHash('sha256').update(stableJson(request.request) ?? 'null').digest('hex');

    let inFlight = inFlightByLog.get(this.log);
    if (!inFlight) inFlightByLog.set(this.log, (inFlight = new Map()));
    const leader = inFlight.get(streamId);
    if (leader) {
      if (leader.requestHash !== requestHash) throw reusedKey();
      return { ...(await leader.result), replayed: true };
    }
    const result = this.#lead(streamId, requestHash, request, operation);
    const entry: Leader = { requestHash, result };
    inFlight.set(streamId, entry);
    try {
      return await result;
    } finally {
      if (inFlight.get(streamId) === entry) inFlight.delete(streamId);
    }
  }

  /** Claims an attempt for this process (or answers from the record), runs the operation, records the outcome. */
  async #lead(streamId: string, requestHash: string, request: IdempotentRequest, operation: (ids: Record<string, string>) => Promise<IdempotentResult>): Promise<IdempotentResult & { replayed: boolean }> {
    const context = { actor: request.actor, idempotencyKey: request.key };
    let claim: { revision: bigint; reservedIds: Record<string, string> } | undefined;
    while (!claim) {
      const events = await this.#read(streamId);
      try {
        if (events.length === 0) {
          const reservedIds = Object.fromEntries(request.ids.map((name) => [name, randomUUID()]));
          const appended = await this.log.append(streamId, [{ type: idempotencyStarted.type, data: { scope: request.scope, operation: request.operation, requestHash, reservedIds } }], 'no_stream', context);
          claim = { revision: appended.nextExpectedRevision, reservedIds };
          break;
        }
        const started = events[0]!.data as { requestHash: string; reservedIds: Record<string, string> };
        if (started.requestHash !== requestHash) throw reusedKey();
        const completed = events.find((e) => e.type === idempotencyCompleted.type);
        if (completed) return { ...(completed.data as IdempotentResult), replayed: true };
        const last = events[events.length - 1]!;
        if (last.type !== idempotencyAttemptFailed.type && this.#stillRunning(last)) throw new IdempotencyInProgressError(IN_PROGRESS_RETRY_AFTER_SECONDS);
        const appended = await this.log.append(streamId, [{ type: idempotencyRetried.type, data: {} }], last.revision, context);
        claim = { revision: appended.nextExpectedRevision, reservedIds: started.reservedIds };
      } catch (error) {
        // Another process claimed between our read and our append: read again and decide again.
        if (!(error instanceof WrongExpectedVersionError)) throw error;
      }
    }

    let result: IdempotentResult;
    try {
      result = await operation(claim.reservedIds);
    } catch (error) {
      await this.log
        .append(streamId, [{ type: idempotencyAttemptFailed.type, data: { reason: failureReason(error) } }], claim.revision, context)
        // Unrecorded (the store is down, or the attempt was taken over): the lease frees the key later.
        .catch(() => undefined);
      throw error;
    }
    try {
      await this.log.append(streamId, [{ type: idempotencyCompleted.type, data: result }], claim.revision, context);
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error;
      // Our attempt was taken over (we outlived the lease) and the other one recorded first: answer with that.
      const recorded = (await this.#read(streamId)).find((e) => e.type === idempotencyCompleted.type);
      if (recorded) return { ...(recorded.data as IdempotentResult), replayed: true };
    }
    return { ...result, replayed: false };
  }

  /** Whether an attempt that began with `event` may still be running somewhere (younger than the lease). */
  #stillRunning(event: RecordedEvent): boolean {
    return this.#clock.now().getTime() - Date.parse(event.metadata.occurredAt) < this.#leaseMs;
  }

  async #read(streamId: string) {
    try {
      return await collect(this.log.readStream(streamId));
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
  }
}

function reusedKey(): DomainError {
  return new DomainError('CONFLICT', 'This idempotency key was already used with a different request.', 'Use a new key for a new request.');
}

function failureReason(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const reason = typeof code === 'string' && code !== '' ? code : error instanceof Error ? error.name : 'unknown';
  return reason.slice(0, 100) || 'unknown';
}

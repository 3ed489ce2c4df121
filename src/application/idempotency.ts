import { createHash, randomUUID } from 'node:crypto';
import { stringify as stableJson } from 'safe-stable-stringify';
import type { Actor } from '../event-store/event-store.ts';
import type { EventLog } from '../event-store/event-log.ts';
import { StreamNotFoundError, WrongExpectedVersionError } from '../event-store/errors.ts';
import { collect } from '../event-store/event-store.ts';
import { DomainError } from '../domain/domain-error.ts';
import { idempotencyCompleted, idempotencyStarted } from './application-events.ts';

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

const MAX_KEY_LENGTH = 255;

/**
 * Runs an operation once per idempotency key, also across restarts and crashes:
 * 1. the key is claimed in its own stream, fixing the ids the operation will create;
 * 2. the operation runs with those ids (so a retry after a crash re-runs it against the same ids and
 *    the aggregates see their own earlier work, e.g. "entry already exists with this id");
 * 3. the result is recorded; a resent key returns it.
 * A key resent with a different request is a CONFLICT; an over-long key is a VALIDATION_ERROR.
 */
export class Idempotency {
  constructor(private readonly log: EventLog) {}

  async run(request: IdempotentRequest, operation: (ids: Record<string, string>) => Promise<IdempotentResult>): Promise<IdempotentResult & { replayed: boolean }> {
    if (request.key.length === 0 || request.key.length > MAX_KEY_LENGTH) {
      throw new DomainError('VALIDATION_ERROR', `Idempotency key must be 1 to ${MAX_KEY_LENGTH} characters.`);
    }
    const streamId = `idempotency-${createHash('sha256').update(`${request.scope}\u0000${request.operation}\u0000${request.key}`).digest('hex')}`;
    // Keys sorted: equal requests hash equally whatever their key order.
    const requestHash = createHash('sha256').update(stableJson(request.request) ?? 'null').digest('hex');
    let events = await this.#read(streamId);
    if (events.length === 0) {
      const reservedIds = Object.fromEntries(request.ids.map((name) => [name, randomUUID()]));
      try {
        await this.log.append(streamId, [{ type: idempotencyStarted.type, data: { scope: request.scope, operation: request.operation, requestHash, reservedIds } }], 'no_stream', { actor: request.actor, idempotencyKey: request.key });
      } catch (error) {
        if (!(error instanceof WrongExpectedVersionError)) throw error;
      }
      events = await this.#read(streamId);
    }
    const started = events[0]!.data as { requestHash: string; reservedIds: Record<string, string> };
    if (started.requestHash !== requestHash) {
      throw new DomainError('CONFLICT', 'This idempotency key was already used with a different request.', 'Use a new key for a new request.');
    }
    const completed = events.find((e) => e.type === idempotencyCompleted.type);
    if (completed) return { ...(completed.data as IdempotentResult), replayed: true };

    const result = await operation(started.reservedIds);
    try {
      await this.log.append(streamId, [{ type: idempotencyCompleted.type, data: result }], events[events.length - 1]!.revision, { actor: request.actor, idempotencyKey: request.key });
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error;
      // A concurrent request with the same key recorded first: answer with what it recorded.
      const recorded = (await this.#read(streamId)).find((e) => e.type === idempotencyCompleted.type);
      if (recorded) return { ...(recorded.data as IdempotentResult), replayed: true };
    }
    return { ...result, replayed: false };
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

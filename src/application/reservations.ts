import { createHash } from 'node:crypto';
import type { Actor } from '../event-store/event-store.ts';
import type { EventLog } from '../event-store/event-log.ts';
import { StreamNotFoundError, WrongExpectedVersionError } from '../event-store/errors.ts';
import { collect } from '../event-store/event-store.ts';
import { conflict } from '../domain/domain-error.ts';
import { reservationClaimed, reservationReleased } from './application-events.ts';

/**
 * Uniqueness in an event store: each unique name has its own stream, claimed with the expectation
 * "no stream" (or after a release, the revision of the release). Two writers racing for one name: one
 * wins, the other gets CONFLICT. Works the same on SQLite and EventStoreDB and survives restarts.
 */
export class Reservations {
  constructor(private readonly log: EventLog) {}

  /**
   * Claims `key` within `scope` for `ownerId`. Claiming a name one already owns succeeds (so retries are
   * safe). Throws DomainError CONFLICT naming the name when someone else holds it.
   */
  async claim(scope: string, key: string, ownerId: string, actor: Actor, what = 'name'): Promise<void> {
    const streamId = reservationStream(scope, key);
    for (let attempt = 0; attempt < 3; attempt++) {
      const last = await this.#last(streamId);
      if (last?.type === reservationClaimed.type) {
        if ((last.data as { ownerId: string }).ownerId === ownerId) return;
        throw conflict(`The ${what} "${key}" is already in use.`, `Choose another ${what}.`);
      }
      try {
        await this.log.append(streamId, [{ type: reservationClaimed.type, data: { scope, key, ownerId } }], last ? last.revision : 'no_stream', { actor });
        return;
      } catch (error) {
        if (!(error instanceof WrongExpectedVersionError)) throw error;
      }
    }
    throw conflict(`The ${what} "${key}" is being claimed by another request.`, 'Retry.');
  }

  /** Frees `key` if `ownerId` holds it. */
  async release(scope: string, key: string, ownerId: string, actor: Actor): Promise<void> {
    const streamId = reservationStream(scope, key);
    const last = await this.#last(streamId);
    if (last?.type !== reservationClaimed.type || (last.data as { ownerId: string }).ownerId !== ownerId) return;
    await this.log.append(streamId, [{ type: reservationReleased.type, data: { scope, key, ownerId } }], last.revision, { actor });
  }

  /** The current owner of `key`, or null. */
  async ownerOf(scope: string, key: string): Promise<string | null> {
    const last = await this.#last(reservationStream(scope, key));
    return last?.type === reservationClaimed.type ? (last.data as { ownerId: string }).ownerId : null;
  }

  async #last(streamId: string) {
    try {
      return (await collect(this.log.readStream(streamId, { direction: 'backwards', maxCount: 1 })))[0] ?? null;
    } catch (error) {
      if (error instanceof StreamNotFoundError) return null;
      throw error;
    }
  }
}

/** Stream ids stay short and safe whatever the key holds (e-mail addresses, slugs in any script). */
export function reservationStream(scope: string, key: string): string {
  return `reservation-${createHash('sha256').update(`${scope}\u0000${key}`).digest('hex')}`;
}

/**
 * The MongoDB read-model store's skipped events: `projection_skips`, one record per projection and skipped
 * event (`_id` "<projection>:<eventId>").
 */
import type { Collection, Db } from 'mongodb';
import { decodePosition } from '../event-store/position.ts';
import type { SkipRecord } from './read-model-store.ts';

export const SKIPS_COLLECTION = 'projection_skips';

interface StoredSkip {
  _id: string;
  projection: string;
  eventId: string;
  position: string;
  reason: string;
  actor: string;
  skippedAt: string;
}

export class MongoSkips {
  readonly #skips: Collection<StoredSkip>;

  constructor(db: Db) {
    this.#skips = db.collection<StoredSkip>(SKIPS_COLLECTION);
  }

  /** Records the skip (its position encoded); recording the same event again keeps the first record. */
  async add(skip: SkipRecord, position: string): Promise<void> {
    await this.#skips.updateOne(
      { _id: `${skip.projection}:${skip.eventId}` },
      {
        $setOnInsert: {
          projection: skip.projection,
          eventId: skip.eventId,
          position,
          reason: skip.reason,
          actor: skip.actor,
          skippedAt: skip.skippedAt,
        },
      },
      { upsert: true },
    );
  }

  /** Ordered by position. */
  async list(projection: string): Promise<SkipRecord[]> {
    const skips = await this.#skips
      .find({ projection })
      .sort([
        ['position', 1],
        ['eventId', 1],
      ])
      .toArray();
    return skips.map((s) => ({
      projection: s.projection,
      eventId: s.eventId,
      position: decodePosition(s.position),
      reason: s.reason,
      actor: s.actor,
      skippedAt: s.skippedAt,
    }));
  }

  /** The index of the list by position. */
  async createIndexes(): Promise<void> {
    await this.#skips.createIndexes([{ name: 'projection_position', key: { projection: 1, position: 1 } }]);
  }
}

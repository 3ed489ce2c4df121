/**
 * The MongoDB read-model store's registry of generations:
 * - `projection_generations`: one record per projection and generation (`_id` "<projection>:<generation>"):
 *   its version, checkpoint (encoded position), failure, the unique indexes its collections declare
 *   (mongo-unique-keys.ts), the commit stamp of each collection (the checkpoint of the last commit that wrote
 *   it), and while a commit is recorded but not yet applied, its journal (mongo-commits.ts). Reads leave the
 *   journal on the server.
 * - `projection_active`: one document per projection (`_id` the projection) naming its active generation and
 *   the generations that were active before (retired). Activating a generation is one conditional write of
 *   that document: readers see the old generation or the new one, never none and never two, whatever
 *   fails when, and no partial unique index is needed to keep one active. A record's state is read from it.
 *
 * Records written by versions before the pointer carried their state themselves (`state`, `retiredBy`, and a
 * partial unique index over the active ones): the first registry of a store to read makes each projection's
 * pointer from them, once, and reads their state from the pointer from then on.
 */
import type { Collection, Db, Document } from 'mongodb';
import { decodeNullablePosition, decodePosition, encodePosition } from '../event-store/position.ts';
import { DUPLICATE_KEY } from './mongo-errors.ts';
import { assertGenerationNumber } from './mongo-query.ts';
import type { UniqueKeySpec } from './mongo-unique-keys.ts';
import {
  GenerationConflictError,
  ReadModelError,
  assertProjectionName,
  type GenerationRecord,
  type GenerationState,
  type ModelTarget,
  type ProjectionFailure,
} from './read-model-store.ts';
import { MongoServerError } from 'mongodb';

/** One write of a journal: collection, id, encoded position, the document (null deletes it). */
export interface JournalWrite {
  c: string;
  i: string;
  p: string;
  d: Document | null;
}

/** A recorded commit, on the generation's record until it is applied. */
export interface JournalRecord {
  id: string;
  /** The checkpoint the commit sets (encoded). */
  checkpoint: string;
  /** The commit's time (the record's updatedAt once applied). */
  at: string;
  /** The writes, when they fit in the record; else `chunks` documents of the journal chunks collection hold them (mongo-commits.ts). */
  writes?: JournalWrite[];
  chunks?: number;
}

export const GENERATIONS_COLLECTION = 'projection_generations';
export const ACTIVE_COLLECTION = 'projection_active';

interface StoredFailure extends Omit<ProjectionFailure, 'position'> {
  position: string;
}

export interface StoredGeneration {
  _id: string;
  projection: string;
  generation: number;
  version: number;
  checkpoint: string | null;
  failure: StoredFailure | null;
  createdAt: string;
  updatedAt: string;
  /** The unique indexes each collection declares: what a commit writes under `_unique` (mongo-unique-keys.ts). */
  uniques?: Record<string, UniqueKeySpec[]>;
  /** Per collection, the checkpoint of the last commit that wrote it. */
  stamps?: Record<string, string>;
  /** A commit recorded and not yet applied (mongo-commits.ts). */
  journal?: JournalRecord;
  /** The projector lease's holder since it last changed hands, and that lease's expiry then (mongo-leases.ts). */
  lease?: { holder: string; expiresAt: string };
  /** Collections whose text index the server could not build (it has none): searching them fails. */
  withoutTextIndex?: string[];
  /** Written by versions before the active pointer; read once to make it. */
  state?: GenerationState;
}

interface StoredActive {
  _id: string;
  generation: number | null;
  retired: number[];
  updatedAt: string;
}

/** A record as reads fetch it: without the journal, which may be large. */
export const RECORD_FIELDS = { journal: 0 } as const;

export function generationId(projection: string, generation: number): string {
  return `${projection}:${generation}`;
}

export function missingGeneration(target: ModelTarget): ReadModelError {
  return new ReadModelError(`generation ${target.generation} of ${target.projection} does not exist`);
}

export class MongoGenerationRegistry {
  readonly records: Collection<StoredGeneration>;
  readonly #active: Collection<StoredActive>;
  #pointers: Promise<void> | undefined;

  constructor(db: Db) {
    this.records = db.collection<StoredGeneration>(GENERATIONS_COLLECTION);
    this.#active = db.collection<StoredActive>(ACTIVE_COLLECTION);
  }

  /** Records the generation as building, unless it is recorded; either way notes the unique indexes it declares. */
  async create(projection: string, generation: number, version: number, now: string, uniques: Record<string, UniqueKeySpec[]>): Promise<GenerationRecord> {
    const declared = Object.fromEntries(Object.entries(uniques).map(([collection, specs]) => [`uniques.${collection}`, specs]));
    try {
      await this.records.updateOne(
        { _id: generationId(projection, generation) },
        {
          $setOnInsert: { projection, generation, version, checkpoint: null, failure: null, createdAt: now, updatedAt: now },
          ...(Object.keys(declared).length > 0 ? { $set: declared } : {}),
        },
        { upsert: true },
      );
    } catch (error) {
      // Two processes recorded it at once: the other's record stands (and holds the same declarations).
      if (!(error instanceof MongoServerError && error.code === DUPLICATE_KEY)) throw error;
    }
    const record = await this.get(projection, generation);
    if (!record) throw new ReadModelError(`generation ${generation} of ${projection} was not recorded`);
    return record;
  }

  /**
   * One conditional write of the projection's pointer: from `expectedActive` to `generation`, the former
   * noted as retired. With none expected, the pointer is made (or taken from none, after the active
   * generation was dropped). Reactivating the active generation is a no-op.
   */
  async activate(projection: string, generation: number, expectedActive: number | null, now: string): Promise<void> {
    if (!(await this.records.countDocuments({ _id: generationId(projection, generation) }, { limit: 1 }))) {
      throw new ReadModelError(`projection ${projection} has no generation ${generation}`);
    }
    const current = await this.#pointer(projection);
    const active = current?.generation ?? null;
    if (active === generation && expectedActive === generation) return;
    const conflict = (found: number | null) =>
      new GenerationConflictError(`cannot activate generation ${generation} of ${projection}: expected ${expectedActive ?? 'none'} to be active, found ${found ?? 'none'}`);
    if (active !== expectedActive) throw conflict(active);
    const swapped = await this.#active.updateOne(
      { _id: projection, generation: expectedActive },
      { $set: { generation, updatedAt: now }, ...(expectedActive === null ? {} : { $addToSet: { retired: expectedActive } }) },
    );
    if (swapped.matchedCount > 0) return;
    if (expectedActive === null) {
      try {
        await this.#active.insertOne({ _id: projection, generation, retired: [], updatedAt: now });
        return;
      } catch (error) {
        if (!(error instanceof MongoServerError && error.code === DUPLICATE_KEY)) throw error;
      }
    }
    // Another activation won between our read and our write.
    throw conflict((await this.#pointer(projection))?.generation ?? null);
  }

  /** Forgets the generation: no longer active (none is then), no longer retired, its record gone. */
  async dropPointer(projection: string, generation: number, now: string): Promise<void> {
    await this.#ensurePointers();
    await this.#active.updateOne({ _id: projection, generation }, { $set: { generation: null, updatedAt: now } });
  }

  async dropRecord(projection: string, generation: number): Promise<void> {
    await this.records.deleteOne({ _id: generationId(projection, generation) });
    await this.#active.updateOne({ _id: projection, retired: generation }, { $pull: { retired: generation } });
  }

  async get(projection: string, generation: number): Promise<GenerationRecord | null> {
    const [record, pointer] = await Promise.all([this.records.findOne({ _id: generationId(projection, generation) }, { projection: RECORD_FIELDS }), this.#pointer(projection)]);
    return record ? toGenerationRecord(record, pointer) : null;
  }

  /** Ordered by projection, then generation. */
  async list(projection?: string): Promise<GenerationRecord[]> {
    await this.#ensurePointers();
    const filter = projection === undefined ? {} : { projection };
    const [records, pointers] = await Promise.all([
      this.records.find(filter, { projection: RECORD_FIELDS }).sort([['projection', 1], ['generation', 1]]).toArray(),
      this.#active.find(projection === undefined ? {} : { _id: projection }).toArray(),
    ]);
    const byProjection = new Map(pointers.map((p) => [p._id, p]));
    return records.map((record) => toGenerationRecord(record, byProjection.get(record.projection) ?? null));
  }

  async active(projection: string): Promise<number | null> {
    return (await this.#pointer(projection))?.generation ?? null;
  }

  async setFailure(target: ModelTarget, failure: ProjectionFailure | null, now: string): Promise<void> {
    const stored: StoredFailure | null = failure === null ? null : { ...failure, position: encodePosition(failure.position) };
    const result = await this.records.updateOne({ _id: generationId(target.projection, target.generation) }, { $set: { failure: stored, updatedAt: now } });
    if (result.matchedCount === 0) throw missingGeneration(target);
  }

  async #pointer(projection: string): Promise<StoredActive | null> {
    await this.#ensurePointers();
    return this.#active.findOne({ _id: projection });
  }

  /** Makes the pointers of projections whose records carry their state (versions before the pointer), once. */
  #ensurePointers(): Promise<void> {
    this.#pointers ??= (async () => {
      const legacy = await this.records.find({ state: { $in: ['active', 'retired'] } }, { projection: { projection: 1, generation: 1, state: 1, updatedAt: 1 } }).toArray();
      const projections = new Set(legacy.map((r) => r.projection));
      for (const projection of projections) {
        const mine = legacy.filter((r) => r.projection === projection);
        const active = mine.find((r) => r.state === 'active');
        try {
          await this.#active.updateOne(
            { _id: projection },
            { $setOnInsert: { generation: active?.generation ?? null, retired: mine.filter((r) => r.state === 'retired').map((r) => r.generation), updatedAt: active?.updatedAt ?? '' } },
            { upsert: true },
          );
        } catch (error) {
          // Two processes made it at once: theirs stands.
          if (!(error instanceof MongoServerError && error.code === DUPLICATE_KEY)) throw error;
        }
      }
    })().catch((error: unknown) => {
      this.#pointers = undefined;
      throw error;
    });
    return this.#pointers;
  }
}

export function assertTarget(target: ModelTarget): void {
  assertProjectionName(target.projection);
  assertGenerationNumber(target.generation);
}

function stateOf(generation: number, pointer: StoredActive | null): GenerationState {
  if (pointer?.generation === generation) return 'active';
  return pointer?.retired.includes(generation) ? 'retired' : 'building';
}

function toGenerationRecord(stored: StoredGeneration, pointer: StoredActive | null): GenerationRecord {
  return {
    projection: stored.projection,
    generation: stored.generation,
    version: stored.version,
    state: stateOf(stored.generation, pointer),
    checkpoint: decodeNullablePosition(stored.checkpoint),
    failure: stored.failure
      ? {
          eventId: stored.failure.eventId,
          eventType: stored.failure.eventType,
          streamId: stored.failure.streamId,
          position: decodePosition(stored.failure.position),
          message: stored.failure.message,
          failedAt: stored.failure.failedAt,
        }
      : null,
    createdAt: stored.createdAt,
    updatedAt: stored.updatedAt,
  };
}

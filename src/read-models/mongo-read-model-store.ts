/**
 * The read-model port on MongoDB (official driver), for scale-out: public-API replicas read from it
 * while one projector writes.
 *
 * Layout in one database:
 * - `rm.<projection>.<collection>.g<generation>`: one physical collection per collection and generation,
 *   holding `{_id: id, _pos: <position, 20-digit zero-padded>, doc: {...the document...}}`. Filters,
 *   sorts and indexes address `doc.<path>`, so document keys never clash with the reserved ones.
 * - `projection_generations`: one record per projection and generation (`_id` "<projection>:<generation>"),
 *   with its state, checkpoint (encoded position) and failure. A unique partial index on `projection`
 *   over the records whose state is 'active' lets at most one generation of a projection be active.
 * - `projection_skips`: one record per projection and skipped event (`_id` "<projection>:<eventId>").
 * - A collection with a textField has a text index on `doc.<textField>` (created with its other indexes),
 *   which Query.text searches; readers find the field from the index itself (listIndexes), so a replica
 *   that never saw the schema can search too.
 *
 * Driver errors and URL handling: ./mongo-errors.ts.
 *
 * Without transactions (a standalone server has none), a commit is replay-safe rather than atomic: every
 * write is guarded by its position, so it only replaces or deletes a stored document older than itself,
 * and the checkpoint is stored after the writes and never moves backwards. A crash between the writes and
 * the checkpoint makes the projector fold those events again, and the guarded writes then change nothing
 * that is already newer. Positions are stored as fixed-width strings: text order is numeric order, and no
 * bigint ever reaches BSON or JSON.
 */
import {
  MongoBulkWriteError,
  MongoClient,
  MongoServerError,
  type AnyBulkWriteOperation,
  type Collection,
  type Db,
  type Sort,
} from 'mongodb';
import { decodeNullablePosition, decodePosition, encodePosition } from '../event-store/position.ts';
import {
  planCollectionWrites,
  physicalCollectionName,
  toMongoFilter,
  toMongoIndexes,
  UNIQUE_INDEX_SUFFIX,
  toMongoPaging,
  toMongoSort,
  toMongoAfter,
  toMongoText,
  toMongoTextIndex,
  textIndexPrefix,
  assertTextPrefix,
  assertGenerationNumber,
  DOC_FIELD,
  TEXT_INDEX_NAME,
  type MongoFilter,
} from './mongo-query.ts';
import { hasChangeStreams, MongoCommitWatch } from './mongo-commit-watch.ts';
import {
  assertCollectionName,
  assertProjectionName,
  assertTextField,
  assertTextTokens,
  assertAfter,
  assertGetManyIds,
  assertFields,
  GenerationConflictError,
  ReadModelError,
  ReadModelUnavailableError,
  UniqueConstraintError,
  LeaseLostError,
  type CommitOptions,
  type LeaseRecord,
  type Document,
  type DocumentEntry,
  type DocumentWrite,
  type GenerationRecord,
  type GenerationState,
  type ModelTarget,
  type ProjectionFailure,
  type Query,
  type ReadModelSchema,
  type ReadModelStore,
  type SkipRecord,
  foldingIndexesOf,
} from './read-model-store.ts';
import { databaseFromUrl, describeDatabase, DUPLICATE_KEY, errorMessage, isStaleWriteError, redactUrlSecrets, translateError, unwrap } from './mongo-errors.ts';

export { databaseFromUrl, redactUrlSecrets } from './mongo-errors.ts';

export const DEFAULT_DATABASE = 'annals';
export const GENERATIONS_COLLECTION = 'projection_generations';
export const SKIPS_COLLECTION = 'projection_skips';
export const LEASES_COLLECTION = 'projection_leases';

export interface MongoConnectOptions {
  /** Database to use; defaults to the one named in the URL, else 'annals'. */
  database?: string;
  /** How long to wait for a reachable server before an operation fails (default 10 s). */
  serverSelectionTimeoutMS?: number;
}

interface StoredDocument {
  _id: string;
  _pos: string;
  doc: Document;
}

interface StoredFailure extends Omit<ProjectionFailure, 'position'> {
  position: string;
}

interface StoredGeneration {
  _id: string;
  projection: string;
  generation: number;
  version: number;
  state: GenerationState;
  checkpoint: string | null;
  failure: StoredFailure | null;
  createdAt: string;
  updatedAt: string;
  /** On a retired record: the generation whose activation retired it (lets an interrupted swap resume). */
  retiredBy?: number;
}

interface StoredLease {
  _id: string;
  holder: string;
  expiresAt: string;
}

interface StoredSkip {
  _id: string;
  projection: string;
  eventId: string;
  position: string;
  reason: string;
  actor: string;
  skippedAt: string;
}

/** MongoDB's rule for database names (Unix and Windows deployments alike). */
const DATABASE_NAME = /^[^/\\. "$*<>:|?\0]+$/;
const NAMESPACE_EXISTS = 48;
const NAMESPACE_NOT_FOUND = 26;
function generationId(projection: string, generation: number): string {
  return `${projection}:${generation}`;
}

export class MongoReadModelStore implements ReadModelStore {
  readonly #db: Db;
  readonly #client: MongoClient | undefined;
  readonly #generations: Collection<StoredGeneration>;
  readonly #skips: Collection<StoredSkip>;
  readonly #leases: Collection<StoredLease>;
  #systemIndexes: Promise<void> | undefined;
  /** Physical collection → the field its text index covers (`doc.<textField>`); only found ones are kept. */
  readonly #textPaths = new Map<string, { path: string; prefix: string[] }>();
  #closed = false;
  /** Commits of every process, where the server has change streams (a replica set); see watchOtherCommits. */
  #commitWatch: MongoCommitWatch | undefined;

  /**
   * Connects to `url` and checks the server answers. The database is `options.database`, else the one
   * named in the URL, else 'annals'. Fails with ReadModelUnavailableError (the message names the hosts,
   * never the credentials) when the server cannot be reached or refuses the login, and with
   * ReadModelError when the URL is malformed. The returned store owns the client: close() closes it.
   */
  static async connect(url: string, options: MongoConnectOptions = {}): Promise<MongoReadModelStore> {
    let client: MongoClient;
    try {
      client = new MongoClient(url, {
        appName: 'annals',
        ignoreUndefined: true,
        // A timeout named in the URL wins over our default (the driver's own is 30 s).
        ...(options.serverSelectionTimeoutMS !== undefined || !/[?&]serverSelectionTimeoutMS=/i.test(url)
          ? { serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 10_000 }
          : {}),
      });
    } catch (error) {
      // No cause: a parse error may quote the URL it rejected.
      throw new ReadModelError(`invalid MongoDB URL: ${redactUrlSecrets(errorMessage(error), url)}`);
    }
    const database = options.database ?? databaseFromUrl(url) ?? DEFAULT_DATABASE;
    if (!DATABASE_NAME.test(database) || Buffer.byteLength(database) > 63) {
      throw new ReadModelError(`invalid MongoDB database name ${JSON.stringify(database)}: 1 to 63 bytes, none of / \\ . space " $ * < > : | ?`);
    }
    const store = new MongoReadModelStore(client.db(database), { ownsClient: client });
    try {
      await client.connect();
      await client.db(database).command({ ping: 1 });
      // Other processes' commits are told by a change stream where the server has them (watchOtherCommits).
      if (await hasChangeStreams(client.db(database))) store.#commitWatch = new MongoCommitWatch(client.db(database), GENERATIONS_COLLECTION);
    } catch (error) {
      await client.close().catch(() => undefined);
      throw new ReadModelUnavailableError(
        `cannot connect to MongoDB at ${describeDatabase(client.db(database))}: ${redactUrlSecrets(errorMessage(unwrap(error)), url)}`,
        { cause: error },
      );
    }
    return store;
  }

  /**
   * A store on a database whose client the caller manages (and closes), unless `ownsClient` is given:
   * then close() closes that client.
   */
  constructor(db: Db, options: { ownsClient?: MongoClient } = {}) {
    this.#db = db;
    this.#client = options.ownsClient;
    this.#generations = db.collection<StoredGeneration>(GENERATIONS_COLLECTION);
    this.#skips = db.collection<StoredSkip>(SKIPS_COLLECTION);
    this.#leases = db.collection<StoredLease>(LEASES_COLLECTION);
  }

  get databaseName(): string {
    return this.#db.databaseName;
  }

  async createGeneration(
    schema: ReadModelSchema,
    generation: number,
    version: number,
    now: string,
    options: { deferIndexes?: boolean } = {},
  ): Promise<GenerationRecord> {
    assertProjectionName(schema.projection);
    assertGenerationNumber(generation);
    if (!Number.isSafeInteger(version) || version < 0) throw new ReadModelError(`invalid version ${String(version)}`);
    for (const [collection, spec] of Object.entries(schema.collections)) assertTextField(collection, spec);
    const names = Object.keys(schema.collections).map((collection) => physicalCollectionName(schema.projection, collection, generation));
    return this.#guard('create a generation', async () => {
      await this.#ensureSystemIndexes();
      for (const name of names) {
        try {
          await this.#db.createCollection(name);
        } catch (error) {
          if (!(error instanceof MongoServerError && error.code === NAMESPACE_EXISTS)) throw error;
        }
      }
      await this.#createIndexes(options.deferIndexes ? foldingIndexesOf(schema, { uniqueOnly: true }) : schema, generation);
      const record = await this.#generations.findOneAndUpdate(
        { _id: generationId(schema.projection, generation) },
        {
          $setOnInsert: {
            projection: schema.projection,
            generation,
            version,
            state: 'building',
            checkpoint: null,
            failure: null,
            createdAt: now,
            updatedAt: now,
          },
        },
        { upsert: true, returnDocument: 'after' },
      );
      if (!record) throw new ReadModelError(`generation ${generation} of ${schema.projection} was not recorded`);
      return toGenerationRecord(record);
    });
  }

  async createIndexes(schema: ReadModelSchema, generation: number): Promise<void> {
    assertProjectionName(schema.projection);
    assertGenerationNumber(generation);
    for (const [collection, spec] of Object.entries(schema.collections)) assertTextField(collection, spec);
    await this.#guard('create indexes', () => this.#createIndexes(schema, generation));
  }

  async #createIndexes(schema: ReadModelSchema, generation: number): Promise<void> {
    for (const [collection, spec] of Object.entries(schema.collections)) {
      const indexes = [...(spec.indexes ?? []).flatMap(toMongoIndexes), ...(spec.textField === undefined ? [] : [toMongoTextIndex(spec.textField, spec.textPrefix)])];
      // Same name and same definition: a no-op. Same name, other definition: the server refuses it.
      if (indexes.length > 0) await this.#db.collection(physicalCollectionName(schema.projection, collection, generation)).createIndexes(indexes);
    }
  }

  /**
   * Retires the active generation, then activates the new one: two single-document writes, no
   * transaction. The order is chosen so that two generations are never active at once (the unique partial
   * index would refuse it anyway). A crash between the two writes leaves none active, so readers see no
   * active generation until the same call is made again: it recognises its own interrupted swap (the
   * expected generation is retired, marked as retired by this one, and nothing is active) and finishes it.
   * Concurrent activations: only one can retire the expected generation (the retire is conditional on it
   * still being active), and with none expected only one activation passes the unique index; the other
   * gets GenerationConflictError.
   */
  async activateGeneration(projection: string, generation: number, expectedActive: number | null, now: string): Promise<void> {
    assertProjectionName(projection);
    assertGenerationNumber(generation);
    if (expectedActive !== null) assertGenerationNumber(expectedActive);
    const conflict = (actual: number | null) =>
      new GenerationConflictError(
        `cannot activate generation ${generation} of ${projection}: expected ${expectedActive ?? 'none'} to be active, found ${actual ?? 'none'}`,
      );
    await this.#guard('activate a generation', async () => {
      await this.#ensureSystemIndexes();
      const target = await this.#generations.findOne({ _id: generationId(projection, generation) });
      if (!target) throw new ReadModelError(`generation ${generation} of ${projection} does not exist`);
      const active = await this.#generations.findOne({ projection, state: 'active' });
      const activeNumber = active?.generation ?? null;
      if (activeNumber === generation && expectedActive === generation) return;

      if (activeNumber !== expectedActive) {
        const interrupted =
          activeNumber === null &&
          expectedActive !== null &&
          (await this.#generations.countDocuments(
            { _id: generationId(projection, expectedActive), state: 'retired', retiredBy: generation },
            { limit: 1 },
          )) > 0;
        if (!interrupted) throw conflict(activeNumber);
      } else if (expectedActive !== null) {
        const retired = await this.#generations.updateOne(
          { _id: generationId(projection, expectedActive), state: 'active' },
          { $set: { state: 'retired', retiredBy: generation, updatedAt: now } },
        );
        if (retired.matchedCount === 0) throw conflict(await this.activeGeneration(projection));
      }

      try {
        const activated = await this.#generations.updateOne(
          { _id: generationId(projection, generation) },
          { $set: { state: 'active', updatedAt: now }, $unset: { retiredBy: '' } },
        );
        if (activated.matchedCount === 0) {
          throw new ReadModelError(`generation ${generation} of ${projection} was dropped while being activated`);
        }
      } catch (error) {
        if (error instanceof MongoServerError && error.code === DUPLICATE_KEY) {
          // Another activation made a generation active between our check and our write: it won.
          throw conflict(await this.activeGeneration(projection));
        }
        if (expectedActive !== null) {
          // Put the previous generation back rather than leave none active (best effort: a failure
          // here leaves the interrupted swap for a retry to finish).
          await this.#generations
            .updateOne(
              { _id: generationId(projection, expectedActive), state: 'retired', retiredBy: generation },
              { $set: { state: 'active', updatedAt: now }, $unset: { retiredBy: '' } },
            )
            .catch(() => undefined);
        }
        throw error;
      }
    });
  }

  /** Drops the collections first, then the record: a crash in between leaves a record a retry can drop. */
  async dropGeneration(schema: ReadModelSchema, generation: number): Promise<void> {
    assertProjectionName(schema.projection);
    assertGenerationNumber(generation);
    const names = Object.keys(schema.collections).map((collection) => physicalCollectionName(schema.projection, collection, generation));
    await this.#guard('drop a generation', async () => {
      for (const name of names) {
        this.#textPaths.delete(name);
        await this.#db.dropCollection(name); // false, not an error, when absent (its text index goes with it)
      }
      await this.#generations.deleteOne({ _id: generationId(schema.projection, generation) });
      await this.#leases.deleteOne({ _id: generationId(schema.projection, generation) });
    });
  }

  async getGeneration(projection: string, generation: number): Promise<GenerationRecord | null> {
    assertProjectionName(projection);
    assertGenerationNumber(generation);
    return this.#guard('read a generation', async () => {
      const record = await this.#generations.findOne({ _id: generationId(projection, generation) });
      return record ? toGenerationRecord(record) : null;
    });
  }

  /** Ordered by projection, then generation. */
  async listGenerations(projection?: string): Promise<GenerationRecord[]> {
    if (projection !== undefined) assertProjectionName(projection);
    return this.#guard('list generations', async () => {
      const records = await this.#generations
        .find(projection === undefined ? {} : { projection })
        .sort([
          ['projection', 1],
          ['generation', 1],
        ])
        .toArray();
      return records.map(toGenerationRecord);
    });
  }

  async activeGeneration(projection: string): Promise<number | null> {
    assertProjectionName(projection);
    return this.#guard('read the active generation', async () => {
      const record = await this.#generations.findOne({ projection, state: 'active' }, { projection: { generation: 1 } });
      return record ? record.generation : null;
    });
  }

  async setFailure(target: ModelTarget, failure: ProjectionFailure | null, now: string): Promise<void> {
    assertTarget(target);
    const stored: StoredFailure | null = failure === null ? null : { ...failure, position: encodePosition(failure.position) };
    await this.#guard('record a failure', async () => {
      const result = await this.#generations.updateOne(
        { _id: generationId(target.projection, target.generation) },
        { $set: { failure: stored, updatedAt: now } },
      );
      if (result.matchedCount === 0) throw missingGeneration(target);
    });
  }

  /** Records the skip; recording the same event again keeps the first record. */
  async addSkip(skip: SkipRecord): Promise<void> {
    assertProjectionName(skip.projection);
    const position = encodePosition(skip.position);
    await this.#guard('record a skip', async () => {
      await this.#ensureSystemIndexes();
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
    });
  }

  /** Ordered by position. */
  async listSkips(projection: string): Promise<SkipRecord[]> {
    assertProjectionName(projection);
    return this.#guard('list skips', async () => {
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
    });
  }

  /**
   * Replay-safe, not atomic: each collection's writes go in one unordered bulk write, each guarded by
   * position (`_pos < position`): a put replaces the stored document or inserts it (upsert), a delete
   * removes it. When a newer version is stored the put's filter matches nothing and its upsert collides
   * on `_id` (E11000): that is the "already newer" outcome and is ignored; any other error fails the
   * commit before the checkpoint moves. Then the checkpoint is stored, only if it is ahead of the stored
   * one. Several writes to one document in a batch are reduced to the one with the highest position.
   */
  async commit(target: ModelTarget, writes: readonly DocumentWrite[], checkpoint: bigint, now: string, options: CommitOptions = {}): Promise<void> {
    assertTarget(target);
    const encodedCheckpoint = encodePosition(checkpoint);
    const batches = new Map<string, { collection: string; writes: Map<string, DocumentWrite> }>();
    for (const write of writes) {
      assertWrite(write);
      const name = physicalCollectionName(target.projection, write.collection, target.generation);
      let batch = batches.get(name);
      if (!batch) batches.set(name, (batch = { collection: write.collection, writes: new Map() }));
      const previous = batch.writes.get(write.id);
      if (!previous || previous.position <= write.position) batch.writes.set(write.id, write);
    }
    await this.#guard('commit', async () => {
      // Without a transaction the check is just before the writes: it narrows, not closes, the window in
      // which a projector that stalled past its TTL writes after a takeover (the position guards bound
      // what such a write can do: it never replaces a newer version of a document).
      if (options.leaseHolder !== undefined) {
        const lease = await this.#leases.findOne({ _id: generationId(target.projection, target.generation) });
        if (lease?.holder !== options.leaseHolder) throw new LeaseLostError(target, options.leaseHolder, lease?.holder ?? null);
      }
      const outcomes = await Promise.allSettled([...batches].map(([name, batch]) => this.#applyWrites(name, batch.collection, [...batch.writes.values()])));
      const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
      if (failed) throw failed.reason;
      const id = generationId(target.projection, target.generation);
      const stored = await this.#generations.updateOne(
        { _id: id, $or: [{ checkpoint: null }, { checkpoint: { $lt: encodedCheckpoint } }] },
        { $set: { checkpoint: encodedCheckpoint, updatedAt: now } },
      );
      if (stored.matchedCount === 0 && (await this.#generations.countDocuments({ _id: id }, { limit: 1 })) === 0) {
        throw missingGeneration(target);
      }
    });
  }

  /**
   * The writes of one collection, as if applied one by one in position order (see ReadModelStore.commit):
   * the deletes first (they can only free unique values), unordered; then the puts in position order, in
   * an ordered bulk write. An unordered bulk write runs its updates before its deletes, so a batch that
   * deletes A and gives A's unique value to B hit E11000 and was retried forever. A put that finds a newer
   * version stored collides on `_id` (the stale write of a replay): it is passed over and the rest of the
   * puts are sent again. A collision on any other index is UniqueConstraintError.
   */
  async #applyWrites(collectionName: string, collection: string, writes: readonly DocumentWrite[]): Promise<void> {
    const { deletes, puts } = planCollectionWrites(writes);
    const target = this.#db.collection<StoredDocument>(collectionName);
    if (deletes.length > 0) await this.#bulk(target, deletes, false, collectionName, collection);
    let rest = puts;
    while (rest.length > 0) {
      const failedAt = await this.#bulk(target, rest, true, collectionName, collection);
      if (failedAt === null) return;
      rest = rest.slice(failedAt + 1);
    }
  }

  /**
   * One bulk write. Returns null when done, or (ordered) the index of a stale put the server stopped at.
   * Unordered, stale puts are simply passed over.
   */
  async #bulk(target: Collection<StoredDocument>, writes: readonly DocumentWrite[], ordered: boolean, collectionName: string, collection: string): Promise<number | null> {
    try {
      await target.bulkWrite(writes.map(toBulkOperation), { ordered, ignoreUndefined: true });
      return null;
    } catch (error) {
      if (!(error instanceof MongoBulkWriteError) || error.errorResponse instanceof Error || error.result?.getWriteConcernError()) throw error;
      const writeErrors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
      const other = writeErrors.find((e) => !isStaleWriteError(e.code, e.errmsg));
      if (other) {
        const id = writes[other.index]?.id ?? null;
        if (other.code === DUPLICATE_KEY) {
          const index = (/index: (\S+)/.exec(other.errmsg ?? '')?.[1] ?? '?').replace(UNIQUE_INDEX_SUFFIX, '');
          throw new UniqueConstraintError(collection, index, id, other.errmsg ?? 'duplicate key');
        }
        throw new ReadModelError(`write of ${JSON.stringify(id)} in ${collectionName} failed: ${other.errmsg ?? `code ${other.code}`}`, { cause: error });
      }
      return ordered ? Math.max(...writeErrors.map((e) => e.index)) : null;
    }
  }

  /** One conditional upsert: a lease held by another, unexpired, makes the upsert collide on `_id` (false). */
  async acquireLease(target: ModelTarget, holder: string, now: string, ttlMs: number, options: { takeOverFrom?: string } = {}): Promise<boolean> {
    assertTarget(target);
    const expiresAt = new Date(Date.parse(now) + ttlMs).toISOString();
    return this.#guard('take the projector lease', async () => {
      try {
        await this.#leases.updateOne(
          { _id: generationId(target.projection, target.generation), $or: [{ holder: { $in: [holder, options.takeOverFrom ?? holder] } }, { expiresAt: { $lte: now } }] },
          { $set: { holder, expiresAt } },
          { upsert: true },
        );
        return true;
      } catch (error) {
        if (error instanceof MongoServerError && error.code === DUPLICATE_KEY) return false;
        throw error;
      }
    });
  }

  async releaseLease(target: ModelTarget, holder: string): Promise<void> {
    assertTarget(target);
    await this.#guard('release the projector lease', async () => {
      await this.#leases.deleteOne({ _id: generationId(target.projection, target.generation), holder });
    });
  }

  async getLease(target: ModelTarget): Promise<LeaseRecord | null> {
    assertTarget(target);
    return this.#guard('read the projector lease', async () => {
      const lease = await this.#leases.findOne({ _id: generationId(target.projection, target.generation) });
      return lease ? { holder: lease.holder, expiresAt: lease.expiresAt } : null;
    });
  }

  async get(target: ModelTarget, collection: string, id: string): Promise<Document | null> {
    const name = physicalCollectionName(target.projection, collection, target.generation);
    return this.#guard('read a document', async () => {
      const stored = await this.#db.collection<StoredDocument>(name).findOne({ _id: id }, { projection: { [DOC_FIELD]: 1 } });
      return stored ? stored.doc : null;
    });
  }

  async getMany(target: ModelTarget, collection: string, ids: readonly string[]): Promise<DocumentEntry[]> {
    assertGetManyIds(ids);
    if (ids.length === 0) return [];
    const name = physicalCollectionName(target.projection, collection, target.generation);
    return this.#guard('read documents', async () => {
      const stored = await this.#db.collection<StoredDocument>(name).find({ _id: { $in: [...ids] } }, { projection: { [DOC_FIELD]: 1 } }).toArray();
      return stored.map((entry) => ({ id: entry._id, doc: entry.doc }));
    });
  }

  async find(target: ModelTarget, collection: string, query: Query = {}): Promise<Document[]> {
    return (await this.findWithIds(target, collection, query)).map((entry) => entry.doc);
  }

  /**
   * With a text condition and no sort, most relevant first by MongoDB's text score (more occurrences in
   * a shorter text score higher), ties by id.
   */
  async findWithIds(target: ModelTarget, collection: string, query: Query = {}): Promise<DocumentEntry[]> {
    assertFields(query.fields);
    // Only the fields asked for leave the server (Query.fields).
    const projection = query.fields === undefined ? { [DOC_FIELD]: 1 } : Object.fromEntries(query.fields.map((field) => [`${DOC_FIELD}.${field}`, 1]));
    const stored = await this.#find(target, collection, query, projection);
    return stored.map((s) => ({ id: s._id, doc: s.doc ?? {} }));
  }

  async findStrings(target: ModelTarget, collection: string, query: Omit<Query, 'fields'>, field: string): Promise<Array<string | null>> {
    assertFields([field]);
    const stored = await this.#find(target, collection, query, { [`${DOC_FIELD}.${field}`]: 1 });
    return stored.map((s) => {
      const value = s.doc?.[field];
      return typeof value === 'string' ? value : null;
    });
  }

  /** The stored documents a query finds, with the projection given. */
  async #find(target: ModelTarget, collection: string, query: Query, projection: Record<string, number>): Promise<StoredDocument[]> {
    const name = physicalCollectionName(target.projection, collection, target.generation);
    assertAfter(query);
    // The keyset condition goes under $or (one clause): the text condition (toMongoText) uses $and.
    const filter = query.after === undefined ? toMongoFilter(query.filter) : { ...toMongoFilter(query.filter), $or: [toMongoAfter(query.sort, query.after)] };
    const { skip, limit } = toMongoPaging(query);
    if (query.text !== undefined) assertTextTokens(query.text);
    const sort: Sort =
      query.text !== undefined && query.sort === undefined
        ? { score: { $meta: 'textScore' }, _id: 1 }
        : toMongoSort(query.sort);
    return this.#guard('find documents', async () => {
      const where = await this.#withText(name, target, collection, filter, query.text);
      if (where === null || limit === 0) return [];
      return this.#db.collection<StoredDocument>(name).find(where, { projection }).sort(sort).skip(skip).limit(limit).toArray();
    });
  }

  async count(target: ModelTarget, collection: string, filter?: Query['filter'], text?: Query['text']): Promise<number> {
    const name = physicalCollectionName(target.projection, collection, target.generation);
    const mongoFilter = toMongoFilter(filter);
    if (text !== undefined) assertTextTokens(text);
    return this.#guard('count documents', async () => {
      const where = await this.#withText(name, target, collection, mongoFilter, text);
      return where === null ? 0 : this.#db.collection<StoredDocument>(name).countDocuments(where);
    });
  }

  /**
   * The filter with the text condition merged in; null when the condition matches nothing (no tokens, or
   * the collection does not exist). Fails when the collection has no text index.
   */
  async #withText(name: string, target: ModelTarget, collection: string, filter: MongoFilter, text: Query['text']): Promise<MongoFilter | null> {
    if (text === undefined) return filter;
    const index = await this.#textPath(name, target, collection);
    if (index === null || text.length === 0) return null;
    assertTextPrefix(filter, index.prefix, collection);
    return { ...filter, ...toMongoText(index.path, text) };
  }

  /** The field the collection's text index covers, and its prefix fields; null when the collection does not exist. */
  async #textPath(name: string, target: ModelTarget, collection: string): Promise<{ path: string; prefix: string[] } | null> {
    const cached = this.#textPaths.get(name);
    if (cached !== undefined) return cached;
    let indexes: Array<{ name?: string; weights?: Record<string, unknown>; key?: Record<string, unknown> }>;
    try {
      indexes = await this.#db.collection(name).listIndexes().toArray();
    } catch (error) {
      if (error instanceof MongoServerError && error.code === NAMESPACE_NOT_FOUND) return null;
      throw error;
    }
    const textIndex = indexes.find((index) => index.name === TEXT_INDEX_NAME);
    const paths = Object.keys(textIndex?.weights ?? {});
    if (paths.length !== 1) {
      throw new ReadModelError(
        `collection ${collection} of ${target.projection} (generation ${target.generation}) has no text index: it declares no textField, or its indexes are not created yet`,
      );
    }
    const found = { path: paths[0]!, prefix: textIndexPrefix(textIndex?.key ?? {}) };
    this.#textPaths.set(name, found);
    return found;
  }

  async ping(): Promise<void> {
    await this.#guard('ping', async () => {
      await this.#db.command({ ping: 1 });
    });
  }

  /**
   * ReadModelStore.watchOtherCommits, on a server with change streams (a replica set, a mongos: connect()
   * asks): told of every commit, through a change stream on the generation records; urgency changes
   * nothing (the stream tells at once). Undefined on a standalone server or FerretDB: callers poll.
   */
  get watchOtherCommits(): ((listener: () => void, options?: { urgent?: boolean }) => () => void) | undefined {
    const watch = this.#commitWatch;
    return watch && ((listener) => watch.listen(listener));
  }

  /** Closes the client if this store owns it (made by connect()); idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#commitWatch?.close();
    await this.#client?.close();
  }

  /** Indexes of the bookkeeping collections, created once per store (idempotent on the server). */
  #ensureSystemIndexes(): Promise<void> {
    this.#systemIndexes ??= (async () => {
      await this.#generations.createIndexes([
        { name: 'projection_generation', key: { projection: 1, generation: 1 }, unique: true },
        {
          name: 'one_active_per_projection',
          key: { projection: 1 },
          unique: true,
          partialFilterExpression: { state: 'active' },
        },
      ]);
      await this.#skips.createIndexes([{ name: 'projection_position', key: { projection: 1, position: 1 } }]);
    })().catch((error: unknown) => {
      this.#systemIndexes = undefined;
      throw error;
    });
    return this.#systemIndexes;
  }

  /** Runs `operation`, turning driver errors into the port's: unreachable server → ReadModelUnavailableError. */
  async #guard<T>(what: string, operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw translateError(error, what, this.#db);
    }
  }
}

/** A write as a bulk operation, guarded by position (see commit). */
function toBulkOperation(write: DocumentWrite): AnyBulkWriteOperation<StoredDocument> {
  const position = encodePosition(write.position);
  const filter = { _id: write.id, _pos: { $lt: position } };
  return write.doc === null ? { deleteOne: { filter } } : { replaceOne: { filter, replacement: { _pos: position, doc: write.doc }, upsert: true } };
}

function assertTarget(target: ModelTarget): void {
  assertProjectionName(target.projection);
  assertGenerationNumber(target.generation);
}

function assertWrite(write: DocumentWrite): void {
  assertCollectionName(write.collection);
  if (typeof write.id !== 'string' || write.id === '') throw new ReadModelError(`invalid document id ${JSON.stringify(write.id)}`);
  if (typeof write.position !== 'bigint') throw new ReadModelError(`write of ${write.id} has no bigint position`);
  if (write.doc !== null && (typeof write.doc !== 'object' || Array.isArray(write.doc))) {
    throw new ReadModelError(`write of ${write.id}: a document is an object, or null to delete it`);
  }
}

function missingGeneration(target: ModelTarget): ReadModelError {
  return new ReadModelError(`generation ${target.generation} of ${target.projection} does not exist`);
}

function toGenerationRecord(stored: StoredGeneration): GenerationRecord {
  return {
    projection: stored.projection,
    generation: stored.generation,
    version: stored.version,
    state: stored.state,
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

/**
 * The read-model port on MongoDB (official driver), for scale-out: public-API replicas read from it
 * while one projector writes.
 *
 * Layout in one database:
 * - `rm.<projection>.<collection>.g<generation>`: one physical collection per collection and generation,
 *   holding `{_id: id, _pos: <position, 20-digit zero-padded>, doc: {...the document...}, _unique?: {...}}`.
 *   Filters, sorts and indexes address `doc.<path>`, so document keys never clash with the reserved ones;
 *   `_unique` holds the document's keys in the collection's unique indexes (mongo-unique-keys.ts).
 * - `projection_generations` and `projection_active`: the generations and which one of each projection is
 *   active (mongo-generation-registry.ts); `projection_journal`: chunks of large journaled commits
 *   (mongo-commits.ts).
 * - `projection_skips`: one record per projection and skipped event (`_id` "<projection>:<eventId>").
 * - `projection_leases`: the projectors' leases, one per generation.
 * - A collection with a textField has a text index on `doc.<textField>` (created with its other indexes),
 *   which Query.text searches; readers find the field from the index itself (listIndexes), so a replica
 *   that never saw the schema can search too.
 *
 * Commits land whole: in a transaction on a replica set, through a journal elsewhere (mongo-commits.ts).
 * Positions are stored as fixed-width strings: text order is numeric order, and no bigint ever reaches
 * BSON or JSON. Driver errors and URL handling: ./mongo-errors.ts.
 */
import { MongoClient, MongoServerError, type Collection, type Db, type Sort } from 'mongodb';
import { decodePosition, encodePosition } from '../event-store/position.ts';
import {
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
import { MongoLeases } from './mongo-leases.ts';
import {
  assertCollectionName,
  assertProjectionName,
  assertTextField,
  assertTextTokens,
  assertAfter,
  assertGetManyIds,
  assertFields,
  ReadModelError,
  ReadModelUnavailableError,
  TextSearchUnavailableError,
  type CommitOptions,
  type LeaseRecord,
  type Document,
  type DocumentEntry,
  type DocumentWrite,
  type GenerationRecord,
  type ModelTarget,
  type ProjectionFailure,
  type Query,
  type ReadModelSchema,
  type ReadModelStore,
  type SkipRecord,
  foldingIndexesOf,
} from './read-model-store.ts';
import { databaseFromUrl, describeDatabase, errorMessage, redactUrlSecrets, translateError, unwrap } from './mongo-errors.ts';
import { assertTarget, generationId, GENERATIONS_COLLECTION, MongoGenerationRegistry } from './mongo-generation-registry.ts';
import { DEFAULT_DATABASE, isValidDatabaseName } from './mongo-url.ts';
import { MongoCommits, type CommitMode, type StoredDocument } from './mongo-commits.ts';
import { uniqueKeySpecsOf } from './mongo-unique-keys.ts';
import { MongoDeepPages } from './mongo-deep-pages.ts';

export { databaseFromUrl, redactUrlSecrets } from './mongo-errors.ts';
export { GENERATIONS_COLLECTION, ACTIVE_COLLECTION } from './mongo-generation-registry.ts';
export type { CommitMode } from './mongo-commits.ts';

export { DEFAULT_DATABASE } from './mongo-url.ts';
export const SKIPS_COLLECTION = 'projection_skips';
export { LEASES_COLLECTION } from './mongo-leases.ts';

export interface MongoConnectOptions {
  /** Database to use; defaults to the one named in the URL, else 'annals'. */
  database?: string;
  /** How long to wait for a reachable server before an operation fails (default 10 s). */
  serverSelectionTimeoutMS?: number;
  /** How commits land (see mongo-commits.ts): detected from the server when unset. */
  commitMode?: CommitMode;
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

const NAMESPACE_EXISTS = 48;
/** What a server without text indexes answers a text index with: IndexNotFound ("can't find index with key"), NotImplemented. */
const TEXT_INDEX_UNSUPPORTED = new Set([27, 238]);
const NAMESPACE_NOT_FOUND = 26;

/** Throws ReadModelError unless `database` is a name MongoDB takes. */
export function assertDatabaseName(database: string): void {
  if (!isValidDatabaseName(database)) {
    throw new ReadModelError(`invalid MongoDB database name ${JSON.stringify(database)}: 1 to 63 bytes, none of / \\ . space " $ * < > : | ?`);
  }
}

export class MongoReadModelStore implements ReadModelStore {
  readonly #db: Db;
  readonly #client: MongoClient | undefined;
  readonly #registry: MongoGenerationRegistry;
  readonly #commits: MongoCommits;
  readonly #skips: Collection<StoredSkip>;
  readonly #leases: MongoLeases;
  #systemIndexes: Promise<void> | undefined;
  /** Physical collection → the field its text index covers (`doc.<textField>`); only found ones are kept. */
  readonly #textPaths = new Map<string, { path: string; prefix: string[] }>();
  readonly #deepPages: MongoDeepPages;
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
    assertDatabaseName(database);
    const store = new MongoReadModelStore(client.db(database), { ownsClient: client, ...(options.commitMode ? { commitMode: options.commitMode } : {}) });
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
  constructor(db: Db, options: { ownsClient?: MongoClient; commitMode?: CommitMode; deepPageBlockSize?: number } = {}) {
    this.#db = db;
    this.#deepPages = new MongoDeepPages(options.deepPageBlockSize === undefined ? {} : { blockSize: options.deepPageBlockSize });
    this.#client = options.ownsClient;
    this.#registry = new MongoGenerationRegistry(db);
    this.#skips = db.collection<StoredSkip>(SKIPS_COLLECTION);
    this.#leases = new MongoLeases(db, this.#registry);
    this.#commits = new MongoCommits(db, this.#registry, this.#leases, options.commitMode ? { mode: options.commitMode } : {});
  }

  get databaseName(): string {
    return this.#db.databaseName;
  }

  /** How this store's commits land: in transactions (a replica set, mongos), or through the journal (mongo-commits.ts). */
  async commitMode(): Promise<CommitMode> {
    return this.#guard('find how commits land', () => this.#commits.mode());
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
    const uniques = uniqueKeySpecsOf(schema);
    return this.#guard('create a generation', async () => {
      await this.#ensureSystemIndexes();
      for (const name of names) {
        try {
          await this.#db.createCollection(name);
        } catch (error) {
          if (!(error instanceof MongoServerError && error.code === NAMESPACE_EXISTS)) throw error;
        }
      }
      // Recorded before the indexes: a commit reads what to write under `_unique` from the record.
      const record = await this.#registry.create(schema.projection, generation, version, now, uniques);
      await this.#createIndexes(options.deferIndexes ? foldingIndexesOf(schema, { uniqueOnly: true }) : schema, generation);
      return record;
    });
  }

  async createIndexes(schema: ReadModelSchema, generation: number): Promise<void> {
    assertProjectionName(schema.projection);
    assertGenerationNumber(generation);
    for (const [collection, spec] of Object.entries(schema.collections)) assertTextField(collection, spec);
    await this.#guard('create indexes', () => this.#createIndexes(schema, generation));
  }

  /**
   * Creates the indexes the collections lack. One that exists under its name is left as it is when its keys
   * are the ones declared, and refused with ReadModelError otherwise (a changed definition needs a new
   * generation); a unique index made by an earlier version (partial, over the fields) is kept as it is.
   */
  async #createIndexes(schema: ReadModelSchema, generation: number): Promise<void> {
    for (const [collection, spec] of Object.entries(schema.collections)) {
      const name = physicalCollectionName(schema.projection, collection, generation);
      const declared = [...(spec.indexes ?? []).flatMap(toMongoIndexes), ...(spec.textField === undefined ? [] : [toMongoTextIndex(spec.textField, spec.textPrefix)])];
      if (declared.length === 0) continue;
      const unsupported = new Set(spec.textField === undefined ? [] : await this.#withoutTextIndex(schema.projection, generation));
      const existing = new Map((await this.#db.collection(name).listIndexes().toArray()).map((index) => [index.name as string, index]));
      const missing = declared.filter((index) => {
        if (index.name === TEXT_INDEX_NAME && unsupported.has(collection)) return false;
        const found = existing.get(index.name);
        if (!found) return true;
        const legacyUnique = index.name.endsWith(UNIQUE_INDEX_SUFFIX) && 'partialFilterExpression' in found;
        if (index.name !== TEXT_INDEX_NAME && !legacyUnique && JSON.stringify(found['key']) !== JSON.stringify(index.key)) {
          throw new ReadModelError(`index ${index.name} of ${collection} (${schema.projection} generation ${generation}) exists with other keys: ${JSON.stringify(found['key'])}`);
        }
        return false;
      });
      try {
        if (missing.length > 0) await this.#db.collection(name).createIndexes(missing.filter((index) => index.name !== TEXT_INDEX_NAME));
        const text = missing.find((index) => index.name === TEXT_INDEX_NAME);
        if (text) await this.#createTextIndex(schema.projection, generation, collection, name, text);
      } finally {
        this.#commits.forgetIndexes([name], { projection: schema.projection, generation });
      }
    }
  }

  /**
   * A collection's text index. A server that has no text indexes (it refuses the key or the options as
   * unknown: FerretDB v1) gets none, and the generation's record notes it: the read model works without
   * search, and text queries fail with TextSearchUnavailableError, on every replica.
   */
  async #createTextIndex(projection: string, generation: number, collection: string, name: string, index: object): Promise<void> {
    try {
      await this.#db.collection(name).createIndexes([index as never]);
    } catch (error) {
      if (!(error instanceof MongoServerError && TEXT_INDEX_UNSUPPORTED.has(error.code as number))) throw error;
      await this.#registry.records.updateOne({ _id: generationId(projection, generation) }, { $addToSet: { withoutTextIndex: collection } });
    }
  }

  /**
   * One conditional write of the projection's active pointer (mongo-generation-registry.ts): readers see the
   * old generation or the new one, never none. Concurrent activations with one expectation: one wins, the
   * others get GenerationConflictError.
   */
  async activateGeneration(projection: string, generation: number, expectedActive: number | null, now: string): Promise<void> {
    assertProjectionName(projection);
    assertGenerationNumber(generation);
    if (expectedActive !== null) assertGenerationNumber(expectedActive);
    await this.#guard('activate a generation', async () => {
      await this.#ensureSystemIndexes();
      await this.#registry.activate(projection, generation, expectedActive, now);
    });
  }

  /**
   * Out of the active pointer first (readers then see none active, not a generation without collections),
   * then the collections, then the record: a crash in between leaves a record a retry can drop.
   */
  async dropGeneration(schema: ReadModelSchema, generation: number): Promise<void> {
    assertProjectionName(schema.projection);
    assertGenerationNumber(generation);
    const names = Object.keys(schema.collections).map((collection) => physicalCollectionName(schema.projection, collection, generation));
    await this.#guard('drop a generation', async () => {
      await this.#registry.dropPointer(schema.projection, generation, new Date().toISOString());
      for (const name of names) {
        this.#textPaths.delete(name);
        await this.#db.dropCollection(name); // false, not an error, when absent (its text index goes with it)
      }
      this.#commits.forgetIndexes(names, { projection: schema.projection, generation });
      this.#deepPages.forget(names);
      await this.#registry.dropRecord(schema.projection, generation);
      await this.#leases.drop({ projection: schema.projection, generation });
    });
  }

  async getGeneration(projection: string, generation: number): Promise<GenerationRecord | null> {
    assertProjectionName(projection);
    assertGenerationNumber(generation);
    return this.#guard('read a generation', () => this.#registry.get(projection, generation));
  }

  /** Ordered by projection, then generation. */
  async listGenerations(projection?: string): Promise<GenerationRecord[]> {
    if (projection !== undefined) assertProjectionName(projection);
    return this.#guard('list generations', () => this.#registry.list(projection));
  }

  async activeGeneration(projection: string): Promise<number | null> {
    assertProjectionName(projection);
    return this.#guard('read the active generation', () => this.#registry.active(projection));
  }

  async setFailure(target: ModelTarget, failure: ProjectionFailure | null, now: string): Promise<void> {
    assertTarget(target);
    await this.#guard('record a failure', () => this.#registry.setFailure(target, failure, now));
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

  /** Lands whole (mongo-commits.ts). Several writes to one document in a batch count as the one with the highest position. */
  async commit(target: ModelTarget, writes: readonly DocumentWrite[], checkpoint: bigint, now: string, options: CommitOptions = {}): Promise<void> {
    assertTarget(target);
    encodePosition(checkpoint);
    for (const write of writes) assertWrite(write);
    await this.#guard('commit', () => this.#commits.commit(target, writes, checkpoint, now, options));
  }

  async completeInterruptedCommit(target: ModelTarget): Promise<boolean> {
    assertTarget(target);
    return this.#guard('complete an interrupted commit', () => this.#commits.completeInterrupted(target));
  }

  /** One conditional upsert (mongo-leases.ts): a lease held by another, unexpired, makes it collide on `_id` (false). */
  async acquireLease(target: ModelTarget, holder: string, now: string, ttlMs: number, options: { takeOverFrom?: string } = {}): Promise<boolean> {
    assertTarget(target);
    return this.#guard('take the projector lease', () => this.#leases.acquire(target, holder, now, ttlMs, options.takeOverFrom));
  }

  async releaseLease(target: ModelTarget, holder: string): Promise<void> {
    assertTarget(target);
    await this.#guard('release the projector lease', () => this.#leases.release(target, holder));
  }

  async getLease(target: ModelTarget): Promise<LeaseRecord | null> {
    assertTarget(target);
    return this.#guard('read the projector lease', () => this.#leases.get(target));
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
      const documents = this.#db.collection<StoredDocument>(name);
      let from = where;
      let skipped = skip;
      // A deep page of a sorted list: a range from its block's first key (mongo-deep-pages.ts).
      const mongoSort = toMongoSort(query.sort);
      if (query.text === undefined && query.after === undefined && skip >= this.#deepPages.blockSize && mongoSort.length - 1 === (query.sort?.length ?? 0)) {
        const fields = mongoSort.slice(0, -1).map(([path]) => path.slice(DOC_FIELD.length + 1));
        const list = { collection: documents as unknown as Collection<Document>, filter: where, sort: mongoSort, fields, stamp: await this.#commitStamp(target, collection) };
        const start = await this.#deepPages.locate(list, skip);
        if (start === 'beyond') return [];
        if (start !== null) {
          from = { ...where, $or: [toMongoAfter(query.sort, start.after)] };
          skipped = start.skip;
        }
      }
      return documents.find(from, { projection }).sort(sort).skip(skipped).limit(limit).toArray();
    });
  }

  /** The checkpoint of the last commit that wrote the collection (of one written before stamps: the generation's). */
  async #commitStamp(target: ModelTarget, collection: string): Promise<string> {
    const record = await this.#registry.records.findOne({ _id: generationId(target.projection, target.generation) }, { projection: { checkpoint: 1, [`stamps.${collection}`]: 1 } });
    return record?.stamps?.[collection] ?? record?.checkpoint ?? '';
  }

  /** Deep pages read through a block index (`counted`), and with skip() (`offset`), since the store opened. */
  deepPageReads(): { counted: number; offset: number } {
    return { ...this.#deepPages.reads };
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
      if ((await this.#withoutTextIndex(target.projection, target.generation)).includes(collection)) {
        throw new TextSearchUnavailableError(`the MongoDB server of the read models has no text indexes: ${collection} of ${target.projection} cannot be searched`);
      }
      throw new ReadModelError(
        `collection ${collection} of ${target.projection} (generation ${target.generation}) has no text index: it declares no textField, or its indexes are not created yet`,
      );
    }
    const found = { path: paths[0]!, prefix: textIndexPrefix(textIndex?.key ?? {}) };
    this.#textPaths.set(name, found);
    return found;
  }

  /** The collections of a generation whose text index the server could not build. */
  async #withoutTextIndex(projection: string, generation: number): Promise<string[]> {
    const record = await this.#registry.records.findOne({ _id: generationId(projection, generation) }, { projection: { withoutTextIndex: 1 } });
    return record?.withoutTextIndex ?? [];
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
      await this.#registry.records.createIndexes([{ name: 'projection_generation', key: { projection: 1, generation: 1 }, unique: true }]);
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

function assertWrite(write: DocumentWrite): void {
  assertCollectionName(write.collection);
  if (typeof write.id !== 'string' || write.id === '') throw new ReadModelError(`invalid document id ${JSON.stringify(write.id)}`);
  if (typeof write.position !== 'bigint') throw new ReadModelError(`write of ${write.id} has no bigint position`);
  if (write.doc !== null && (typeof write.doc !== 'object' || Array.isArray(write.doc))) {
    throw new ReadModelError(`write of ${write.id}: a document is an object, or null to delete it`);
  }
}

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
import { MongoClient, MongoServerError, type Db } from 'mongodb';
import { encodePosition } from '../event-store/position.ts';
import {
  physicalCollectionName,
  assertGenerationNumber,
} from './mongo-query.ts';
import { hasChangeStreams, MongoCommitWatch } from './mongo-commit-watch.ts';
import { MongoLeases } from './mongo-leases.ts';
import {
  assertCollectionName,
  assertProjectionName,
  assertTextField,
  ReadModelError,
  ReadModelUnavailableError,
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
import { assertTarget, GENERATIONS_COLLECTION, MongoGenerationRegistry } from './mongo-generation-registry.ts';
import { DEFAULT_DATABASE, isValidDatabaseName } from './mongo-url.ts';
import { MongoCommits, type CommitMode } from './mongo-commits.ts';
import { uniqueKeySpecsOf } from './mongo-unique-keys.ts';
import { MongoDeepPages } from './mongo-deep-pages.ts';
import { MongoDocumentReads } from './mongo-document-reads.ts';
import { createDeclaredIndexes } from './mongo-generation-indexes.ts';
import { MongoSkips } from './mongo-skips.ts';
import { MongoTextSearch } from './mongo-text-search.ts';

export { databaseFromUrl, redactUrlSecrets } from './mongo-errors.ts';
export { GENERATIONS_COLLECTION, ACTIVE_COLLECTION } from './mongo-generation-registry.ts';
export type { CommitMode } from './mongo-commits.ts';

export { DEFAULT_DATABASE } from './mongo-url.ts';
export { SKIPS_COLLECTION } from './mongo-skips.ts';
export { LEASES_COLLECTION } from './mongo-leases.ts';

export interface MongoConnectOptions {
  /** Database to use; defaults to the one named in the URL, else 'annals'. */
  database?: string;
  /** How long to wait for a reachable server before an operation fails (default 10 s). */
  serverSelectionTimeoutMS?: number;
  /** How commits land (see mongo-commits.ts): detected from the server when unset. */
  commitMode?: CommitMode;
}

const NAMESPACE_EXISTS = 48;

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
  readonly #skips: MongoSkips;
  readonly #leases: MongoLeases;
  #systemIndexes: Promise<void> | undefined;
  /** Text indexes, and the fields they cover (mongo-text-search.ts). */
  readonly #text: MongoTextSearch;
  readonly #deepPages: MongoDeepPages;
  /** Reads of documents (get, find, count). */
  readonly #reads: MongoDocumentReads;
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
    this.#skips = new MongoSkips(db);
    this.#leases = new MongoLeases(db, this.#registry);
    this.#commits = new MongoCommits(db, this.#registry, this.#leases, options.commitMode ? { mode: options.commitMode } : {});
    this.#text = new MongoTextSearch(db, this.#registry);
    this.#reads = new MongoDocumentReads(db, this.#registry, this.#deepPages, this.#text, (what, operation) => this.#guard(what, operation));
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
      await createDeclaredIndexes(this.#db, this.#text, this.#commits, options.deferIndexes ? foldingIndexesOf(schema, { uniqueOnly: true }) : schema, generation);
      return record;
    });
  }

  async createIndexes(schema: ReadModelSchema, generation: number): Promise<void> {
    assertProjectionName(schema.projection);
    assertGenerationNumber(generation);
    for (const [collection, spec] of Object.entries(schema.collections)) assertTextField(collection, spec);
    await this.#guard('create indexes', () => createDeclaredIndexes(this.#db, this.#text, this.#commits, schema, generation));
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
        this.#text.forget(name);
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
      await this.#skips.add(skip, position);
    });
  }

  /** Ordered by position. */
  async listSkips(projection: string): Promise<SkipRecord[]> {
    assertProjectionName(projection);
    return this.#guard('list skips', () => this.#skips.list(projection));
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

  get(target: ModelTarget, collection: string, id: string): Promise<Document | null> {
    return this.#reads.get(target, collection, id);
  }

  getMany(target: ModelTarget, collection: string, ids: readonly string[]): Promise<DocumentEntry[]> {
    return this.#reads.getMany(target, collection, ids);
  }

  find(target: ModelTarget, collection: string, query: Query = {}): Promise<Document[]> {
    return this.#reads.find(target, collection, query);
  }

  /**
   * With a text condition and no sort, most relevant first by MongoDB's text score (more occurrences in
   * a shorter text score higher), ties by id.
   */
  findWithIds(target: ModelTarget, collection: string, query: Query = {}): Promise<DocumentEntry[]> {
    return this.#reads.findWithIds(target, collection, query);
  }

  findStrings(target: ModelTarget, collection: string, query: Omit<Query, 'fields'>, field: string): Promise<Array<string | null>> {
    return this.#reads.findStrings(target, collection, query, field);
  }

  /** Deep pages read through a block index (`counted`), and with skip() (`offset`), since the store opened. */
  deepPageReads(): { counted: number; offset: number } {
    return this.#reads.deepPageReads();
  }

  count(target: ModelTarget, collection: string, filter?: Query['filter'], text?: Query['text']): Promise<number> {
    return this.#reads.count(target, collection, filter, text);
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
      await this.#skips.createIndexes();
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

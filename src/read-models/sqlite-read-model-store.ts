import type Database from 'better-sqlite3';
import { decodeNullablePosition } from '../event-store/position.ts';
import { connectionPragmas, openSqliteDatabase } from '../sqlite/open-database.ts';
import { OtherConnectionCommits } from '../sqlite/other-connection-commits.ts';
import { READ_MODELS_WAL_CUT_BACK_BYTES, WalCheckpointer, type Schedule } from '../sqlite/wal-checkpointer.ts';
import { STEPS_HANDLER, SqliteWriterThread, WriterRequestError, WriterThreadError, type TransactionOutcome, type WriteStep } from '../sqlite/writer-thread.ts';
import { SqliteDeepPages } from './sqlite-deep-pages.ts';
import { commitFailure, commitSteps } from './sqlite-commits.ts';
import { fieldExpression } from './sqlite-document-sql.ts';
import { SqliteGenerationRegistry } from './sqlite-generation-registry.ts';
import { SqliteLeases } from './sqlite-leases.ts';
import { SqliteDocumentReads } from './sqlite-document-reads.ts';
import { LoopConnection } from './sqlite-loop-connection.ts';
import { orderBy } from './sqlite-query-compiler.ts';
import { BUSY_TIMEOUT_MS, CONNECTION, SCHEMA, indexStatements, recordingTriggers } from './sqlite-read-model-schema.ts';
import {
  CheckpointConflictError,
  ReadModelError,
  ReadModelUnavailableError,
  LeaseLostError,
  assertTextField,
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
} from './read-model-store.ts';

/**
 * Commits of this many documents or more (a projection catching up or rebuilding, a bulk import) run on the
 * event loop's connection instead of the writer thread, in a store opened with `inlineBulkCommits` (the
 * operator's commands; see SqliteReadModelStoreOptions). What follows such a commit is mostly reading back what
 * it wrote (the next batch folds onto it), and a commit by the thread's connection costs this connection its
 * page cache and memory map, so that those reads come from the WAL with read() calls: public-content's rebuild
 * went from 34,557-37,394 to 27,196-27,440 log events/s with every commit on the thread, and 40% more CPU.
 * Live commits are a few documents each.
 */
const INLINE_COMMIT_WRITES = 256;

export interface SqliteReadModelStoreOptions {
  /** When the WAL is checkpointed (tests inject their own). */
  schedule?: Schedule;
  /**
   * Whether commits of INLINE_COMMIT_WRITES documents or more run on the event loop's connection (default) or,
   * like every other commit, on the writer thread. Inline, a rebuild that folds one projection at a time (the
   * operator's `annals projections rebuild`, `bench:eventstore`) reads back what it wrote from its own page cache.
   * The service turns it off: its first start folds every projection at once, so the thread's commits run beside
   * the folding (10,000 entries: ready in 12.2-13.4 s against 15.7-16.1 s under bench:public), and the event
   * loop stays free to answer while a projection is rebuilt after an upgrade. The cost is the thread's page
   * cache (~60 MiB more resident after a first start); reads afterwards cost the same (see
   * docs/benchmarks.md).
   */
  inlineBulkCommits?: boolean;
}

/**
 * Read models in one SQLite file, apart from the event log.
 *
 * LIMIT and OFFSET are bound as `+?`: SQLite re-prepares a statement whose plain `LIMIT ?` gets a new value
 * (the value may change the plan), which made an indexed read of one document cost ~40 µs instead of ~4. Each (projection, collection, generation) is a
 * table of documents stored as JSONB (SQLite's binary JSON, which json_extract reads without parsing);
 * declared indexes are expression indexes on json_extract, and queries use the same expressions so
 * SQLite picks them. A batch's writes and its checkpoint commit in one transaction.
 *
 * A collection with a textField has an FTS5 table beside it (see searchTableName), keyed by the document
 * table's rowid and kept in step with it by triggers, so every write of a commit updates the search
 * index in the same transaction. The FTS5 table stores no copy of the tokens (contentless, with deletes),
 * and its tokenizer splits on spaces only, so each token of the textField is one FTS5 term as it is.
 */
export class SqliteReadModelStore implements ReadModelStore {
  /** The event loop's connection: its statements and the turn's read transaction (see LoopConnection). */
  readonly #conn: LoopConnection;
  readonly #generations: SqliteGenerationRegistry;
  readonly #leases: SqliteLeases;
  /** Counts of the sorted lists read deep, so that a deep page does not walk every entry before it. */
  readonly #deepPages: SqliteDeepPages;
  /** Commits of other connections (watchOtherCommits): the check runs while anyone listens. */
  readonly #otherCommits: OtherConnectionCommits;
  readonly #otherCommitListeners = new Set<() => void>();
  readonly #checkpointer: WalCheckpointer;
  /** Where commits run: off the event loop (see SqliteWriterThread). Everything else runs on this.#conn. */
  readonly #writer: SqliteWriterThread;
  /** The writer thread's handler on this connection, for large commits (INLINE_COMMIT_WRITES); made at the first. */
  #inlineCommit: ((steps: readonly WriteStep[]) => TransactionOutcome) | undefined;
  /** Whether commits of INLINE_COMMIT_WRITES documents or more run on this connection (SqliteReadModelStoreOptions). */
  readonly #inlineBulkCommits: boolean;
  /** Commits so far, by where they ran (commitsByPlace). */
  readonly #commitsByPlace = { eventLoop: 0, writerThread: 0 };
  /** Reads of documents (get, find, count). */
  readonly #reads: SqliteDocumentReads;

  static open(file: string, options: SqliteReadModelStoreOptions = {}): SqliteReadModelStore {
    return new SqliteReadModelStore(openSqliteDatabase(file, { ...CONNECTION, busyTimeoutMs: BUSY_TIMEOUT_MS }), file, options);
  }

  private constructor(db: Database.Database, file: string, options: SqliteReadModelStoreOptions) {
    this.#inlineBulkCommits = options.inlineBulkCommits ?? true;
    // The thread's connection is set as this one (CONNECTION: no memory map; a map on the thread also counted the
    // file's pages in the process's resident memory a second time, ~250 MiB more at 10,000 entries).
    this.#writer = new SqliteWriterThread(file, { pragmas: connectionPragmas(CONNECTION), busyTimeoutMs: BUSY_TIMEOUT_MS });
    this.#checkpointer = new WalCheckpointer(file, { schedule: options.schedule, cutBackBytes: READ_MODELS_WAL_CUT_BACK_BYTES });
    db.exec(SCHEMA);
    this.#conn = new LoopConnection(db);
    this.#otherCommits = new OtherConnectionCommits(db, () => {
      for (const listener of [...this.#otherCommitListeners]) listener();
    }, OTHER_COMMIT_CHECKS);
    this.#deepPages = new SqliteDeepPages({
      field: fieldExpression,
      orderBy: (sort) => orderBy(sort as Query['sort']),
      statement: (sql) => this.#conn.readStmt(sql),
      record: (table, fields) => this.#record(table, fields),
    });
    this.#generations = new SqliteGenerationRegistry(this.#conn, (tables) => this.#deepPages.forgetTables(tables));
    this.#leases = new SqliteLeases(this.#conn);
    this.#reads = new SqliteDocumentReads(this.#conn, this.#deepPages);
  }

  createGeneration(
    schema: ReadModelSchema,
    generation: number,
    version: number,
    now: string,
    options: { deferIndexes?: boolean } = {},
  ): Promise<GenerationRecord> {
    return this.#generations.createGeneration(schema, generation, version, now, options);
  }

  /**
   * Builds on the writer thread's connection: a generation's indexes take a while to build (the entry views'
   * ten ~330 ms at 10,000 entries, seconds at 100,000), and on this connection, as the last step of a rebuild
   * while the old generation serves, every request would wait for them. Reads go on meanwhile (WAL); the
   * thread's other writes wait their turn.
   */
  async createIndexes(schema: ReadModelSchema, generation: number): Promise<void> {
    this.#conn.assertOpen();
    for (const [collection, spec] of Object.entries(schema.collections)) assertTextField(collection, spec);
    const statements = indexStatements(this.#conn.db, schema, generation);
    if (statements.length === 0) return;
    let outcome: TransactionOutcome;
    try {
      outcome = await this.#writer.run(statements.map((sql) => ({ sql, params: [] })));
    } catch (error) {
      this.#conn.endTurnRead();
      throw error instanceof WriterThreadError ? new ReadModelUnavailableError(error.message, { cause: error }) : error;
    }
    this.#conn.endTurnRead();
    if (!('committed' in outcome)) {
      const failure = 'failed' in outcome ? outcome.failed : { code: undefined, message: 'aborted' };
      throw new WriterRequestError(`cannot build the indexes of ${schema.projection} generation ${generation}: ${failure.message}`, failure.code);
    }
    // This connection learns of another's schema change when a statement of it runs (it prepares again then);
    // one that reads the schema now makes statements prepared from here on, and their plans, see the indexes.
    this.#conn.db.prepare('SELECT count(*) FROM sqlite_schema').pluck().get();
    this.#conn.forgetStatementsAfter(statements);
    this.#checkpointer.wrote();
  }

  activateGeneration(projection: string, generation: number, expectedActive: number | null, now: string): Promise<void> {
    return this.#generations.activateGeneration(projection, generation, expectedActive, now);
  }

  dropGeneration(schema: ReadModelSchema, generation: number): Promise<void> {
    return this.#generations.dropGeneration(schema, generation);
  }

  getGeneration(projection: string, generation: number): Promise<GenerationRecord | null> {
    return this.#generations.getGeneration(projection, generation);
  }

  listGenerations(projection?: string): Promise<GenerationRecord[]> {
    return this.#generations.listGenerations(projection);
  }

  activeGeneration(projection: string): Promise<number | null> {
    return this.#generations.activeGeneration(projection);
  }

  setFailure(target: ModelTarget, failure: ProjectionFailure | null, now: string): Promise<void> {
    return this.#generations.setFailure(target, failure, now);
  }

  addSkip(skip: SkipRecord): Promise<void> {
    return this.#generations.addSkip(skip);
  }

  listSkips(projection: string): Promise<SkipRecord[]> {
    return this.#generations.listSkips(projection);
  }


  /**
   * A commit runs on the writer thread (SqliteWriterThread), or for a large one on this connection
   * (INLINE_COMMIT_WRITES): the documents, the checkpoint and the count of document commits in one
   * transaction, while this thread goes on answering. Once it has committed, this turn's read transaction (if
   * any) ends, so that reads from here on see it.
   */
  async commit(target: ModelTarget, writes: readonly DocumentWrite[], checkpoint: bigint, now: string, options: CommitOptions = {}): Promise<void> {
    this.#conn.assertOpen();
    const steps = commitSteps(target, writes, checkpoint, now, options);
    let outcome: TransactionOutcome;
    try {
      const inline = this.#inlineBulkCommits && writes.length >= INLINE_COMMIT_WRITES;
      this.#commitsByPlace[inline ? 'eventLoop' : 'writerThread']++;
      outcome = inline ? this.#commitInline(steps) : await this.#writer.run(steps);
    } catch (error) {
      this.#conn.endTurnRead();
      throw error instanceof WriterThreadError ? new ReadModelUnavailableError(error.message, { cause: error }) : error;
    }
    this.#conn.endTurnRead();
    if (!('committed' in outcome)) {
      if ('aborted' in outcome) {
        const found = (outcome.aborted.row?.[0] as string | null | undefined) ?? null;
        // The lease's step comes first; the checkpoint's, when expected, after it (see #commitSteps).
        if (options.leaseHolder !== undefined && outcome.aborted.step === 0) throw new LeaseLostError(target, options.leaseHolder, found);
        if (outcome.aborted.row === null) throw new ReadModelError(`generation ${target.generation} of ${target.projection} does not exist`);
        throw new CheckpointConflictError(target, options.expectedCheckpoint ?? null, decodeNullablePosition(found));
      }
      throw commitFailure(outcome.failed, target, writes);
    }
    if (this.#conn.closed) return;
    this.#checkpointer.wrote();
  }

  /** A commit on this connection, on the event loop: the writer thread's own handler, so that both commit alike. */
  #commitInline(steps: WriteStep[]): TransactionOutcome {
    this.#conn.endTurnRead();
    // The handler is CommonJS source that the writer thread evaluates the same way (one source for both).
    // biome-ignore lint/complexity/noCommaOperator: an indirect eval, in the global scope, as the worker's is.
    // biome-ignore lint/security/noGlobalEval: the project's own handler source (STEPS_HANDLER), never input.
    this.#inlineCommit ??= (0, eval)(STEPS_HANDLER)(this.#conn.db) as (steps: readonly WriteStep[]) => TransactionOutcome;
    return this.#inlineCommit(steps);
  }

  /** Commits are transactions: none is ever left half-done. */
  async completeInterruptedCommit(): Promise<boolean> {
    this.#conn.assertOpen();
    return false;
  }

  deepPageReads(): { counted: number; offset: number } {
    return this.#reads.deepPageReads();
  }

  /** Commits so far, by where they ran: on the event loop's connection (large ones, see INLINE_COMMIT_WRITES) or on the writer thread. */
  commitsByPlace(): { eventLoop: number; writerThread: number } {
    return { ...this.#commitsByPlace };
  }

  /**
   * Resolves once the deep-page counts' requests to the file (to record the fields of a table they count) have
   * landed: the first deep read of a list asks, a read after this counts it. For tests and benchmarks.
   */
  async deepPagesSettled(): Promise<void> {
    await this.#deepPages.settled();
  }

  /**
   * Has the file record `fields` of every document written to `table` from the next commit on (for the deep
   * pages' counts): the fields joined to those recorded already, and the table's triggers (recordingTriggers)
   * made if they are not there, in one transaction on the writer thread. Creating triggers changes the
   * file's schema (every connection prepares its statements again once); it happens once per table counted.
   */
  async #record(table: string, fields: readonly string[]): Promise<void> {
    this.#conn.assertOpen();
    const outcome = await this.#writer.run([
      {
        sql: `INSERT INTO counted_fields (name, fields) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET fields = (
                SELECT json_group_array(value) FROM (SELECT value FROM json_each(counted_fields.fields) UNION SELECT value FROM json_each(excluded.fields)))`,
        params: [table, JSON.stringify(fields)],
      },
      ...recordingTriggers(table).map((sql) => ({ sql, params: [] })),
    ]);
    if (!('committed' in outcome)) throw new ReadModelError(`cannot record the counted fields of ${table}: ${'failed' in outcome ? outcome.failed.message : 'aborted'}`);
  }

  acquireLease(target: ModelTarget, holder: string, now: string, ttlMs: number, options: { takeOverFrom?: string } = {}): Promise<boolean> {
    return this.#leases.acquireLease(target, holder, now, ttlMs, options);
  }

  releaseLease(target: ModelTarget, holder: string): Promise<void> {
    return this.#leases.releaseLease(target, holder);
  }

  getLease(target: ModelTarget): Promise<LeaseRecord | null> {
    return this.#leases.getLease(target);
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

  findWithIds(target: ModelTarget, collection: string, query: Query = {}): Promise<DocumentEntry[]> {
    return this.#reads.findWithIds(target, collection, query);
  }

  findStrings(target: ModelTarget, collection: string, query: Omit<Query, 'fields'>, field: string): Promise<Array<string | null>> {
    return this.#reads.findStrings(target, collection, query, field);
  }

  /**
   * SQLite's plan (EXPLAIN QUERY PLAN, one line per step) for a find of the common shape (equality filter, sort,
   * Query.fields; see PlainQueries.of), or with `stringsOf` for findStrings of that field: whether an index serves
   * it, and whether the index alone does (COVERING).
   * A diagnostic, for tests and for whoever wonders why a read is slow.
   */
  queryPlan(target: ModelTarget, collection: string, query: Query = {}, stringsOf?: string): string[] {
    return this.#reads.queryPlan(target, collection, query, stringsOf);
  }

  count(target: ModelTarget, collection: string, filter?: Query['filter'], text?: Query['text']): Promise<number> {
    return this.#reads.count(target, collection, filter, text);
  }

  async ping(): Promise<void> {
    if (this.#conn.closed) throw new ReadModelUnavailableError('the read-model store is closed');
    try {
      this.#conn.db.prepare('SELECT 1').get();
    } catch (error) {
      throw new ReadModelUnavailableError(`the read-model file cannot be read: ${(error as Error).message}`, { cause: error });
    }
  }

  watchOtherCommits(listener: () => void, options: { urgent?: boolean } = {}): () => void {
    this.#conn.assertOpen();
    // Each registration is its own entry: the same function may listen twice (urgently and not).
    const entry = () => listener();
    this.#otherCommitListeners.add(entry);
    if (options.urgent) this.#otherCommits.hurry(+1);
    this.#otherCommits.start();
    let listening = true;
    return () => {
      if (!listening) return;
      listening = false;
      this.#otherCommitListeners.delete(entry);
      if (options.urgent) this.#otherCommits.hurry(-1);
      if (this.#otherCommitListeners.size === 0) this.#otherCommits.stop();
    };
  }

  async close(): Promise<void> {
    if (this.#conn.closed) return;
    this.#otherCommits.stop();
    this.#conn.endTurnRead();
    this.#conn.markClosed();
    // Commits already asked for are made (or refused) before the file closes.
    await this.#writer.close();
    await this.#checkpointer.close();
    this.#conn.forgetStatements();
    this.#deepPages.clear();
    this.#conn.db.close();
  }
}

/**
 * How often watchOtherCommits looks for another connection's commits: every 5 ms for a second after one,
 * every 25 ms otherwise, every millisecond while an urgent listener listens (each look reads the WAL index
 * header: a few microseconds).
 */
const OTHER_COMMIT_CHECKS = { activeMs: 5, idleMs: 25, activeForMs: 1_000, urgentMs: 1 };

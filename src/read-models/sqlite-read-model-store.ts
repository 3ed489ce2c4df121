import type Database from 'better-sqlite3';
import { decodeNullablePosition, decodePosition, encodePosition } from '../event-store/position.ts';
import { connectionPragmas, openSqliteDatabase, type OpenOptions } from '../sqlite/open-database.ts';
import { OtherConnectionCommits } from '../sqlite/other-connection-commits.ts';
import { READ_MODELS_BACKSTOP_CHECKPOINT_PAGES, READ_MODELS_WAL_CUT_BACK_BYTES, WalCheckpointer, type Schedule } from '../sqlite/wal-checkpointer.ts';
import { STEPS_HANDLER, SqliteWriterThread, WriterRequestError, WriterThreadError, type TransactionOutcome, type WriteStep } from '../sqlite/writer-thread.ts';
import { DEEP_OFFSET, KEPT_COMMITS, SqliteDeepPages, type PageColumns } from './sqlite-deep-pages.ts';
import { sqlParameter } from './document-values.ts';
import {
  CheckpointConflictError,
  GenerationConflictError,
  MAX_QUERY_LIMIT,
  ReadModelError,
  ReadModelUnavailableError,
  UniqueConstraintError,
  LeaseLostError,
  assertCollectionName,
  assertFieldPath,
  assertIndexInclude,
  assertProjectionName,
  assertTextField,
  assertTextTokens,
  assertAfter,
  assertGetManyIds,
  assertFields,
  type CollectionSpec,
  type CommitOptions,
  type LeaseRecord,
  type Document,
  type DocumentEntry,
  type DocumentWrite,
  type FieldCondition,
  type GenerationRecord,
  type ModelTarget,
  type ProjectionFailure,
  type Query,
  type ReadModelSchema,
  type ReadModelStore,
  type SkipRecord,
  foldingIndexesOf,
} from './read-model-store.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS projection_generations (
  projection TEXT    NOT NULL,
  generation INTEGER NOT NULL,
  version    INTEGER NOT NULL,
  state      TEXT    NOT NULL CHECK (state IN ('building', 'active', 'retired')),
  checkpoint TEXT,
  failure    TEXT,
  created_at TEXT    NOT NULL,
  updated_at TEXT    NOT NULL,
  PRIMARY KEY (projection, generation)
);
CREATE UNIQUE INDEX IF NOT EXISTS one_active_generation ON projection_generations (projection) WHERE state = 'active';
CREATE TABLE IF NOT EXISTS projection_leases (
  projection TEXT    NOT NULL,
  generation INTEGER NOT NULL,
  holder     TEXT    NOT NULL,
  expires_at TEXT    NOT NULL,
  PRIMARY KEY (projection, generation)
);
CREATE TABLE IF NOT EXISTS projection_skips (
  projection TEXT NOT NULL,
  event_id   TEXT NOT NULL,
  position   TEXT NOT NULL,
  reason     TEXT NOT NULL,
  actor      TEXT NOT NULL,
  skipped_at TEXT NOT NULL,
  PRIMARY KEY (projection, event_id)
);
-- How many commits of documents the file has had (each commit adds one): what tells the deep-page counts
-- which commits a read sees (see SqliteDeepPages).
CREATE TABLE IF NOT EXISTS document_commits (
  id INTEGER PRIMARY KEY CHECK (id = 0),
  n  INTEGER NOT NULL
);
INSERT OR IGNORE INTO document_commits (id, n) VALUES (0, 0);
-- The number (document_commits) of the last commit that wrote each document table. Read by the deep-page
-- counts of the previous version (until 2026-11-28), which may still serve from this file during an upgrade;
-- nothing of this version reads it.
CREATE TABLE IF NOT EXISTS table_commits (
  name TEXT PRIMARY KEY,
  n    INTEGER NOT NULL
) WITHOUT ROWID;
-- The document tables whose deep pages some process counts, and the fields (a JSON array) their lists are
-- counted by: triggers on each of them (see recordingTriggers) record those fields of every document a
-- commit writes there, before and after, so that every process can keep its counts exact (SqliteDeepPages).
CREATE TABLE IF NOT EXISTS counted_fields (
  name   TEXT PRIMARY KEY,
  fields TEXT NOT NULL
) WITHOUT ROWID;
-- The recorded writes, numbered with their commit (document_commits after it), those of the last
-- KEPT_COMMITS commits kept. before and after are JSON objects of the fields' values (json_extract's), NULL
-- where the document was not or is no more.
CREATE TABLE IF NOT EXISTS counted_changes (
  n      INTEGER NOT NULL,
  name   TEXT    NOT NULL,
  id     TEXT    NOT NULL,
  before TEXT,
  after  TEXT
);
CREATE INDEX IF NOT EXISTS counted_changes_by_commit ON counted_changes (n);
`;

/**
 * The read models' connections. Read models are rebuilt from the log, and each checkpoint commits with its
 * writes: losing the last commits to a power failure only means folding those events again.
 * The WAL is copied into the file by the checkpointing thread (WalCheckpointer); SQLite's own checkpoint,
 * which runs in the commit that passes its threshold (on the writer thread), is the backstop.
 * Reads through a memory map and a 64 MiB page cache: public reads are index lookups of small pages, which
 * would otherwise each cost a read() of the file. 8 KiB pages (new files): documents of 2-3 KB (entry views)
 * fill them three to a page where 4 KiB pages hold one, half empty (15% smaller on the bench's content).
 */
const CONNECTION = {
  purpose: 'read models',
  durability: 'normal',
  walAutocheckpointPages: READ_MODELS_BACKSTOP_CHECKPOINT_PAGES,
  mmapBytes: 1024 ** 3,
  cacheKiB: 65_536,
  incrementalVacuum: true,
  pageBytes: 8192,
} as const satisfies OpenOptions;
const BUSY_TIMEOUT_MS = 10_000;

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

interface GenerationRow {
  projection: string;
  generation: number;
  version: number;
  state: GenerationRecord['state'];
  checkpoint: string | null;
  failure: string | null;
  created_at: string;
  updated_at: string;
}

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
  readonly #db: Database.Database;
  /** Counts of the sorted lists read deep, so that a deep page does not walk every entry before it. */
  readonly #deepPages: SqliteDeepPages;
  /** Deep pages read so far (deepPageReads). */
  readonly #deepPageReads = { counted: 0, offset: 0 };
  /** Commits of other connections (watchOtherCommits): the check runs while anyone listens. */
  readonly #otherCommits: OtherConnectionCommits;
  readonly #otherCommitListeners = new Set<() => void>();
  readonly #statements = new Map<string, Database.Statement>();
  readonly #checkpointer: WalCheckpointer;
  /** Where commits run: off the event loop (see SqliteWriterThread). Everything else runs on this.#db. */
  readonly #writer: SqliteWriterThread;
  /** The writer thread's handler on this connection, for large commits (INLINE_COMMIT_WRITES); made at the first. */
  #inlineCommit: ((steps: readonly WriteStep[]) => TransactionOutcome) | undefined;
  /** Whether commits of INLINE_COMMIT_WRITES documents or more run on this connection (SqliteReadModelStoreOptions). */
  readonly #inlineBulkCommits: boolean;
  /** Commits so far, by where they ran (commitsByPlace). */
  readonly #commitsByPlace = { eventLoop: 0, writerThread: 0 };
  /** SQL of plain queries by shape (see #plainQuery). */
  readonly #plainSql = new Map<string, string>();
  #closed = false;
  /** Whether this turn's read transaction is open (see #beginTurnRead). */
  #turnRead = false;
  readonly #begin: Database.Statement;
  readonly #end: Database.Statement;

  static open(file: string, options: SqliteReadModelStoreOptions = {}): SqliteReadModelStore {
    return new SqliteReadModelStore(openSqliteDatabase(file, { ...CONNECTION, busyTimeoutMs: BUSY_TIMEOUT_MS }), file, options);
  }

  private constructor(db: Database.Database, file: string, options: SqliteReadModelStoreOptions) {
    this.#inlineBulkCommits = options.inlineBulkCommits ?? true;
    this.#db = db;
    // The thread reads the pages it changes through its page cache, without a memory map of its own: a second
    // map of the file counted its pages in the process's resident memory again (~250 MiB more at 10,000 entries).
    this.#writer = new SqliteWriterThread(file, { pragmas: connectionPragmas({ ...CONNECTION, mmapBytes: 0 }), busyTimeoutMs: BUSY_TIMEOUT_MS });
    this.#checkpointer = new WalCheckpointer(file, { schedule: options.schedule, cutBackBytes: READ_MODELS_WAL_CUT_BACK_BYTES });
    db.exec(SCHEMA);
    this.#begin = db.prepare('BEGIN');
    this.#end = db.prepare('COMMIT');
    this.#otherCommits = new OtherConnectionCommits(db, () => {
      for (const listener of [...this.#otherCommitListeners]) listener();
    }, OTHER_COMMIT_CHECKS);
    this.#deepPages = new SqliteDeepPages({
      field: fieldExpression,
      orderBy: (sort) => orderBy(sort as Query['sort']),
      statement: (sql) => this.#readStmt(sql),
      record: (table, fields) => this.#record(table, fields),
    });
  }

  async createGeneration(
    schema: ReadModelSchema,
    generation: number,
    version: number,
    now: string,
    options: { deferIndexes?: boolean } = {},
  ): Promise<GenerationRecord> {
    assertProjectionName(schema.projection);
    for (const [collection, spec] of Object.entries(schema.collections)) assertTextField(collection, spec);
    this.#transaction(() => {
      for (const [collection, spec] of Object.entries(schema.collections)) {
        const target = { projection: schema.projection, generation };
        const table = tableName(target, collection);
        this.#db.exec(`CREATE TABLE IF NOT EXISTS "${table}" (id TEXT PRIMARY KEY, pos TEXT NOT NULL, doc BLOB NOT NULL)`);
        // Empty until the indexes are created: a rebuild fills it once, after its bulk load.
        if (spec.textField !== undefined) this.#db.exec(createSearchTableSql(searchTableName(target, collection)));
      }
      this.#createIndexes(options.deferIndexes ? foldingIndexesOf(schema, { uniqueOnly: true }) : schema, generation);
      this.#stmt(
        `INSERT INTO projection_generations (projection, generation, version, state, checkpoint, failure, created_at, updated_at)
         VALUES (?, ?, ?, 'building', NULL, NULL, ?, ?) ON CONFLICT DO NOTHING`,
      ).run(schema.projection, generation, version, now, now);
    }).immediate();
    return (await this.getGeneration(schema.projection, generation))!;
  }

  /**
   * Builds on the writer thread's connection: a generation's indexes take a while to build (the entry views'
   * ten ~330 ms at 10,000 entries, seconds at 100,000), and on this connection, as the last step of a rebuild
   * while the old generation serves, every request would wait for them. Reads go on meanwhile (WAL); the
   * thread's other writes wait their turn.
   */
  async createIndexes(schema: ReadModelSchema, generation: number): Promise<void> {
    this.#assertOpen();
    for (const [collection, spec] of Object.entries(schema.collections)) assertTextField(collection, spec);
    const statements = this.#indexStatements(schema, generation);
    if (statements.length === 0) return;
    let outcome: TransactionOutcome;
    try {
      outcome = await this.#writer.run(statements.map((sql) => ({ sql, params: [] })));
    } catch (error) {
      this.#endTurnRead();
      throw error instanceof WriterThreadError ? new ReadModelUnavailableError(error.message, { cause: error }) : error;
    }
    this.#endTurnRead();
    if (!('committed' in outcome)) {
      const failure = 'failed' in outcome ? outcome.failed : { code: undefined, message: 'aborted' };
      throw new WriterRequestError(`cannot build the indexes of ${schema.projection} generation ${generation}: ${failure.message}`, failure.code);
    }
    // This connection learns of another's schema change when a statement of it runs (it prepares again then);
    // one that reads the schema now makes statements prepared from here on, and their plans, see the indexes.
    this.#db.prepare('SELECT count(*) FROM sqlite_schema').pluck().get();
    this.#forgetStatementsAfter(statements);
    this.#checkpointer.wrote();
  }

  /** Gives a generation its declared indexes and search tables on this connection, inside the caller's transaction. */
  #createIndexes(schema: ReadModelSchema, generation: number): void {
    const statements = this.#indexStatements(schema, generation);
    for (const sql of statements) this.#db.exec(sql);
    this.#forgetStatementsAfter(statements);
  }

  /** A search table made again: statements prepared on it are forgotten (an index added needs no such care). */
  #forgetStatementsAfter(statements: readonly string[]): void {
    if (statements.some((sql) => !/^CREATE (UNIQUE )?INDEX /.test(sql))) this.#statements.clear();
  }

  /** The statements that give a generation its declared indexes and search tables (idempotent). */
  #indexStatements(schema: ReadModelSchema, generation: number): string[] {
    const statements: string[] = [];
    for (const [collection, spec] of Object.entries(schema.collections)) {
      const target = { projection: schema.projection, generation };
      const table = tableName(target, collection);
      for (const index of spec.indexes ?? []) {
        assertCollectionName(index.name);
        assertIndexInclude(index);
        const columns = index.fields.map(([field, direction]) => `${fieldExpression(field)} ${direction === 1 ? 'ASC' : 'DESC'}`);
        // The id tie-break of sorted queries (see Query.sort), so that the index serves the whole ORDER BY.
        if (!index.unique) columns.push(`id ${index.fields[index.fields.length - 1]![1] === 1 ? 'ASC' : 'DESC'}`);
        // The very expression findStrings selects (stringColumn): SQLite reads it from the index when every
        // column a query needs is there (a covering index).
        for (const field of index.include ?? []) columns.push(textExpression('doc', field));
        statements.push(`CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS "${table}__${index.name}" ON "${table}" (${columns.join(', ')})`);
      }
      if (spec.textField !== undefined) statements.push(...this.#searchTableStatements(target, collection, spec));
    }
    return statements;
  }

  /**
   * What makes the collection's search table follow its documents: when the triggers are missing (deferred
   * indexes) or were made for another textField, the table filled from the stored documents and the triggers
   * (re)created; nothing when they are in place.
   */
  #searchTableStatements(target: ModelTarget, collection: string, spec: CollectionSpec): string[] {
    const table = tableName(target, collection);
    const search = searchTableName(target, collection);
    const triggers = searchTriggersSql(table, search, spec.textField!);
    const existing = this.#db
      .prepare(`SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = ?`)
      .all(table) as Array<{ name: string; sql: string }>;
    const current = new Map(existing.map((t) => [t.name, t.sql]));
    if (triggers.every((t) => current.get(t.name) === t.sql)) return [];
    const tokens = textExpression('doc', spec.textField!);
    return [
      ...triggers.map((t) => `DROP TRIGGER IF EXISTS "${t.name}"`),
      createSearchTableSql(search),
      `INSERT INTO "${search}" ("${search}") VALUES ('delete-all')`,
      `INSERT INTO "${search}" (rowid, tokens) SELECT rowid, ${tokens} FROM "${table}" WHERE ${tokens} IS NOT NULL`,
      ...triggers.map((t) => t.sql),
    ];
  }

  async activateGeneration(projection: string, generation: number, expectedActive: number | null, now: string): Promise<void> {
    this.#transaction(() => {
      const active = this.#activeNow(projection);
      if (active !== expectedActive) {
        throw new GenerationConflictError(`projection ${projection}: active generation is ${active ?? 'none'}, expected ${expectedActive ?? 'none'}`);
      }
      if (!this.#stmt('SELECT 1 FROM projection_generations WHERE projection = ? AND generation = ?').get(projection, generation)) {
        throw new ReadModelError(`projection ${projection} has no generation ${generation}`);
      }
      this.#stmt(`UPDATE projection_generations SET state = 'retired', updated_at = ? WHERE projection = ? AND state = 'active'`).run(now, projection);
      this.#stmt(`UPDATE projection_generations SET state = 'active', updated_at = ? WHERE projection = ? AND generation = ?`).run(now, projection, generation);
    }).immediate();
  }

  async dropGeneration(schema: ReadModelSchema, generation: number): Promise<void> {
    this.#transaction(() => {
      for (const collection of Object.keys(schema.collections)) {
        const target = { projection: schema.projection, generation };
        // The document table's triggers go with it; the search table of a collection that lost its
        // textField since is dropped too.
        this.#db.exec(`DROP TABLE IF EXISTS "${tableName(target, collection)}"`);
        this.#db.exec(`DROP TABLE IF EXISTS "${searchTableName(target, collection)}"`);
      }
      this.#stmt('DELETE FROM projection_generations WHERE projection = ? AND generation = ?').run(schema.projection, generation);
      this.#stmt('DELETE FROM projection_leases WHERE projection = ? AND generation = ?').run(schema.projection, generation);
      for (const collection of Object.keys(schema.collections)) {
        const table = tableName({ projection: schema.projection, generation }, collection);
        this.#stmt('DELETE FROM table_commits WHERE name = ?').run(table);
        this.#stmt('DELETE FROM counted_fields WHERE name = ?').run(table);
      }
    }).immediate();
    this.#statements.clear();
    this.#deepPages.forgetTables(Object.keys(schema.collections).map((collection) => tableName({ projection: schema.projection, generation }, collection)));
    // The dropped tables' pages go back to the file system (files made with auto_vacuum = INCREMENTAL), so
    // the file does not keep the size of two generations after every rebuild.
    this.#db.pragma('incremental_vacuum');
  }

  async getGeneration(projection: string, generation: number): Promise<GenerationRecord | null> {
    const row = this.#stmt('SELECT * FROM projection_generations WHERE projection = ? AND generation = ?').get(projection, generation) as GenerationRow | undefined;
    return row ? toGenerationRecord(row) : null;
  }

  async listGenerations(projection?: string): Promise<GenerationRecord[]> {
    const rows = (projection === undefined
      ? this.#stmt('SELECT * FROM projection_generations ORDER BY projection, generation').all()
      : this.#stmt('SELECT * FROM projection_generations WHERE projection = ? ORDER BY generation').all(projection)) as GenerationRow[];
    return rows.map(toGenerationRecord);
  }

  async activeGeneration(projection: string): Promise<number | null> {
    return this.#activeNow(projection);
  }

  async setFailure(target: ModelTarget, failure: ProjectionFailure | null, now: string): Promise<void> {
    const json = failure ? JSON.stringify({ ...failure, position: encodePosition(failure.position) }) : null;
    this.#stmt('UPDATE projection_generations SET failure = ?, updated_at = ? WHERE projection = ? AND generation = ?').run(json, now, target.projection, target.generation);
  }

  async addSkip(skip: SkipRecord): Promise<void> {
    this.#stmt(
      `INSERT INTO projection_skips (projection, event_id, position, reason, actor, skipped_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    ).run(skip.projection, skip.eventId, encodePosition(skip.position), skip.reason, skip.actor, skip.skippedAt);
  }

  async listSkips(projection: string): Promise<SkipRecord[]> {
    const rows = this.#stmt('SELECT * FROM projection_skips WHERE projection = ? ORDER BY position').all(projection) as Array<{
      projection: string; event_id: string; position: string; reason: string; actor: string; skipped_at: string;
    }>;
    return rows.map((r) => ({ projection: r.projection, eventId: r.event_id, position: decodePosition(r.position), reason: r.reason, actor: r.actor, skippedAt: r.skipped_at }));
  }

  /**
   * A commit runs on the writer thread (SqliteWriterThread), or for a large one on this connection
   * (INLINE_COMMIT_WRITES): the documents, the checkpoint and the count of document commits in one
   * transaction, while this thread goes on answering. Once it has committed, this turn's read transaction (if
   * any) ends, so that reads from here on see it.
   */
  async commit(target: ModelTarget, writes: readonly DocumentWrite[], checkpoint: bigint, now: string, options: CommitOptions = {}): Promise<void> {
    this.#assertOpen();
    const steps = this.#commitSteps(target, writes, checkpoint, now, options);
    let outcome: TransactionOutcome;
    try {
      const inline = this.#inlineBulkCommits && writes.length >= INLINE_COMMIT_WRITES;
      this.#commitsByPlace[inline ? 'eventLoop' : 'writerThread']++;
      outcome = inline ? this.#commitInline(steps) : await this.#writer.run(steps);
    } catch (error) {
      this.#endTurnRead();
      throw error instanceof WriterThreadError ? new ReadModelUnavailableError(error.message, { cause: error }) : error;
    }
    this.#endTurnRead();
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
    if (this.#closed) return;
    this.#checkpointer.wrote();
  }

  /** A commit on this connection, on the event loop: the writer thread's own handler, so that both commit alike. */
  #commitInline(steps: WriteStep[]): TransactionOutcome {
    this.#endTurnRead();
    // The handler is CommonJS source that the writer thread evaluates the same way.
    this.#inlineCommit ??= (0, eval)(STEPS_HANDLER)(this.#db) as (steps: readonly WriteStep[]) => TransactionOutcome;
    return this.#inlineCommit(steps);
  }

  /** Commits are transactions: none is ever left half-done. */
  async completeInterruptedCommit(): Promise<boolean> {
    this.#assertOpen();
    return false;
  }

  deepPageReads(): { counted: number; offset: number } {
    return { ...this.#deepPageReads };
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

  /** The statements of a commit (see commit). */
  #commitSteps(target: ModelTarget, writes: readonly DocumentWrite[], checkpoint: bigint, now: string, options: CommitOptions): WriteStep[] {
    const steps: WriteStep[] = [];
    if (options.leaseHolder !== undefined) {
      steps.push({ sql: 'SELECT holder FROM projection_leases WHERE projection = ? AND generation = ?', params: [target.projection, target.generation], read: true, abortUnless: options.leaseHolder });
    }
    if (options.expectedCheckpoint !== undefined) {
      steps.push({
        sql: 'SELECT checkpoint FROM projection_generations WHERE projection = ? AND generation = ?',
        params: [target.projection, target.generation],
        read: true,
        abortUnless: options.expectedCheckpoint === null ? null : encodePosition(options.expectedCheckpoint),
      });
    }
    // Deletes first, then puts in position order: a batch that frees a unique value and gives it to
    // another document commits, as applying its events one by one would.
    const ordered = [...writes].sort((a, b) => (a.doc === null) !== (b.doc === null) ? (a.doc === null ? -1 : 1) : a.position < b.position ? -1 : a.position > b.position ? 1 : 0);
    const tables = new Map<string, { table: string; upsert: string; remove: string }>();
    for (const write of ordered) {
      let writer = tables.get(write.collection);
      if (!writer) {
        const table = tableName(target, write.collection);
        writer = {
          table,
          upsert: `INSERT INTO "${table}" (id, pos, doc) VALUES (?, ?, jsonb(?))
               ON CONFLICT (id) DO UPDATE SET pos = excluded.pos, doc = excluded.doc WHERE excluded.pos > "${table}".pos`,
          remove: `DELETE FROM "${table}" WHERE id = ? AND pos < ?`,
        };
        tables.set(write.collection, writer);
      }
      const pos = encodePosition(write.position);
      steps.push(write.doc === null ? { sql: writer.remove, params: [write.id, pos] } : { sql: writer.upsert, params: [write.id, pos], json: write.doc });
    }
    steps.push({
      sql: `UPDATE projection_generations SET checkpoint = ?, updated_at = ?
         WHERE projection = ? AND generation = ? AND (checkpoint IS NULL OR checkpoint < ?)`,
      params: [encodePosition(checkpoint), now, target.projection, target.generation, encodePosition(checkpoint)],
    });
    for (const writer of tables.values()) steps.push({ sql: TABLE_COMMIT_SQL, params: [writer.table] });
    // The changes recorded by the commit KEPT_COMMITS before this one go (a few rows, by the index on n).
    steps.push({ sql: PRUNE_COUNTED_CHANGES_SQL, params: [] });
    // Last: the commit's number.
    steps.push({ sql: 'UPDATE document_commits SET n = n + 1 WHERE id = 0', params: [] });
    return steps;
  }

  /**
   * Has the file record `fields` of every document written to `table` from the next commit on (for the deep
   * pages' counts): the fields joined to those recorded already, and the table's triggers (recordingTriggers)
   * made if they are not there, in one transaction on the writer thread. Creating triggers changes the
   * file's schema (every connection prepares its statements again once); it happens once per table counted.
   */
  async #record(table: string, fields: readonly string[]): Promise<void> {
    this.#assertOpen();
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

  async acquireLease(target: ModelTarget, holder: string, now: string, ttlMs: number, options: { takeOverFrom?: string } = {}): Promise<boolean> {
    const expiresAt = new Date(Date.parse(now) + ttlMs).toISOString();
    // One statement: the write lock makes it atomic across processes.
    const info = this.#stmt(
      `INSERT INTO projection_leases (projection, generation, holder, expires_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (projection, generation) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
       WHERE projection_leases.holder IN (excluded.holder, ?) OR projection_leases.expires_at <= ?`,
    ).run(target.projection, target.generation, holder, expiresAt, options.takeOverFrom ?? holder, now);
    return info.changes > 0;
  }

  async releaseLease(target: ModelTarget, holder: string): Promise<void> {
    this.#stmt('DELETE FROM projection_leases WHERE projection = ? AND generation = ? AND holder = ?').run(target.projection, target.generation, holder);
  }

  async getLease(target: ModelTarget): Promise<LeaseRecord | null> {
    const row = this.#stmt('SELECT holder, expires_at FROM projection_leases WHERE projection = ? AND generation = ?').get(target.projection, target.generation) as
      | { holder: string; expires_at: string }
      | undefined;
    return row ? { holder: row.holder, expiresAt: row.expires_at } : null;
  }

  async get(target: ModelTarget, collection: string, id: string): Promise<Document | null> {
    const statement = this.#readStmt(`SELECT json(doc) AS doc FROM "${tableName(target, collection)}" WHERE id = ?`);
    // Plucked: the JSON text itself, no row object around it (this statement is read no other way).
    const json = statement?.pluck(true).get(id) as string | undefined;
    return json === undefined ? null : (JSON.parse(json) as Document);
  }

  async getMany(target: ModelTarget, collection: string, ids: readonly string[]): Promise<DocumentEntry[]> {
    assertGetManyIds(ids);
    if (ids.length === 0) return [];
    // One statement for any number of ids: they arrive as one JSON array.
    const statement = this.#readStmt(`SELECT id, json(doc) AS doc FROM "${tableName(target, collection)}" WHERE id IN (SELECT value FROM json_each(?))`);
    const rows = (statement?.all(JSON.stringify(ids)) ?? []) as Array<{ id: string; doc: string }>;
    return rows.map((row) => ({ id: row.id, doc: JSON.parse(row.doc) as Document }));
  }

  async find(target: ModelTarget, collection: string, query: Query = {}): Promise<Document[]> {
    return (await this.findWithIds(target, collection, query)).map((entry) => entry.doc);
  }

  async findWithIds(target: ModelTarget, collection: string, query: Query = {}): Promise<DocumentEntry[]> {
    const doc = documentColumns(query.fields);
    return (this.#findRows(target, collection, query, doc) as DocumentRow[]).map((row) => ({ id: row[0] as string, doc: doc.decode(row) }));
  }

  async findStrings(target: ModelTarget, collection: string, query: Omit<Query, 'fields'>, field: string): Promise<Array<string | null>> {
    return this.#findRows(target, collection, query, stringColumn(field)).map((value) => (typeof value === 'string' ? value : null));
  }

  /** The rows a find reads, as `doc` selects and reads them. */
  #findRows(target: ModelTarget, collection: string, query: Query, doc: Columns): unknown[] {
    assertAfter(query);
    if (query.after !== undefined) return this.#findAfter(target, collection, query, doc);
    const plain = this.#plainQuery(target, collection, query, doc);
    const limit = Math.min(query.limit ?? MAX_QUERY_LIMIT, MAX_QUERY_LIMIT);
    const offset = Math.max(0, query.offset ?? 0);
    if (plain) {
      if (offset >= DEEP_OFFSET && query.sort?.length) {
        const deep = this.#deepPages.page(plain.table, (query.filter ?? {}) as Record<string, string | number | boolean>, query.sort, doc, limit, offset);
        if (deep !== undefined) {
          this.#deepPageReads.counted++;
          return deep;
        }
        this.#deepPageReads.offset++;
      }
      return rowsOf(doc, this.#readStmt(plain.sql), [...plain.params, limit, offset]);
    }
    const from = this.#from(target, collection, query.filter, query.text);
    if (!from) return [];
    // bm25: lower is more relevant (more occurrences of rarer tokens, in a shorter text).
    const relevance = query.sort === undefined && from.search ? `bm25("${from.search}") ASC` : undefined;
    const sql = `SELECT ${doc.select} FROM ${from.sql} ORDER BY ${orderBy(query.sort, relevance)} LIMIT +? OFFSET +?`;
    return rowsOf(doc, this.#fromStmt(sql, target, collection, from), [...from.params, limit, offset]);
  }

  /**
   * SQLite's plan (EXPLAIN QUERY PLAN, one line per step) for a find of the common shape (equality filter, sort,
   * Query.fields; see #plainQuery), or with `stringsOf` for findStrings of that field: whether an index serves
   * it, and whether the index alone does (COVERING).
   * A diagnostic, for tests and for whoever wonders why a read is slow.
   */
  queryPlan(target: ModelTarget, collection: string, query: Query = {}, stringsOf?: string): string[] {
    const plain = this.#plainQuery(target, collection, query, stringsOf === undefined ? documentColumns(query.fields) : stringColumn(stringsOf));
    if (!plain || query.after !== undefined) throw new ReadModelError('queryPlan explains finds by equality, sort and fields only');
    const rows = this.#stmt(`EXPLAIN QUERY PLAN ${plain.sql}`).all(...plain.params, query.limit ?? MAX_QUERY_LIMIT, query.offset ?? 0) as Array<{ detail: string }>;
    return rows.map((row) => row.detail);
  }

  /**
   * The statement and parameters of the most common read, made once per shape: equality conditions on
   * scalars only, a sort or none, no text or keyset (a single document by a unique key, a list page).
   * Undefined for any other query, which findWithIds builds as it comes. The same SQL string each time also
   * makes the statement lookup cheap (its hash is kept with the string).
   *
   * An offset needs no separate read of the page's row ids first: when an index serves the filter and the
   * sort, SQLite steps over the skipped index entries and seeks a document only for the rows it returns
   * (deferred seek); at offset 4,980 of 10,000 that one statement took ~170 µs where ids-then-documents
   * took ~210.
   */
  #plainQuery(target: ModelTarget, collection: string, query: Query, doc: Columns): { sql: string; params: unknown[]; table: string } | undefined {
    if (query.text !== undefined) return undefined;
    const table = tableName(target, collection);
    let key = `${table}\n${doc.id}\n`;
    const params: unknown[] = [];
    for (const field in query.filter) {
      const value = query.filter[field];
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return undefined;
      params.push(sqlParameter(value));
      // Checks the name (once per name): no valid one holds the separators, so no two shapes share a key.
      fieldExpression(field);
      key += `${field}\u0001`;
    }
    key += '\n';
    for (const [field, direction] of query.sort ?? []) {
      fieldExpression(field);
      key += `${field} ${direction === 'desc' ? 'desc' : 'asc'}\u0001`;
    }
    let sql = this.#plainSql.get(key);
    if (sql === undefined) {
      const { where } = whereClause(query.filter);
      sql = `SELECT ${doc.select} FROM "${table}" d${where} ORDER BY ${orderBy(query.sort)} LIMIT +? OFFSET +?`;
      if (this.#plainSql.size > 1_000) this.#plainSql.clear();
      this.#plainSql.set(key, sql);
    }
    return { sql, params, table };
  }

  /**
   * A keyset page (Query.after): the documents after the given one, read as consecutive segments that each
   * walk an index range. One sort key: ascending, null values come first, so after a null value the rest of
   * the nulls and then every value; descending, values first and then the nulls. More keys: one condition
   * spelling out the order key by key.
   */
  #findAfter(target: ModelTarget, collection: string, query: Query, doc: Columns): unknown[] {
    const sort = query.sort ?? [];
    const { values, id } = query.after!;
    const limit = Math.min(query.limit ?? MAX_QUERY_LIMIT, MAX_QUERY_LIMIT);
    const descending = sort.at(-1)?.[1] === 'desc';
    const idAfter: [string, unknown[]] = [`d.id ${descending ? '<' : '>'} ?`, [id]];
    let segments: Array<[string, unknown[]]>;
    if (sort.length === 0) {
      segments = [idAfter];
    } else if (sort.length === 1) {
      const key = fieldExpression(sort[0]![0]);
      const value = values[0]!;
      if (value === null) {
        segments = descending ? [[`${key} IS NULL AND ${idAfter[0]}`, [id]]] : [[`${key} IS NULL AND ${idAfter[0]}`, [id]], [`${key} IS NOT NULL`, []]];
      } else {
        // The redundant bound on the key alone lets SQLite walk the index range (it does not for the row value).
        const rows: [string, unknown[]] = [`${key} ${descending ? '<=' : '>='} ? AND (${key}, d.id) ${descending ? '<' : '>'} (?, ?)`, [value, value, id]];
        segments = descending ? [rows, [`${key} IS NULL`, []]] : [rows];
      }
    } else {
      const clauses: string[] = [];
      const params: unknown[] = [];
      for (let i = 0; i <= sort.length; i++) {
        const parts: string[] = [];
        const partParams: unknown[] = [];
        for (let j = 0; j < i; j++) {
          const key = fieldExpression(sort[j]![0]);
          if (values[j] === null) parts.push(`${key} IS NULL`);
          else {
            parts.push(`${key} = ?`);
            partParams.push(values[j]);
          }
        }
        if (i === sort.length) {
          parts.push(idAfter[0]);
          partParams.push(id);
        } else {
          const key = fieldExpression(sort[i]![0]);
          const value = values[i];
          if (sort[i]![1] === 'asc') {
            if (value === null) parts.push(`${key} IS NOT NULL`);
            else {
              parts.push(`${key} > ?`);
              partParams.push(value);
            }
          } else {
            if (value === null) continue;
            parts.push(`(${key} < ? OR ${key} IS NULL)`);
            partParams.push(value);
          }
        }
        clauses.push(`(${parts.join(' AND ')})`);
        params.push(...partParams);
      }
      segments = [[`(${clauses.join(' OR ')})`, params]];
    }
    const order = orderBy(sort);
    const found: unknown[] = [];
    for (const [condition, params] of segments) {
      if (found.length >= limit) break;
      const from = this.#from(target, collection, query.filter, query.text);
      if (!from) return [];
      const where = from.sql.includes(' WHERE ') ? ` AND ${condition}` : ` WHERE ${condition}`;
      const sql = `SELECT ${doc.select} FROM ${from.sql}${where} ORDER BY ${order} LIMIT +?`;
      found.push(...rowsOf(doc, this.#fromStmt(sql, target, collection, from), [...from.params, ...params, limit - found.length]));
    }
    return found;
  }

  async count(target: ModelTarget, collection: string, filter?: Query['filter'], text?: Query['text']): Promise<number> {
    const from = this.#from(target, collection, filter, text);
    if (!from) return 0;
    // Without a filter the search table alone answers: the triggers keep exactly one row in it per
    // document with tokens, so the join (a read of every matching document) would change nothing.
    const sql =
      from.search && Object.keys(filter ?? {}).length === 0
        ? `SELECT count(*) AS n FROM "${from.search}" WHERE "${from.search}" MATCH ?`
        : `SELECT count(*) AS n FROM ${from.sql}`;
    const row = this.#fromStmt(sql, target, collection, from)?.get(...from.params) as { n: number } | undefined;
    return Number(row?.n ?? 0);
  }

  /**
   * The FROM and WHERE of a query: the documents as `d`, joined with the search table on rowid when
   * there is a text condition. Null when the text condition is empty (it matches nothing), after
   * checking the collection can be searched.
   */
  #from(target: ModelTarget, collection: string, filter: Query['filter'], text: Query['text']): { sql: string; params: unknown[]; search: string | null } | null {
    const table = tableName(target, collection);
    const { where, params } = whereClause(filter);
    if (text === undefined) return { sql: `"${table}" d${where}`, params, search: null };
    assertTextTokens(text);
    const search = searchTableName(target, collection);
    if (text.length === 0) {
      this.#assertSearchable(target, collection);
      return null;
    }
    const match = text.map((token) => `"${token.replaceAll('"', '""')}"`).join(' ');
    return {
      sql: `"${search}" JOIN "${table}" d ON d.rowid = "${search}".rowid WHERE "${search}" MATCH ?${where ? ` AND ${where.slice(' WHERE '.length)}` : ''}`,
      params: [match, ...params],
      search,
    };
  }

  /** A read statement; null when the generation does not exist, ReadModelError when a searched collection has no textField. */
  #fromStmt(sql: string, target: ModelTarget, collection: string, from: { search: string | null }): Database.Statement | null {
    const statement = this.#readStmt(sql);
    if (!statement && from.search) this.#assertSearchable(target, collection);
    return statement;
  }

  #assertSearchable(target: ModelTarget, collection: string): void {
    const exists = this.#stmt(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name IN (?, ?)`)
      .all(tableName(target, collection), searchTableName(target, collection)) as Array<{ name: string }>;
    if (exists.length === 1 && exists[0]!.name === tableName(target, collection)) {
      throw new ReadModelError(`collection ${collection} of ${target.projection} has no textField: it cannot be searched`);
    }
  }

  async ping(): Promise<void> {
    if (this.#closed) throw new ReadModelUnavailableError('the read-model store is closed');
    try {
      this.#db.prepare('SELECT 1').get();
    } catch (error) {
      throw new ReadModelUnavailableError(`the read-model file cannot be read: ${(error as Error).message}`, { cause: error });
    }
  }

  watchOtherCommits(listener: () => void, options: { urgent?: boolean } = {}): () => void {
    this.#assertOpen();
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
    if (this.#closed) return;
    this.#otherCommits.stop();
    this.#endTurnRead();
    this.#closed = true;
    // Commits already asked for are made (or refused) before the file closes.
    await this.#writer.close();
    await this.#checkpointer.close();
    this.#statements.clear();
    this.#deepPages.clear();
    this.#db.close();
  }

  #activeNow(projection: string): number | null {
    const row = this.#stmt(`SELECT generation FROM projection_generations WHERE projection = ? AND state = 'active'`).get(projection) as { generation: number } | undefined;
    return row ? Number(row.generation) : null;
  }

  /**
   * A statement of a read of documents, run in this turn's read transaction (see #beginTurnRead); null for a
   * generation that does not exist (never created, or dropped): such a read finds nothing.
   */
  #readStmt(sql: string): Database.Statement | null {
    try {
      const statement = this.#prepared(sql);
      this.#beginTurnRead();
      return statement;
    } catch (error) {
      if (error instanceof ReadModelError && error.message.startsWith('read model not created')) return null;
      throw error;
    }
  }

  /** A statement of anything else (writes, generations, leases): run outside any read transaction of the turn. */
  #stmt(sql: string): Database.Statement {
    const statement = this.#prepared(sql);
    this.#endTurnRead();
    return statement;
  }

  /** A write transaction: it begins once this turn's read transaction has ended (see #beginTurnRead). */
  #transaction<T>(write: () => T): Database.Transaction<() => T> {
    this.#assertOpen();
    this.#endTurnRead();
    return this.#db.transaction(write);
  }

  /**
   * Reads of documents share one read transaction per turn of the event loop: the first begins it, and it
   * ends at the next setImmediate or before this store writes anything, whichever comes first. A statement
   * outside a transaction begins and ends a read transaction of its own, which takes two locks on the WAL
   * index (fcntl) and a check of its header: ~2.2 µs of the ~7.5 µs of a single-entry lookup here, and the
   * public reads of a busy service come many to a turn. What a read sees is unchanged for this process (its
   * own writes end the transaction first, so a read after a write sees it); another process's commit is
   * seen from the next turn on, as if it had committed a moment later.
   */
  #beginTurnRead(): void {
    if (this.#turnRead || this.#db.inTransaction) return;
    this.#begin.run();
    this.#turnRead = true;
    setImmediate(this.#endTurnReadSoon);
  }

  #endTurnRead(): void {
    if (!this.#turnRead) return;
    this.#turnRead = false;
    // A failed statement may have rolled the transaction back already (SQLITE_BUSY, SQLITE_NOMEM).
    if (this.#db.inTransaction) this.#end.run();
  }

  readonly #endTurnReadSoon = (): void => {
    if (!this.#closed) this.#endTurnRead();
  };

  #prepared(sql: string): Database.Statement {
    this.#assertOpen();
    let statement = this.#statements.get(sql);
    if (!statement) {
      try {
        statement = this.#db.prepare(sql);
      } catch (error) {
        if (/no such table/.test((error as Error).message)) {
          throw new ReadModelError(`read model not created: ${(error as Error).message.replace('no such table: ', '')}`);
        }
        throw error;
      }
      if (this.#statements.size > 500) this.#statements.clear();
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  #assertOpen(): void {
    if (this.#closed) throw new ReadModelUnavailableError('the read-model store is closed');
  }
}

/**
 * How often watchOtherCommits looks for another connection's commits: every 5 ms for a second after one,
 * every 25 ms otherwise, every millisecond while an urgent listener listens (each look reads the WAL index
 * header: a few microseconds).
 */
const OTHER_COMMIT_CHECKS = { activeMs: 5, idleMs: 25, activeForMs: 1_000, urgentMs: 1 };

/**
 * SQLite's "UNIQUE constraint failed: index '<table>__<index>'" as the port's UniqueConstraintError (the
 * document is the last write to the collection that failed: SQLite stops at the first violation).
 */
function asUniqueConstraintError(error: unknown, target: ModelTarget, writes: readonly DocumentWrite[]): UniqueConstraintError | null {
  const code = (error as { code?: unknown })?.code;
  if (code !== 'SQLITE_CONSTRAINT_UNIQUE') return null;
  const message = (error as Error).message;
  const match = /index '([^']+)'/.exec(message);
  for (const collection of new Set(writes.map((w) => w.collection))) {
    const prefix = `${tableName(target, collection)}__`;
    if (match?.[1]?.startsWith(prefix)) return new UniqueConstraintError(collection, match[1].slice(prefix.length), null, message);
  }
  return new UniqueConstraintError(writes[0]?.collection ?? '?', match?.[1] ?? '?', null, message);
}

/** A commit the writer thread could not make, as the error the store's callers know (SQLite's own, for the others). */
function commitFailure(failure: { code: string | undefined; message: string }, target: ModelTarget, writes: readonly DocumentWrite[]): Error {
  if (/no such table/.test(failure.message)) return new ReadModelError(`read model not created: ${failure.message.replace('no such table: ', '')}`);
  const error = new WriterRequestError(failure.message, failure.code);
  return asUniqueConstraintError(error, target, writes) ?? error;
}

/**
 * The triggers that record, for the deep pages' counts (SqliteDeepPages), the counted fields (counted_fields)
 * of each document written to a table, before and after the write, in the writing transaction whichever
 * connection writes. The row takes the number the commit is about to take (document_commits is counted up as
 * a commit's last step). An upsert that changes nothing (an older position) fires none.
 */
function recordingTriggers(table: string): string[] {
  const values = (row: 'OLD' | 'NEW') =>
    `(SELECT json_group_object(f.value, json_extract(${row}.doc, '$.' || f.value)) FROM counted_fields c, json_each(c.fields) f WHERE c.name = '${table}')`;
  const record = (id: string, before: string, after: string) =>
    `INSERT INTO counted_changes (n, name, id, before, after) SELECT n + 1, '${table}', ${id}, ${before}, ${after} FROM document_commits WHERE id = 0;`;
  return [
    `CREATE TRIGGER IF NOT EXISTS "${table}__counted_insert" AFTER INSERT ON "${table}" BEGIN ${record('NEW.id', 'NULL', values('NEW'))} END`,
    `CREATE TRIGGER IF NOT EXISTS "${table}__counted_update" AFTER UPDATE ON "${table}" BEGIN ${record('NEW.id', values('OLD'), values('NEW'))} END`,
    `CREATE TRIGGER IF NOT EXISTS "${table}__counted_delete" AFTER DELETE ON "${table}" BEGIN ${record('OLD.id', values('OLD'), 'NULL')} END`,
  ];
}

const PRUNE_COUNTED_CHANGES_SQL = `DELETE FROM counted_changes WHERE n <= (SELECT n FROM document_commits WHERE id = 0) + 1 - ${KEPT_COMMITS}`;

/** Records, in a commit's transaction, that the commit (the number it is about to take) wrote a table. */
const TABLE_COMMIT_SQL = `INSERT INTO table_commits (name, n) SELECT ?, n + 1 FROM document_commits WHERE id = 0
  ON CONFLICT (name) DO UPDATE SET n = excluded.n`;

/** A row of a find of documents, as the statement gives it in raw mode: the document's id, then the columns of its DocumentColumns. */
type DocumentRow = unknown[];

/** What a find selects of each document (PageColumns.select, table alias d), and how its statement is read. */
interface Columns extends PageColumns {
  /** Tells these columns from others (in keys of prepared SQL). */
  id: number;
}

/** Columns that make a Document of a row (find, findWithIds): the id, then the document or its fields. */
interface DocumentColumns extends Columns {
  decode(row: DocumentRow): Document;
}

/**
 * The rows of a find's statement (null: the generation does not exist), as its columns read them. Never rows
 * as objects (a property per column on an object per row): a list page of 20 read in ~17 µs as arrays
 * against ~19.5 as objects, and in ~8.5 as the plucked strings of findStrings. Each SELECT list is read
 * one way only, so a prepared statement is never switched back.
 */
function rowsOf(columns: Columns, statement: Database.Statement | null, params: unknown[]): unknown[] {
  return statement ? columns.read(statement, params) : [];
}

const readRaw = (statement: Database.Statement, params: unknown[]): unknown[] => statement.raw(true).all(...params);
const readPlucked = (statement: Database.Statement, params: unknown[]): unknown[] => statement.pluck(true).all(...params);

const WHOLE_DOCUMENT: DocumentColumns = { id: 0, select: 'd.id AS id, json(d.doc) AS doc', read: readRaw, decode: (row) => JSON.parse(row[1] as string) as Document };
/** By the fields' names joined with ',' (a character no valid name holds; the count tells ['a,b'] from ['a', 'b']). */
const fieldColumns = new Map<string, DocumentColumns & { count: number }>();
/** findStrings' column of each field, by its name. */
const stringColumns = new Map<string, Columns>();
let lastColumnsId = 0;

/**
 * How a query reads its documents: whole (as JSON text), or only the fields of Query.fields, one column
 * each (`->` gives a field's JSON text, SQL NULL when the document lacks it), so the rest is never decoded.
 * Checks the fields (ReadModelError) and makes their columns once per list of names: reads are the hot path.
 */
function documentColumns(fields: Query['fields']): DocumentColumns {
  if (fields === undefined) return WHOLE_DOCUMENT;
  const key = Array.isArray(fields) ? fields.join(',') : '';
  const known = fieldColumns.get(key);
  if (known !== undefined && known.count === fields.length) return known;
  assertFields(fields);
  const names = [...fields];
  const made = {
    id: ++lastColumnsId,
    count: names.length,
    select: `d.id AS id, ${names.map((field, i) => `${fieldColumnExpression('d.doc', field)} AS f${i}`).join(', ')}`,
    read: readRaw,
    decode(row: DocumentRow): Document {
      const doc: Document = {};
      for (let i = 0; i < names.length; i++) {
        const value = row[i + 1];
        if (typeof value === 'string') doc[names[i]!] = JSON.parse(value);
      }
      return doc;
    },
  };
  if (fieldColumns.size > 1_000) fieldColumns.clear();
  fieldColumns.set(key, made);
  return made;
}

/**
 * The column of findStrings, alone (no id), read plucked: the field's string as SQLite holds it (no JSON text
 * to parse), NULL for anything else. The same expression is what an index includes (IndexSpec.include), so
 * SQLite reads it from there.
 */
function stringColumn(field: string): Columns {
  let known = stringColumns.get(field);
  if (known === undefined) {
    assertFields([field]);
    known = { id: ++lastColumnsId, select: `${textExpression('d.doc', field)} AS s0`, read: readPlucked };
    if (stringColumns.size > 1_000) stringColumns.clear();
    stringColumns.set(field, known);
  }
  return known;
}

/**
 * The JSON text of a top-level field of a document, as a find with Query.fields reads it. NULL when the
 * document has no such field.
 */
function fieldColumnExpression(doc: string, field: string): string {
  return `${doc} -> '$.${field}'`;
}

/** Names checked and made once: every query names its table and fields, and reads are the hot path. */
const tableNames = new Map<string, string>();
const fieldExpressions = new Map<string, string>();

/** Table of one collection of one generation. Projection names hold no '_', so the name is unambiguous. */
function tableName(target: ModelTarget, collection: string): string {
  const key = `${target.projection}\n${collection}\n${target.generation}`;
  let name = tableNames.get(key);
  if (name === undefined) {
    assertProjectionName(target.projection);
    assertCollectionName(collection);
    if (!Number.isSafeInteger(target.generation) || target.generation < 1) throw new ReadModelError(`invalid generation ${target.generation}`);
    name = `rm_${target.projection.replaceAll('-', '_')}__${collection}__g${target.generation}`;
    if (tableNames.size > 10_000) tableNames.clear();
    tableNames.set(key, name);
  }
  return name;
}

/**
 * The FTS5 table of a collection's search tokens. Its own prefix: no document table or index name
 * (all "rm_...") can collide with it or with the shadow tables FTS5 adds ("<name>_data", ...).
 */
function searchTableName(target: ModelTarget, collection: string): string {
  return `fts_${tableName(target, collection).slice('rm_'.length)}`;
}

/**
 * Contentless (the tokens are in the document already) with deletes by rowid. The tokenizer keeps every
 * character but spaces and controls inside a token (every Unicode category but Zs and Cc), so a token of
 * indexTokens (which holds no whitespace) is one term exactly as written: "node.js", "c++", "foo_bar",
 * "東京", Devanagari with its combining marks. Diacritics are kept: tokens are already NFKC.
 */
function createSearchTableSql(search: string): string {
  const tokenizer = "unicode61 remove_diacritics 0 categories 'L* N* Co M* P* S* Cf Cs Cn Zl Zp'";
  return `CREATE VIRTUAL TABLE IF NOT EXISTS "${search}" USING fts5(tokens, content='', contentless_delete=1, tokenize="${tokenizer.replaceAll('"', '""')}")`;
}

/** The triggers that keep a search table in step with its document table, in the same transaction. */
function searchTriggersSql(table: string, search: string, textField: string): Array<{ name: string; sql: string }> {
  const tokens = (row: string) => textExpression(`${row}.doc`, textField);
  return [
    {
      name: `${search}__insert`,
      sql: `CREATE TRIGGER "${search}__insert" AFTER INSERT ON "${table}" BEGIN INSERT INTO "${search}" (rowid, tokens) SELECT new.rowid, ${tokens('new')} WHERE ${tokens('new')} IS NOT NULL; END`,
    },
    {
      name: `${search}__update`,
      sql: `CREATE TRIGGER "${search}__update" AFTER UPDATE OF doc ON "${table}" BEGIN DELETE FROM "${search}" WHERE rowid = old.rowid; INSERT INTO "${search}" (rowid, tokens) SELECT new.rowid, ${tokens('new')} WHERE ${tokens('new')} IS NOT NULL; END`,
    },
    {
      name: `${search}__delete`,
      sql: `CREATE TRIGGER "${search}__delete" AFTER DELETE ON "${table}" BEGIN DELETE FROM "${search}" WHERE rowid = old.rowid; END`,
    },
  ];
}

/** The textField's value when it is a string, else NULL. */
function textExpression(doc: string, field: string): string {
  assertFieldPath(field);
  return `(CASE WHEN json_type(${doc}, '$.${field}') = 'text' THEN json_extract(${doc}, '$.${field}') END)`;
}

function fieldExpression(field: string): string {
  let expression = fieldExpressions.get(field);
  if (expression === undefined) {
    assertFieldPath(field);
    expression = `json_extract(doc, '$.${field}')`;
    if (fieldExpressions.size > 10_000) fieldExpressions.clear();
    fieldExpressions.set(field, expression);
  }
  return expression;
}

/**
 * The ORDER BY keys of every read: the sort keys, then `relevance` (bm25 of a text search without a sort),
 * then the id tie-break in the direction of the last sort key, which the declared indexes end with.
 */
function orderBy(sort: Query['sort'], relevance?: string): string {
  const order = (sort ?? []).map(([field, direction]) => `${fieldExpression(field)} ${direction === 'desc' ? 'DESC' : 'ASC'}`);
  if (relevance !== undefined) order.push(relevance);
  order.push(`d.id ${sort?.at(-1)?.[1] === 'desc' ? 'DESC' : 'ASC'}`);
  return order.join(', ');
}

function whereClause(filter: Query['filter']): { where: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  for (const [field, condition] of Object.entries(filter ?? {})) {
    const expr = fieldExpression(field);
    const [sql, values] = conditionSql(expr, condition);
    clauses.push(sql);
    params.push(...values);
  }
  return { where: clauses.length ? ` WHERE ${clauses.join(' AND ')}` : '', params };
}

function conditionSql(expr: string, condition: FieldCondition): [string, unknown[]] {
  if (condition === null) return [`${expr} IS NULL`, []];
  if (typeof condition !== 'object') return [`${expr} = ?`, [sqlParameter(condition)]];
  if ('$in' in condition) {
    // As on MongoDB, null in the list also matches a missing field.
    const values = condition.$in.filter((v) => v !== null);
    const orNull = values.length < condition.$in.length ? [`${expr} IS NULL`] : [];
    const parts = [...(values.length ? [`${expr} IN (${values.map(() => '?').join(', ')})`] : []), ...orNull];
    return [parts.length ? `(${parts.join(' OR ')})` : '0', values.map(sqlParameter)];
  }
  if ('$ne' in condition) return [condition.$ne === null ? `${expr} IS NOT NULL` : `${expr} IS NOT ?`, condition.$ne === null ? [] : [sqlParameter(condition.$ne)]];
  if ('$gt' in condition) return [`${expr} > ?`, [condition.$gt]];
  if ('$gte' in condition) return [`${expr} >= ?`, [condition.$gte]];
  if ('$lt' in condition) return [`${expr} < ?`, [condition.$lt]];
  if ('$lte' in condition) return [`${expr} <= ?`, [condition.$lte]];
  throw new ReadModelError(`unsupported condition ${JSON.stringify(condition)}`);
}

/** A value compared with a field, as SQLite binds it: json_extract yields 1/0 for JSON booleans. */
function toGenerationRecord(row: GenerationRow): GenerationRecord {
  const failure = row.failure ? (JSON.parse(row.failure) as ProjectionFailure & { position: string }) : null;
  return {
    projection: row.projection,
    generation: Number(row.generation),
    version: Number(row.version),
    state: row.state,
    checkpoint: decodeNullablePosition(row.checkpoint),
    failure: failure ? { ...failure, position: decodePosition(failure.position) } : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

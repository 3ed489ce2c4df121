import type Database from 'better-sqlite3';
import { connectionPragmas, openSqliteDatabase, type OpenOptions } from '../sqlite/open-database.ts';
import { SqliteWriterThread } from '../sqlite/writer-thread.ts';
import { EVENT_LOG_BACKSTOP_CHECKPOINT_PAGES, EVENT_LOG_WAL_CUT_BACK_BYTES, WalCheckpointer, type Schedule } from '../sqlite/wal-checkpointer.ts';
import type {
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeToAllOptions,
  Subscription,
} from './event-store.ts';
import { StreamNotFoundError, UnavailableError } from './errors.ts';
import { AppendNotifier } from './append-notifier.ts';
import { OtherConnectionCommits } from '../sqlite/other-connection-commits.ts';
import { APPEND_HANDLER, GroupCommit, checkExpectation, currentRevision, validateAppend, type AppendOutcome, type AppendRequest } from './sqlite-event-appends.ts';
import { EVENT_COLUMNS, SCHEMA, serialiseAppend, toRecorded, type EventRow, type EventTexts, type SerialisedEvent, type StreamRow } from './sqlite-event-rows.ts';
import { SqliteSubscription } from './sqlite-subscription.ts';

export interface SqliteEventStoreOptions {
  /**
   * How often a live subscription reads the log for new events when nothing woke it: appends through this
   * process wake it at once, another process's within `otherProcessCheckMs`; this poll is the backstop.
   */
  pollIntervalMs?: number;
  /**
   * While subscriptions are open, how often the store checks whether another process (an API-only replica,
   * a command-line tool) appended, to wake them at once (PRAGMA data_version): every 2 ms for a second after
   * it saw one, else every `otherProcessCheckMs` (default 10).
   */
  otherProcessCheckMs?: number;
  /**
   * How often while another process's appends are coming (for a second after one was seen); default 2. A reader
   * that batches what it reads anyway (the log tree's follower) checks less often and wakes less.
   */
  otherProcessActiveCheckMs?: number;
  /** Events fetched per query while reading or catching up. */
  pageSize?: number;
  /** When the WAL checkpoint after appends runs (tests run it themselves). */
  schedule?: Schedule;
}

/** The log's connections: durable commits (synchronous=FULL), the backstop checkpoint at 10,000 pages. */
export const EVENT_LOG_CONNECTION = { purpose: 'event store', walAutocheckpointPages: EVENT_LOG_BACKSTOP_CHECKPOINT_PAGES } as const satisfies OpenOptions;
const BUSY_TIMEOUT_MS = 10_000;

/**
 * The embedded event store: one SQLite file in WAL mode, durable when append returns.
 * Appends run in an IMMEDIATE transaction, so two processes appending to one stream with the same
 * expectation are serialised by SQLite's write lock: the second sees the first's revision and fails
 * with WrongExpectedVersionError. They run on a writer thread (SqliteWriterThread) with a connection of
 * its own, so that the event loop goes on answering while SQLite writes and waits for the disk (fsync).
 */
export class SqliteEventStore implements EventStore {
  readonly #db: Database.Database;
  readonly #notifier: AppendNotifier;
  readonly #pollIntervalMs: number;
  readonly #pageSize: number;
  readonly #subscriptions = new Set<SqliteSubscription>();
  /** Where appends are committed: off the event loop (see APPEND_HANDLER). */
  readonly #writer: SqliteWriterThread<AppendRequest, AppendOutcome[]>;
  /** Appends waiting for the next group commit, and the one being committed (see append). */
  readonly #groupCommit: GroupCommit;
  readonly #statements;
  /** Copies the log's WAL into its file a second after appends, off the event loop (see WalCheckpointer). */
  readonly #checkpointer: WalCheckpointer;
  /** Wakes the subscriptions when another process appends (checked while any is open). */
  readonly #otherProcessAppends: OtherConnectionCommits;
  #closed = false;

  static open(file: string, options: SqliteEventStoreOptions = {}): SqliteEventStore {
    const db = openSqliteDatabase(file, { ...EVENT_LOG_CONNECTION, busyTimeoutMs: BUSY_TIMEOUT_MS });
    return new SqliteEventStore(db, file, options);
  }

  private constructor(db: Database.Database, file: string, options: SqliteEventStoreOptions) {
    this.#db = db;
    this.#pollIntervalMs = options.pollIntervalMs ?? 250;
    this.#pageSize = options.pageSize ?? 1000;
    db.defaultSafeIntegers(true);
    db.exec(SCHEMA);
    this.#notifier = AppendNotifier.for(file);
    this.#writer = new SqliteWriterThread(file, { pragmas: connectionPragmas(EVENT_LOG_CONNECTION), busyTimeoutMs: BUSY_TIMEOUT_MS, handler: APPEND_HANDLER });
    this.#checkpointer = new WalCheckpointer(file, { schedule: options.schedule, cutBackBytes: EVENT_LOG_WAL_CUT_BACK_BYTES });
    // A change seen while a group commit is on the writer thread may be that commit: it is told with its rows.
    this.#otherProcessAppends = new OtherConnectionCommits(db, () => this.#notifier.notify(), { activeMs: options.otherProcessActiveCheckMs ?? 2, idleMs: options.otherProcessCheckMs ?? 10, activeForMs: 1_000 }, () => this.#groupCommit.committing);
    const s = {
      stream: db.prepare<[string], StreamRow>('SELECT last_revision, deleted_before FROM streams WHERE stream_id = ?'),
      deleteStream: db.prepare<[bigint, string], never>('UPDATE streams SET deleted_before = ? WHERE stream_id = ?'),
      forwards: db
        .prepare<[string, bigint, bigint], EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE stream_id = ? AND revision >= ? ORDER BY revision ASC LIMIT +?`)
        .raw(true),
      backwards: db
        .prepare<[string, bigint, bigint, bigint], EventRow>(
          `SELECT ${EVENT_COLUMNS} FROM events WHERE stream_id = ? AND revision <= ? AND revision >= ? ORDER BY revision DESC LIMIT +?`,
        )
        .raw(true),
      all: db.prepare<[bigint, bigint], EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE position > ? ORDER BY position ASC LIMIT +?`).raw(true),
      head: db.prepare<[], { head: bigint | null }>('SELECT max(position) AS head FROM events'),
      at: db.prepare<[bigint], EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE position = ?`).raw(true),
    };
    this.#statements = s;
    this.#groupCommit = new GroupCommit(this.#writer, (rows) => {
      // This process's subscriptions are given the rows here: the appends need not be noticed as another
      // connection's. Unless another process appended after them before this: then they are told to query.
      this.#otherProcessAppends.seen();
      const head = this.#statements.head.get()?.head ?? null;
      this.#notifier.notify(head === rows.at(-1)![0] ? rows : undefined);
      this.#checkpointer.wrote();
    });
  }

  /**
   * Group commit: appends made in the same turn of the event loop (concurrent requests, an outbox worker
   * recording several deliveries), and those made while the group before is being committed, are committed
   * together in one IMMEDIATE transaction, so they share one durable write instead of paying an fsync each.
   * Each append keeps its own expectation check and its own outcome; each resolves only once the
   * transaction holding it is committed (synchronous=FULL).
   */
  append(streamId: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    let stored: { serialised: SerialisedEvent[]; texts: EventTexts[] };
    try {
      this.#assertOpen();
      validateAppend(streamId, events);
      stored = serialiseAppend(streamId, events);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#groupCommit.add(streamId, stored.serialised, stored.texts, expectedRevision);
  }

  async *readStream(streamId: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    this.#assertOpen();
    const row = this.#statements.stream.get(streamId);
    const current = currentRevision(row);
    if (current === 'no_stream' || !row) throw new StreamNotFoundError(streamId);
    const first = row.deleted_before ?? 0n;
    const direction = options.direction ?? 'forwards';
    let remaining = options.maxCount === undefined ? Infinity : Math.max(0, options.maxCount);
    const page = BigInt(this.#pageSize);
    if (direction === 'forwards') {
      let from = options.fromRevision === undefined || options.fromRevision === 'start' ? first
        : options.fromRevision === 'end' ? current
        : options.fromRevision < first ? first : options.fromRevision;
      while (remaining > 0) {
        const limit = minBig(page, remaining);
        const rows = this.#statements.forwards.all(streamId, from, limit);
        for (const r of rows) yield toRecorded(r);
        remaining -= rows.length;
        if (BigInt(rows.length) < limit) return;
        from = rows[rows.length - 1]![2] + 1n;
      }
    } else {
      let from = options.fromRevision === undefined || options.fromRevision === 'end' ? current
        : options.fromRevision === 'start' ? first
        : options.fromRevision;
      while (remaining > 0 && from >= first) {
        const rows = this.#statements.backwards.all(streamId, from, first, minBig(page, remaining));
        for (const r of rows) yield toRecorded(r);
        remaining -= rows.length;
        if (rows.length === 0) return;
        from = rows[rows.length - 1]![2] - 1n;
      }
    }
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    this.#assertOpen();
    let after = options.after === undefined || options.after === 'start' ? 0n : options.after;
    let remaining = options.maxCount === undefined ? Infinity : Math.max(0, options.maxCount);
    const page = BigInt(this.#pageSize);
    while (remaining > 0) {
      const limit = minBig(page, remaining);
      const rows = this.#statements.all.all(after, limit);
      for (const r of rows) yield toRecorded(r);
      remaining -= rows.length;
      if (BigInt(rows.length) < limit) return;
      after = rows[rows.length - 1]![0];
    }
  }

  async readAt(positions: readonly bigint[]): Promise<Array<RecordedEvent | null>> {
    this.#assertOpen();
    return positions.map((position) => {
      const row = this.#statements.at.get(position);
      return row === undefined ? null : toRecorded(row);
    });
  }

  /**
   * Whether the log was begun by a build before frames: its first event is stored as JSON text (see EventRow).
   * Rows of such builds read as they are; `annals log compact` rewrites them as frames.
   */
  beganBeforeFrames(): boolean {
    this.#assertOpen();
    const first = this.#db.prepare<[], { text: bigint }>("SELECT typeof(data) = 'text' AS text FROM events ORDER BY position LIMIT 1").get();
    return first?.text === 1n;
  }

  async headPosition(): Promise<bigint | null> {
    this.#assertOpen();
    return this.#statements.head.get()?.head ?? null;
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): Subscription {
    this.#assertOpen();
    const after = options.after === undefined || options.after === 'start' ? 0n : options.after;
    const subscription = new SqliteSubscription(this.#db, this.#notifier, after, options.filter ?? {}, {
      pageSize: this.#pageSize,
      pollIntervalMs: this.#pollIntervalMs,
      onStop: (sub) => {
        this.#subscriptions.delete(sub);
        if (this.#subscriptions.size === 0) this.#otherProcessAppends.stop();
      },
    });
    this.#subscriptions.add(subscription);
    this.#otherProcessAppends.start();
    return subscription;
  }

  async deleteStream(streamId: string, expectedRevision: ExpectedRevision = 'any'): Promise<void> {
    this.#assertOpen();
    const s = this.#statements;
    this.#db.transaction(() => {
      const row = s.stream.get(streamId);
      const current = currentRevision(row);
      checkExpectation(streamId, expectedRevision, current);
      if (current === 'no_stream' || !row) throw new StreamNotFoundError(streamId);
      s.deleteStream.run(row.last_revision + 1n, streamId);
    }).immediate();
  }

  async ping(): Promise<void> {
    if (this.#closed) throw new UnavailableError('the event store is closed');
    try {
      this.#db.prepare('SELECT 1').get();
    } catch (error) {
      throw new UnavailableError(`the event store file cannot be read: ${(error as Error).message}`, { cause: error });
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    // Appends already accepted are committed (or refused) before the database closes.
    this.#closed = true;
    this.#groupCommit.flush();
    await this.#groupCommit.drain();
    await Promise.all([...this.#subscriptions].map((s) => s.stop()));
    this.#otherProcessAppends.stop();
    await this.#writer.close();
    await this.#checkpointer.close();
    this.#db.close();
  }

  #assertOpen(): void {
    if (this.#closed) throw new UnavailableError('the event store is closed');
  }
}

function minBig(a: bigint, b: number): bigint {
  return b === Infinity || BigInt(b) > a ? a : BigInt(b);
}

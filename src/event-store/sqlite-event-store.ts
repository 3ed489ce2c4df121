import type Database from 'better-sqlite3';
import { connectionPragmas, openSqliteDatabase, type OpenOptions } from '../sqlite/open-database.ts';
import { SqliteWriterThread, WriterRequestError, WriterThreadError } from '../sqlite/writer-thread.ts';
import { EVENT_LOG_BACKSTOP_CHECKPOINT_PAGES, EVENT_LOG_WAL_CUT_BACK_BYTES, WalCheckpointer, type Schedule } from '../sqlite/wal-checkpointer.ts';
import {
  assertAppendSize,
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type SubscribeToAllOptions,
  type Subscription,
  type SubscriptionFilter,
  type SubscriptionMessage,
  STORED_DATA_JSON,
} from './event-store.ts';
import { InvalidEventError, StreamNotFoundError, UnavailableError, UnreadableEventError, WrongExpectedVersionError } from './errors.ts';
import { isUuid } from './position.ts';
import { AppendNotifier } from './append-notifier.ts';
import { InterruptibleDelay } from '../interruptible-delay.ts';
import { OtherConnectionCommits } from '../sqlite/other-connection-commits.ts';
import { EventFrames } from './event-frames.ts';

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

/**
 * A row of the events table, read in raw mode (an array in column order: cheaper than an object). `data` is the
 * event's frame (event-frames.ts: its data and metadata, compressed) and `metadata` empty; rows written before
 * frames (2026-11-28) hold the two JSON texts, and are read as they are.
 */
type EventRow = [position: bigint, streamId: string, revision: bigint, eventId: string, type: string, data: Buffer | string, metadata: string];
const EVENT_COLUMNS = 'position, stream_id, revision, event_id, type, data, metadata';

interface StreamRow {
  last_revision: bigint;
  deleted_before: bigint | null;
}

const SCHEMA = `
-- data: the event's frame (a BLOB), metadata: '' (see EventRow); both JSON texts in rows written before frames.
CREATE TABLE IF NOT EXISTS events (
  position   INTEGER PRIMARY KEY AUTOINCREMENT,
  stream_id  TEXT    NOT NULL,
  revision   INTEGER NOT NULL,
  event_id   TEXT    NOT NULL,
  type       TEXT    NOT NULL,
  data       TEXT    NOT NULL,
  metadata   TEXT    NOT NULL,
  UNIQUE (stream_id, revision)
);
CREATE TABLE IF NOT EXISTS streams (
  stream_id      TEXT PRIMARY KEY,
  last_revision  INTEGER NOT NULL,
  deleted_before INTEGER
) WITHOUT ROWID;
`;

/** The log's connections: durable commits (synchronous=FULL), the backstop checkpoint at 10,000 pages. */
export const EVENT_LOG_CONNECTION = { purpose: 'event store', walAutocheckpointPages: EVENT_LOG_BACKSTOP_CHECKPOINT_PAGES } as const satisfies OpenOptions;
const BUSY_TIMEOUT_MS = 10_000;

/** What the writer thread is asked to append: the appends of one group commit. */
type AppendRequest = ReadonlyArray<{ streamId: string; events: readonly SerialisedEvent[]; expected: ExpectedRevision }>;
/** How each append of a group commit ended: appended, refused by its expectation (the stream's current revision), or failed alone. */
type AppendOutcome = { appended: AppendResult } | { refused: bigint | 'no_stream' } | { failed: { code: string | undefined; message: string } };

/**
 * The writer thread's handler (see SqliteWriterThread): one IMMEDIATE transaction per group commit, each
 * append under a savepoint of its own, so that a refused expectation (or any failure of one append) undoes
 * that append alone while the others commit. The expectation is checked here as currentRevision and
 * checkExpectation below do (the thread cannot load them); the refusal is made into its error by the caller
 * with the stream's current revision.
 */
const APPEND_HANDLER = `(db) => {
  db.defaultSafeIntegers(true);
  const stream = db.prepare('SELECT last_revision, deleted_before FROM streams WHERE stream_id = ?');
  const insert = db.prepare('INSERT INTO events (stream_id, revision, event_id, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)');
  const upsertStream = db.prepare('INSERT INTO streams (stream_id, last_revision) VALUES (?, ?) ON CONFLICT (stream_id) DO UPDATE SET last_revision = excluded.last_revision');
  class Refused {
    constructor(current) { this.current = current; }
  }
  const appendOne = db.transaction(({ streamId, events, expected }) => {
    const row = stream.get(streamId);
    const current = row && row.last_revision >= (row.deleted_before ?? 0n) ? row.last_revision : 'no_stream';
    const ok = expected === 'any' ? true
      : expected === 'no_stream' ? current === 'no_stream'
      : expected === 'stream_exists' ? current !== 'no_stream'
      : current === expected;
    if (!ok) throw new Refused(current);
    let revision = row ? row.last_revision + 1n : 0n;
    let position = 0n;
    for (const event of events) {
      // The frame crossed to this thread as a Uint8Array; SQLite stores a Buffer as a BLOB.
      const frame = Buffer.from(event.frame.buffer, event.frame.byteOffset, event.frame.byteLength);
      position = BigInt(insert.run(streamId, revision, event.id, event.type, frame, '').lastInsertRowid);
      revision += 1n;
    }
    upsertStream.run(streamId, revision - 1n);
    return { nextExpectedRevision: revision - 1n, position };
  });
  const commitGroup = db.transaction((appends) => appends.map((append) => {
    try {
      return { appended: appendOne(append) };
    } catch (error) {
      if (error instanceof Refused) return { refused: error.current };
      return { failed: { code: error && error.code, message: String(error && error.message || error) } };
    }
  }));
  return (appends) => commitGroup.immediate(appends);
}`;

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
  /** Appends waiting for the next group commit (see append). */
  #pending: PendingAppend[] = [];
  #flushScheduled = false;
  /** The group commit on the writer thread, if any: one at a time, so that appends meanwhile form the next group. */
  #committing: Promise<void> | undefined;
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
    this.#otherProcessAppends = new OtherConnectionCommits(db, () => this.#notifier.notify(), { activeMs: options.otherProcessActiveCheckMs ?? 2, idleMs: options.otherProcessCheckMs ?? 10, activeForMs: 1_000 });
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
    };
    this.#statements = s;

  }

  /**
   * Group commit: appends made in the same turn of the event loop (concurrent requests, an outbox worker
   * recording several deliveries), and those made while the group before is being committed, are committed
   * together in one IMMEDIATE transaction, so they share one durable write instead of paying an fsync each.
   * Each append keeps its own expectation check and its own outcome; each resolves only once the
   * transaction holding it is committed (synchronous=FULL).
   */
  append(streamId: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    let serialised: SerialisedEvent[];
    try {
      this.#assertOpen();
      validateAppend(streamId, events);
      serialised = serialiseAppend(streamId, events);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<AppendResult>((resolve, reject) => {
      this.#pending.push({ streamId, events: serialised, expected: expectedRevision, resolve, reject });
      if (!this.#flushScheduled) {
        this.#flushScheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    this.#flushScheduled = false;
    if (this.#committing || this.#pending.length === 0) return;
    const group = this.#pending;
    this.#pending = [];
    this.#committing = this.#commit(group).finally(() => {
      this.#committing = undefined;
      this.#flush();
    });
  }

  async #commit(group: PendingAppend[]): Promise<void> {
    let outcomes: AppendOutcome[];
    try {
      outcomes = await this.#writer.run(group.map(({ streamId, events, expected }) => ({ streamId, events, expected })));
    } catch (error) {
      // The transaction failed (disk full, I/O error, locked too long): nothing of it was written. Or the thread
      // died: whether it committed is unknown, and the appends fail as unavailable (a retry with the same
      // expectation finds out).
      const reason = error instanceof WriterThreadError ? new UnavailableError(`the event store could not append: ${error.message}`, { cause: error }) : error;
      for (const append of group) append.reject(reason);
      return;
    }
    if (outcomes.some((outcome) => 'appended' in outcome)) {
      // This process's subscriptions are woken here: the appends need not be noticed as another connection's.
      this.#otherProcessAppends.seen();
      this.#notifier.notify();
      this.#checkpointer.wrote();
    }
    group.forEach((append, i) => {
      const outcome = outcomes[i]!;
      if ('appended' in outcome) append.resolve(outcome.appended);
      else if ('refused' in outcome) append.reject(new WrongExpectedVersionError(append.streamId, append.expected, outcome.refused));
      else append.reject(new WriterRequestError(outcome.failed.message, outcome.failed.code));
    });
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
    this.#flush();
    while (this.#committing) await this.#committing;
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

/** An append waiting for the group commit, and how it ended. */
interface PendingAppend {
  streamId: string;
  events: readonly SerialisedEvent[];
  expected: ExpectedRevision;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

/** Catch-up-then-live subscription over the events table. */
class SqliteSubscription implements Subscription {
  readonly #statement: Database.Statement<unknown[], EventRow>;
  readonly #params: (after: bigint, limit: bigint) => unknown[];
  readonly #head: Database.Statement<[], { head: bigint | null }>;
  readonly #snapshot: <T>(fn: () => T) => T;
  #stopped = false;
  readonly #delay = new InterruptibleDelay();
  readonly #unlisten: () => void;

  constructor(
    db: Database.Database,
    notifier: AppendNotifier,
    private after: bigint,
    filter: SubscriptionFilter,
    private readonly options: { pageSize: number; pollIntervalMs: number; onStop: (s: SqliteSubscription) => void },
  ) {
    const where = ['position > ?'];
    const typeParams: string[] = [];
    const prefixParams: Array<bigint | string> = [];
    if (filter.eventTypes) {
      where.push(filter.eventTypes.length ? `type IN (${filter.eventTypes.map(() => '?').join(', ')})` : '0');
      typeParams.push(...filter.eventTypes);
    }
    if (filter.streamPrefixes) {
      where.push(filter.streamPrefixes.length ? `(${filter.streamPrefixes.map(() => 'substr(stream_id, 1, ?) = ?').join(' OR ')})` : '0');
      // substr counts characters (code points), as [...prefix] does; prefix.length counts UTF-16 units.
      for (const prefix of filter.streamPrefixes) prefixParams.push(BigInt([...prefix].length), prefix);
    }
    this.#statement = db.prepare<unknown[], EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE ${where.join(' AND ')} ORDER BY position ASC LIMIT +?`).raw(true);
    this.#params = (afterPosition, limit) => [afterPosition, ...typeParams, ...prefixParams, limit];
    this.#head = db.prepare('SELECT max(position) AS head FROM events');
    // A read transaction gives the page and the head one consistent snapshot.
    this.#snapshot = <T>(fn: () => T) => db.transaction(fn).deferred() as T;
    this.#unlisten = notifier.listen(() => this.#delay.interrupt());
  }

  async *[Symbol.asyncIterator](): AsyncIterator<SubscriptionMessage> {
    const page = BigInt(this.options.pageSize);
    let caughtUpAt: bigint | null | undefined;
    try {
      while (!this.#stopped) {
        const { rows, head } = this.#snapshot(() => ({
          rows: this.#statement.all(...this.#params(this.after, page)),
          head: this.#head.get()?.head ?? null,
        }));
        for (const row of rows) {
          if (this.#stopped) return;
          this.after = row[0];
          yield { kind: 'event', event: toRecorded(row) };
        }
        if (BigInt(rows.length) === page) {
          // Queries and parsing are synchronous: let timers and I/O run between pages, so a long
          // catch-up neither starves the HTTP server nor the consumer's own timers.
          await yieldToEventLoop();
          continue;
        }
        // Everything up to the head at the time of the query has been considered.
        if (head !== null && head > this.after) this.after = head;
        if (caughtUpAt !== this.after) {
          caughtUpAt = this.after;
          yield { kind: 'caught-up', position: head === null ? null : this.after };
        }
        await this.#waitForAppend();
      }
    } finally {
      await this.stop();
    }
  }

  #waitForAppend(): Promise<void> {
    return this.#stopped ? Promise.resolve() : this.#delay.sleep(this.options.pollIntervalMs);
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#unlisten();
    this.#delay.interrupt();
    this.options.onStop(this);
  }
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function currentRevision(row: StreamRow | undefined): bigint | 'no_stream' {
  if (!row) return 'no_stream';
  const first = row.deleted_before ?? 0n;
  return row.last_revision >= first ? row.last_revision : 'no_stream';
}

function checkExpectation(streamId: string, expected: ExpectedRevision, current: bigint | 'no_stream'): void {
  const ok =
    expected === 'any' ? true
    : expected === 'no_stream' ? current === 'no_stream'
    : expected === 'stream_exists' ? current !== 'no_stream'
    : current === expected;
  if (!ok) throw new WrongExpectedVersionError(streamId, expected, current);
}

function validateAppend(streamId: string, events: readonly NewEvent[]): void {
  if (typeof streamId !== 'string' || streamId.length === 0 || streamId.startsWith('$')) {
    throw new InvalidEventError(`invalid stream id ${JSON.stringify(streamId)}: a non-empty string not starting with $`);
  }
  if (events.length === 0) throw new InvalidEventError('append needs at least one event');
  for (const event of events) {
    if (!isUuid(event.id)) throw new InvalidEventError(`event id ${JSON.stringify(event.id)} is not a UUID`);
    if (!event.type || event.type.startsWith('$')) throw new InvalidEventError(`invalid event type ${JSON.stringify(event.type)}`);
  }
}

/** An event as stored: its id and type, and the frame of its data and metadata. */
interface SerialisedEvent {
  id: string;
  type: string;
  frame: Uint8Array;
}

/** Frames are written and read on this thread: zstd's contexts are reused, one per process. */
const frames = new EventFrames();

/** The append's events as stored, within MAX_APPEND_BYTES (their JSON texts, before compression: the same limit on every adapter). */
function serialiseAppend(streamId: string, events: readonly NewEvent[]): SerialisedEvent[] {
  let bytes = 0;
  const texts = events.map((event) => {
    const data = serialise(event, 'data');
    const metadata = serialise(event, 'metadata');
    bytes += Buffer.byteLength(data) + Buffer.byteLength(metadata);
    return { data, metadata };
  });
  assertAppendSize(streamId, bytes);
  return events.map((event, i) => ({ id: event.id, type: event.type, frame: frames.write(texts[i]!.data, texts[i]!.metadata) }));
}

function serialise(event: NewEvent, part: 'data' | 'metadata'): string {
  try {
    const text = JSON.stringify(event[part]);
    if (text === undefined) throw new Error('not JSON');
    return text;
  } catch (error) {
    throw new InvalidEventError(`event ${event.id} (${event.type}) has ${part} that cannot be stored as JSON: ${(error as Error).message}`);
  }
}

/**
 * Event data is parsed on first access: consumers that need only the metadata (an audit trail, a
 * filter on type) skip the cost of parsing revision snapshots. The property is an own, enumerable
 * getter, so spreading or comparing an event sees the data as usual.
 */
function toRecorded([position, streamId, revision, id, type, stored, storedMetadata]: EventRow): RecordedEvent {
  let text: string;
  let metadata: EventMetadata;
  try {
    let metadataText = storedMetadata;
    if (typeof stored === 'string') text = stored;
    else ({ data: text, metadata: metadataText } = frames.read(stored));
    metadata = JSON.parse(metadataText) as EventMetadata;
  } catch (error) {
    throw new UnreadableEventError(position, streamId, revision, id, type, error instanceof SyntaxError ? `its metadata is not JSON (${error.message})` : (error as Error).message, { cause: error });
  }
  let data: unknown;
  let parsed = false;
  const event = { id, type, streamId, revision, position, metadata } as RecordedEvent;
  // The stored text is JSON.stringify's of the data: given to whoever hashes it, until the data is read.
  Object.defineProperty(event, STORED_DATA_JSON, { enumerable: false, get: () => (parsed ? undefined : text) });
  Object.defineProperty(event, 'data', {
    enumerable: true,
    configurable: true,
    get() {
      if (!parsed) {
        data = JSON.parse(text) as unknown;
        parsed = true;
      }
      return data;
    },
    set(value: unknown) {
      data = value;
      parsed = true;
    },
  });
  return event;
}

function minBig(a: bigint, b: number): bigint {
  return b === Infinity || BigInt(b) > a ? a : BigInt(b);
}

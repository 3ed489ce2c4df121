/**
 * Appends to the SQLite event store: the checks of an append, the expectation of a stream's revision, and
 * the group commit, in which the appends of one turn of the event loop (and those made while the group before
 * is committed) are committed on the writer thread in one IMMEDIATE transaction, each under a savepoint of its
 * own (APPEND_HANDLER).
 */
import { type SqliteWriterThread, WriterRequestError, WriterThreadError } from '../sqlite/writer-thread.ts';
import type { AppendResult, ExpectedRevision, NewEvent } from './event-store.ts';
import { InvalidEventError, UnavailableError, WrongExpectedVersionError } from './errors.ts';
import { isUuid } from './position.ts';
import { appendedRows, type EventRow, type EventTexts, type SerialisedEvent, type StreamRow } from './sqlite-event-rows.ts';

/** What the writer thread is asked to append: the appends of one group commit. */
export type AppendRequest = ReadonlyArray<{ streamId: string; events: readonly SerialisedEvent[]; expected: ExpectedRevision }>;
/** How each append of a group commit ended: appended, refused by its expectation (the stream's current revision), or failed alone. */
export type AppendOutcome = { appended: AppendResult } | { refused: bigint | 'no_stream' } | { failed: { code: string | undefined; message: string } };

/**
 * The writer thread's handler (see SqliteWriterThread): one IMMEDIATE transaction per group commit, each
 * append under a savepoint of its own, so that a refused expectation (or any failure of one append) undoes
 * that append alone while the others commit. The expectation is checked here as currentRevision and
 * checkExpectation below do (the thread cannot load them); the refusal is made into its error by the caller
 * with the stream's current revision.
 */
export const APPEND_HANDLER = `(db) => {
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

/** An append waiting for the group commit, and how it ended. */
interface PendingAppend {
  streamId: string;
  events: readonly SerialisedEvent[];
  texts: readonly EventTexts[];
  expected: ExpectedRevision;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

/** The group commit (see SqliteEventStore.append): appends waiting for it, and the one being committed. */
export class GroupCommit {
  /** Where appends are committed: off the event loop (see APPEND_HANDLER). */
  readonly #writer: SqliteWriterThread<AppendRequest, AppendOutcome[]>;
  /** Given the rows of a group that committed at least one append, in position order (before the appends resolve). */
  readonly #onAppended: (rows: EventRow[]) => void;
  /** Appends waiting for the next group commit (see append). */
  #pending: PendingAppend[] = [];
  #flushScheduled = false;
  /** The group commit on the writer thread, if any: one at a time, so that appends meanwhile form the next group. */
  #committing: Promise<void> | undefined;

  constructor(writer: SqliteWriterThread<AppendRequest, AppendOutcome[]>, onAppended: (rows: EventRow[]) => void) {
    this.#writer = writer;
    this.#onAppended = onAppended;
  }

  /** An append (checked and serialised) for the next group commit; resolves once the group has committed. */
  add(streamId: string, events: readonly SerialisedEvent[], texts: readonly EventTexts[], expected: ExpectedRevision): Promise<AppendResult> {
    return new Promise<AppendResult>((resolve, reject) => {
      this.#pending.push({ streamId, events, texts, expected, resolve, reject });
      if (!this.#flushScheduled) {
        this.#flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  flush(): void {
    this.#flushScheduled = false;
    if (this.#committing || this.#pending.length === 0) return;
    const group = this.#pending;
    this.#pending = [];
    this.#committing = this.#commit(group).finally(() => {
      this.#committing = undefined;
      this.flush();
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
    // Appends commit in the group's order, each after the one before: their rows are in position order.
    const rows = group.flatMap((append, i) => {
      const outcome = outcomes[i]!;
      return 'appended' in outcome ? appendedRows(append.streamId, append.events, append.texts, outcome.appended) : [];
    });
    if (rows.length > 0) this.#onAppended(rows);
    group.forEach((append, i) => {
      const outcome = outcomes[i]!;
      if ('appended' in outcome) append.resolve(outcome.appended);
      else if ('refused' in outcome) append.reject(new WrongExpectedVersionError(append.streamId, append.expected, outcome.refused));
      else append.reject(new WriterRequestError(outcome.failed.message, outcome.failed.code));
    });
  }

  /** Whether a group commit is on the writer thread: it may have committed without onAppended having been called yet. */
  get committing(): boolean {
    return this.#committing !== undefined;
  }

  /** Resolves once no group commit is running (those already asked for made, or refused). */
  async drain(): Promise<void> {
    while (this.#committing) await this.#committing;
  }
}

export function currentRevision(row: StreamRow | undefined): bigint | 'no_stream' {
  if (!row) return 'no_stream';
  const first = row.deleted_before ?? 0n;
  return row.last_revision >= first ? row.last_revision : 'no_stream';
}

export function checkExpectation(streamId: string, expected: ExpectedRevision, current: bigint | 'no_stream'): void {
  const ok =
    expected === 'any' ? true
    : expected === 'no_stream' ? current === 'no_stream'
    : expected === 'stream_exists' ? current !== 'no_stream'
    : current === expected;
  if (!ok) throw new WrongExpectedVersionError(streamId, expected, current);
}

export function validateAppend(streamId: string, events: readonly NewEvent[]): void {
  if (typeof streamId !== 'string' || streamId.length === 0 || streamId.startsWith('$')) {
    throw new InvalidEventError(`invalid stream id ${JSON.stringify(streamId)}: a non-empty string not starting with $`);
  }
  if (events.length === 0) throw new InvalidEventError('append needs at least one event');
  for (const event of events) {
    if (!isUuid(event.id)) throw new InvalidEventError(`event id ${JSON.stringify(event.id)} is not a UUID`);
    if (!event.type || event.type.startsWith('$')) throw new InvalidEventError(`invalid event type ${JSON.stringify(event.type)}`);
  }
}

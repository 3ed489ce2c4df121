/**
 * The stand-in's store: one in-memory transaction log with KurrentDB's semantics as its documentation and the
 * client protocol describe them, and nothing more. No gRPC here (see ./streams-service.ts for the wire).
 *
 * Positions. The log is a sequence of records at byte offsets, as KurrentDB's transaction file: every record
 * takes a header plus the bytes of its stream name, type, data and metadata, so positions grow by uneven
 * steps and a position between two records is not a record boundary. Every event is written as a
 * self-committed prepare, so its commit and prepare positions are both its own offset. Offset 0 holds the
 * chunk's opening (not an event); the first event is the `$epoch-information` system event of `$epochs`.
 *
 * Reads of $all: forwards from a position is inclusive, backwards is exclusive, and the position must be 0,
 * the end of the log or the start of a record ("Trying to read from an invalid position." otherwise).
 *
 * Streams. Revisions start at 0. A soft delete writes a `$metadata` system event to `$$<stream>` with
 * `$tb` (truncate before) set to the maximum revision, and the stream reads as not found; an append recreates
 * it: another `$metadata` event sets `$tb` to the first new revision, revisions continue, and only the new
 * events are readable. A tombstone (hard delete) writes `$streamDeleted` to the stream itself; it can never be
 * read or written again. Expectations on a soft-deleted stream: "stream exists" is refused as "stream
 * deleted"; "no stream", "any" and the last revision are accepted.
 *
 * Idempotence. An append whose event ids are the events already at the revisions it would write (a retry of
 * an append that was written) succeeds without writing anything, with the original result.
 *
 * Size. An append whose events' data and metadata bytes add up to more than `maxAppendSize` (KurrentDB's
 * MaxAppendSize, 1 MiB by default) is refused.
 */
import { randomUUID } from 'node:crypto';

/** A record of the log as a reader of $all sees it. */
export interface LogRecord {
  /** Commit and prepare position: the record's offset in the log. */
  position: bigint;
  streamId: string;
  revision: bigint;
  id: string;
  type: string;
  contentType: 'application/json' | 'application/octet-stream';
  data: Uint8Array;
  metadata: Uint8Array;
  /** .NET ticks (100 ns) since the Unix epoch, as the server reports `created`. */
  created: bigint;
}

export interface ProposedEvent {
  id: string;
  type: string;
  contentType: 'application/json' | 'application/octet-stream';
  data: Uint8Array;
  metadata: Uint8Array;
}

export type Expectation = { kind: 'any' } | { kind: 'no_stream' } | { kind: 'stream_exists' } | { kind: 'revision'; revision: bigint };

export type AppendOutcome =
  | { kind: 'success'; revision: bigint; position: bigint }
  | { kind: 'wrong-expected-version'; current: bigint | 'no_stream' }
  | { kind: 'stream-deleted' }
  | { kind: 'too-large'; maxAppendSize: number };

export type DeleteOutcome =
  | { kind: 'success'; position: bigint }
  | { kind: 'wrong-expected-version'; current: bigint | 'no_stream' }
  | { kind: 'stream-deleted' };

export type StreamRead =
  | { kind: 'events'; records: LogRecord[] }
  | { kind: 'not-found' }
  | { kind: 'deleted' };

interface StreamState {
  /** Revision of the stream's last event; -1n when it has none. */
  last: bigint;
  /** Revisions below are hidden (soft delete and recreation). */
  truncateBefore: bigint;
  softDeleted: boolean;
  tombstoned: boolean;
}

/** KurrentDB's `$tb` of a soft-deleted stream: long.MaxValue. */
const DELETED_STREAM = 9_223_372_036_854_775_807n;
const RECORD_HEADER_BYTES = 88;
const TICKS_PER_MS = 10_000n;

export class EsdbLog {
  readonly records: LogRecord[] = [];
  readonly #streams = new Map<string, StreamState>();
  readonly #byPosition = new Map<bigint, LogRecord>();
  readonly #byStream = new Map<string, LogRecord[]>();
  readonly #listeners = new Set<(record: LogRecord) => void>();
  /** Where the next record starts: the end of the log. */
  #end = 0n;
  /** KurrentDB's MaxAppendSize. */
  maxAppendSize = 1024 * 1024;

  constructor(private readonly clock: () => number = Date.now) {
    this.reset();
  }

  /** Empties the log, as a fresh node's (listeners stay). */
  reset(): void {
    this.records.length = 0;
    this.#streams.clear();
    this.#byPosition.clear();
    this.#byStream.clear();
    this.#end = 64n; // the chunk's opening record
    this.#write('$epochs', { id: randomUUID(), type: '$epoch-information', contentType: 'application/json', data: json({ epochNumber: 0 }), metadata: new Uint8Array() });
  }

  /** The position after the last record (where the next one goes). */
  get end(): bigint {
    return this.#end;
  }

  /** Called with every record written, in order, after it is in the log. */
  listen(listener: (record: LogRecord) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  isRecordBoundary(position: bigint): boolean {
    return position === 0n || position === this.#end || this.#byPosition.has(position);
  }

  append(streamId: string, events: readonly ProposedEvent[], expected: Expectation): AppendOutcome {
    const size = events.reduce((sum, e) => sum + e.data.byteLength + e.metadata.byteLength, 0);
    if (size > this.maxAppendSize) return { kind: 'too-large', maxAppendSize: this.maxAppendSize };
    const stream = this.#streams.get(streamId);
    if (stream?.tombstoned) return { kind: 'stream-deleted' };
    const last = stream?.last ?? -1n;
    const exists = stream !== undefined && last >= stream.truncateBefore && !stream.softDeleted;

    const retried = this.#idempotentResult(streamId, events, expected);
    if (retried) return retried;
    switch (expected.kind) {
      case 'stream_exists':
        if (stream?.softDeleted) return { kind: 'stream-deleted' };
        if (!exists) return { kind: 'wrong-expected-version', current: 'no_stream' };
        break;
      case 'no_stream':
        if (exists) return { kind: 'wrong-expected-version', current: last };
        break;
      case 'revision':
        if (expected.revision !== last) return { kind: 'wrong-expected-version', current: last < 0n ? 'no_stream' : last };
        break;
      case 'any':
        break;
    }
    if (events.length === 0) return { kind: 'success', revision: last, position: this.#end };
    if (stream?.softDeleted) {
      // Recreation: the stream's metadata moves truncate-before to the first new revision.
      stream.softDeleted = false;
      stream.truncateBefore = last + 1n;
      this.#writeSystem(`$$${streamId}`, '$metadata', { $tb: Number(last + 1n) });
    }
    let record: LogRecord | undefined;
    for (const event of events) record = this.#write(streamId, event);
    return { kind: 'success', revision: record!.revision, position: record!.position };
  }

  /** The original result when these events are exactly the ones already written where they would go. */
  #idempotentResult(streamId: string, events: readonly ProposedEvent[], expected: Expectation): AppendOutcome | undefined {
    if (events.length === 0) return undefined;
    const written = this.#byStream.get(streamId) ?? [];
    let from: number;
    if (expected.kind === 'revision') from = Number(expected.revision) + 1;
    else if (expected.kind === 'no_stream') from = 0;
    else from = written.findIndex((r) => r.id === events[0]!.id);
    if (from < 0 || from + events.length > written.length) return undefined;
    const same = events.every((e, i) => written[from + i]!.id === e.id);
    if (!same) return undefined;
    const lastWritten = written[from + events.length - 1]!;
    return { kind: 'success', revision: lastWritten.revision, position: lastWritten.position };
  }

  /** Soft delete. */
  delete(streamId: string, expected: Expectation): DeleteOutcome {
    const stream = this.#streams.get(streamId);
    if (stream?.tombstoned) return { kind: 'stream-deleted' };
    const check = this.#checkDelete(stream, expected);
    if (check) return check;
    if (stream) stream.softDeleted = true;
    const record = this.#writeSystem(`$$${streamId}`, '$metadata', { $tb: Number(DELETED_STREAM) });
    return { kind: 'success', position: record.position };
  }

  /** Hard delete. */
  tombstone(streamId: string, expected: Expectation): DeleteOutcome {
    const stream = this.#streams.get(streamId);
    if (stream?.tombstoned) return { kind: 'stream-deleted' };
    const check = this.#checkDelete(stream, expected);
    if (check) return check;
    const record = this.#writeSystem(streamId, '$streamDeleted', {});
    this.#streams.get(streamId)!.tombstoned = true;
    return { kind: 'success', position: record.position };
  }

  #checkDelete(stream: StreamState | undefined, expected: Expectation): DeleteOutcome | undefined {
    const last = stream?.last ?? -1n;
    const current = last < 0n ? 'no_stream' : last;
    if (expected.kind === 'no_stream' && last >= 0n) return { kind: 'wrong-expected-version', current };
    if (expected.kind === 'stream_exists' && (last < 0n || stream?.softDeleted)) return { kind: 'wrong-expected-version', current: 'no_stream' };
    if (expected.kind === 'revision' && expected.revision !== last) return { kind: 'wrong-expected-version', current };
    return undefined;
  }

  /** A stream read: forwards from `from` (inclusive), or backwards from it (inclusive). */
  readStream(streamId: string, direction: 'forwards' | 'backwards', from: bigint | 'start' | 'end', maxCount: bigint): StreamRead {
    const stream = this.#streams.get(streamId);
    if (stream?.tombstoned) return { kind: 'deleted' };
    if (!stream || stream.softDeleted || stream.last < stream.truncateBefore) return { kind: 'not-found' };
    let visible = (this.#byStream.get(streamId) ?? []).filter((r) => r.revision >= stream.truncateBefore);
    if (direction === 'forwards') {
      visible = from === 'end' ? [] : from === 'start' ? visible : visible.filter((r) => r.revision >= from);
    } else {
      visible.reverse();
      if (from === 'start') visible = visible.filter((r) => r.revision === stream.truncateBefore);
      else if (from !== 'end') visible = visible.filter((r) => r.revision <= from);
    }
    return { kind: 'events', records: visible.slice(0, clampCount(maxCount)) };
  }

  /** A read of $all, system events included; undefined when `from` is not a valid start. */
  readAll(direction: 'forwards' | 'backwards', from: bigint | 'start' | 'end', maxCount: bigint): LogRecord[] | undefined {
    if (typeof from === 'bigint' && !this.isRecordBoundary(from)) return undefined;
    const count = clampCount(maxCount);
    if (direction === 'forwards') {
      const first = from === 'start' ? 0 : from === 'end' ? this.records.length : this.#firstAtOrAfter(from);
      return this.records.slice(first, first + count);
    }
    const end = from === 'end' ? this.records.length : from === 'start' ? 0 : this.#firstAtOrAfter(from);
    return this.records.slice(Math.max(0, end - count), end).reverse();
  }

  /** Records strictly after `after` (null: from the first), up to the current end. */
  recordsAfter(after: bigint | null): LogRecord[] {
    return after === null ? [...this.records] : this.records.slice(this.#firstAtOrAfter(after + 1n));
  }

  /** The index of the first record at or after `position` (the number of records when there is none). */
  #firstAtOrAfter(position: bigint): number {
    let low = 0;
    let high = this.records.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.records[middle]!.position >= position) high = middle;
      else low = middle + 1;
    }
    return low;
  }

  #writeSystem(streamId: string, type: string, data: unknown): LogRecord {
    return this.#write(streamId, { id: randomUUID(), type, contentType: 'application/json', data: json(data), metadata: new Uint8Array() });
  }

  #write(streamId: string, event: ProposedEvent): LogRecord {
    const stream = this.#streams.get(streamId) ?? { last: -1n, truncateBefore: 0n, softDeleted: false, tombstoned: false };
    this.#streams.set(streamId, stream);
    stream.last += 1n;
    const record: LogRecord = {
      position: this.#end,
      streamId,
      revision: stream.last,
      id: event.id,
      type: event.type,
      contentType: event.contentType,
      data: event.data,
      metadata: event.metadata,
      created: BigInt(this.clock()) * TICKS_PER_MS,
    };
    const size = RECORD_HEADER_BYTES + Buffer.byteLength(streamId) + Buffer.byteLength(event.type) + event.data.byteLength + event.metadata.byteLength;
    this.#end += BigInt(size + ((8 - (size % 8)) % 8));
    this.records.push(record);
    this.#byPosition.set(record.position, record);
    if (!this.#byStream.has(streamId)) this.#byStream.set(streamId, []);
    this.#byStream.get(streamId)!.push(record);
    for (const listener of this.#listeners) listener(record);
    return record;
  }
}

function json(value: unknown): Uint8Array {
  return Buffer.from(JSON.stringify(value));
}

function clampCount(maxCount: bigint): number {
  return maxCount > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(maxCount);
}

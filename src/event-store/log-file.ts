/**
 * The file a log is moved in (`annals log export` / `annals log import`): NDJSON, one JSON object per line.
 *
 *   {"kind":"header","format":"annals-log","version":1,"exportedAt":"...","head":"<position>"}
 *   {"kind":"event","id":"<uuid>","streamId":"...","revision":"0","position":"<position>","type":"...","data":{...},"metadata":{...}}
 *   ...every event of the log, in global order...
 *   {"kind":"stream","streamId":"...","deletedBefore":"2"}            one per soft-deleted stream
 *   {"kind":"end","events":1234,"streams":56,"digest":"sha256:..."}
 *
 * Revisions and positions are decimal strings (never raw bigints); `position` is the source store's and is
 * informative only (positions are not kept across stores, the order is). Data and metadata are as the log
 * holds them: personal data in contact-form submissions stays encrypted (its keys live in the key store,
 * which moves separately).
 *
 * `deletedBefore` records a soft delete (EventStoreDB semantics): the stream reads from that revision on,
 * or not at all when it is past the last revision. The digest (LogDigest) covers every event and every
 * deletion, so two logs with the same digest hold the same streams, events, ids, revisions, types, data,
 * metadata, order and deletions.
 */
import { createHash, type Hash } from 'node:crypto';
import { stringify as stableJson } from 'safe-stable-stringify';
import type { EventMetadata, RecordedEvent } from './event-store.ts';

export const LOG_FILE_FORMAT = 'annals-log';
export const LOG_FILE_VERSION = 1;

export interface LogFileHeader {
  kind: 'header';
  format: typeof LOG_FILE_FORMAT;
  version: number;
  exportedAt: string;
  head: string | null;
}

export interface LogFileEvent {
  kind: 'event';
  id: string;
  streamId: string;
  revision: string;
  position: string;
  type: string;
  data: unknown;
  metadata: EventMetadata;
}

export interface LogFileStream {
  kind: 'stream';
  streamId: string;
  deletedBefore: string;
}

export interface LogFileEnd {
  kind: 'end';
  events: number;
  streams: number;
  digest: string;
}

export type LogFileLine = LogFileHeader | LogFileEvent | LogFileStream | LogFileEnd;

/** A line of the file is not what the format says. */
export class LogFileError extends Error {
  override name = 'LogFileError';
}

export function eventLine(event: RecordedEvent): LogFileEvent {
  return {
    kind: 'event',
    id: event.id,
    streamId: event.streamId,
    revision: event.revision.toString(),
    position: event.position.toString(),
    type: event.type,
    data: event.data,
    metadata: event.metadata,
  };
}

/** Parses one line; `at` (1-based) names it in errors. */
export function parseLogLine(text: string, at: number): LogFileLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new LogFileError(`line ${at}: not JSON (${(error as Error).message})`);
  }
  const line = value as Partial<LogFileLine> | null;
  const fail = (why: string) => new LogFileError(`line ${at}: ${why}`);
  switch (line?.kind) {
    case 'header':
      if (line.format !== LOG_FILE_FORMAT) throw fail(`not an annals log file (format ${JSON.stringify(line.format)})`);
      if (line.version !== LOG_FILE_VERSION) throw fail(`format version ${String(line.version)}; this build reads version ${LOG_FILE_VERSION}`);
      return line as LogFileHeader;
    case 'event': {
      const e = line as Partial<LogFileEvent>;
      if (typeof e.id !== 'string' || typeof e.streamId !== 'string' || typeof e.type !== 'string') throw fail('an event needs id, streamId and type');
      if (typeof e.revision !== 'string' || !/^\d+$/.test(e.revision)) throw fail('an event needs its revision as a decimal string');
      if (typeof e.metadata !== 'object' || e.metadata === null) throw fail('an event needs its metadata');
      return line as LogFileEvent;
    }
    case 'stream':
      if (typeof (line as LogFileStream).streamId !== 'string' || !/^\d+$/.test(String((line as LogFileStream).deletedBefore))) throw fail('a stream line needs streamId and deletedBefore');
      return line as LogFileStream;
    case 'end':
      return line as LogFileEnd;
    default:
      throw fail(`unknown kind ${JSON.stringify(line?.kind)}`);
  }
}

/**
 * A digest of a log: SHA-256 over each event (stream, revision, id, type, data and metadata in canonical
 * JSON) in global order, then over each soft delete in stream order. Counts events and streams on the way.
 */
export class LogDigest {
  readonly #hash: Hash = createHash('sha256');
  readonly #streams = new Set<string>();
  #events = 0;
  #deletions: Array<[string, string]> = [];

  addEvent(event: { streamId: string; revision: bigint | string; id: string; type: string; data: unknown; metadata: unknown }): void {
    this.#events += 1;
    this.#streams.add(event.streamId);
    this.#hash.update(`${stableJson([event.streamId, event.revision.toString(), event.id, event.type, event.data ?? null, event.metadata ?? null])}\n`);
  }

  addDeletion(streamId: string, deletedBefore: bigint | string): void {
    this.#deletions.push([streamId, deletedBefore.toString()]);
  }

  get events(): number {
    return this.#events;
  }

  get streams(): number {
    return this.#streams.size;
  }

  /** The streams seen, for the deletion check of a store. */
  streamIds(): IterableIterator<string> {
    return this.#streams.values();
  }

  digest(): string {
    const hash = this.#hash.copy();
    for (const [streamId, before] of [...this.#deletions].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) hash.update(`${stableJson(['deleted', streamId, before])}\n`);
    return `sha256:${hash.digest('hex')}`;
  }
}

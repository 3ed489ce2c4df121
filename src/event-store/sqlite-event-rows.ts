/**
 * How the SQLite event store keeps events: its tables, a row of the events table, an append's events
 * serialised as frames (event-frames.ts), and a row read back as a RecordedEvent.
 */
import { assertAppendSize, STORED_DATA_JSON, type EventMetadata, type NewEvent, type RecordedEvent } from './event-store.ts';
import { InvalidEventError, UnreadableEventError } from './errors.ts';
import { EventFrames } from './event-frames.ts';

/**
 * A row of the events table, read in raw mode (an array in column order: cheaper than an object). `data` is the
 * event's frame (event-frames.ts: its data and metadata, compressed) and `metadata` empty; rows written before
 * frames (2026-11-28) hold the two JSON texts, and are read as they are.
 */
export type EventRow = [position: bigint, streamId: string, revision: bigint, eventId: string, type: string, data: Buffer | string, metadata: string];
export const EVENT_COLUMNS = 'position, stream_id, revision, event_id, type, data, metadata';

export interface StreamRow {
  last_revision: bigint;
  deleted_before: bigint | null;
}

export const SCHEMA = `
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

/** An event as stored: its id and type, and the frame of its data and metadata. */
export interface SerialisedEvent {
  id: string;
  type: string;
  frame: Uint8Array;
}

/** Frames are written and read on this thread: zstd's contexts are reused, one per process. */
const frames = new EventFrames();

/** An event's data and metadata as JSON text, as its frame holds them. */
export interface EventTexts {
  data: string;
  metadata: string;
}

/**
 * The append's events as stored, within MAX_APPEND_BYTES (their JSON texts, before compression: the same limit
 * on every adapter), and their texts (for the rows this process's subscriptions are given, see appendedRows).
 */
export function serialiseAppend(streamId: string, events: readonly NewEvent[]): { serialised: SerialisedEvent[]; texts: EventTexts[] } {
  let bytes = 0;
  const texts = events.map((event) => {
    const data = serialise(event, 'data');
    const metadata = serialise(event, 'metadata');
    bytes += Buffer.byteLength(data) + Buffer.byteLength(metadata);
    return { data, metadata };
  });
  assertAppendSize(streamId, bytes);
  return { serialised: events.map((event, i) => ({ id: event.id, type: event.type, frame: frames.write(texts[i]!.data, texts[i]!.metadata) })), texts };
}

/**
 * The rows of an append once committed, as a read of the events table would give them, with the texts in place
 * of the frame (as rows written before frames hold them: toRecorded reads both): an append's events take
 * consecutive positions and revisions up to the last ones its result gives.
 */
export function appendedRows(streamId: string, events: readonly SerialisedEvent[], texts: readonly EventTexts[], result: { position: bigint; nextExpectedRevision: bigint }): EventRow[] {
  const first = BigInt(events.length - 1);
  return events.map((event, i) => [result.position - first + BigInt(i), streamId, result.nextExpectedRevision - first + BigInt(i), event.id, event.type, texts[i]!.data, texts[i]!.metadata]);
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
export function toRecorded([position, streamId, revision, id, type, stored, storedMetadata]: EventRow): RecordedEvent {
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

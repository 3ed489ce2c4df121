/**
 * Pure translations between the event store port and KurrentDB / EventStoreDB (@kurrent/kurrentdb-client):
 * positions, expectations, connection strings, and events in both directions. No I/O.
 *
 * Positions. KurrentDB positions are pairs {commit, prepare} in its transaction file. Since 20.x every append
 * is written as self-committed prepare records, so for every event written by a normal append commit ===
 * prepare === the event's own log position; the port's single bigint is that `commit` value. Where a position
 * goes back to the client it is passed as {commit: p, prepare: p}.
 *
 * Metadata. The port's EventMetadata is stored as the event's JSON metadata, with the correlation and
 * causation ids under the server's own names, `$correlationId` and `$causationId`, so that the server's
 * `$by_correlation_id` projection (and any tool that reads them) works on our events. Events written before
 * that, with `correlationId`/`causationId`, still read back as they were written.
 */
import {
  ANY,
  NO_STREAM,
  STREAM_EXISTS,
  jsonEvent,
  type AllStreamResolvedEvent,
  type AppendStreamState,
  type EventData,
  type JSONType,
  type Position,
  type ResolvedEvent,
} from '@kurrent/kurrentdb-client';
import { EventStoreError, InvalidEventError } from './errors.ts';
import { assertAppendSize, type EventMetadata, type ExpectedRevision, type NewEvent, type RecordedEvent } from './event-store.ts';
import { isUuid } from './position.ts';

/** The port's position of a KurrentDB position. */
export function fromEsdbPosition(position: Position): bigint {
  return position.commit;
}

/** The KurrentDB position of a port position. */
export function toEsdbPosition(position: bigint): Position {
  return { commit: position, prepare: position };
}

/** The client's stream state (append option `streamState`) of a port expectation. */
export function toEsdbStreamState(expected: ExpectedRevision): AppendStreamState {
  switch (expected) {
    case 'any':
      return ANY;
    case 'no_stream':
      return NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    default:
      if (typeof expected !== 'bigint' || expected < 0n) throw new RangeError(`Invalid expected revision: ${String(expected)}`);
      return expected;
  }
}

export function isSystemEventType(type: string): boolean {
  return type.startsWith('$');
}

/**
 * The connection string handed to the client. `esdb://` and `esdb+discover://` (EventStoreDB's schemes, which
 * the client still accepts but warns about on the console) are rewritten to `kurrentdb://` and
 * `kurrentdb+discover://`; everything after the scheme is kept as it is.
 */
export function clientConnectionString(connectionString: string): string {
  return connectionString.trim().replace(/^esdb(\+discover)?:\/\//i, (_, discover: string | undefined) => `kurrentdb${discover ?? ''}://`);
}

/** The metadata as stored on the server: the port's fields, with the correlation ids under the server's names. */
export function toStoredMetadata(metadata: EventMetadata): Record<string, unknown> {
  const { correlationId, causationId, ...rest } = metadata;
  return { ...rest, $correlationId: correlationId, ...(causationId === null ? {} : { $causationId: causationId }) };
}

function utf8Json(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    return undefined;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}

type ClientRecordedEvent = NonNullable<ResolvedEvent['event']> | NonNullable<AllStreamResolvedEvent['event']>;

/**
 * The port's metadata of a stored event. Events written by other tools may carry none or something else: they
 * get a minimal system metadata built from what the server knows, so that a fold never meets `undefined`.
 */
function decodeMetadata(event: ClientRecordedEvent): EventMetadata {
  let metadata: unknown = event.metadata;
  if (metadata instanceof Uint8Array) metadata = utf8Json(metadata);
  if (isPlainObject(metadata) && isPlainObject(metadata.actor)) {
    const { $correlationId, $causationId, correlationId, causationId, ...rest } = metadata;
    return {
      ...rest,
      correlationId: typeof $correlationId === 'string' ? $correlationId : (correlationId as string),
      causationId: typeof $causationId === 'string' ? $causationId : typeof causationId === 'string' ? causationId : null,
    } as unknown as EventMetadata;
  }
  return {
    actor: { type: 'system', id: 'eventstoredb' },
    correlationId: event.id,
    causationId: null,
    occurredAt: event.created.toISOString(),
    schemaVersion: 1,
  };
}

function decodeData(event: ClientRecordedEvent): unknown {
  if (event.isJson) return event.data;
  const parsed = utf8Json(event.data as Uint8Array);
  return parsed === undefined ? event.data : parsed;
}

/** The port's RecordedEvent of a client event, or undefined for an unresolved link. */
export function toRecordedEvent(resolved: ResolvedEvent | AllStreamResolvedEvent): RecordedEvent | undefined {
  const event = resolved.event;
  if (!event) return undefined;
  const position = event.position ? fromEsdbPosition(event.position) : resolved.commitPosition;
  if (position === undefined) {
    throw new EventStoreError(`KurrentDB did not report the position of event ${event.id} in "${event.streamId}" (22.6 or later is required)`);
  }
  return {
    id: event.id,
    type: event.type,
    streamId: event.streamId,
    revision: event.revision,
    position,
    data: decodeData(event),
    metadata: decodeMetadata(event),
  };
}

/** The client's events of one append, validated, and within the port's size limit (MAX_APPEND_BYTES). */
export function toEventData(streamId: string, events: readonly NewEvent[]): EventData[] {
  let bytes = 0;
  const data = events.map((event, index) => {
    const where = `event #${index} for stream "${streamId}"`;
    if (typeof event.id !== 'string' || !isUuid(event.id)) throw new InvalidEventError(`${where}: id ${JSON.stringify(event.id)} is not a UUID`);
    if (typeof event.type !== 'string' || event.type.length === 0) throw new InvalidEventError(`${where}: the type must be a non-empty string`);
    if (isSystemEventType(event.type)) throw new InvalidEventError(`${where}: types starting with "$" are reserved for the store (${event.type})`);
    if (!isPlainObject(event.metadata)) throw new InvalidEventError(`${where}: metadata must be an object`);
    const metadata = toStoredMetadata(event.metadata);
    for (const [part, value] of [['data', event.data], ['metadata', metadata]] as const) {
      let text: string | undefined;
      try {
        text = JSON.stringify(value);
      } catch (error) {
        throw new InvalidEventError(`${where}: ${part} is not serialisable as JSON (${(error as Error).message})`, { cause: error });
      }
      if (text === undefined) throw new InvalidEventError(`${where}: ${part} is not serialisable as JSON`);
      bytes += Buffer.byteLength(text);
    }
    return jsonEvent({ id: event.id, type: event.type, data: event.data as JSONType, metadata: metadata as JSONType });
  });
  assertAppendSize(streamId, bytes);
  return data;
}

/** Escapes a literal for a .NET regular expression (the server's filter syntax). */
export function escapeRegex(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|#\s]/g, (c) => (/\s/.test(c) ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : `\\${c}`));
}

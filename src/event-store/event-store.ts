import { EventTooLargeError } from './errors.ts';
import type { ExpectedRevision } from './expected-revision.ts';

/**
 * The event store port. Every adapter (SQLite, EventStoreDB) implements it and passes
 * test/event-store/event-store.conformance.ts.
 *
 * Conventions, shared by every adapter (EventStoreDB's):
 * - the first event of a stream has revision 0n; a stream without events is "no stream";
 * - a global position is a bigint that grows with every append across all streams;
 * - positions given as `after` are exclusive: reading or subscribing "after P" never yields P again.
 */

/** Who caused an event. Never carries a secret: an agent key is named by its id, never by its value. */
export interface Actor {
  type: 'user' | 'agent' | 'system' | 'public' | 'operator';
  id: string;
}

export interface EventMetadata {
  actor: Actor;
  correlationId: string;
  causationId: string | null;
  /** Present when the command carried an idempotency key. */
  idempotencyKey?: string;
  /** The project the event belongs to, when its data names one: lets consumers scope events without parsing data. */
  projectId?: string;
  /** UTC, ISO 8601 with milliseconds, e.g. 2026-11-22T10:15:30.123Z. */
  occurredAt: string;
  /** Version of the event type's data schema the data was written with. */
  schemaVersion: number;
  /**
   * The event's link in its stream's hash chain (64 hex digits), set by the EventLog on append; absent on
   * events written before chains existed. See ./hash-chain.ts.
   */
  chain?: string;
}

/** An event as handed to `append`. */
export interface NewEvent<Data = unknown> {
  /** UUID. Adapters reject an id that is not a UUID. */
  id: string;
  type: string;
  data: Data;
  metadata: EventMetadata;
}

/** An event as read back from the store. */
export interface RecordedEvent<Data = unknown> {
  id: string;
  type: string;
  streamId: string;
  revision: bigint;
  position: bigint;
  data: Data;
  metadata: EventMetadata;
}

/**
 * An adapter that keeps an event's data as the JSON text JSON.stringify made of it (the embedded log does) may
 * give that text under this key, non-enumerable, while the event's data has not been read or replaced (after
 * that, undefined: the data may have changed in place). Hashing the data then needs no parse and no
 * re-serialisation (the log tree's leaf, src/audit/log-leaf.ts): JSON.stringify of what JSON.parse makes of
 * such a text is that text.
 */
export const STORED_DATA_JSON: unique symbol = Symbol('annals.storedDataJson');

/** The data's JSON text as its store holds it, when the store gives it and the data is untouched (see STORED_DATA_JSON). */
export function storedDataJson(event: RecordedEvent): string | undefined {
  return (event as RecordedEvent & { [STORED_DATA_JSON]?: string | undefined })[STORED_DATA_JSON];
}

/**
 * The largest append every adapter takes: the UTF-8 bytes of its events' data and metadata, serialised as
 * JSON as the adapter stores them, summed over the append. Below KurrentDB's default MaxAppendSize (1 MiB),
 * with room for what the server counts beyond data and metadata, so an append the port accepts is one the
 * server accepts. An append over it fails with EventTooLargeError before anything is written.
 */
export const MAX_APPEND_BYTES = 1_000_000;

/** Throws EventTooLargeError when an append of `bytes` is over MAX_APPEND_BYTES. */
export function assertAppendSize(streamId: string, bytes: number): void {
  if (bytes > MAX_APPEND_BYTES) throw new EventTooLargeError(streamId, bytes, MAX_APPEND_BYTES);
}

// The port's vocabulary, defined below the errors that name it (./expected-revision.ts).
export type { ExpectedRevision };

export interface AppendResult {
  /** Revision of the last event appended: pass it as the expectation of the next append. */
  nextExpectedRevision: bigint;
  /** Global position of the last event appended. */
  position: bigint;
}

export interface ReadStreamOptions {
  direction?: 'forwards' | 'backwards';
  /** Inclusive. Defaults to the start when reading forwards, the end when reading backwards. */
  fromRevision?: bigint | 'start' | 'end';
  maxCount?: number;
}

export interface ReadAllOptions {
  /** Exclusive start position; 'start' reads from the very first event. */
  after?: bigint | 'start';
  maxCount?: number;
}

export interface SubscriptionFilter {
  /** Only events of these types. */
  eventTypes?: readonly string[];
  /** Only events whose stream id starts with one of these prefixes. */
  streamPrefixes?: readonly string[];
}

export interface SubscribeToAllOptions {
  /** Exclusive start position; 'start' delivers everything from the first event. */
  after?: bigint | 'start';
  filter?: SubscriptionFilter;
}

/**
 * What a subscription yields, in order:
 * - 'event': the next event matching the filter;
 * - 'checkpoint': every event up to and including `position` has been considered
 *   (used to advance past long runs of filtered-out events);
 * - 'caught-up': the subscription has delivered everything written so far and now waits for new events.
 *
 * Progress past events the filter does not match: once live, a subscription reports a position at or past
 * an appended event that its filter does not match (a 'checkpoint' or a 'caught-up' with that position)
 * within SUBSCRIPTION_PROGRESS_BOUND_MS of the append, whether or not any matching event follows. Without
 * it, a caller waiting for a projection to pass a position (an as-of read, readiness) would wait for
 * events the projection will never see. (A write's read-your-writes wait does not depend on it: it waits
 * only for the projections its events reach, HandledEvents.) Adapters whose server reports filtered
 * progress only every so many events (KurrentDB: a checkpoint per 32 considered events) look for it
 * themselves.
 */
export type SubscriptionMessage =
  | { kind: 'event'; event: RecordedEvent }
  | { kind: 'checkpoint'; position: bigint }
  | { kind: 'caught-up'; position: bigint | null };

/** See SubscriptionMessage: how soon a live subscription reports progress past an event it does not match. */
export const SUBSCRIPTION_PROGRESS_BOUND_MS = 500;

export interface Subscription extends AsyncIterable<SubscriptionMessage> {
  /** Ends the subscription; a pending iteration finishes without a value. Idempotent. */
  stop(): Promise<void>;
}

export interface EventStore {
  /**
   * Appends atomically, checking the expectation. Refuses, writing nothing: a wrong expectation
   * (WrongExpectedVersionError), an event that is not valid for the store (InvalidEventError), an append over
   * MAX_APPEND_BYTES (EventTooLargeError).
   */
  append(streamId: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult>;
  /** Throws StreamNotFoundError when the stream has no events (never written, or deleted). */
  readStream(streamId: string, options?: ReadStreamOptions): AsyncIterable<RecordedEvent>;
  /** Reads every non-system event in global order. */
  readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent>;
  /**
   * The events at these global positions, in the order asked, null where the log holds no event at one (a
   * position it never handed out, or a system event's). What a read model that indexes the log by position
   * (the audit trail) reads its records' events with: each costs a lookup, whatever the log's length.
   */
  readAt(positions: readonly bigint[]): Promise<Array<RecordedEvent | null>>;
  /** Position of the newest event, or null for an empty store. */
  headPosition(): Promise<bigint | null>;
  /** Catch up from `after`, then deliver new events live, in global order. */
  subscribeToAll(options?: SubscribeToAllOptions): Subscription;
  /**
   * Soft delete (EventStoreDB semantics): the stream reads as not found; its events stay in the global log
   * (history is the audit trail); a later append recreates it, continuing its revision numbers.
   * Recreate with the expectation 'any': servers differ on which other expectations a deleted stream meets.
   */
  deleteStream(streamId: string, expectedRevision?: ExpectedRevision): Promise<void>;
  /** Verifies the store is reachable. Throws UnavailableError otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** What a reader of events by position needs of the log (EventStore.readAt; EventLog's upcasts). */
export type LogByPosition = Pick<EventStore, 'readAt'>;

/**
 * A read model names an event at a log position the log does not hold: it was not folded from this log (a log
 * restored or cut behind it). An error, never a silent gap.
 */
export class EventNotInLogError extends Error {
  override name = 'EventNotInLogError';
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

/**
 * EventStoreDB / KurrentDB adapter of the event store port, over @eventstore/db-client 6.x (gRPC, server 20.10
 * or later; 23.10 or later for server-reported "caught up").
 *
 * Construction: `EventStoreDbEventStore.connect(connectionString)` builds and owns a client (close() disposes
 * it); `new EventStoreDbEventStore(client, { ownsClient })` wraps a client made elsewhere (tests, sharing one
 * client). Either way the client connects lazily: call ping() to find out whether the server is reachable.
 *
 * Positions. EventStoreDB positions are pairs {commit, prepare} in its transaction file. Since 20.x every
 * append is written as self-committed prepare records, so for every event written by a normal append
 * commit === prepare === the event's own log position; the port's single bigint is that `commit` value. Where a
 * position goes back to the client it is passed as {commit: p, prepare: p}. Two kinds of positions the port may
 * see are not event positions: a filtered subscription's checkpoint may name the start of the next record
 * (prepare 0); its `commit` is still a record boundary, and reading or subscribing after it behaves as
 * expected. Positions never reach JSON as raw bigints: see ./position.ts for the text form.
 *
 * Exclusive starts. The port's `after` is exclusive everywhere. The client's readAll `fromPosition` is
 * inclusive, so readAll drops events at or before `after`; its subscribeToAll `fromPosition` is exclusive (the
 * server skips the first event at or after it), so it is passed as is. EventStoreDB never has an event at
 * position 0 (its log opens with an epoch record), so `after: 0n` reads and subscribes from the start. The
 * server only accepts start positions that begin a record of its log (positions it handed out); for any other
 * bigint it answers "invalid position", and the adapter then reads or subscribes from the start and drops
 * everything at or before `after`: correct, but a scan of the whole log.
 *
 * System events (types starting with `$`: stream metadata written by deleteStream, link events, epoch
 * information, ...) never appear in readAll, subscribeToAll or headPosition.
 *
 * Subscription filters. The server applies one filter per subscription, on either the event type or the
 * stream name. eventTypes, when given, go to the server as one anchored regex of the exact names; stream
 * prefixes then are checked here, on the client. Only streamPrefixes: they go to the server as a prefix
 * filter. Neither: the server excludes system events. Every delivered event is also checked here against the
 * whole filter (and for a `$` type), so a server-side quirk cannot leak an unwanted event. The reason for
 * preferring event types on the server: a projector names the handful of event types it folds, which is
 * normally far more selective than a stream prefix. Events dropped on the client advance the position through
 * 'checkpoint' messages (one per `checkpointEvery` dropped events), just like the server's own checkpoints.
 *
 * Caught up. Client 6.x emits `caughtUp` when the server (23.10+) reports the transition to live; that is
 * the primary signal. For older servers, and as a guard, the adapter also reads the head position when it
 * (re)subscribes and reports 'caught-up' once a delivered or considered position reaches it (immediately when
 * the store is empty or `after` is at or past the head). The 'caught-up' position is the larger of the last
 * considered position and that head. With a selective filter on a pre-23.10 server the head-based signal
 * may come late (it needs an event or checkpoint at or past the head).
 *
 * Ordering. The client delivers events through a Readable stream but reports checkpoints (callback) and
 * caught-up (event) out of band, at the moment its transform sees them, possibly while earlier events still
 * wait in the stream's buffer. OrderedSubscriptionReader puts each such marker back in sequence: when a
 * marker arrives, the number of events that precede it is the number already taken from the stream plus the
 * number still buffered (`readableLength`), and the marker is released right after that many events.
 *
 * Dropped connections. The client does not resubscribe. subscribeToAll wraps the single-connection
 * subscription in ResubscribingSubscription, which reopens it after the last delivered position with a capped
 * exponential backoff; stop() and close() end it cleanly.
 */
import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  eventTypeFilter,
  excludeSystemEvents,
  jsonEvent,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type AppendExpectedRevision,
  type EventData,
  type Filter,
  type JSONType,
  type Position,
  type ReadPosition,
  type ReadRevision,
  type ResolvedEvent,
  type StreamingRead,
} from '@eventstore/db-client';
import { isInvalidPositionError, isPermanentEsdbError, mapEsdbError } from './esdb-errors.ts';
import {
  EventStoreError,
  InvalidEventError,
  StreamNotFoundError,
  UnavailableError,
  WrongExpectedVersionError,
} from './errors.ts';
import type {
  AppendResult,
  EventMetadata,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeToAllOptions,
  Subscription,
  SubscriptionFilter,
  SubscriptionMessage,
} from './event-store.ts';
import { isUuid } from './position.ts';
import { ResubscribingSubscription, type ResubscribeOptions } from './resubscribing-subscription.ts';

export interface EventStoreDbEventStoreOptions {
  /** Whether close() disposes the client. Default true. */
  ownsClient?: boolean;
  /** Backoff and drop reporting of subscriptions (see ResubscribingSubscription). */
  resubscribe?: Omit<ResubscribeOptions, 'after' | 'shouldResubscribe'>;
  /** A checkpoint message is yielded after this many consecutive events dropped by client-side filtering. */
  checkpointEvery?: number;
  /** ping() fails with UnavailableError after this long. Default 5000 ms. */
  pingTimeoutMs?: number;
}

/** The port's position of an EventStoreDB position (see the module comment). */
export function fromEsdbPosition(position: Position): bigint {
  return position.commit;
}

/** The EventStoreDB position of a port position (see the module comment). */
export function toEsdbPosition(position: bigint): Position {
  return { commit: position, prepare: position };
}

export function toEsdbExpectedRevision(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case 'any':
      return ANY;
    case 'no_stream':
      return NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    default:
      if (typeof expected !== 'bigint' || expected < 0n) {
        throw new RangeError(`Invalid expected revision: ${String(expected)}`);
      }
      return expected;
  }
}

export function isSystemEventType(type: string): boolean {
  return type.startsWith('$');
}

const HEAD_PAGE_SIZE = 256;

/** Escapes a literal for a .NET regular expression (the server's filter syntax). */
function escapeRegex(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|#\s]/g, (c) =>
    /\s/.test(c) ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : `\\${c}`,
  );
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
 * Metadata of events written through this port is the EventMetadata object itself. Events written by other
 * tools may carry none or something else: they get a minimal system metadata built from what the server knows,
 * so that a fold never meets `undefined`.
 */
function decodeMetadata(event: ClientRecordedEvent): EventMetadata {
  let metadata: unknown = event.metadata;
  if (metadata instanceof Uint8Array) metadata = utf8Json(metadata);
  if (isPlainObject(metadata) && isPlainObject(metadata.actor)) return metadata as unknown as EventMetadata;
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
    throw new EventStoreError(
      `EventStoreDB did not report the position of event ${event.id} in "${event.streamId}" (22.6 or later is required)`,
    );
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

function toEventData(streamId: string, event: NewEvent, index: number): EventData {
  const where = `event #${index} for stream "${streamId}"`;
  if (typeof event.id !== 'string' || !isUuid(event.id)) {
    throw new InvalidEventError(`${where}: id ${JSON.stringify(event.id)} is not a UUID`);
  }
  if (typeof event.type !== 'string' || event.type.length === 0) {
    throw new InvalidEventError(`${where}: the type must be a non-empty string`);
  }
  if (isSystemEventType(event.type)) {
    throw new InvalidEventError(`${where}: types starting with "$" are reserved for the store (${event.type})`);
  }
  for (const [part, value] of [
    ['data', event.data],
    ['metadata', event.metadata],
  ] as const) {
    let text: string | undefined;
    try {
      text = JSON.stringify(value);
    } catch (error) {
      throw new InvalidEventError(`${where}: ${part} is not serialisable as JSON (${(error as Error).message})`, {
        cause: error,
      });
    }
    if (text === undefined) throw new InvalidEventError(`${where}: ${part} is not serialisable as JSON`);
  }
  if (!isPlainObject(event.metadata)) throw new InvalidEventError(`${where}: metadata must be an object`);
  return jsonEvent({
    id: event.id,
    type: event.type,
    data: event.data as JSONType,
    metadata: event.metadata as unknown as JSONType,
  });
}

/** How a port SubscriptionFilter is applied: one server-side filter plus a client-side check. */
export interface FilterPlan {
  /** The server-side filter, given the checkpoint callback. */
  serverFilter(checkpointReached: (subscription: AllStreamSubscription, position: Position) => void): Filter;
  /** The whole filter, system events excluded. */
  accepts(event: { type: string; streamId: string }): boolean;
}

export function planSubscriptionFilter(filter: SubscriptionFilter | undefined): FilterPlan {
  // An absent or empty list places no constraint.
  const typeList = filter?.eventTypes && filter.eventTypes.length > 0 ? filter.eventTypes : undefined;
  const prefixes = filter?.streamPrefixes && filter.streamPrefixes.length > 0 ? [...new Set(filter.streamPrefixes)] : undefined;
  const types = typeList ? new Set(typeList.filter((type) => !isSystemEventType(type))) : undefined;

  const accepts = (event: { type: string; streamId: string }): boolean =>
    !isSystemEventType(event.type) &&
    (types === undefined || types.has(event.type)) &&
    (prefixes === undefined || prefixes.some((prefix) => event.streamId.startsWith(prefix)));

  const serverFilter: FilterPlan['serverFilter'] = (checkpointReached) => {
    const common = { checkpointInterval: 1, checkpointReached };
    if (types !== undefined && types.size > 0) {
      const alternatives = [...types].map(escapeRegex).join('|');
      return eventTypeFilter({ regex: `^(?:${alternatives})$`, ...common });
    }
    if (prefixes !== undefined) return streamNameFilter({ prefixes, ...common });
    // No filter, or only `$` types were asked for (nothing can match): the server just drops system events.
    return excludeSystemEvents(common);
  };
  return { serverFilter, accepts };
}

type ReaderItem =
  | { kind: 'event'; resolved: AllStreamResolvedEvent }
  | { kind: 'checkpoint'; position: Position }
  | { kind: 'caught-up' }
  | { kind: 'fell-behind' }
  | { kind: 'error'; error: unknown }
  | { kind: 'end' };

/**
 * Reads one client subscription as a single ordered sequence of events and markers (checkpoint, caught-up,
 * fell-behind, error, end); see "Ordering" in the module comment. Applies backpressure by pausing the stream
 * while too many items wait.
 */
export class OrderedSubscriptionReader {
  static readonly HIGH_WATER = 256;
  static readonly LOW_WATER = 64;

  #stream: AllStreamSubscription | undefined;
  #items: Array<ReaderItem> = [];
  #markers: Array<{ at: number; item: ReaderItem }> = [];
  /** Events taken from the stream so far. */
  #taken = 0;
  #paused = false;
  #closed = false;
  #ended = false;
  #wake: (() => void) | undefined;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly #listeners: Array<[string, (...args: any[]) => void]> = [];

  /** Pass as the filter's checkpointReached: the client awaits it in sequence with the events. */
  readonly checkpointReached = (_subscription: AllStreamSubscription, position: Position): void => {
    this.#mark({ kind: 'checkpoint', position });
  };

  attach(stream: AllStreamSubscription): void {
    this.#stream = stream;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const on = (event: string, listener: (...args: any[]) => void) => {
      this.#listeners.push([event, listener]);
      stream.on(event, listener);
    };
    on('caughtUp', () => this.#mark({ kind: 'caught-up' }));
    on('fellBehind', () => this.#mark({ kind: 'fell-behind' }));
    on('error', (error: unknown) => this.#mark({ kind: 'error', error }));
    on('end', () => this.#mark({ kind: 'end' }));
    // After close (destroy) nothing buffered will arrive any more: release every marker.
    on('close', () => {
      this.#mark({ kind: 'end' });
      this.#flush(Number.POSITIVE_INFINITY);
    });
    on('data', (resolved: AllStreamResolvedEvent) => {
      this.#taken += 1;
      this.#push({ kind: 'event', resolved });
      this.#flush(this.#taken);
      if (!this.#paused && this.#items.length >= OrderedSubscriptionReader.HIGH_WATER) {
        this.#paused = true;
        stream.pause();
      }
    });
  }

  /** The next item in order; { kind: 'closed' } once close() was called. */
  async next(): Promise<ReaderItem | { kind: 'closed' }> {
    for (;;) {
      if (this.#closed) return { kind: 'closed' };
      const item = this.#items.shift();
      if (item) {
        if (this.#paused && this.#items.length <= OrderedSubscriptionReader.LOW_WATER) {
          this.#paused = false;
          this.#stream?.resume();
        }
        return item;
      }
      if (this.#paused) {
        this.#paused = false;
        this.#stream?.resume();
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }

  close(): void {
    this.#closed = true;
    this.#notify();
  }

  detach(): void {
    if (!this.#stream) return;
    for (const [event, listener] of this.#listeners) this.#stream.removeListener(event, listener);
    this.#listeners.length = 0;
    // keep an error listener: a late error must not become an uncaught exception
    this.#stream.on('error', () => undefined);
  }

  #mark(item: ReaderItem): void {
    if (this.#ended) return;
    if (item.kind === 'end' || item.kind === 'error') this.#ended = true;
    const at = this.#taken + (this.#stream?.readableLength ?? 0);
    if (at <= this.#taken && this.#markers.length === 0) this.#push(item);
    else this.#markers.push({ at, item });
  }

  #flush(upTo: number): void {
    while (this.#markers.length > 0 && this.#markers[0]!.at <= upTo) this.#push(this.#markers.shift()!.item);
  }

  #push(item: ReaderItem): void {
    this.#items.push(item);
    this.#notify();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

/** Cancels a streaming read that was left before its end (a no-op once it ended). */
async function* iterateRead<T>(read: StreamingRead<T>, map: (error: unknown) => Error): AsyncGenerator<T, void, undefined> {
  let finished = false;
  try {
    for await (const item of read) yield item;
    finished = true;
  } catch (error) {
    finished = true;
    throw map(error);
  } finally {
    if (!finished) await read.cancel().catch(() => undefined);
  }
}

function maxOf(a: bigint | null, b: bigint | null): bigint | null {
  if (a === null) return b;
  if (b === null) return a;
  return a > b ? a : b;
}

function checkMaxCount(maxCount: number | undefined): void {
  if (maxCount !== undefined && (!Number.isSafeInteger(maxCount) || maxCount < 0)) {
    throw new RangeError(`maxCount must be a non-negative integer, got ${maxCount}`);
  }
}

function redactConnectionString(text: string): string {
  return text.replace(/\/\/[^@/\s]*@/g, '//***@');
}

export class EventStoreDbEventStore implements EventStore {
  readonly #client: EventStoreDBClient;
  readonly #ownsClient: boolean;
  readonly #resubscribe: Omit<ResubscribeOptions, 'after' | 'shouldResubscribe'>;
  readonly #checkpointEvery: number;
  readonly #pingTimeoutMs: number;
  readonly #subscriptions = new Set<ResubscribingSubscription>();
  #closing: Promise<void> | undefined;

  /** Builds a client from an `esdb://` / `esdb+discover://` / `kurrentdb://` connection string and owns it. */
  static connect(connectionString: string, options: EventStoreDbEventStoreOptions = {}): EventStoreDbEventStore {
    let client: EventStoreDBClient;
    try {
      client = EventStoreDBClient.connectionString(connectionString);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new EventStoreError(`Invalid EventStoreDB connection string: ${redactConnectionString(message)}`);
    }
    return new EventStoreDbEventStore(client, { ...options, ownsClient: options.ownsClient ?? true });
  }

  constructor(client: EventStoreDBClient, options: EventStoreDbEventStoreOptions = {}) {
    this.#client = client;
    this.#ownsClient = options.ownsClient ?? true;
    this.#resubscribe = options.resubscribe ?? {};
    this.#checkpointEvery = Math.max(1, options.checkpointEvery ?? 32);
    this.#pingTimeoutMs = options.pingTimeoutMs ?? 5000;
  }

  get client(): EventStoreDBClient {
    return this.#client;
  }

  #assertOpen(): void {
    if (this.#closing) throw new EventStoreError('The event store is closed');
  }

  async append(streamId: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    this.#assertOpen();
    if (typeof streamId !== 'string' || streamId.length === 0) throw new InvalidEventError('The stream id must be a non-empty string');
    if (events.length === 0) throw new InvalidEventError(`Nothing to append to stream "${streamId}"`);
    const expected = toEsdbExpectedRevision(expectedRevision);
    const data = events.map((event, index) => toEventData(streamId, event, index));

    let result;
    try {
      result = await this.#client.appendToStream(streamId, data, { expectedRevision: expected });
    } catch (error) {
      throw mapEsdbError(error, { operation: 'append', streamId, expected: expectedRevision });
    }
    if (!result.success) {
      // Only when the client was configured with throwOnAppendFailure=false; it then reports no usable revision.
      throw new WrongExpectedVersionError(streamId, expectedRevision, 'unknown');
    }
    const position = result.position ? fromEsdbPosition(result.position) : await this.#lastPositionOf(streamId);
    return { nextExpectedRevision: result.nextExpectedRevision, position };
  }

  /** Fallback for servers that do not return the position of an append. */
  async #lastPositionOf(streamId: string): Promise<bigint> {
    for await (const event of this.readStream(streamId, { direction: 'backwards', maxCount: 1 })) return event.position;
    throw new EventStoreError(`EventStoreDB reported no position for the append to "${streamId}"`);
  }

  readStream(streamId: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    return this.#readStream(streamId, options);
  }

  async *#readStream(streamId: string, options: ReadStreamOptions): AsyncGenerator<RecordedEvent, void, undefined> {
    this.#assertOpen();
    const direction = options.direction ?? 'forwards';
    const from = options.fromRevision ?? (direction === 'forwards' ? 'start' : 'end');
    if (typeof from === 'bigint' && from < 0n) throw new RangeError(`fromRevision must not be negative, got ${from}`);
    checkMaxCount(options.maxCount);
    const fromRevision: ReadRevision = from === 'start' ? START : from === 'end' ? END : from;
    // maxCount 0 still has to tell a missing stream apart: read one event and drop it.
    const read = this.#client.readStream(streamId, {
      direction: direction === 'forwards' ? FORWARDS : BACKWARDS,
      fromRevision,
      ...(options.maxCount === undefined ? {} : { maxCount: Math.max(1, options.maxCount) }),
    });
    const mapError = (error: unknown) => mapEsdbError(error, { operation: 'read', streamId });
    for await (const resolved of iterateRead(read, mapError)) {
      if (options.maxCount === 0) continue;
      const event = toRecordedEvent(resolved);
      if (event) yield event;
    }
  }

  readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    return this.#readAll(options);
  }

  async *#readAll(options: ReadAllOptions): AsyncGenerator<RecordedEvent, void, undefined> {
    this.#assertOpen();
    const after = options.after ?? 'start';
    const maxCount = options.maxCount;
    checkMaxCount(maxCount);
    if (maxCount === 0) return;
    const progress = { yielded: 0 };
    if (after === 'start' || after === 0n) {
      yield* this.#readAllFrom(START, after, maxCount, progress);
      return;
    }
    try {
      yield* this.#readAllFrom(toEsdbPosition(after), after, maxCount, progress);
    } catch (error) {
      // `after` is not a record boundary of this log (a position this store never handed out): find the
      // events after it by reading from the start. Correct, but a full scan.
      if (progress.yielded > 0 || !isInvalidPositionError(error)) throw error;
      yield* this.#readAllFrom(START, after, maxCount, progress);
    }
  }

  /**
   * The client's fromPosition is inclusive: events at or before `after` are dropped here. Server-side maxCount
   * would count system events too, so the count is kept here and the read cancelled when it is reached.
   */
  async *#readAllFrom(
    fromPosition: ReadPosition,
    after: bigint | 'start',
    maxCount: number | undefined,
    progress: { yielded: number },
  ): AsyncGenerator<RecordedEvent, void, undefined> {
    const read = this.#client.readAll({ direction: FORWARDS, fromPosition });
    for await (const resolved of iterateRead(read, (error) => mapEsdbError(error, { operation: 'read' }))) {
      const event = toRecordedEvent(resolved);
      if (!event || isSystemEventType(event.type)) continue;
      if (after !== 'start' && event.position <= after) continue;
      yield event;
      progress.yielded += 1;
      if (maxCount !== undefined && progress.yielded >= maxCount) return;
    }
  }

  async headPosition(): Promise<bigint | null> {
    this.#assertOpen();
    let from: ReadPosition = END;
    let lowest: bigint | null = null;
    for (;;) {
      const read = this.#client.readAll({ direction: BACKWARDS, fromPosition: from, maxCount: HEAD_PAGE_SIZE });
      let count = 0;
      let pageLowest: bigint | null = null;
      for await (const resolved of iterateRead(read, (error) => mapEsdbError(error, { operation: 'read' }))) {
        count += 1;
        const event = toRecordedEvent(resolved);
        if (!event) continue;
        // Whether a backwards read includes its start position is not relied upon: skip what was seen.
        if (lowest !== null && event.position >= lowest) continue;
        if (!isSystemEventType(event.type)) return event.position;
        pageLowest = event.position;
      }
      if (count < HEAD_PAGE_SIZE || pageLowest === null) return null;
      lowest = pageLowest;
      from = toEsdbPosition(pageLowest);
    }
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): Subscription {
    this.#assertOpen();
    for (const subscription of this.#subscriptions) if (subscription.stopped) this.#subscriptions.delete(subscription);
    const plan = planSubscriptionFilter(options.filter);
    /** Start positions the server rejected as not being record boundaries: subscribe from the start instead. */
    const invalidStarts = new Set<bigint>();
    const open = (after: bigint | 'start', signal: AbortSignal) => this.#subscribeOnce(after, plan, invalidStarts, signal);
    const subscription = new ResubscribingSubscription(open, {
      ...this.#resubscribe,
      after: options.after ?? 'start',
      shouldResubscribe: (error) => !isPermanentEsdbError(error) && !(error instanceof InvalidEventError),
    });
    this.#subscriptions.add(subscription);
    return subscription;
  }

  /** One subscription over one connection; throws when it drops (ResubscribingSubscription reopens it). */
  async *#subscribeOnce(
    after: bigint | 'start',
    plan: FilterPlan,
    invalidStarts: Set<bigint>,
    signal: AbortSignal,
  ): AsyncGenerator<SubscriptionMessage, void, undefined> {
    if (signal.aborted) return;
    const head = await this.headPosition();
    if (signal.aborted) return;

    const reader = new OrderedSubscriptionReader();
    let stream: AllStreamSubscription;
    try {
      stream = this.#client.subscribeToAll({
        // Events at or before `after` are skipped below, so starting earlier (from START) is always correct.
        fromPosition: after === 'start' || after === 0n || invalidStarts.has(after) ? START : toEsdbPosition(after),
        filter: plan.serverFilter(reader.checkpointReached),
      });
    } catch (error) {
      throw mapEsdbError(error, { operation: 'subscribe' });
    }
    reader.attach(stream);
    const onAbort = () => reader.close();
    signal.addEventListener('abort', onAbort, { once: true });

    const start = after === 'start' ? null : after;
    /** Everything up to here has been seen (delivered or filtered out). */
    let considered: bigint | null = start;
    /** Last position handed out in an event or checkpoint. */
    let emitted: bigint | null = start;
    let dropped = 0;
    let caughtUp = false;
    const caughtUpMessage = (): SubscriptionMessage => ({ kind: 'caught-up', position: maxOf(considered, head) });
    const reachedHead = () => !caughtUp && head !== null && considered !== null && considered >= head;

    try {
      if (head === null || (start !== null && start >= head)) {
        caughtUp = true;
        yield caughtUpMessage();
      }
      for (;;) {
        const item = await reader.next();
        switch (item.kind) {
          case 'closed':
            return;
          case 'event': {
            const event = toRecordedEvent(item.resolved);
            if (!event || (considered !== null && event.position <= considered)) break;
            considered = event.position;
            if (plan.accepts(event)) {
              dropped = 0;
              emitted = event.position;
              yield { kind: 'event', event };
            } else if (++dropped >= this.#checkpointEvery) {
              dropped = 0;
              emitted = event.position;
              yield { kind: 'checkpoint', position: event.position };
            }
            if (reachedHead()) {
              caughtUp = true;
              yield caughtUpMessage();
            }
            break;
          }
          case 'checkpoint': {
            considered = maxOf(considered, fromEsdbPosition(item.position));
            if (considered !== null && (emitted === null || considered > emitted)) {
              dropped = 0;
              emitted = considered;
              yield { kind: 'checkpoint', position: considered };
            }
            if (reachedHead()) {
              caughtUp = true;
              yield caughtUpMessage();
            }
            break;
          }
          case 'caught-up':
            if (!caughtUp) {
              caughtUp = true;
              yield caughtUpMessage();
            }
            break;
          case 'fell-behind':
            caughtUp = false;
            break;
          case 'error':
            if (after !== 'start' && isInvalidPositionError(item.error)) invalidStarts.add(after);
            throw mapEsdbError(item.error, { operation: 'subscribe' });
          case 'end':
            if (signal.aborted) return;
            throw new UnavailableError('EventStoreDB ended the subscription');
        }
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      reader.detach();
      await stream.unsubscribe().catch(() => undefined);
      stream.destroy();
    }
  }

  async deleteStream(streamId: string, expectedRevision: ExpectedRevision = 'any'): Promise<void> {
    this.#assertOpen();
    const context = { operation: 'delete' as const, streamId, expected: expectedRevision };
    if (expectedRevision !== 'stream_exists') {
      const expected = toEsdbExpectedRevision(expectedRevision);
      try {
        await this.#client.deleteStream(streamId, { expectedRevision: expected as 'any' | 'no_stream' | bigint });
      } catch (error) {
        throw mapEsdbError(error, context);
      }
      return;
    }
    // The client's deleteStream has no "stream exists" expectation: delete at the stream's current last
    // revision, and start over when an append got in between (the stream still exists then).
    for (let attempt = 0; ; attempt++) {
      let last: bigint | undefined;
      try {
        for await (const event of this.readStream(streamId, { direction: 'backwards', maxCount: 1 })) last = event.revision;
      } catch (error) {
        if (error instanceof StreamNotFoundError) {
          throw new WrongExpectedVersionError(streamId, 'stream_exists', 'no_stream');
        }
        throw error;
      }
      if (last === undefined) throw new WrongExpectedVersionError(streamId, 'stream_exists', 'no_stream');
      try {
        await this.#client.deleteStream(streamId, { expectedRevision: last });
        return;
      } catch (error) {
        const mapped = mapEsdbError(error, context);
        if (!(mapped instanceof WrongExpectedVersionError) || attempt >= 4) throw mapped;
      }
    }
  }

  async ping(): Promise<void> {
    this.#assertOpen();
    const read = this.#client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new UnavailableError(`EventStoreDB did not answer within ${this.#pingTimeoutMs} ms`)),
        this.#pingTimeoutMs,
      );
    });
    try {
      await Promise.race([
        (async () => {
          for await (const _ of iterateRead(read, (error) => mapEsdbError(error, { operation: 'ping' }))) {
            // one event at most
          }
        })(),
        timeout,
      ]);
    } catch (error) {
      await read.cancel().catch(() => undefined);
      read.destroy();
      if (error instanceof UnavailableError) throw error;
      const message = error instanceof Error ? error.message : String(error);
      throw new UnavailableError(`EventStoreDB is not usable: ${message}`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.all([...this.#subscriptions].map((subscription) => subscription.stop()));
      this.#subscriptions.clear();
      if (this.#ownsClient) await this.#client.dispose().catch(() => undefined);
    })();
    return this.#closing;
  }
}

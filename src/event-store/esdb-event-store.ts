/**
 * KurrentDB / EventStoreDB adapter of the event store port, over @kurrent/kurrentdb-client 1.x (server 20.10 or
 * later; 23.10 or later for server-reported "caught up"). @kurrent/kurrentdb-client is the maintained successor of
 * @eventstore/db-client, whose last release (6.2.1) rejects `kurrentdb://` connection strings.
 *
 * Construction: `EventStoreDbEventStore.connect(connectionString)` builds and owns a client (close() disposes
 * it); `new EventStoreDbEventStore(client, { ownsClient })` wraps a client made elsewhere (tests, sharing one
 * client). Either way the client connects lazily: call ping() to find out whether the server is reachable.
 * `kurrentdb://`, `kurrentdb+discover://`, `esdb://` and `esdb+discover://` strings are accepted.
 *
 * Positions, metadata and the event mapping: ./esdb-mapping.ts. Subscriptions (filters, ordering, progress past
 * unmatched events): ./esdb-subscription.ts.
 *
 * Exclusive starts. The port's `after` is exclusive everywhere. The client's readAll `fromPosition` is
 * inclusive, so readAll drops events at or before `after`; its subscribeToAll `fromPosition` is exclusive (the
 * server skips the first event at or after it), so it is passed as is. KurrentDB never has an event at
 * position 0 (its log opens with an epoch record), so `after: 0n` reads and subscribes from the start. The
 * server only accepts start positions that begin a record of its log (positions it handed out); for any other
 * bigint it answers "invalid position", and the adapter then reads or subscribes from the start and drops
 * everything at or before `after`: correct, but a scan of the whole log.
 *
 * System events (types starting with `$`: stream metadata written by deleteStream, link events, epoch
 * information, ...) never appear in readAll, subscribeToAll or headPosition.
 *
 * Size. An append over the port's MAX_APPEND_BYTES is refused here, before the server sees it (EventTooLargeError).
 *
 * The read bridge. The client reads (streams, $all) through a native Rust gRPC client of its own, which gives up
 * for good when its first connection fails: every later read answers "unavailable", even once the server is
 * up. A store that built its client (connect()) replaces it when a read fails so before any read reached the
 * server (KurrentDB not up yet when the store was made); a store given a client cannot.
 *
 * Dropped connections. The client does not resubscribe. subscribeToAll wraps the single-connection
 * subscription in ResubscribingSubscription, which reopens it after the last delivered position with a capped
 * exponential backoff; stop() and close() end it cleanly.
 */
import {
  BACKWARDS,
  END,
  FORWARDS,
  KurrentDBClient,
  START,
  type ReadPosition,
  type ReadRevision,
  type StreamState,
} from '@kurrent/kurrentdb-client';
import { isInvalidPositionError, isPermanentEsdbError, mapEsdbError } from './esdb-errors.ts';
import { clientConnectionString, isSystemEventType, toEsdbPosition, toEsdbStreamState, toEventData, toRecordedEvent } from './esdb-mapping.ts';
import { planSubscriptionFilter, subscribeOnce, type ReadAllPage } from './esdb-subscription.ts';
import { AppendNotifier } from './append-notifier.ts';
import { EventStoreError, InvalidEventError, StreamNotFoundError, UnavailableError, WrongExpectedVersionError } from './errors.ts';
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
import { ResubscribingSubscription, type ResubscribeOptions } from './resubscribing-subscription.ts';

export interface EventStoreDbEventStoreOptions {
  /** Whether close() disposes the client. Default true. */
  ownsClient?: boolean;
  /** Backoff and drop reporting of subscriptions (see ResubscribingSubscription). */
  resubscribe?: Omit<ResubscribeOptions, 'after' | 'shouldResubscribe'>;
  /** A checkpoint message is yielded after this many consecutive events dropped by client-side filtering. */
  checkpointEvery?: number;
  /**
   * A live subscription quiet for this long reads the log for progress past events it does not match
   * (appends by other processes; this process's own appends are looked at at once). Default 250 ms.
   */
  idleProbeMs?: number;
  /** ping() fails with UnavailableError after this long. Default 5000 ms. */
  pingTimeoutMs?: number;
}

/**
 * Records per server read. Every read asks the server for a bounded count: the client's read bridge cannot
 * cancel a read, so a read that asked for everything and whose reader stopped early would stay open on the
 * server, waiting on flow control, until the client object happened to be garbage collected.
 */
const READ_PAGE = 256;

function checkMaxCount(maxCount: number | undefined): void {
  if (maxCount !== undefined && (!Number.isSafeInteger(maxCount) || maxCount < 0)) {
    throw new RangeError(`maxCount must be a non-negative integer, got ${maxCount}`);
  }
}

function redactConnectionString(text: string): string {
  return text.replace(/\/\/[^@/\s]*@/g, '//***@');
}

export class EventStoreDbEventStore implements EventStore {
  #client: KurrentDBClient;
  readonly #ownsClient: boolean;
  /** Set by connect(): lets the store replace a client whose read bridge gave up (see "The read bridge"). */
  #connectionString: string | undefined;
  /** Whether a read through the current client's read bridge has reached the server. */
  #bridgeReached = false;
  readonly #resubscribe: Omit<ResubscribeOptions, 'after' | 'shouldResubscribe'>;
  readonly #checkpointEvery: number;
  readonly #idleProbeMs: number;
  readonly #pingTimeoutMs: number;
  /** This process's appends through this store: live subscriptions look for progress at once. */
  readonly #appends = new AppendNotifier();
  readonly #subscriptions = new Set<ResubscribingSubscription>();
  #closing: Promise<void> | undefined;

  /** Builds a client from a `kurrentdb://` / `kurrentdb+discover://` / `esdb://` / `esdb+discover://` connection string and owns it. */
  static connect(connectionString: string, options: EventStoreDbEventStoreOptions = {}): EventStoreDbEventStore {
    let client: KurrentDBClient;
    try {
      client = KurrentDBClient.connectionString(clientConnectionString(connectionString));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new EventStoreError(`Invalid KurrentDB connection string: ${redactConnectionString(message)}`);
    }
    const store = new EventStoreDbEventStore(client, { ...options, ownsClient: options.ownsClient ?? true });
    if (store.#ownsClient) store.#connectionString = connectionString;
    return store;
  }

  constructor(client: KurrentDBClient, options: EventStoreDbEventStoreOptions = {}) {
    this.#client = client;
    this.#ownsClient = options.ownsClient ?? true;
    this.#resubscribe = options.resubscribe ?? {};
    this.#checkpointEvery = Math.max(1, options.checkpointEvery ?? 32);
    this.#idleProbeMs = Math.max(1, options.idleProbeMs ?? 250);
    this.#pingTimeoutMs = options.pingTimeoutMs ?? 5000;
  }

  get client(): KurrentDBClient {
    return this.#client;
  }

  #assertOpen(): void {
    if (this.#closing) throw new EventStoreError('The event store is closed');
  }

  /** A read through the client's read bridge, to its end, its errors mapped; leaving early ends it. */
  async *#read<T>(open: (client: KurrentDBClient) => AsyncIterableIterator<T>, map: (error: unknown) => Error): AsyncGenerator<T, void, undefined> {
    const client = this.#client;
    let mapped: Error;
    try {
      for await (const item of open(client)) {
        this.#bridgeReached = true;
        yield item;
      }
      this.#bridgeReached = true;
      return;
    } catch (error) {
      mapped = map(error);
    }
    if (!(mapped instanceof UnavailableError)) this.#bridgeReached = true;
    else if (!this.#bridgeReached && client === this.#client && this.#connectionString !== undefined && !this.#closing) {
      // The bridge gave up at its first connection: a new client, whose bridge connects afresh.
      this.#client = KurrentDBClient.connectionString(clientConnectionString(this.#connectionString));
      void client.dispose().catch(() => undefined);
    }
    throw mapped;
  }

  async append(streamId: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    this.#assertOpen();
    if (typeof streamId !== 'string' || streamId.length === 0) throw new InvalidEventError('The stream id must be a non-empty string');
    if (events.length === 0) throw new InvalidEventError(`Nothing to append to stream "${streamId}"`);
    const streamState = toEsdbStreamState(expectedRevision);
    const data = toEventData(streamId, events);

    let result;
    try {
      result = await this.#client.appendToStream(streamId, data, { streamState });
    } catch (error) {
      throw mapEsdbError(error, { operation: 'append', streamId, expected: expectedRevision });
    }
    if (!result.success) {
      // Only when the client was configured with throwOnAppendFailure=false; it then reports no usable revision.
      throw new WrongExpectedVersionError(streamId, expectedRevision, 'unknown');
    }
    const position = result.position ? result.position.commit : await this.#lastPositionOf(streamId);
    this.#appends.notify();
    return { nextExpectedRevision: result.nextExpectedRevision, position };
  }

  /** Fallback for servers that do not return the position of an append. */
  async #lastPositionOf(streamId: string): Promise<bigint> {
    for await (const event of this.readStream(streamId, { direction: 'backwards', maxCount: 1 })) return event.position;
    throw new EventStoreError(`KurrentDB reported no position for the append to "${streamId}"`);
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
    const mapError = (error: unknown) => mapEsdbError(error, { operation: 'read', streamId });
    let fromRevision: ReadRevision = from === 'start' ? START : from === 'end' ? END : from;
    let remaining = options.maxCount ?? Number.POSITIVE_INFINITY;
    // Page by page (READ_PAGE); maxCount 0 still has to tell a missing stream apart: read one event, drop it.
    for (;;) {
      const wanted = Math.max(1, Math.min(READ_PAGE, remaining));
      const streamPage = { direction: direction === 'forwards' ? FORWARDS : BACKWARDS, fromRevision, maxCount: wanted } as const;
      let count = 0;
      let last: bigint | undefined;
      for await (const resolved of this.#read((client) => client.readStream(streamId, streamPage), mapError)) {
        count += 1;
        if (options.maxCount === 0) continue;
        const event = toRecordedEvent(resolved);
        if (!event) continue;
        last = event.revision;
        remaining -= 1;
        yield event;
      }
      if (count < wanted || remaining <= 0 || last === undefined) return;
      if (direction === 'backwards' && last === 0n) return;
      fromRevision = direction === 'forwards' ? last + 1n : last - 1n;
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
   * Page by page (READ_PAGE records, system events included, which the server counts too); each page after the
   * first starts at the last record of the one before. The client's fromPosition is inclusive: records at or
   * before `after` (and so the record a page starts at) are dropped here, and a page that starts at a record
   * already seen asks for one more.
   */
  async *#readAllFrom(
    fromPosition: ReadPosition,
    after: bigint | 'start',
    maxCount: number | undefined,
    progress: { yielded: number },
  ): AsyncGenerator<RecordedEvent, void, undefined> {
    let from = fromPosition;
    let seen = after;
    for (;;) {
      const wanted = (maxCount === undefined ? READ_PAGE : Math.min(READ_PAGE, maxCount - progress.yielded)) + (from === START ? 0 : 1);
      const page = { direction: FORWARDS, fromPosition: from, maxCount: wanted } as const;
      let count = 0;
      let last: bigint | undefined;
      for await (const resolved of this.#read((client) => client.readAll(page), (error) => mapEsdbError(error, { operation: 'read' }))) {
        count += 1;
        const event = toRecordedEvent(resolved);
        if (!event) continue;
        last = event.position;
        if ((seen !== 'start' && event.position <= seen) || isSystemEventType(event.type)) continue;
        yield event;
        progress.yielded += 1;
      }
      if (count < wanted || last === undefined || (maxCount !== undefined && progress.yielded >= maxCount)) return;
      if (seen === 'start' || last > seen) seen = last;
      from = toEsdbPosition(last);
    }
  }

  /**
   * One read of $all per position, from it (inclusive) for one record, all at once: the record is the event
   * when it is at exactly that position. A position that does not begin a record of this log is refused by the
   * server ("invalid position"): no event there. Never a scan from the start, as #readAll falls back to.
   */
  async readAt(positions: readonly bigint[]): Promise<Array<RecordedEvent | null>> {
    this.#assertOpen();
    return Promise.all(
      positions.map(async (position) => {
        if (position <= 0n) return null;
        const page = { direction: FORWARDS, fromPosition: toEsdbPosition(position), maxCount: 1 } as const;
        try {
          for await (const resolved of this.#read((client) => client.readAll(page), (error) => mapEsdbError(error, { operation: 'read' }))) {
            const event = toRecordedEvent(resolved);
            return event && event.position === position && !isSystemEventType(event.type) ? event : null;
          }
          return null;
        } catch (error) {
          if (isInvalidPositionError(error)) return null;
          throw error;
        }
      }),
    );
  }

  async headPosition(): Promise<bigint | null> {
    this.#assertOpen();
    let from: ReadPosition = END;
    let lowest: bigint | null = null;
    for (;;) {
      const page = { direction: BACKWARDS, fromPosition: from, maxCount: READ_PAGE } as const;
      let count = 0;
      let pageLowest: bigint | null = null;
      for await (const resolved of this.#read((client) => client.readAll(page), (error) => mapEsdbError(error, { operation: 'read' }))) {
        count += 1;
        const event = toRecordedEvent(resolved);
        if (!event) continue;
        // Whether a backwards read includes its start position is not relied upon: skip what was seen.
        if (lowest !== null && event.position >= lowest) continue;
        if (!isSystemEventType(event.type)) return event.position;
        pageLowest = event.position;
      }
      if (count < READ_PAGE || pageLowest === null) return null;
      lowest = pageLowest;
      from = toEsdbPosition(pageLowest);
    }
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): Subscription {
    this.#assertOpen();
    for (const subscription of this.#subscriptions) if (subscription.stopped) this.#subscriptions.delete(subscription);
    const context = {
      client: () => this.#client,
      readAll: (read: ReadAllPage) => this.#read((client) => client.readAll(read), (error) => mapEsdbError(error, { operation: 'read' })),
      plan: planSubscriptionFilter(options.filter),
      headPosition: () => this.headPosition(),
      invalidStarts: new Set<bigint>(),
      checkpointEvery: this.#checkpointEvery,
      idleProbeMs: this.#idleProbeMs,
      appends: this.#appends,
    };
    const open = (after: bigint | 'start', signal: AbortSignal) => subscribeOnce(context, after, signal);
    const subscription = new ResubscribingSubscription(open, {
      ...this.#resubscribe,
      after: options.after ?? 'start',
      shouldResubscribe: (error) => !isPermanentEsdbError(error) && !(error instanceof InvalidEventError),
    });
    this.#subscriptions.add(subscription);
    return subscription;
  }

  async deleteStream(streamId: string, expectedRevision: ExpectedRevision = 'any'): Promise<void> {
    this.#assertOpen();
    const context = { operation: 'delete' as const, streamId, expected: expectedRevision };
    if (expectedRevision !== 'stream_exists') {
      const expected = toEsdbStreamState(expectedRevision) as StreamState;
      try {
        await this.#client.deleteStream(streamId, { expectedRevision: expected });
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
    const read = this.#read((client) => client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 }), (error) => mapEsdbError(error, { operation: 'ping' }));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new UnavailableError(`KurrentDB did not answer within ${this.#pingTimeoutMs} ms`)), this.#pingTimeoutMs);
    });
    try {
      await Promise.race([
        (async () => {
          for await (const _ of read) {
            // one event at most
          }
        })(),
        timeout,
      ]);
    } catch (error) {
      void read.return?.(undefined).catch(() => undefined);
      if (error instanceof UnavailableError) throw error;
      const message = error instanceof Error ? error.message : String(error);
      throw new UnavailableError(`KurrentDB is not usable: ${message}`, { cause: error });
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

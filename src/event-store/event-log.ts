import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock.ts';
import type { EventCatalog } from './event-catalog.ts';
import { StreamNotFoundError, WrongExpectedVersionError } from './errors.ts';
import type {
  Actor,
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
  SubscriptionMessage,
} from './event-store.ts';
import { CHAIN_KEY, chainLink, genesisLink, linkAfter, storedLink } from './hash-chain.ts';

/** What a command handler appends: the type and data; the log adds id, time and metadata. */
export interface PendingEvent {
  type: string;
  data: unknown;
}

/** Who and what caused the append. */
export interface AppendContext {
  actor: Actor;
  /** Ties together every event caused by one request; generated when absent. */
  correlationId?: string;
  /** The event or command that caused these events. */
  causationId?: string | null;
  idempotencyKey?: string;
  /**
   * The events' time (metadata.occurredAt). Default: the log's clock when the append is made. A command sets it
   * to the instant it decided at (handleCommand), so that the times a decision writes into its events (a
   * revision's publishedAt, savedAt) and the time the log stamps them with are one instant.
   */
  occurredAt?: Date;
}

export interface EventLogOptions {
  /**
   * Streams whose last link this process remembers (the event at a revision never changes, so a remembered
   * link is right whoever appended since): an append whose expectation is a remembered revision links to it
   * without reading the stream. 0 turns it off (every such append reads the stream's last event). Default 10,000.
   */
  chainTips?: number;
  /**
   * Whether appends carry a hash-chain link per stream (`metadata.chain`, ./hash-chain.ts). Default false: the log's
   * Merkle tree (src/audit/log-tree-follower.ts) covers every event off the write path, so links are no longer
   * computed (see docs/audit.md); links already stored are still verified.
   */
  chains?: boolean;
}

/** An append this log made, as its listeners hear of it (EventLog.onAppended). */
export interface AppendedEvents {
  streamId: string;
  /** The types of its events, in order. */
  types: readonly string[];
  /** The global position of its last event. */
  position: bigint;
}

/** Appends with the expectation 'any' or 'stream_exists' retry this often when another writer got in between. */
const FLOATING_APPEND_ATTEMPTS = 20;

/** The link an append continues from, and the expectation that makes sure nobody else continued from it. */
interface Predecessor {
  expected: 'no_stream' | bigint;
  prev: string;
}

/**
 * The application's view of the event store: appends are validated against the event catalog and
 * stamped with an id, the clock's time, the schema version and the event's hash-chain link (see
 * ./hash-chain.ts); everything read is upcast to the current schema versions. Wraps any EventStore adapter.
 *
 * Chain links never fork: each append is checked by the store against the exact revision its first link
 * was computed from. An exact expectation is that revision; 'no_stream' links to the stream's genesis;
 * 'any' and 'stream_exists' read the stream's last event and append with its revision as the expectation,
 * computing the links again and retrying when another process got in between (this process's own floating
 * appends to one stream run one after another). So two appends can never both
 * continue from the same event, on any store. The predecessor's link costs one read of the stream's last
 * event (an indexed lookup, whatever the history's length), skipped when this process remembers it: after
 * its own appends, and after reading a stream to its end (as loading an aggregate does).
 */
export class EventLog {
  readonly #tips: LRUCache<string, { revision: bigint; link: string }> | null;
  readonly #chains: boolean;
  /** The last floating ('any', 'stream_exists') append queued per stream. */
  readonly #floating = new Map<string, Promise<void>>();
  readonly #appendListeners = new Set<(append: AppendedEvents) => void>();

  constructor(
    readonly store: EventStore,
    readonly catalog: EventCatalog,
    private readonly clock: Clock,
    options: EventLogOptions = {},
  ) {
    this.#chains = options.chains ?? false;
    const tips = options.chainTips ?? 10_000;
    this.#tips = tips > 0 ? new LRUCache({ max: tips }) : null;
  }

  /**
   * Tells `listener` of every append through this log once it is durable, before the append's promise
   * resolves (a caller that then waits for its write finds it told); returns how to stop listening.
   */
  onAppended(listener: (append: AppendedEvents) => void): () => void {
    this.#appendListeners.add(listener);
    return () => this.#appendListeners.delete(listener);
  }

  /** The time on the log's clock: what an append without `occurredAt` stamps its events with. */
  now(): Date {
    return this.clock.now();
  }

  async append(streamId: string, events: readonly PendingEvent[], expectedRevision: ExpectedRevision, context: AppendContext): Promise<AppendResult> {
    const occurredAt = (context.occurredAt ?? this.clock.now()).toISOString();
    const correlationId = context.correlationId ?? randomUUID();
    const stamped = events.map((event) => {
      const data = this.catalog.validate(event.type, event.data);
      const projectId = (data as { projectId?: unknown } | null)?.projectId;
      const metadata: EventMetadata = {
        actor: context.actor,
        correlationId,
        causationId: context.causationId ?? null,
        ...(context.idempotencyKey === undefined ? {} : { idempotencyKey: context.idempotencyKey }),
        ...(typeof projectId === 'string' ? { projectId } : {}),
        occurredAt,
        schemaVersion: this.catalog.versionOf(event.type),
      };
      return { id: randomUUID(), type: event.type, data, metadata };
    });
    const result = await this.#appendStamped(streamId, stamped, expectedRevision);
    if (this.#appendListeners.size > 0) {
      const appended = { streamId, types: stamped.map((event) => event.type), position: result.position };
      for (const listener of this.#appendListeners) listener(appended);
    }
    return result;
  }

  #appendStamped(streamId: string, stamped: ReadonlyArray<Omit<NewEvent, 'metadata'> & { metadata: EventMetadata }>, expectedRevision: ExpectedRevision): Promise<AppendResult> {
    if (!this.#chains) return this.store.append(streamId, stamped, expectedRevision);
    if (typeof expectedRevision === 'bigint' || expectedRevision === 'no_stream') return this.#appendChained(streamId, stamped, expectedRevision);
    // One floating append per stream at a time in this process: they would only refuse each other.
    const previous = this.#floating.get(streamId) ?? Promise.resolve();
    const turn = previous.then(() => this.#appendChained(streamId, stamped, expectedRevision));
    const settled = turn.then(() => undefined, () => undefined);
    this.#floating.set(streamId, settled);
    void settled.then(() => {
      if (this.#floating.get(streamId) === settled) this.#floating.delete(streamId);
    });
    return turn;
  }

  async #appendChained(streamId: string, stamped: ReadonlyArray<Omit<NewEvent, 'metadata'> & { metadata: EventMetadata }>, expectedRevision: ExpectedRevision): Promise<AppendResult> {
    const floating = typeof expectedRevision !== 'bigint' && expectedRevision !== 'no_stream';
    for (let attempt = 1; ; attempt++) {
      const predecessor = await this.#predecessor(streamId, expectedRevision, attempt > 1);
      const chained = linked(predecessor.prev, stamped);
      try {
        const result = await this.store.append(streamId, chained, predecessor.expected);
        this.#tips?.set(streamId, { revision: result.nextExpectedRevision, link: chained[chained.length - 1]!.metadata.chain! });
        return result;
      } catch (error) {
        if (!(error instanceof WrongExpectedVersionError)) throw error;
        this.#tips?.delete(streamId);
        if (!floating || attempt >= FLOATING_APPEND_ATTEMPTS) throw error;
        // Another process won the revision: step aside a little, at random, so two writers cannot keep colliding.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * attempt * 3));
      }
    }
  }

  /**
   * The link the append continues from. An exact revision must be the stream's last (else the store would
   * refuse: refused here without appending); 'any' and 'stream_exists' take whatever the last revision is
   * (`fresh`: read it, after a conflict).
   */
  async #predecessor(streamId: string, expected: ExpectedRevision, fresh: boolean): Promise<Predecessor> {
    if (expected === 'no_stream') return { expected: 'no_stream', prev: genesisLink(streamId) };
    const remembered = this.#tips?.get(streamId);
    if (remembered && !fresh && (expected === 'any' || expected === 'stream_exists' || expected === remembered.revision)) {
      return { expected: remembered.revision, prev: remembered.link };
    }
    let last: RecordedEvent | undefined;
    try {
      for await (const event of this.store.readStream(streamId, { direction: 'backwards', fromRevision: 'end', maxCount: 1 })) last = event;
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
    }
    if (!last) {
      if (expected === 'any') return { expected: 'no_stream', prev: genesisLink(streamId) };
      throw new WrongExpectedVersionError(streamId, expected, 'no_stream');
    }
    if (typeof expected === 'bigint' && expected !== last.revision) throw new WrongExpectedVersionError(streamId, expected, last.revision);
    const link = linkAfter(last);
    this.#remember(last, link);
    return { expected: last.revision, prev: link };
  }

  #remember(event: RecordedEvent, link: string): void {
    const current = this.#tips?.peek(event.streamId);
    if (!current || current.revision <= event.revision) this.#tips?.set(event.streamId, { revision: event.revision, link });
  }

  async *readStream(streamId: string, options?: ReadStreamOptions): AsyncIterable<RecordedEvent> {
    for await (const event of this.store.readStream(streamId, options)) {
      // A chained event read is a tip the next append may link to without reading it again.
      const link = storedLink(event.metadata);
      if (link !== undefined) this.#remember(event, link);
      yield this.catalog.upcast(event);
    }
  }

  async *readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent> {
    for await (const event of this.store.readAll(options)) yield this.catalog.upcast(event);
  }

  /** The events at these positions (EventStore.readAt), upcast. */
  async readAt(positions: readonly bigint[]): Promise<Array<RecordedEvent | null>> {
    const events = await this.store.readAt(positions);
    return events.map((event) => (event === null ? null : this.catalog.upcast(event)));
  }

  subscribeToAll(options?: SubscribeToAllOptions): Subscription {
    const inner = this.store.subscribeToAll(options);
    const catalog = this.catalog;
    return {
      stop: () => inner.stop(),
      async *[Symbol.asyncIterator](): AsyncIterator<SubscriptionMessage> {
        for await (const message of inner) {
          yield message.kind === 'event' ? { kind: 'event', event: catalog.upcast(message.event) } : message;
        }
      },
    };
  }

  headPosition(): Promise<bigint | null> {
    return this.store.headPosition();
  }

  deleteStream(streamId: string, expectedRevision?: ExpectedRevision): Promise<void> {
    return this.store.deleteStream(streamId, expectedRevision);
  }
}

/** The events with their links, the first continuing from `prev`. */
function linked(prev: string, events: ReadonlyArray<Omit<NewEvent, 'metadata'> & { metadata: EventMetadata }>): Array<NewEvent & { metadata: EventMetadata }> {
  let link = prev;
  return events.map((event) => {
    const { [CHAIN_KEY]: _previous, ...metadata } = event.metadata;
    link = chainLink(link, { ...event, metadata });
    return { ...event, metadata: { ...metadata, [CHAIN_KEY]: link } };
  });
}

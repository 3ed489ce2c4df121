/**
 * One KurrentDB / EventStoreDB subscription to $all, as the port's ordered sequence of messages (the store
 * wraps it in ResubscribingSubscription, which reopens it after a dropped connection).
 *
 * Subscription filters. The server applies one filter per subscription, on either the event type or the
 * stream name. eventTypes, when given, go to the server as one anchored regex of the exact names; stream
 * prefixes then are checked here, on the client. Only streamPrefixes: they go to the server as a prefix
 * filter. Neither: the server excludes system events. Every delivered event is also checked here against the
 * whole filter (and for a `$` type), so a server-side quirk cannot leak an unwanted event. Events dropped on
 * the client advance the position through 'checkpoint' messages (one per `checkpointEvery` dropped events).
 *
 * Progress past unmatched events (the port's SUBSCRIPTION_PROGRESS_BOUND_MS). The server reports a filtered
 * subscription's progress only through checkpoints, one per checkpoint interval of considered events (32 with
 * the default search window), and through caught-up when it turns live. Once live, a run of fewer appends
 * that the filter does not match is never reported: a reader waiting for this subscription to pass its write
 * would wait until 32 more events happen somewhere. So, while live, the subscription looks for itself: when
 * this process appended (the store tells it) or after `idleProbeMs` without a message, it reads $all after
 * the last considered position; the events found there up to the first one the filter accepts (which the
 * server will deliver) are passed with a checkpoint. It does the same while catching up after a quiet spell:
 * a server without caught-up would otherwise leave a subscription whose filter misses the head's last events
 * short of the head for good. That read cannot pass a matching event: positions grow
 * with commit order, so anything the server has yet to deliver lies after what the read saw or among it.
 *
 * Caught up. The server (23.10+) reports the transition to live; newer servers also say at which position.
 * For older servers, and as a guard, the subscription reads the head position when it opens and reports
 * 'caught-up' once a delivered or considered position reaches it (immediately when the store is empty or
 * `after` is at or past the head). The 'caught-up' position is the largest of the last considered position,
 * that head and the position the server names.
 *
 * Ordering. The client delivers events through a Readable stream but reports checkpoints (callback) and
 * caught-up (event) out of band, at the moment its transform sees them, possibly while earlier events still
 * wait in the stream's buffer. OrderedSubscriptionReader puts each such marker back in sequence: when a
 * marker arrives, the number of events that precede it is the number already taken from the stream plus the
 * number still buffered (`readableLength`), and the marker is released right after that many events.
 */
import {
  FORWARDS,
  START,
  eventTypeFilter,
  excludeSystemEvents,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type Filter,
  type KurrentDBClient,
  type Position,
} from '@kurrent/kurrentdb-client';
import { isInvalidPositionError, mapEsdbError } from './esdb-errors.ts';
import { escapeRegex, fromEsdbPosition, isSystemEventType, toEsdbPosition, toRecordedEvent } from './esdb-mapping.ts';
import { UnavailableError } from './errors.ts';
import type { SubscriptionFilter, SubscriptionMessage } from './event-store.ts';
import type { AppendNotifier } from './append-notifier.ts';

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
  | { kind: 'caught-up'; position: Position | undefined }
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
  // biome-ignore lint/suspicious/noExplicitAny: the client's emitter types each event's listener its own way; one list holds them all.
  readonly #listeners: Array<[string, (...args: any[]) => void]> = [];

  /** Pass as the filter's checkpointReached: the client awaits it in sequence with the events. */
  readonly checkpointReached = (_subscription: AllStreamSubscription, position: Position): void => {
    this.#mark({ kind: 'checkpoint', position });
  };

  attach(stream: AllStreamSubscription): void {
    this.#stream = stream;
    // biome-ignore lint/suspicious/noExplicitAny: as #listeners.
    const on = (event: string, listener: (...args: any[]) => void) => {
      this.#listeners.push([event, listener]);
      stream.on(event, listener);
    };
    on('caughtUp', (info?: { position?: Position }) => this.#mark({ kind: 'caught-up', position: info?.position }));
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

/** Events read per look for progress (see "Progress past unmatched events"). */
const PROBE_PAGE = 256;

/** A bounded forwards read of $all. */
export interface ReadAllPage {
  direction: typeof FORWARDS;
  fromPosition: typeof START | Position;
  maxCount: number;
}

export interface SubscribeOnceContext {
  /** The store's current client. */
  client(): KurrentDBClient;
  /** Reads through the store (its errors already mapped to the port's). */
  readAll(page: ReadAllPage): AsyncGenerator<AllStreamResolvedEvent, void, undefined>;
  plan: FilterPlan;
  /** The store's head position, system events excluded. */
  headPosition(): Promise<bigint | null>;
  /** Start positions the server rejected as not being record boundaries: subscribe from the start instead. */
  invalidStarts: Set<bigint>;
  /** A checkpoint message after this many consecutive events dropped by client-side filtering. */
  checkpointEvery: number;
  /** Live and idle this long: look for progress past unmatched events. */
  idleProbeMs: number;
  /** Told of every append this process made through the store: look for progress at once. */
  appends: AppendNotifier;
}

/** One subscription over one connection; throws when it drops (ResubscribingSubscription reopens it). */
export async function* subscribeOnce(
  context: SubscribeOnceContext,
  after: bigint | 'start',
  signal: AbortSignal,
): AsyncGenerator<SubscriptionMessage, void, undefined> {
  if (signal.aborted) return;
  const { plan, invalidStarts } = context;
  const head = await context.headPosition();
  if (signal.aborted) return;

  const reader = new OrderedSubscriptionReader();
  let stream: AllStreamSubscription;
  try {
    stream = context.client().subscribeToAll({
      // Events at or before `after` are skipped below, so starting earlier (from START) is always correct.
      fromPosition: after === 'start' || after === 0n || invalidStarts.has(after) ? START : toEsdbPosition(after),
      filter: plan.serverFilter(reader.checkpointReached),
    });
  } catch (error) {
    throw mapEsdbError(error, { operation: 'subscribe' });
  }
  reader.attach(stream);
  let appended = false;
  let wakeIdle: (() => void) | undefined;
  const unlisten = context.appends.listen(() => {
    appended = true;
    wakeIdle?.();
  });
  const onAbort = () => {
    reader.close();
    wakeIdle?.();
  };
  signal.addEventListener('abort', onAbort, { once: true });

  const start = after === 'start' ? null : after;
  /** Everything up to here has been seen (delivered or filtered out). */
  let considered: bigint | null = start;
  /** Last position handed out in an event or checkpoint. */
  let emitted: bigint | null = start;
  let dropped = 0;
  let caughtUp = false;
  let serverHead: bigint | null = null;
  const caughtUpMessage = (): SubscriptionMessage => ({ kind: 'caught-up', position: maxOf(maxOf(considered, head), serverHead) });
  const reachedHead = () => !caughtUp && head !== null && considered !== null && considered >= head;
  let pending: Promise<Awaited<ReturnType<OrderedSubscriptionReader['next']>>> | undefined;

  try {
    if (head === null || (start !== null && start >= head)) {
      caughtUp = true;
      yield caughtUpMessage();
    }
    for (;;) {
      pending ??= reader.next();
      let item: Awaited<typeof pending> | 'idle';
      if (!signal.aborted) {
        // Wait for the server, but look for progress ourselves after an append here or a quiet spell: live, and
        // also while catching up, where a server without caught-up (before 23.10) says nothing after a filtered
        // subscription's last match until 32 more events are considered.
        let timer: NodeJS.Timeout | undefined;
        const idle = new Promise<'idle'>((resolve) => {
          wakeIdle = () => resolve('idle');
          timer = setTimeout(wakeIdle, appended ? 0 : context.idleProbeMs);
        });
        item = await Promise.race([pending, idle]);
        clearTimeout(timer);
        wakeIdle = undefined;
      } else {
        item = await pending;
      }
      if (item === 'idle') {
        if (signal.aborted) return;
        appended = false;
        const passed = await probe(context, considered);
        if (passed !== null && (considered === null || passed > considered)) {
          considered = passed;
          if (emitted === null || considered > emitted) {
            dropped = 0;
            emitted = considered;
            yield { kind: 'checkpoint', position: considered };
          }
          if (reachedHead()) {
            caughtUp = true;
            yield caughtUpMessage();
          }
        }
        continue;
      }
      pending = undefined;
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
          } else if (++dropped >= context.checkpointEvery) {
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
          if (item.position) serverHead = fromEsdbPosition(item.position);
          if (!caughtUp) {
            caughtUp = true;
            // The server has considered everything up to the position it names.
            considered = maxOf(considered, serverHead);
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
          throw new UnavailableError('KurrentDB ended the subscription');
      }
    }
  } finally {
    unlisten();
    signal.removeEventListener('abort', onAbort);
    reader.detach();
    await stream.unsubscribe().catch(() => undefined);
    stream.destroy();
  }
}

/**
 * The last position after `considered` up to which the log holds no event the filter accepts (null when
 * nothing new, or the position cannot be read from). Reads at most PROBE_PAGE events.
 */
async function probe(context: SubscribeOnceContext, considered: bigint | null): Promise<bigint | null> {
  let passed: bigint | null = null;
  const read = context.readAll({
    direction: FORWARDS,
    fromPosition: considered === null || considered === 0n ? START : toEsdbPosition(considered),
    maxCount: PROBE_PAGE,
  });
  try {
    for await (const resolved of read) {
      const event = toRecordedEvent(resolved);
      if (!event || (considered !== null && event.position <= considered)) continue;
      if (context.plan.accepts(event)) break;
      passed = event.position;
    }
  } catch (error) {
    // Not a record boundary (a server checkpoint between records), or the server is away: the server's own
    // checkpoints, or the next look, will do.
    if (isInvalidPositionError(error) || error instanceof UnavailableError) return passed;
    throw error;
  } finally {
    await read.return(undefined);
  }
  return passed;
}

export function maxOf(a: bigint | null, b: bigint | null): bigint | null {
  if (a === null) return b;
  if (b === null) return a;
  return a > b ? a : b;
}

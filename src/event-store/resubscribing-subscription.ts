/**
 * Keeps a subscription alive across dropped connections.
 *
 * A source opens one underlying subscription that starts strictly after a position (`'start'`: from the first
 * event) and ends by throwing when its connection drops. This wrapper remembers the last position it handed to
 * its consumer and, after a drop, reopens the source after exactly that position, waiting between attempts with
 * a capped exponential backoff. The consumer sees one uninterrupted, ordered sequence: no gaps (it resumes
 * after the last delivered position) and no duplicates (anything at or before that position is dropped, in case
 * a source delivers it again).
 *
 * Which messages move the resume position: an event (its position), a checkpoint (its position) and a
 * caught-up message that carries a position; a source must only give positions up to which it has delivered or
 * considered everything. A source that ends without an error while the subscription is not stopped is treated
 * like a drop, since a subscription to all never ends on its own.
 *
 * Sources should honour the AbortSignal they are given (it is aborted by stop()), so that a pending `next()`
 * ends promptly and the underlying connection is released.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Subscription, SubscriptionMessage } from './event-store.ts';

export type SubscriptionSource = (
  after: bigint | 'start',
  signal: AbortSignal,
) => AsyncIterable<SubscriptionMessage>;

export interface DropInfo {
  /** Why the underlying subscription ended. */
  error: unknown;
  /** 1 for the first retry after a healthy period, then 2, 3, ... */
  attempt: number;
  /** How long the wrapper waits before reopening. */
  delayMs: number;
  /** The position it reopens after. */
  resumeAfter: bigint | 'start';
}

export interface ResubscribeOptions {
  /** Exclusive start position of the first subscription. Default 'start'. */
  after?: bigint | 'start';
  /** Wait before the first retry after a drop. Default 100 ms. */
  initialDelayMs?: number;
  /** Upper bound of the wait. Default 10 s. */
  maxDelayMs?: number;
  /** Growth of the wait per consecutive failed attempt. Default 2. */
  factor?: number;
  /**
   * Waits `ms` milliseconds; should settle early when `signal` aborts. Injectable for tests.
   * Default: node:timers/promises setTimeout.
   */
  delay?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Whether to reopen after this error; when false the error ends the iteration. Default: always. */
  shouldResubscribe?: (error: unknown) => boolean;
  /** Called before each wait, e.g. to log the drop. Must not throw. */
  onDrop?: (info: DropInfo) => void;
}

/** The underlying subscription ended without an error although nobody stopped it. */
export class SubscriptionEndedError extends Error {
  override name = 'SubscriptionEndedError';
  constructor() {
    super('The underlying subscription ended unexpectedly');
  }
}

/** Wait before retry number `attempt` (0-based): initial * factor^attempt, capped at max. */
export function backoffDelay(attempt: number, initialDelayMs: number, maxDelayMs: number, factor: number): number {
  const raw = initialDelayMs * factor ** attempt;
  return Number.isFinite(raw) ? Math.min(maxDelayMs, raw) : maxDelayMs;
}

async function defaultDelay(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await sleep(ms, undefined, { signal });
  } catch {
    // aborted: settle early
  }
}

const STOPPED = Symbol('stopped');

function positionOf(message: SubscriptionMessage): bigint | null {
  switch (message.kind) {
    case 'event':
      return message.event.position;
    case 'checkpoint':
      return message.position;
    case 'caught-up':
      return message.position;
  }
}

export class ResubscribingSubscription implements Subscription {
  readonly #open: SubscriptionSource;
  readonly #initialDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #factor: number;
  readonly #delay: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly #shouldResubscribe: (error: unknown) => boolean;
  readonly #onDrop: ((info: DropInfo) => void) | undefined;
  readonly #abort = new AbortController();
  readonly #stopped: Promise<typeof STOPPED>;
  #resolveStopped!: () => void;
  #resume: bigint | 'start';
  #iterated = false;
  #stopping: Promise<void> | undefined;
  /** The open underlying iterator, and whether a next() on it is outstanding. */
  #current: AsyncIterator<SubscriptionMessage> | undefined;
  #nextPending = false;

  constructor(open: SubscriptionSource, options: ResubscribeOptions = {}) {
    this.#open = open;
    this.#resume = options.after ?? 'start';
    this.#initialDelayMs = options.initialDelayMs ?? 100;
    this.#maxDelayMs = options.maxDelayMs ?? 10_000;
    this.#factor = options.factor ?? 2;
    this.#delay = options.delay ?? defaultDelay;
    this.#shouldResubscribe = options.shouldResubscribe ?? (() => true);
    this.#onDrop = options.onDrop;
    this.#stopped = new Promise((resolve) => {
      this.#resolveStopped = () => resolve(STOPPED);
    });
  }

  /** The position after which the next (re)subscription starts: the last delivered position. */
  get resumeAfter(): bigint | 'start' {
    return this.#resume;
  }

  get stopped(): boolean {
    return this.#abort.signal.aborted;
  }

  [Symbol.asyncIterator](): AsyncIterator<SubscriptionMessage> {
    if (this.#iterated) throw new Error('A subscription can be iterated only once');
    this.#iterated = true;
    return this.#run();
  }

  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    this.#abort.abort();
    this.#resolveStopped();
    const iterator = this.#current;
    this.#current = undefined;
    if (!iterator?.return) return;
    const closing = Promise.resolve(iterator.return()).then(
      () => undefined,
      () => undefined,
    );
    // An async generator queues return() behind an outstanding next(); a source that honours the signal ends
    // that next() itself, one that does not would make us wait forever, so only wait when nothing is pending.
    if (!this.#nextPending) await closing;
  }

  /** Records the message's position; false when the message is at or before what was already delivered. */
  #advance(message: SubscriptionMessage): boolean {
    const position = positionOf(message);
    if (message.kind === 'caught-up') {
      if (position !== null && (this.#resume === 'start' || position > this.#resume)) this.#resume = position;
      return true;
    }
    if (position === null) return true;
    if (this.#resume !== 'start' && position <= this.#resume) return false;
    this.#resume = position;
    return true;
  }

  async *#run(): AsyncGenerator<SubscriptionMessage, void, undefined> {
    const signal = this.#abort.signal;
    let attempt = 0;
    try {
      while (!signal.aborted) {
        let failure: unknown;
        let iterator: AsyncIterator<SubscriptionMessage> | undefined;
        try {
          iterator = this.#open(this.#resume, signal)[Symbol.asyncIterator]();
          this.#current = iterator;
          for (;;) {
            const next = iterator.next();
            next.catch(() => undefined); // the race below may abandon it
            this.#nextPending = true;
            const result = await Promise.race([next, this.#stopped]);
            if (result === STOPPED) return;
            this.#nextPending = false;
            if (result.done) {
              failure = new SubscriptionEndedError();
              break;
            }
            attempt = 0; // the connection works again
            if (!this.#advance(result.value)) continue;
            yield result.value;
            if (signal.aborted) return;
          }
        } catch (error) {
          this.#nextPending = false;
          if (signal.aborted) return;
          failure = error;
        } finally {
          if (this.#current === iterator) this.#current = undefined;
          if (iterator?.return) {
            const closing = Promise.resolve(iterator.return()).then(
              () => undefined,
              () => undefined,
            );
            if (!this.#nextPending) await closing;
          }
        }

        if (!this.#shouldResubscribe(failure)) throw failure;
        const delayMs = backoffDelay(attempt, this.#initialDelayMs, this.#maxDelayMs, this.#factor);
        attempt += 1;
        this.#onDrop?.({ error: failure, attempt, delayMs, resumeAfter: this.#resume });
        const waited = await Promise.race([
          this.#delay(delayMs, signal).then(
            () => undefined,
            () => undefined,
          ),
          this.#stopped,
        ]);
        if (waited === STOPPED) return;
      }
    } finally {
      // Leaving the loop for any reason (stop, consumer break, fatal error) releases the source.
      this.#abort.abort();
      this.#resolveStopped();
    }
  }
}

/** Convenience: a Subscription over `open` that survives dropped connections. */
export function resubscribing(open: SubscriptionSource, options?: ResubscribeOptions): Subscription {
  return new ResubscribingSubscription(open, options);
}

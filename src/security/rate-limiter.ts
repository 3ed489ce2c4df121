import type { Clock } from '../clock.ts';

/**
 * Per-key request limits (spec section 8: per agent key, 60 or 300 requests per 60 seconds), in memory
 * per worker and therefore best effort.
 *
 * Algorithm: sliding window counter. Time is cut into fixed windows (aligned to the epoch); a key keeps
 * the count of its current window and of the previous one, and the number of requests "in the last
 * window length" is estimated as previous * (share of the previous window still inside the sliding
 * window) + current. Unlike a plain fixed window it does not let a client spend two full budgets across
 * a window boundary, and unlike a log of timestamps it needs three numbers per key. Refused requests are
 * not counted, so a client hammering a closed door is let in as soon as the window slides.
 *
 * Memory is bounded: keys are kept in least-recently-used order; a key idle for two windows holds no
 * information and is dropped by a sweep that runs at most once per window, and beyond `maxKeys` the
 * least recently used key is dropped (it starts afresh if it returns: best effort, as the spec allows).
 */
export interface RateLimitDecision {
  allowed: boolean;
  /** The limit applied to this request. */
  limit: number;
  /** Requests still allowed right now (after this one, when it was allowed). */
  remaining: number;
  /** Whole seconds to wait before a retry can succeed; 0 when allowed. Send as Retry-After. */
  retryAfterSeconds: number;
}

export interface RateLimiterOptions {
  clock: Clock;
  /** Window length; default 60 seconds. */
  windowMs?: number;
  /** Most keys tracked at once; default 100,000 (a few MB). */
  maxKeys?: number;
}

interface Counter {
  /** Start of the window `current` counts, in ms since the epoch. */
  windowStart: number;
  previous: number;
  current: number;
}

export class RateLimiter {
  readonly #clock: Clock;
  readonly #windowMs: number;
  readonly #maxKeys: number;
  readonly #counters = new Map<string, Counter>();
  #lastSweep = Number.NEGATIVE_INFINITY;

  constructor(options: RateLimiterOptions) {
    this.#clock = options.clock;
    this.#windowMs = options.windowMs ?? 60_000;
    this.#maxKeys = options.maxKeys ?? 100_000;
    if (!Number.isInteger(this.#windowMs) || this.#windowMs <= 0) throw new RangeError('windowMs must be a positive whole number');
    if (!Number.isInteger(this.#maxKeys) || this.#maxKeys < 1) throw new RangeError('maxKeys must be at least 1');
  }

  /** Counts one request for `key` against `limit` requests per window, and says whether it may proceed. */
  hit(key: string, limit: number): RateLimitDecision {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('limit must be a positive whole number');
    const now = this.#clock.now().getTime();
    this.#sweep(now);

    const counter = this.#counterFor(key, now);
    const W = this.#windowMs;
    const elapsed = now - counter.windowStart;
    // The estimate scaled by W, in whole numbers so boundaries are exact: previous * (W - elapsed) / W + current.
    const scaledAfter = counter.previous * (W - elapsed) + (counter.current + 1) * W;

    if (scaledAfter > limit * W) {
      return { allowed: false, limit, remaining: 0, retryAfterSeconds: this.#retryAfter(counter, elapsed, limit) };
    }
    counter.current += 1;
    return { allowed: true, limit, remaining: Math.floor((limit * W - scaledAfter) / W), retryAfterSeconds: 0 };
  }

  /** Forgets a key (for example when its agent key is revoked). */
  reset(key: string): void {
    this.#counters.delete(key);
  }

  /** Keys currently tracked. */
  get size(): number {
    return this.#counters.size;
  }

  #counterFor(key: string, now: number): Counter {
    const windowStart = now - (now % this.#windowMs);
    let counter = this.#counters.get(key);
    if (counter) {
      this.#counters.delete(key); // re-inserted below: Map order is least recently used first
      if (counter.windowStart !== windowStart) {
        const adjacent = windowStart - counter.windowStart === this.#windowMs;
        counter = { windowStart, previous: adjacent ? counter.current : 0, current: 0 };
      }
    } else {
      counter = { windowStart, previous: 0, current: 0 };
    }
    this.#counters.set(key, counter);
    while (this.#counters.size > this.#maxKeys) {
      const oldest = this.#counters.keys().next().value as string;
      this.#counters.delete(oldest);
    }
    return counter;
  }

  /**
   * Smallest wait after which one more request fits. Within the current window the previous window's
   * weight falls linearly; when the current window alone is full, the wait runs into the next window,
   * where the current count becomes the decaying previous one.
   */
  #retryAfter(counter: Counter, elapsed: number, limit: number): number {
    const W = this.#windowMs;
    let waitMs: number;
    if (counter.current + 1 <= limit && counter.previous > 0) {
      // previous * (W - elapsed - t) / W + current + 1 <= limit
      waitMs = W - elapsed - Math.floor(((limit - 1 - counter.current) * W) / counter.previous);
    } else {
      // in the next window: current * (W - t') / W + 1 <= limit, with t' the time into that window
      waitMs = W - elapsed + W - Math.floor(((limit - 1) * W) / Math.max(counter.current, 1));
    }
    return Math.max(1, Math.ceil(waitMs / 1000));
  }

  /** Drops keys idle for two windows; they carry no count. Runs at most once per window. */
  #sweep(now: number): void {
    if (now - this.#lastSweep < this.#windowMs) return;
    this.#lastSweep = now;
    const currentStart = now - (now % this.#windowMs);
    for (const [key, counter] of this.#counters) {
      // LRU order: the first key still in use ends the sweep (every later one was used more recently).
      if (currentStart - counter.windowStart < 2 * this.#windowMs) break;
      this.#counters.delete(key);
    }
  }
}

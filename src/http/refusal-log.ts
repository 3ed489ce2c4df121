import { performance } from 'node:perf_hooks';
import type { Logger } from '../logging/logger.ts';
import type { Refusal } from './load-shedding.ts';
import { loggablePath, QUERY_PARAMS_NOT_LOGGED } from './middleware/request-logger.ts';

export interface SampledRefusalLogOptions {
  /** Refusals written one by one per second; the rest of the second's are counted. Default 20. */
  perSecond?: number;
  /** Milliseconds now. Default performance.now. */
  now?: () => number;
}

const NOT_LOGGED = new Set(QUERY_PARAMS_NOT_LOGGED);

/**
 * The request log's lines for requests refused before any routing (load shedding's 503s, the per-client limit's
 * 429s), which the request logger never sees: sampled, so that a flood cannot flood the log. In each second the
 * first `perSecond` refusals are written one by one, as `request` lines with `refused` (the reason) and
 * `client`; the others are counted, and one `requests refused, not logged one by one` line gives their number
 * by reason and status once the second is over (a timer writes it when no later refusal comes to).
 * At warn: a refusal is the service protecting itself, not a fault of its own.
 */
export class SampledRefusalLog {
  readonly #logger: Logger;
  readonly #perSecond: number;
  readonly #now: () => number;
  #windowStart = Number.NEGATIVE_INFINITY;
  #logged = 0;
  #unlogged = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;

  constructor(logger: Logger, options: SampledRefusalLogOptions = {}) {
    this.#logger = logger;
    this.#perSecond = options.perSecond ?? 20;
    this.#now = options.now ?? (() => performance.now());
  }

  record(refusal: Refusal): void {
    const now = this.#now();
    if (now - this.#windowStart >= 1000) {
      this.flush();
      this.#windowStart = now;
      this.#logged = 0;
    }
    if (this.#logged < this.#perSecond) {
      this.#logged += 1;
      if (!this.#logger.isLevelEnabled('warn')) return;
      const mark = refusal.url.indexOf('?');
      const path = loggablePath({ path: mark < 0 ? refusal.url : refusal.url.slice(0, mark), querystring: mark < 0 ? '' : refusal.url.slice(mark + 1) }, NOT_LOGGED);
      this.#logger.warn({ method: refusal.method, path, status: refusal.status, refused: refusal.reason, client: refusal.client }, 'request');
      return;
    }
    const key = `${refusal.reason} ${refusal.status}`;
    this.#unlogged.set(key, (this.#unlogged.get(key) ?? 0) + 1);
    if (!this.#timer) {
      this.#timer = setTimeout(() => this.flush(), Math.max(0, this.#windowStart + 1000 - now));
      this.#timer.unref();
    }
  }

  /** Writes the count of the current second's refusals not logged one by one, if any. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#unlogged.size === 0) return;
    const byReason: Record<string, number> = {};
    let count = 0;
    for (const [key, n] of this.#unlogged) {
      byReason[key] = n;
      count += n;
    }
    this.#unlogged = new Map();
    this.#logger.warn({ count, byReason, loggedOneByOne: this.#logged }, 'requests refused, not logged one by one');
  }
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';

/**
 * How far behind the event loop is, sampled by a timer every `intervalMs`: the delay with which the timer
 * fires is the time every other callback waits too. Between samples, the time since the next sample was due
 * is a live lower bound (a loop stuck in a long turn is seen as stuck at once, not when the turn ends).
 */
export class EventLoopLag {
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | undefined;
  #due = 0;
  #last = 0;

  constructor(intervalMs = 20) {
    this.#intervalMs = intervalMs;
  }

  start(): this {
    if (this.#timer) return this;
    this.#due = performance.now() + this.#intervalMs;
    this.#timer = setInterval(() => {
      const now = performance.now();
      this.#last = Math.max(0, now - this.#due);
      this.#due = now + this.#intervalMs;
    }, this.#intervalMs);
    this.#timer.unref();
    return this;
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** The loop's current delay in ms. */
  currentMs(): number {
    if (!this.#timer) return 0;
    return Math.max(this.#last, performance.now() - this.#due);
  }
}

export interface LoadShedderOptions {
  /** The event loop's current delay in ms (EventLoopLag.currentMs, or a stand-in in tests). */
  lagMs: () => number;
  /** Lag beyond which the service counts as overloaded (LOAD_SHED_LAG_MS). */
  maxLagMs: number;
  /** Requests in progress at once, beyond which new ones are refused whatever the lag (HTTP_MAX_IN_FLIGHT). */
  maxInFlight: number;
  /**
   * While overloaded, a client that sent more than this share of the last second's requests (and more than
   * `heavyClientMinRequests`) gets no more: the clients flooding the service are refused first, and one that
   * sends a request now and then is still served. Past three times maxLagMs every request is refused.
   * Default 0.1.
   */
  heavyClientShare?: number;
  /** Requests in the last second below which a client is never heavy. Default 16 (a page load's burst). */
  heavyClientMinRequests?: number;
  /** Behind one trusted proxy, the client is the last X-Forwarded-For entry (as Koa's ctx.ip). */
  trustProxy: boolean;
  /** Paths never refused (health checks and metrics must tell the truth, not be shed). Default /healthz, /readyz, /metrics. */
  exemptPaths?: readonly string[];
  /** Seconds sent in Retry-After. Default 1. */
  retryAfterSeconds?: number;
  /**
   * How long the lag must stay beyond maxLagMs before requests are refused: a single long turn (a garbage
   * collection, one big synchronous job) is not overload, and refusing the requests that waited behind it would
   * only add errors to the delay. Default 500.
   */
  sustainMs?: number;
  /**
   * Once shedding, how long it goes on at least, whatever the lag: shedding itself makes the lag fall at once, and
   * stopping then would let the flood straight back in, in bursts. Default 2000.
   */
  holdMs?: number;
  /** Milliseconds now, for the per-second request counts and the sustained lag. Default performance.now. */
  now?: () => number;
  /** Told about every refusal and why (metrics). */
  onShed?: (reason: ShedReason) => void;
}

/** Why a request was refused: too many in progress, or the event loop lagging. */
export type ShedReason = 'in-flight' | 'lag';

/** Most clients counted per second; beyond, new clients are not counted (and so never judged heavy). */
const MAX_COUNTED_CLIENTS = 100_000;

/**
 * Load shedding: under overload, refuse early and cheaply (503 SERVICE_UNAVAILABLE with Retry-After, before any
 * routing or reading) rather than accept everything and answer all of it late (or time out). Overload is
 * either too many requests in progress, or an event loop lagging beyond a bound for `sustainMs`; shedding for lag
 * then goes on for `holdMs` at least, and until the loop lags less than half the bound. While the loop lags, the clients sending most of the requests are refused
 * first, so a flood from a few addresses does not starve everyone else; beyond three times the bound, all are
 * refused.
 *
 * A refused connection is kept open but not read for Retry-After seconds. Node accepts one new connection per
 * turn of the event loop, and a turn serves every connection with a request waiting: under a flood of
 * keep-alive connections a turn took half a second and a new client waited for the whole flood. Not reading
 * the refused connections for a while keeps the turns short, so new connections (the normal clients) are
 * accepted and served; closing them instead would turn the flood into a storm of new connections queued
 * ahead of everyone else's.
 */
export class LoadShedder {
  readonly #options: Required<Omit<LoadShedderOptions, 'onShed'>> & Pick<LoadShedderOptions, 'onShed'>;
  readonly #exempt: ReadonlySet<string>;
  readonly #body: string;
  #inFlight = 0;
  /** Since when the lag has been beyond the bound (without falling below half of it), or undefined. */
  #laggingSince: number | undefined;
  /** Since when requests have been shed for lag, or undefined. */
  #sheddingSince: number | undefined;
  #shed = 0;
  /** Requests per client in the current second, and in all. */
  #window = { start: 0, total: 0, byClient: new Map<string, number>() };

  constructor(options: LoadShedderOptions) {
    this.#options = { heavyClientShare: 0.1, heavyClientMinRequests: 16, exemptPaths: ['/healthz', '/readyz', '/metrics'], retryAfterSeconds: 1, sustainMs: 500, holdMs: 2000, now: () => performance.now(), ...options };
    this.#exempt = new Set(this.#options.exemptPaths);
    this.#body = JSON.stringify({ error: { code: 'SERVICE_UNAVAILABLE', message: 'The service is overloaded; retry shortly.', hint: `Retry after ${this.#options.retryAfterSeconds} seconds.`, retryable: true } });
  }

  /** Requests in progress now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Requests refused since the start. */
  get shed(): number {
    return this.#shed;
  }

  /**
   * Admits the request (and counts it until its response is over) or answers it 503 at once. Returns whether
   * it was admitted.
   */
  admit(req: IncomingMessage, res: ServerResponse): boolean {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    if (this.#exempt.has(path)) return true;
    const sent = this.#count(this.#clientOf(req));
    const refusal = this.#refusal(sent);
    if (refusal !== null) {
      this.#shed += 1;
      this.#options.onShed?.(refusal);
      this.#refuse(path, res);
      return false;
    }
    this.#inFlight += 1;
    res.once('close', () => {
      this.#inFlight -= 1;
    });
    return true;
  }

  /** Counts a request of `client` in the current second; returns how many it has sent in it. */
  #count(client: string): number {
    const now = this.#options.now();
    const window = this.#window;
    if (now - window.start >= 1000) this.#window = { start: now, total: 0, byClient: new Map() };
    const current = this.#window;
    current.total += 1;
    const previous = current.byClient.get(client);
    if (previous === undefined && current.byClient.size >= MAX_COUNTED_CLIENTS) return 1;
    const sent = (previous ?? 0) + 1;
    current.byClient.set(client, sent);
    return sent;
  }

  /** Why a request from a client that sent `sentThisSecond` requests this second is refused, or null. */
  #refusal(sentThisSecond: number): ShedReason | null {
    const { maxInFlight, maxLagMs, heavyClientShare, heavyClientMinRequests, sustainMs, holdMs } = this.#options;
    if (this.#inFlight >= maxInFlight) return 'in-flight';
    const lag = this.#options.lagMs();
    const now = this.#options.now();
    if (lag > maxLagMs) this.#laggingSince ??= now;
    else if (lag < maxLagMs / 2) this.#laggingSince = undefined;
    if (this.#laggingSince !== undefined && now - this.#laggingSince >= sustainMs) this.#sheddingSince ??= now;
    else if (this.#sheddingSince !== undefined && this.#laggingSince === undefined && now - this.#sheddingSince >= holdMs) this.#sheddingSince = undefined;
    const overloaded = this.#sheddingSince !== undefined;
    if (!overloaded) return null;
    if (lag > 3 * maxLagMs) return 'lag';
    return sentThisSecond <= Math.max(heavyClientMinRequests, heavyClientShare * this.#window.total) ? null : 'lag';
  }

  #refuse(path: string, res: ServerResponse): void {
    const headers: Record<string, string | number> = {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(this.#body),
      'cache-control': 'no-store',
      'retry-after': String(this.#options.retryAfterSeconds),
    };
    // The public API answers every origin, errors included.
    if (path.startsWith('/public/')) headers['access-control-allow-origin'] = '*';
    res.writeHead(503, headers);
    res.end(this.#body);
    const socket = res.socket;
    if (!socket) return;
    // Once node's own end-of-response handling (which resumes reading) has run.
    res.once('finish', () =>
      setImmediate(() => {
        if (socket.destroyed) return;
        socket.pause();
        // One listener at a time, however often a keep-alive connection is refused.
        const onClose = () => clearTimeout(timer);
        const timer = setTimeout(() => {
          socket.off('close', onClose);
          socket.resume();
        }, this.#options.retryAfterSeconds * 1000);
        timer.unref();
        socket.once('close', onClose);
      }),
    );
  }

  #clientOf(req: IncomingMessage): string {
    let address = req.socket.remoteAddress ?? 'unknown';
    if (this.#options.trustProxy) {
      const forwarded = req.headers['x-forwarded-for'];
      const list = (Array.isArray(forwarded) ? forwarded.join(',') : forwarded ?? '').split(',').map((entry) => entry.trim()).filter(Boolean);
      if (list.length > 0) address = list[list.length - 1]!;
    }
    return address.startsWith('::ffff:') ? address.slice(7) : address;
  }
}

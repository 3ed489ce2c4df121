import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { requestClient } from './client-address.ts';

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
  /**
   * Requests in progress at once from one client (clientKey of the socket's peer, or behind a trusted proxy of
   * the forwarded address); more are answered 429 RATE_LIMITED with Retry-After and the connection closed, so
   * that one client cannot hold every slot with requests it sends slowly. 0 (default): no limit.
   */
  maxInFlightPerClient?: number;
  /** Milliseconds now, for the per-second request counts and the sustained lag. Default performance.now. */
  now?: () => number;
  /** Told about every refusal and why (metrics). Not for the per-client limit's 429s, which are no overload. */
  onShed?: (reason: ShedReason) => void;
  /** Told about every refused request (the request log, sampled: see SampledRefusalLog). */
  onRefused?: (refusal: Refusal) => void;
}

/** Why a request was refused: too many in progress, or the event loop lagging. */
export type ShedReason = 'in-flight' | 'lag';

/** A request answered before any routing: what was asked, by whom, and why it was refused. */
export interface Refusal {
  method: string;
  /** The request target as sent (path and query). */
  url: string;
  status: 429 | 503;
  reason: ShedReason | 'client-in-flight';
  client: string;
}

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
  readonly #options: Required<Omit<LoadShedderOptions, 'onShed' | 'onRefused'>> & Pick<LoadShedderOptions, 'onShed' | 'onRefused'>;
  readonly #exempt: ReadonlySet<string>;
  readonly #body: string;
  readonly #clientBody: string;
  #inFlight = 0;
  /** Requests in progress per client, when maxInFlightPerClient is set. */
  readonly #inFlightByClient = new Map<string, number>();
  /** Since when the lag has been beyond the bound (without falling below half of it), or undefined. */
  #laggingSince: number | undefined;
  /** Since when requests have been shed for lag, or undefined. */
  #sheddingSince: number | undefined;
  #shed = 0;
  /** Requests per client in the current second, and in all. */
  #window = { start: 0, total: 0, byClient: new Map<string, number>() };

  constructor(options: LoadShedderOptions) {
    this.#options = { heavyClientShare: 0.1, heavyClientMinRequests: 16, exemptPaths: ['/healthz', '/readyz', '/metrics'], retryAfterSeconds: 1, sustainMs: 500, holdMs: 2000, maxInFlightPerClient: 0, now: () => performance.now(), ...options };
    this.#exempt = new Set(this.#options.exemptPaths);
    this.#body = JSON.stringify({ error: { code: 'SERVICE_UNAVAILABLE', message: 'The service is overloaded; retry shortly.', hint: `Retry after ${this.#options.retryAfterSeconds} seconds.`, retryable: true } });
    this.#clientBody = JSON.stringify({
      error: { code: 'RATE_LIMITED', message: `Too many requests in progress from your address: at most ${this.#options.maxInFlightPerClient} at once.`, hint: 'Wait for the answers to the requests already sent.', retryable: true },
    });
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
    const client = requestClient(req.socket.remoteAddress, req.headers['x-forwarded-for'], this.#options.trustProxy);
    const sent = this.#count(client);
    const refusal = this.#refusal(sent);
    if (refusal !== null) {
      this.#shed += 1;
      this.#options.onShed?.(refusal);
      this.#options.onRefused?.({ method: req.method ?? 'GET', url: req.url ?? '/', status: 503, reason: refusal, client });
      this.#refuse(path, res);
      return false;
    }
    const perClient = this.#options.maxInFlightPerClient;
    if (perClient > 0) {
      const current = this.#inFlightByClient.get(client) ?? 0;
      if (current >= perClient) {
        this.#options.onRefused?.({ method: req.method ?? 'GET', url: req.url ?? '/', status: 429, reason: 'client-in-flight', client });
        this.#refuseClient(path, res);
        return false;
      }
      this.#inFlightByClient.set(client, current + 1);
    }
    this.#inFlight += 1;
    // One listener for both counts (a response carries many 'close' listeners already).
    res.once('close', () => {
      this.#inFlight -= 1;
      if (perClient === 0) return;
      const left = (this.#inFlightByClient.get(client) ?? 1) - 1;
      if (left <= 0) this.#inFlightByClient.delete(client);
      else this.#inFlightByClient.set(client, left);
    });
    return true;
  }

  /**
   * 429 at once, and the connection closed behind it: the request may be one whose body is still arriving
   * slowly, which is what the limit is there to stop holding a slot.
   */
  #refuseClient(path: string, res: ServerResponse): void {
    const headers: Record<string, string | number> = {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(this.#clientBody),
      'cache-control': 'no-store',
      'retry-after': String(this.#options.retryAfterSeconds),
      connection: 'close',
    };
    if (path.startsWith('/public/')) headers['access-control-allow-origin'] = '*';
    res.writeHead(429, headers);
    res.end(this.#clientBody);
    res.once('finish', () => res.socket?.destroySoon());
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
}

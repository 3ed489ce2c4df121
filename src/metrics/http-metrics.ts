import type { Middleware } from 'koa';
import { Counter, type Registry } from 'prom-client';
import { LatencyHistogram, type HistogramSeries } from './latency-histogram.ts';

/** The route label of requests no router matched (404s, preflights, hosted contact pages). */
const UNMATCHED = 'unmatched';

/**
 * HTTP request metrics: one latency histogram by method, route (the router's path pattern, never the raw
 * path, so the label set stays small), status and what answered (`app`, or `response-cache` for the public
 * responses the cache sends before Koa), and the requests refused by a rate limit (429), by route.
 *
 * The response cache's hits are the service's hot path (a few microseconds each), so recording one must
 * cost next to nothing: the series is found through maps keyed by values whose hashes V8 keeps (the route
 * pattern strings are the router's own, the status a small integer), and observed without label hashing
 * (LatencyHistogram).
 */
export class HttpMetrics {
  readonly #duration = new LatencyHistogram(
    'annals_http_request_duration_seconds',
    'HTTP requests by method, route pattern, status and what answered them (app, or response-cache for public responses served from memory before the app), with their latency. The _count series count requests.',
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  );
  readonly #refused: Counter<'route'>;
  readonly #shed: Counter<'reason'>;
  /** answeredBy -> method -> route -> status -> series. */
  readonly #series = new Map<string, Map<string, Map<string, Map<number, HistogramSeries>>>>();

  constructor(registry: Registry) {
    registry.registerMetric(this.#duration as unknown as Parameters<Registry['registerMetric']>[0]);
    this.#refused = new Counter({
      name: 'annals_rate_limit_refusals_total',
      help: 'Requests refused by a rate limit (429 RATE_LIMITED: agent keys, contact-form submissions), by route pattern.',
      labelNames: ['route'],
      registers: [registry],
    });
    this.#shed = new Counter({
      name: 'annals_http_load_shed_total',
      help: 'Requests refused before routing because the service was overloaded (503 SERVICE_UNAVAILABLE), by reason: in-flight (HTTP_MAX_IN_FLIGHT) or lag (LOAD_SHED_LAG_MS).',
      labelNames: ['reason'],
      registers: [registry],
    });
  }

  /** A request the load shedder refused (src/http/load-shedding.ts). */
  loadShed(reason: 'in-flight' | 'lag'): void {
    this.#shed.inc({ reason });
  }

  /** Koa middleware, first in the chain: times every request the app answers, until its response is closed. */
  middleware(): Middleware {
    return async (ctx, next) => {
      const started = performance.now();
      ctx.res.once('close', () => {
        const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
        this.#record('app', ctx.method, typeof matched === 'string' ? matched : UNMATCHED, ctx.res.statusCode, (performance.now() - started) / 1000);
      });
      await next();
    };
  }

  /** A public GET answered by the response cache before Koa (its route: the pattern of the request that filled the entry). */
  cacheHit(route: string | undefined, status: number, seconds: number): void {
    this.#record('response-cache', 'GET', route ?? UNMATCHED, status, seconds);
  }

  /** A public GET answered from the read model's serialised documents before Koa (PublicFastReads). */
  fastRead(route: string, status: number, seconds: number): void {
    this.#record('read-model', 'GET', route, status, seconds);
  }

  #record(answeredBy: string, method: string, route: string, status: number, seconds: number): void {
    let byMethod = this.#series.get(answeredBy);
    if (!byMethod) this.#series.set(answeredBy, (byMethod = new Map()));
    let byRoute = byMethod.get(method);
    if (!byRoute) byMethod.set(method, (byRoute = new Map()));
    let byStatus = byRoute.get(route);
    if (!byStatus) byRoute.set(route, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (!series) byStatus.set(status, (series = this.#duration.series({ method, route, status: String(status), answered_by: answeredBy })));
    series.observe(seconds);
    if (status === 429) this.#refused.inc({ route });
  }
}

import type { Router } from '@koa/router';
import { newRouter } from './router.ts';
import type { Context } from 'koa';
import type { Logger } from '../logging/logger.ts';
import type { DrainState } from './drain-state.ts';
import { failureDetail, withTimeout } from './readiness.ts';
import type { CheckResult, Readiness, ReadinessProbe } from './readiness.ts';

export interface HealthRoutesOptions {
  drain: DrainState;
  /** Called on every GET /readyz (not while draining). See readinessFromChecks. */
  readiness: ReadinessProbe;
  /** Bound on the whole readiness call; past it /readyz answers 503. Default 5000 ms. */
  timeoutMs?: number;
  /** When given, changes of readiness are logged (not every probe). */
  logger?: Logger;
}

/**
 * GET /healthz: the process is up. 200 `{status: 'ok'}`, or 503 `{status: 'draining'}` once shutdown began
 * (load balancers stop sending new requests while in-flight ones finish).
 *
 * GET /readyz: 200 or 503 with `{ready, checks: {name: {ok, detail?, lagEvents?}}}` from the injected probe.
 * Ready only when the probe says so and every check is ok. Never 500: a probe that throws, times out or
 * returns something malformed gives 503 with a failed `readiness` check; while draining, 503 with a failed
 * `draining` check and the probe is not called.
 *
 * Both: Content-Type application/json, Cache-Control no-store. HEAD is answered too.
 */
export function healthRoutes(options: HealthRoutesOptions): Router {
  const timeoutMs = options.timeoutMs ?? 5000;
  const router = newRouter();
  let lastReady: boolean | undefined;

  router.get('/healthz', (ctx) => {
    const draining = options.drain.draining;
    respond(ctx, draining ? 503 : 200, { status: draining ? 'draining' : 'ok' });
  });

  router.get('/readyz', async (ctx) => {
    const report = options.drain.draining
      ? { ready: false, checks: { draining: { ok: false, detail: 'the server is shutting down' } } }
      : await probe(options.readiness, timeoutMs);
    if (options.logger && report.ready !== lastReady && lastReady !== undefined) {
      if (report.ready) options.logger.info({ checks: report.checks }, 'ready');
      else options.logger.warn({ checks: report.checks }, 'not ready');
    }
    lastReady = report.ready;
    respond(ctx, report.ready ? 200 : 503, report);
  });

  return router;
}

async function probe(readiness: ReadinessProbe, timeoutMs: number): Promise<Readiness> {
  let result: unknown;
  try {
    result = await withTimeout(readiness, timeoutMs, `readiness timed out after ${timeoutMs} ms`);
  } catch (error) {
    return { ready: false, checks: { readiness: { ok: false, detail: failureDetail(error) } } };
  }
  if (!isReadiness(result)) {
    return { ready: false, checks: { readiness: { ok: false, detail: 'the readiness probe returned an invalid result' } } };
  }
  const allOk = Object.values(result.checks).every((check) => check.ok);
  return { ready: result.ready && allOk, checks: result.checks };
}

function isReadiness(value: unknown): value is Readiness {
  if (typeof value !== 'object' || value === null) return false;
  const { ready, checks } = value as { ready?: unknown; checks?: unknown };
  if (typeof ready !== 'boolean' || typeof checks !== 'object' || checks === null) return false;
  return Object.values(checks).every(
    (check: unknown) => typeof check === 'object' && check !== null && typeof (check as CheckResult).ok === 'boolean',
  );
}

function respond(ctx: Context, status: number, body: object): void {
  ctx.status = status;
  ctx.body = body;
  ctx.type = 'application/json';
  ctx.set('Cache-Control', 'no-store');
}

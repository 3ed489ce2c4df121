import { timingSafeEqual } from 'node:crypto';
import { Router } from '@koa/router';
import { unauthorized } from './errors/error-factory.ts';

/** What the route serves: the Prometheus text of this process. */
export interface MetricsSource {
  scrape(): Promise<string>;
  readonly contentType: string;
}

/**
 * GET /metrics: the process's metrics in the Prometheus text format, never cached. With a token
 * (METRICS_TOKEN) only `Authorization: Bearer <token>` is answered; anything else is 401 UNAUTHORIZED in the
 * error envelope. Mounted only when METRICS is on.
 */
export function metricsRoutes(source: MetricsSource, options: { token: string | undefined }): Router {
  const router = new Router();
  const expected = options.token === undefined ? undefined : Buffer.from(`Bearer ${options.token}`);
  router.get('/metrics', async (ctx) => {
    if (expected) {
      const given = Buffer.from(ctx.get('authorization'));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw unauthorized('The metrics need Authorization: Bearer <METRICS_TOKEN>.');
      }
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.type = source.contentType;
    ctx.body = await source.scrape();
  });
  return router;
}

import type { Router } from '@koa/router';
import { newRouter } from '../router.ts';
import type { Context } from 'koa';
import { z } from 'zod';
import { assertCan } from '../../domain/access/permissions.ts';
import { actorOf } from '../../domain/access/caller.ts';
import type { OperationsOverviewService } from '../../application/operations-overview.ts';
import { OperationError } from '../../projection-engine/projection-operations.ts';
import { conflict, notFound, unavailable } from '../errors/error-factory.ts';
import type { ApiRegistry } from './api-registry.ts';
import { type AdminDeps, principalOf, projectOf } from './admin-context.ts';

const skipBody = z.object({ reason: z.string().trim().min(1, 'say why the event may be passed over (it is recorded in the log)').max(1000, 'at most 1000 characters') });

/**
 * Operations (the console's operations page, tenant_admin sessions): projection status with the failing
 * event, retry, skip with a reason, rebuild with progress; the project's outbox backlogs; the version and
 * the adapters in use. Projections are the service's own, shared by every project on it.
 */
export function operationsRoutes(_deps: AdminDeps, api: ApiRegistry, operations: OperationsOverviewService | undefined): Router {
  const router = newRouter();
  const tag = 'Operations';
  const service = (ctx: Context): OperationsOverviewService => {
    assertCan(principalOf(ctx), 'operations.manage');
    if (!operations) throw unavailable('Projections run in a process with the projector role; this one has none.');
    return operations;
  };
  /** Runs an operator action; an action that cannot be carried out as asked is a 404 (no such projection) or a 409. */
  const act = async <T>(run: () => Promise<T> | T): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      if (error instanceof OperationError) throw /^no projection named/.test(error.message) ? notFound(error.message) : conflict(error.message);
      throw error;
    }
  };

  api.add(router, { method: 'get', path: '/operations', operationId: 'getOperations', summary: 'Projection status (state, lag, the failing event, a rebuild in progress), the project\'s outbox backlogs, the service version and adapters (tenant_admin session)', tag, responses: { 200: 'The operations overview' } }, async (ctx) => {
    const ops = service(ctx);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await ops.overview(projectOf(ctx).projectId);
  });

  api.add(router, { method: 'post', path: '/operations/projections/:name/retry', operationId: 'retryProjection', summary: 'Clear a paused projection\'s failure so that its projector tries the event again (409 when it is not paused)', tag, responses: { 200: 'The event being retried' } }, async (ctx) => {
    const ops = service(ctx);
    ctx.body = await act(() => ops.retry(ctx.params['name']!));
  });

  api.add(router, { method: 'post', path: '/operations/projections/:name/skip', operationId: 'skipProjectionEvent', summary: 'Pass over the event a projection is paused on, with a reason recorded in the log (projection.event-skipped, with the caller) and kept for every later rebuild', tag, body: skipBody, responses: { 200: 'The skipped event' } }, async (ctx, { body }) => {
    const ops = service(ctx);
    const caller = principalOf(ctx);
    ctx.body = await act(() => ops.skip(ctx.params['name']!, body.reason, actorOf(caller)));
  });

  api.add(router, { method: 'post', path: '/operations/projections/:name/rebuild', operationId: 'rebuildProjection', summary: 'Rebuild a projection into a new generation, swapped in when it catches up; answers at once, GET /operations shows the progress', tag, responses: { 202: 'The rebuild, started' } }, async (ctx) => {
    const ops = service(ctx);
    ctx.status = 202;
    ctx.body = await act(() => ops.startRebuild(ctx.params['name']!));
  });

  return router;
}

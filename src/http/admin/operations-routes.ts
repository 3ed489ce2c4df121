import type { Router } from '@koa/router';
import { newRouter } from '../router.ts';
import type { Context } from 'koa';
import { z } from 'zod';
import { actorOf } from '../../domain/access/caller.ts';
import type { OperationsOverviewService } from '../../application/operations-overview.ts';
import { OperationError } from '../../projection-engine/projection-operations.ts';
import { conflict, forbidden, notFound, unavailable } from '../errors/error-factory.ts';
import type { ApiRegistry } from './api-registry.ts';
import { type AdminDeps, principalOf, projectOf } from './admin-context.ts';

const skipBody = z.object({ reason: z.string().trim().min(1, 'say why the event may be passed over (it is recorded in the log)').max(1000, 'at most 1000 characters') });

const POSITION = 'A log position (fixed-width decimal string).';
const HIDDEN = 'null unless the caller is a service operator.';

const failingEventSchema = z.object({
  eventId: z.string().nullable().describe(`The event's id; ${HIDDEN}`),
  eventType: z.string(),
  streamId: z.string().nullable().describe(`The stream the event is in; ${HIDDEN}`),
  position: z.string().describe(POSITION),
  message: z.string().nullable().describe(`Why the projection could not fold it; ${HIDDEN}`),
  failedAt: z.iso.datetime(),
}).meta({ id: 'FailingEvent' });

const generationStatusSchema = z.object({
  generation: z.int(),
  version: z.int(),
  checkpoint: z.string().nullable().describe(POSITION),
  lag: z.string().nullable().describe('Head minus checkpoint, in log positions: events on SQLite, bytes of log on EventStoreDB.'),
  failure: failingEventSchema.nullable().describe('The event the generation is paused on, if it is.'),
  updatedAt: z.string(),
}).meta({ id: 'GenerationStatus' });

const REBUILD_STATES = ['running', 'done', 'paused', 'failed'] as const;
const rebuildRunSchema = z.object({
  projection: z.string(),
  state: z.enum(REBUILD_STATES),
  startedAt: z.iso.datetime(),
  finishedAt: z.iso.datetime().nullable(),
  events: z.int().min(0),
  fraction: z.number().min(0).max(1).describe('Fraction of the log covered, 0..1.'),
  generation: z.int().nullable().describe('The generation built, once done.'),
  error: z.string().nullable().describe(`Why it stopped, when it did; ${HIDDEN}`),
}).meta({ id: 'RebuildRun' });

const PROJECTION_STATES = ['live', 'behind', 'paused', 'not-started', 'outdated'] as const;
const projectionStatusSchema = z.object({
  name: z.string(),
  version: z.int().describe('Version of the projection code in this build.'),
  state: z.enum(PROJECTION_STATES),
  active: generationStatusSchema.nullable(),
  building: generationStatusSchema.nullable().describe('A generation being rebuilt, if any.'),
  head: z.string().nullable().describe(POSITION),
  skips: z.int().min(0).describe('Events skipped with a reason, kept for every rebuild.'),
  rebuild: rebuildRunSchema.nullable().describe('The last rebuild started from this API in this process, if any.'),
}).meta({ id: 'ProjectionStatus' });

const operationsOverviewSchema = z.object({
  operator: z.boolean().describe('Whether the caller is a service operator (OPERATOR_TENANT_IDS): only operators see failing events and retry, skip or rebuild.'),
  version: z.string(),
  adapters: z.object({ eventStore: z.string(), readModels: z.string(), blobs: z.string() }),
  projections: z.array(projectionStatusSchema),
  outboxes: z.array(z.object({ name: z.enum(['webhooks', 'contact-notices', 'media-purge']), pending: z.int().min(0).describe('Items of this project waiting.') })),
}).meta({ id: 'OperationsOverview' });

const failureDetailsSchema = z.object({ eventId: z.string(), eventType: z.string(), streamId: z.string(), position: z.string(), message: z.string(), failedAt: z.string() });
const retriedSchema = z.object({ projection: z.string(), generation: z.int(), retrying: failureDetailsSchema.describe('The event the projector tries again.') }).meta({ id: 'ProjectionRetried' });
const skippedSchema = z.object({ projection: z.string(), generation: z.int(), skipped: failureDetailsSchema.describe('The event passed over.') }).meta({ id: 'ProjectionEventSkipped' });

const OPERATORS_ONLY = "Only the service's operators retry, skip or rebuild projections: they are shared by every tenant on this service.";
const OPERATORS_HINT = 'Operators are the tenant admins of the tenants named in OPERATOR_TENANT_IDS (or of the only tenant, while the service holds one).';

/**
 * Operations (the console's operations page): projection status, the project's outbox backlogs, the version and
 * the adapters in use, for tenant_admin sessions; the failing event's details, retry, skip with a reason and
 * rebuild with progress for the service's operators only, since projections are shared by every tenant.
 */
export function operationsRoutes(_deps: AdminDeps, api: ApiRegistry, operations: OperationsOverviewService | undefined): Router {
  const router = newRouter();
  const tag = 'Operations';
  const service = (_ctx: Context): OperationsOverviewService => {
    if (!operations) throw unavailable('Projections run in a process with the projector role; this one has none.');
    return operations;
  };
  /** The service for an action on projections: operators only. */
  const operatorService = async (ctx: Context): Promise<OperationsOverviewService> => {
    const ops = service(ctx);
    if (!(await ops.isOperator(principalOf(ctx)))) throw forbidden(OPERATORS_ONLY, { hint: OPERATORS_HINT });
    return ops;
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

  api.add(router, { method: 'get', path: '/operations', operationId: 'getOperations', permission: 'operations.manage', summary: "Projection status (state, lag, a rebuild in progress; the failing event for service operators), the project's outbox backlogs, the service version and adapters (tenant_admin session)", tag, responses: { 200: { description: 'The operations overview', schema: operationsOverviewSchema } }, errors: { 503: ['SERVICE_UNAVAILABLE'] } }, async (ctx) => {
    const ops = service(ctx);
    const operator = await ops.isOperator(principalOf(ctx));
    ctx.body = (await ops.overview(projectOf(ctx).projectId, operator)) satisfies z.input<typeof operationsOverviewSchema>;
  });

  api.add(router, { method: 'post', path: '/operations/projections/:name/retry', operationId: 'retryProjection', permission: 'operations.manage', summary: "Clear a paused projection's failure so that its projector tries the event again (service operators; 409 when it is not paused)", tag, responses: { 200: { description: 'The event being retried', schema: retriedSchema } }, errors: { 404: ['NOT_FOUND'], 409: ['CONFLICT'], 503: ['SERVICE_UNAVAILABLE'] } }, async (ctx) => {
    const ops = await operatorService(ctx);
    ctx.body = (await act(() => ops.retry(ctx.params['name']!))) satisfies z.input<typeof retriedSchema>;
  });

  api.add(router, { method: 'post', path: '/operations/projections/:name/skip', operationId: 'skipProjectionEvent', permission: 'operations.manage', summary: 'Pass over the event a projection is paused on, with a reason recorded in the log (projection.event-skipped, with the caller) and kept for every later rebuild (service operators)', tag, body: skipBody, bodyLimitBytes: 16 * 1024, responses: { 200: { description: 'The skipped event', schema: skippedSchema } }, errors: { 404: ['NOT_FOUND'], 409: ['CONFLICT'], 503: ['SERVICE_UNAVAILABLE'] } }, async (ctx, { body }) => {
    const ops = await operatorService(ctx);
    const caller = principalOf(ctx);
    ctx.body = (await act(() => ops.skip(ctx.params['name']!, body.reason, actorOf(caller)))) satisfies z.input<typeof skippedSchema>;
  });

  api.add(router, { method: 'post', path: '/operations/projections/:name/rebuild', operationId: 'rebuildProjection', permission: 'operations.manage', summary: 'Rebuild a projection into a new generation, swapped in when it catches up (service operators); answers at once, GET /operations shows the progress', tag, responses: { 202: { description: 'The rebuild, started (or the one already running)', schema: rebuildRunSchema } }, errors: { 404: ['NOT_FOUND'], 503: ['SERVICE_UNAVAILABLE'] } }, async (ctx) => {
    const ops = await operatorService(ctx);
    ctx.status = 202;
    ctx.body = (await act(() => ops.startRebuild(ctx.params['name']!))) satisfies z.input<typeof rebuildRunSchema>;
  });

  return router;
}

import Koa from 'koa';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import { EventLog } from '../event-store/event-log.ts';
import { healthRoutes } from '../http/health-routes.ts';
import { startHttpServer, type RunningHttpServer } from '../http/http-server.ts';
import { DrainState } from '../http/drain-state.ts';
import { readinessFromChecks, type CheckResult, type ReadinessCheck } from '../http/readiness.ts';
import { errorEnvelope } from '../http/middleware/error-envelope.ts';
import { notFound } from '../http/middleware/not-found.ts';
import { requestLogger } from '../http/middleware/request-logger.ts';
import { unavailable } from '../http/errors/error-factory.ts';
import { domainErrorToHttp } from '../http/errors/domain-error-to-http.ts';
import type { HttpError } from '../http/errors/http-error.ts';
import { NotLeaderError, UnavailableError } from '../event-store/errors.ts';
import { ReadModelUnavailableError } from '../read-models/read-model-store.ts';
import { ProjectionSupervisor } from '../projection-engine/projection-supervisor.ts';
import { projections } from '../../projections/index.ts';
import { serviceEventCatalog } from './event-catalog.ts';
import { openStores, type Stores } from './open-stores.ts';
import { resolveSessionSecret } from './session-secret.ts';
import { adminRouter } from '../http/admin/admin-router.ts';
import type { AdminDeps } from '../http/admin/admin-context.ts';
import { ReadModelReader } from '../read-models/read-model-reader.ts';
import { ContentService } from '../application/content-service.ts';
import { AccessService } from '../application/access-service.ts';
import { Reservations } from '../application/reservations.ts';
import { Idempotency } from '../application/idempotency.ts';
import { ProjectionWatermark } from '../application/projection-watermark.ts';
import { SessionTokens } from '../security/session-tokens.ts';
import { ScheduledPublisher } from '../application/scheduled-publisher.ts';
import { RateLimiter } from '../security/rate-limiter.ts';

export interface RunningService {
  url: string;
  port: number;
  log: EventLog;
  stores: Stores;
  supervisor: ProjectionSupervisor | undefined;
  /** Graceful stop: drain HTTP, stop projectors, close stores. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts every role the configuration names, on the stores it names. Fails, with nothing left running,
 * when a store cannot be opened or the port cannot be bound.
 */
export async function startService(config: Config, deps: { logger: Logger; clock: Clock }): Promise<RunningService> {
  const { logger, clock } = deps;
  const stores = await openStores(config, logger);
  const log = new EventLog(stores.events, serviceEventCatalog(), clock);
  let supervisor: ProjectionSupervisor | undefined;
  let publisher: ScheduledPublisher | undefined;
  let http: RunningHttpServer | undefined;
  try {
    if (config.roles.has('projector')) {
      supervisor = new ProjectionSupervisor({ projections, log, store: stores.readModels, clock, logger, readinessMaxLagMs: config.readinessMaxLagMs });
      await supervisor.start();
      // One active scheduler, beside the projectors (ROLES splits API replicas from this process).
      publisher = new ScheduledPublisher({ log, reader: new ReadModelReader(stores.readModels), clock, logger, intervalMs: config.scheduledPublishIntervalMs });
      publisher.start();
    }
    const drain = new DrainState();
    if (config.roles.has('api')) {
      const app = new Koa({ proxy: false });
      const checks: Record<string, ReadinessCheck> = {
        'event-store': () => stores.events.ping().then(ok),
        'read-models': () => stores.readModels.ping().then(ok),
      };
      if (supervisor) {
        const s = supervisor;
        for (const projection of projections) checks[`projection:${projection.name}`] = () => s.readiness().checks[`projection:${projection.name}`] ?? { ok: false, detail: 'not started' };
      }
      app.use(requestLogger({ logger }));
      app.use(errorEnvelope({ logger, translate: translateErrors }));
      const health = healthRoutes({ drain, readiness: readinessFromChecks(checks), logger });
      app.use(health.routes());
      app.use(health.allowedMethods());
      const admin = adminRouter(adminDeps(config, { log, stores, supervisor, clock, logger }));
      app.use(admin.routes());
      app.use(admin.allowedMethods());
      app.use(notFound());
      http = await startHttpServer({ app, port: config.port, host: config.host, logger, drain });
      logger.info({ url: http.url, roles: [...config.roles] }, 'annals listening');
    }
  } catch (error) {
    await publisher?.stop();
    await supervisor?.stop();
    await stores.close();
    throw error;
  }

  let stopping: Promise<void> | undefined;
  return {
    url: http?.url ?? '',
    port: http?.port ?? 0,
    log,
    stores,
    supervisor,
    stop: () =>
      (stopping ??= (async () => {
        await http?.close(config.shutdownGraceMs);
        await publisher?.stop();
        await supervisor?.stop();
        await stores.close();
      })()),
  };
}

/**
 * Domain refusals keep their spec code and status. A store that cannot be reached is the service's
 * temporary trouble, not the caller's: 503, retryable.
 */
function translateErrors(error: unknown): HttpError | undefined {
  const domain = domainErrorToHttp(error);
  if (domain) return domain;
  if (error instanceof UnavailableError || error instanceof NotLeaderError || error instanceof ReadModelUnavailableError) {
    return unavailable('A data store is temporarily unavailable; retry shortly.', { retryAfterSeconds: 5 });
  }
  return undefined;
}

/** The admin API's collaborators, built once per process. */
function adminDeps(config: Config, d: { log: EventLog; stores: Stores; supervisor: ProjectionSupervisor | undefined; clock: Clock; logger: Logger }): AdminDeps {
  const reader = new ReadModelReader(d.stores.readModels);
  const watermark = new ProjectionWatermark(d.stores.readModels, d.supervisor);
  const content = new ContentService({
    log: d.log,
    reader,
    reservations: new Reservations(d.log),
    idempotency: new Idempotency(d.log),
    watermark,
    clock: d.clock,
  });
  return {
    reader,
    content,
    access: new AccessService({ log: d.log, clock: d.clock }),
    log: d.log,
    watermark,
    sessions: new SessionTokens({ secret: resolveSessionSecret(config), clock: d.clock }),
    rateLimiter: new RateLimiter({ clock: d.clock }),
    clock: d.clock,
    logger: d.logger,
  };
}

function ok(): CheckResult {
  return { ok: true };
}

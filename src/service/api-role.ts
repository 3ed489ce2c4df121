/**
 * The api role of the service (ROLES=api): the Koa application (health, metrics, the admin and public APIs,
 * the hosted contact pages, the console) behind the fast lane and the admitted lane (cached answers, direct
 * reads), on the HTTP server. What it starts is kept in an ApiResources as it goes, so that a failed start,
 * and the service's stop, close what started (service.ts).
 */
import type { UserState } from '../domain/access/user-decider.ts';
import path from 'node:path';
import Koa from 'koa';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import type { EventLog } from '../event-store/event-log.ts';
import { healthRoutes } from '../http/health-routes.ts';
import { startHttpServer, type RunningHttpServer } from '../http/http-server.ts';
import type { DrainState } from '../http/drain-state.ts';
import { EventLoopLag, LoadShedder, type ShedReason } from '../http/load-shedding.ts';
import { SampledRefusalLog } from '../http/refusal-log.ts';
import { readinessFromChecks, type CheckResult, type ReadinessCheck } from '../http/readiness.ts';
import { errorEnvelope } from '../http/middleware/error-envelope.ts';
import { notFound } from '../http/middleware/not-found.ts';
import { canonicalPath } from '../http/middleware/canonical-path.ts';
import { requestLogger } from '../http/middleware/request-logger.ts';
import type { ProjectionSupervisor } from '../projection-engine/projection-supervisor.ts';
import { projections } from '../../projections/index.ts';
import type { Stores } from './open-stores.ts';
import { adminRouter } from '../http/admin/admin-router.ts';
import { publicRouter } from '../http/public/public-router.ts';
import { publicCors } from '../http/public/public-http-manners.ts';
import { PublicResponseCache } from '../http/public/public-response-cache.ts';
import { PublicFastReads } from '../http/public/public-fast-reads.ts';
import { AccessLookups } from '../http/public/project-resolution.ts';
import { ReadModelVersions } from '../projection-engine/read-model-versions.ts';
import { publicContentRoutes } from '../http/public/content-routes.ts';
import { publicContentDeps } from '../http/public/public-content-deps.ts';
import { publicOpenApiRoutes } from '../http/public/public-openapi.ts';
import type { ProjectionWatermark } from '../application/projection-watermark.ts';
import { webhookServiceFor } from '../webhooks/webhook-setup.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import { mediaFor } from './media-setup.ts';
import { publicMediaRoutes } from '../http/public/media-routes.ts';
import type { ContactForms } from '../contact-forms/contact-forms.ts';
import { publicContactRoutes } from '../http/public/contact-routes.ts';
import { contactPages } from '../http/contact-host/contact-pages.ts';
import { consoleRoutes } from '../http/console/console-routes.ts';
import { PACKAGE_ROOT, packageVersion } from '../package-root.ts';
import { OperationsOverviewService } from '../application/operations-overview.ts';
import type { RefusalRecorder } from '../application/refusal-recorder.ts';
import { ProjectionOperations } from '../projection-engine/projection-operations.ts';
import { translationProviderFor } from '../translation/translation-setup.ts';
import type { ServiceMetrics } from '../metrics/service-metrics.ts';
import { metricsRoutes } from '../http/metrics-route.ts';
import type { AggregateSnapshots } from '../application/aggregate-snapshots.ts';
import type { EntryState } from '../domain/content/entry/entry-decider.ts';
import type { WorkingCopyStore } from '../working-copies/working-copy-store.ts';
import { openAuditKeyRing } from '../audit/open-audit-key-ring.ts';
import type { OpenedAuditKeyRing } from '../audit/chained-audit-key-ring.ts';
import type { LogTreeRuntime } from '../audit/log-tree-runtime.ts';
import { CheckpointsHeldError, type LogCheckpoints } from '../audit/log-checkpoints.ts';
import type { StoredCheckpoint } from '../audit/log-tree-store.ts';
import type { AuditExportSigning } from '../audit/audit-export.ts';

import { adminDeps } from './admin-deps.ts';
import { translateErrors } from './http-error-translation.ts';
import { mcpRoute } from '../mcp/mcp-http-route.ts';
import { signInServicesFor } from '../sign-in/sign-in-setup.ts';

/** What the api role started: closed by the service's stop, or by a failed start (whatever was set by then). */
export interface ApiResources {
  http?: RunningHttpServer | undefined;
  versions?: ReadModelVersions | undefined;
  lag?: EventLoopLag | undefined;
  sampledRefusals?: SampledRefusalLog | undefined;
  refusals?: RefusalRecorder | undefined;
  mediaClose?: (() => Promise<void>) | undefined;
  /** The audit key ring an API-only process opens at its first export (see auditExports). */
  exportRing?: Promise<OpenedAuditKeyRing> | undefined;
}

/** What the api role is built on: the stores and services startRoles opened. */
export interface ApiRoleDeps {
  config: Config;
  logger: Logger;
  clock: Clock;
  stores: Stores;
  blobs: BlobStore;
  log: EventLog;
  metrics: ServiceMetrics | undefined;
  supervisor: ProjectionSupervisor | undefined;
  watermark: ProjectionWatermark;
  entrySnapshots: AggregateSnapshots<EntryState>;
  userSnapshots: AggregateSnapshots<UserState>;
  workingCopyStore: WorkingCopyStore;
  contact: ContactForms;
  logTree: LogTreeRuntime;
  auditKeys: OpenedAuditKeyRing | undefined;
  drain: DrainState;
}

export async function startApiRole(d: ApiRoleDeps, r: ApiResources): Promise<void> {
  const { config, logger, clock, stores, blobs, log, metrics, supervisor, watermark, entrySnapshots, userSnapshots, workingCopyStore, contact, logTree, auditKeys, drain } = d;
  // Behind one trusted proxy, the client is the last X-Forwarded-For entry (the one that proxy added): the
  // entries before it come from the client and prove nothing (the console IP allowlist relies on this).
  const app = new Koa({ proxy: config.trustProxy, maxIpsCount: 1 });
  const checks: Record<string, ReadinessCheck> = {
    'event-store': () => stores.events.ping().then(ok),
    'read-models': () => stores.readModels.ping().then(ok),
    'media-storage': () => blobs.ping().then(ok),
    'key-store': () => contact.keyStore.ping().then(ok),
  };
  if (logTree && config.audit.checkpointDir) {
    // Not ready while the start-up check runs (writes are refused then, for seconds); ready again after it,
    // even on a mismatch: reads go on, and the refusal is named here and on every write.
    const runtime = logTree;
    let checked = false;
    void runtime.integrity.finally(() => { checked = true; }).catch(() => undefined);
    checks['audit-log'] = () => (!checked ? { ok: false, detail: 'checking the log against its last published checkpoint' } : runtime.gate.refusal ? { ok: true, detail: 'writes refused: the log does not extend its last published checkpoint' } : ok());
  }
  if (supervisor) {
    const s = supervisor;
    for (const projection of projections) checks[`projection:${projection.name}`] = () => s.readiness().checks[`projection:${projection.name}`] ?? { ok: false, detail: 'not started' };
  }
  if (metrics) app.use(metrics.http.middleware());
  app.use(requestLogger({ logger }));
  app.use(errorEnvelope({ logger, translate: translateErrors }));
  app.use(canonicalPath());
  app.use(publicCors());
  const versions = new ReadModelVersions(stores.readModels, projections.filter(({ name }) => name === 'public-content' || name === 'access'), { supervisor });
  r.versions = versions;
  await versions.start();
  const responseCache = new PublicResponseCache({
    versions,
    maxBytes: config.publicResponseCacheBytes,
    trustProxy: config.trustProxy,
    logger,
    ...(metrics ? { onHit: (hit: { route: string | undefined; status: number; seconds: number }) => metrics.http.cacheHit(hit.route, hit.status, hit.seconds) } : {}),
  });
  app.use(responseCache.middleware());
  const health = healthRoutes({ drain, readiness: readinessFromChecks(checks), logger });
  app.use(health.routes());
  app.use(health.allowedMethods());
  if (metrics) {
    const scrape = metricsRoutes(metrics, { token: config.metrics.token });
    app.use(scrape.routes());
    app.use(scrape.allowedMethods());
  }
  const adminDepsValue = adminDeps(config, { log, stores, supervisor, watermark, clock, logger, entrySnapshots, userSnapshots, keyStore: contact.keyStore, workingCopies: workingCopyStore });
  // Authentication keeps its reads of users, keys and projects while this process folds the access read model live.
  if (supervisor) {
    const folding = supervisor;
    adminDepsValue.accessVersion = () => (folding.foldsLive('access') ? versions.of('access') : undefined);
  }
  r.refusals = adminDepsValue.refusals;
  r.refusals?.start();
  const media = await mediaFor(config, adminDepsValue, blobs);
  r.mediaClose = media.close;
  // Also in an API-only process (production's replicas serve the console): status, retry and skip go
  // through the stores, which the projector process follows; a rebuild runs here, as the CLI's does in its
  // own process, and the projector process follows the generation it swaps in.
  const operations = new OperationsOverviewService({
    projections,
    log,
    store: stores.readModels,
    reader: adminDepsValue.reader,
    operations: new ProjectionOperations({ projections, log, store: stores.readModels, clock, logger }),
    version: packageVersion(),
    adapters: { eventStore: config.eventStore.kind, readModels: config.readModels.kind, blobs: config.media.blobs.kind },
    clock,
    operatorTenantIds: config.operatorTenantIds,
  });
  // Audit exports sign through the audit key ring: the one this process opened (projector role), else one
  // opened at the first export (an API-only process; docs/operations.md "The tamper-evident log"). Their checkpoint is
  // signed now where this process signs checkpoints, else the latest the projector process signed.
  const opened = auditKeys;
  const tree = logTree;
  const auditExports: AuditExportSigning = {
    ring: opened
      ? async () => opened
      : () =>
          (r.exportRing ??= openAuditKeyRing(config, contact.keyStore, clock, { logger, events: stores.events }).catch((error: unknown) => {
            r.exportRing = undefined;
            throw error;
          })),
    log: { tree: tree.tree, ...(tree.checkpoints ? { sign: signNowOrNone(tree.checkpoints) } : {}) },
  };
  const admin = adminRouter(adminDepsValue, { webhooks: webhookServiceFor(config, adminDepsValue), media: media.admin, contactForms: contact, translation: translationProviderFor(config), operations, auditExports, logTree, mcp: mcpRoute, signIn: signInServicesFor(config, { access: adminDepsValue.access, reader: adminDepsValue.reader, watermark: adminDepsValue.watermark, clock }), invitations: { transport: contact.mail, mailFrom: config.contactForms.mailFrom, consoleBase: () => config.contactForms.consoleUrl ?? `${r.http?.url ?? ''}/console` } });
  app.use(admin.routes());
  app.use(admin.allowedMethods());
  const contentDeps = publicContentDeps(config, adminDepsValue, versions, drain);
  // One cache of project, key and domain lookups for Koa's public routes and the fast reads before Koa.
  const access = new AccessLookups(adminDepsValue.reader, versions);
  const publicApi = publicRouter(
    { access, cacheMaxAgeSeconds: config.publicCacheMaxAgeSeconds },
    // Route groups of the public API, each mounted on both bases.
    [publicContentRoutes(contentDeps), publicMediaRoutes(media.public), publicContactRoutes(contact)],
    [publicOpenApiRoutes()],
  );
  app.use(publicApi.routes());
  app.use(publicApi.allowedMethods());
  // Hosted contact pages: CONTACT_HOSTS and /contact/{projectSlug}/{formSlug}.
  app.use(contactPages(contact));
  // The web console at /console (and / or /admin for a browser).
  const consolePages = consoleRoutes({ distDir: path.join(PACKAGE_ROOT, 'console', 'dist'), reader: adminDepsValue.reader });
  app.use(consolePages.routes());
  app.use(consolePages.allowedMethods());
  app.use(notFound());
  const cache = responseCache;
  // Entries and list pages straight from their serialised documents, before Koa (and into the cache).
  const fastReads = new PublicFastReads({
    reader: adminDepsValue.reader,
    access,
    formSets: contentDeps.formSets,
    cacheMaxAgeSeconds: config.publicCacheMaxAgeSeconds,
    trustProxy: config.trustProxy,
    logger,
    responseCache: cache,
    ...(metrics ? { onAnswer: (answer: { route: string; status: number; seconds: number }) => metrics.http.fastRead(answer.route, answer.status, answer.seconds) } : {}),
  });
  const limits = config.http;
  r.lag = new EventLoopLag().start();
  const loopLag = r.lag;
  r.sampledRefusals = new SampledRefusalLog(logger);
  const refusalLog = r.sampledRefusals;
  const shedder = new LoadShedder({
    lagMs: () => loopLag.currentMs(),
    maxLagMs: limits.loadShedLagMs || Number.POSITIVE_INFINITY,
    maxInFlight: limits.maxInFlight,
    // Behind a proxy every connection is the proxy's: requests in progress are counted per forwarded client.
    maxInFlightPerClient: limits.maxConnectionsPerClient,
    trustProxy: config.trustProxy,
    ...(metrics ? { onShed: (reason: ShedReason) => metrics.http.loadShed(reason) } : {}),
    onRefused: (refusal) => refusalLog.record(refusal),
  });
  r.http = await startHttpServer({
    app,
    port: config.port,
    host: config.host,
    logger,
    drain,
    fastLane: (req, res) => cache.serveRaw(req, res),
    admittedLane: (req, res) => fastReads.serve(req, res),
    timeouts: { keepAliveMs: limits.keepAliveTimeoutMs, headersMs: limits.headersTimeoutMs, requestMs: limits.requestTimeoutMs },
    limits: { maxConnections: limits.maxConnections, maxConnectionsPerClient: limits.maxConnectionsPerClient, behindProxy: config.trustProxy },
    shedder,
  });
  logger.info({ url: r.http.url, roles: [...config.roles] }, 'annals listening');
}

/** Signs a checkpoint of the tree as it is now; none while checkpoints are held (the start-up check). */
function signNowOrNone(checkpoints: LogCheckpoints): () => Promise<StoredCheckpoint | null> {
  return () =>
    checkpoints.checkpoint().catch((error: unknown) => {
      if (error instanceof CheckpointsHeldError) return null;
      throw error;
    });
}

function ok(): CheckResult {
  return { ok: true };
}

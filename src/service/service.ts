import path from 'node:path';
import Koa from 'koa';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import { EventLog } from '../event-store/event-log.ts';
import { healthRoutes } from '../http/health-routes.ts';
import { startHttpServer, type RunningHttpServer } from '../http/http-server.ts';
import { DrainState } from '../http/drain-state.ts';
import { EventLoopLag, LoadShedder, type ShedReason } from '../http/load-shedding.ts';
import { SampledRefusalLog } from '../http/refusal-log.ts';
import { readinessFromChecks, type CheckResult, type ReadinessCheck } from '../http/readiness.ts';
import { errorEnvelope } from '../http/middleware/error-envelope.ts';
import { notFound } from '../http/middleware/not-found.ts';
import { canonicalPath } from '../http/middleware/canonical-path.ts';
import { requestLogger } from '../http/middleware/request-logger.ts';
import { ErrorCode, unavailable } from '../http/errors/error-factory.ts';
import { domainErrorToHttp } from '../http/errors/domain-error-to-http.ts';
import { applicationErrorToHttp } from '../http/errors/application-error-to-http.ts';
import { HttpError } from '../http/errors/http-error.ts';
import { EventTooLargeError, NotLeaderError, UnavailableError } from '../event-store/errors.ts';
import { ReadModelUnavailableError, TextSearchUnavailableError } from '../read-models/read-model-store.ts';
import { ProjectionSupervisor } from '../projection-engine/projection-supervisor.ts';
import { projections, retiredProjections } from '../../projections/index.ts';
import { serviceEventCatalog } from './event-catalog.ts';
import { openStores, type Stores } from './open-stores.ts';
import { SqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { resolveSessionSecret } from '../security/session-secret.ts';
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
import type { AdminDeps } from '../http/admin/admin-context.ts';
import { ReadModelReader } from '../read-models/read-model-reader.ts';
import { ContentService } from '../application/content-service.ts';
import { AccessService } from '../application/access-service.ts';
import { Reservations } from '../application/reservations.ts';
import { Idempotency } from '../application/idempotency.ts';
import { ProjectionWatermark } from '../application/projection-watermark.ts';
import { SessionTokens } from '../http/session-tokens.ts';
import { ScheduledPublisher } from '../application/scheduled-publisher.ts';
import { RateLimiter } from '../security/rate-limiter.ts';
import { LoginThrottle } from '../security/login-throttle.ts';
import { WorkSlots } from '../security/work-slots.ts';
import { startWebhookDispatcher, webhookServiceFor } from '../webhooks/webhook-setup.ts';
import type { WebhookDispatcher } from '../webhooks/webhook-dispatcher.ts';
import { openBlobStore } from '../blobs/open-blob-store.ts';
import { mediaFor } from './media-setup.ts';
import { startMediaPurge } from '../media/media-purge.ts';
import { publicMediaRoutes } from '../http/public/media-routes.ts';
import { openContactForms, type ContactFormsOverrides } from './contact-forms-runtime.ts';
import type { ContactForms } from '../contact-forms/contact-forms.ts';
import { publicContactRoutes } from '../http/public/contact-routes.ts';
import { contactPages } from '../http/contact-host/contact-pages.ts';
import { consoleRoutes } from '../http/console/console-routes.ts';
import { PACKAGE_ROOT, packageVersion } from '../package-root.ts';
import { OperationsOverviewService } from '../application/operations-overview.ts';
import { KeyUsageRecorder } from '../application/key-usage.ts';
import { RefusalRecorder } from '../application/refusal-recorder.ts';
import { ProjectionOperations } from '../projection-engine/projection-operations.ts';
import { translationProviderFor } from '../translation/translation-setup.ts';
import { acquireDataDirLock, DataDirLockedError, type DataDirLock } from '../data-dir/data-dir-lock.ts';
import { dataDirState, undoFreshDataDir } from '../data-dir/fresh-data-dir.ts';
import { permissionWarnings } from '../data-dir/private-files.ts';
import { IssuedKeyReplay } from '../application/issued-key-replay.ts';
import { ReplayKeyShredder } from '../application/replay-key-shredder.ts';
import type { KeyStore } from '../key-store/key-store.ts';
import { ServiceMetrics } from '../metrics/service-metrics.ts';
import { countingAppends, countingMail } from '../metrics/instrumented-ports.ts';
import { metricsRoutes } from '../http/metrics-route.ts';
import { startMailFolderRetention } from '../mail/mail-folder-retention.ts';
import { mailConfigFrom, openMailTransport } from '../mail/open-mail-transport.ts';
import type { OutboxObserver } from '../outbox/outbox-worker.ts';
import { AggregateSnapshots } from '../application/aggregate-snapshots.ts';
import { ENTRY_STATE_VERSION, type EntryState } from '../domain/content/entry/entry-decider.ts';
import { openSnapshotStore } from '../snapshots/open-snapshot-store.ts';
import { openWorkingCopyStore } from '../working-copies/open-working-copy-store.ts';
import type { WorkingCopyStore } from '../working-copies/working-copy-store.ts';
import { WorkingCopies, WorkingCopyRetention } from '../application/working-copies.ts';
import type { SnapshotStore } from '../snapshots/snapshot-store.ts';
import { openAuditKeyRing } from '../audit/open-audit-key-ring.ts';
import type { OpenedAuditKeyRing } from '../audit/chained-audit-key-ring.ts';
import { recordKeyAnnouncements } from '../audit/key-announcement-log.ts';
import { gatedAppends, WriteGate, WritesRefusedError } from '../audit/log-integrity.ts';
import { startLogTree, type LogTreeRuntime } from '../audit/log-tree-runtime.ts';
import { CheckpointsHeldError, type LogCheckpoints } from '../audit/log-checkpoints.ts';
import type { StoredCheckpoint } from '../audit/log-tree-store.ts';
import type { AuditExportSigning } from '../audit/audit-export.ts';
import { AuditMetrics } from '../metrics/audit-metrics.ts';
import { markReviewNoticesStarted } from '../review-notices/review-notices-started.ts';

export interface RunningService {
  url: string;
  port: number;
  log: EventLog;
  stores: Stores;
  supervisor: ProjectionSupervisor | undefined;
  /** The log's Merkle tree, its proofs and (projector role) checkpoints. */
  logTree: LogTreeRuntime | undefined;
  /** The key store (contact-form submission keys, data keys of issued keys' replays, signing keys). */
  keyStore: KeyStore;
  /** Projector role: the job that destroys the data keys of issued keys whose replay window has ended. */
  replayKeyShredder: ReplayKeyShredder | undefined;
  /**
   * Graceful stop: drain HTTP, stop projectors, close stores. Idempotent. `progress` is told each step as it
   * begins (a shutdown deadline reports the one it was still waiting for).
   */
  stop(progress?: (step: string) => void): Promise<void>;
}

/**
 * Starts every role the configuration names, on the stores it names. Fails, with nothing left running,
 * when a store cannot be opened or the port cannot be bound; a DATA_DIR that was empty is then left empty.
 * A process with the projector role on an embedded store holds the DATA_DIR's writer lock while it runs
 * (see DataDirLock): a second one on the same folder is refused; API-only processes (ROLES=api) may run
 * beside it.
 */
export async function startService(config: Config, deps: { logger: Logger; clock: Clock; contactForms?: ContactFormsOverrides }): Promise<RunningService> {
  const before = dataDirState(config.dataDir);
  const lock = takesDataDirLock(config) ? lockDataDir(config) : undefined;
  try {
    // Read beside the start (a media folder may hold many files), told once the service runs.
    const permissions = permissionWarnings(config.dataDir);
    const running = await startRoles(config, deps);
    for (const warning of await permissions) deps.logger.warn(warning);
    return {
      ...running,
      stop: async () => {
        try {
          await running.stop();
        } finally {
          lock?.release();
        }
      },
    };
  } catch (error) {
    if (before !== 'in-use') {
      try {
        undoFreshDataDir(config.dataDir, before, lock);
      } catch (cleanup) {
        deps.logger.warn({ err: cleanup }, `could not remove what the failed start created in ${config.dataDir}`);
      }
    }
    lock?.release();
    throw error;
  }
}

/**
 * Whether this process takes the DATA_DIR's writer lock: when it runs the projector role (projectors,
 * outboxes, scheduler) and an embedded SQLite store lives in DATA_DIR. With the log on EventStoreDB and the
 * read models on MongoDB, DATA_DIR holds no store, and the projectors' leases in the read-model store let
 * several projector processes run (one folds, the others stand by).
 */
export function takesDataDirLock(config: Pick<Config, 'roles' | 'eventStore' | 'readModels'>): boolean {
  return config.roles.has('projector') && (config.eventStore.kind === 'sqlite' || config.readModels.kind === 'sqlite');
}

/** The DATA_DIR's writer lock for this service, or a refusal that says what to do instead. */
function lockDataDir(config: Config): DataDirLock {
  try {
    return acquireDataDirLock(config.dataDir, `service with roles ${[...config.roles].join(',')}`);
  } catch (error) {
    if (error instanceof DataDirLockedError) {
      error.message += '. Stop that process first, or run this one with ROLES=api to serve the API beside it (the projector role runs once per data folder).';
    }
    throw error;
  }
}

async function startRoles(config: Config, deps: { logger: Logger; clock: Clock; contactForms?: ContactFormsOverrides }): Promise<RunningService> {
  const { logger, clock } = deps;
  // Its first start folds every projection at once: large commits go to the writer thread, beside the folding.
  const stores = await openStores(config, logger, { inlineBulkCommits: false });
  if (stores.events instanceof SqliteEventStore && stores.events.beganBeforeFrames()) {
    logger.info(
      { file: config.eventStore.kind === 'sqlite' ? config.eventStore.file : undefined },
      'the event log holds events stored as text by a build before 2026-11-28: `annals log compact` stores them compressed (safe while the service runs), then `annals log compact --vacuum` with the service stopped gives back about half the file',
    );
  }
  // METRICS=off: no metrics object, so nothing is counted anywhere.
  const metrics = config.metrics.enabled ? new ServiceMetrics() : undefined;
  const outboxObserver: OutboxObserver | undefined = metrics && ((r) => metrics.outboxOutcome(r.outbox, r.outcome, r.seconds));
  const appendedTo = metrics ? countingAppends(stores.events, metrics) : stores.events;
  // Shut when the log does not extend its last published checkpoint (src/audit/log-integrity.ts): reads go on.
  const writeGate = new WriteGate();
  const log = new EventLog(gatedAppends(appendedTo, writeGate), serviceEventCatalog(), clock);
  let supervisor: ProjectionSupervisor | undefined;
  let publisher: ScheduledPublisher | undefined;
  let replayKeyShredder: ReplayKeyShredder | undefined;
  let dispatcher: WebhookDispatcher | undefined;
  // Media bytes: DATA_DIR/media, or S3 when S3_BUCKET is set.
  const blobs = openBlobStore(config.media.blobs);
  let mediaPurge: { stop(): Promise<void> } | undefined;
  let mailRetention: { stop(): Promise<void> } | undefined;
  let mediaClose: (() => Promise<void>) | undefined;
  let http: RunningHttpServer | undefined;
  let versions: ReadModelVersions | undefined;
  let responseCache: PublicResponseCache | undefined;
  let contactForms: ContactForms | undefined;
  let snapshotStore: SnapshotStore | undefined;
  let workingCopyStore: WorkingCopyStore | undefined;
  let workingCopyRetention: WorkingCopyRetention | undefined;
  let watermark: ProjectionWatermark | undefined;
  let lag: EventLoopLag | undefined;
  let sampledRefusals: SampledRefusalLog | undefined;
  let auditKeys: OpenedAuditKeyRing | undefined;
  let exportRing: Promise<OpenedAuditKeyRing> | undefined;
  let refusals: RefusalRecorder | undefined;
  let logTree: LogTreeRuntime | undefined;
  try {
    // Entry aggregates load from a verified snapshot or cached state, then the events after it.
    snapshotStore = await openSnapshotStore(config);
    // People's unsaved typing in the console, kept apart from the rebuildable read models.
    workingCopyStore = await openWorkingCopyStore(config);
    const entrySnapshots = new AggregateSnapshots<EntryState>({ kind: 'entry', version: ENTRY_STATE_VERSION, store: snapshotStore, cacheBytes: config.aggregateCacheBytes, clock, logger });
    if (config.roles.has('projector')) {
      // Review notices are due for workflow events from the first start of this version on, never for older history.
      await markReviewNoticesStarted(log);
      supervisor = new ProjectionSupervisor({ projections, retired: retiredProjections, log, store: stores.readModels, clock, logger, readinessMaxLagMs: config.readinessMaxLagMs });
      await supervisor.start();
      // One active scheduler, beside the projectors (ROLES splits API replicas from this process).
      publisher = new ScheduledPublisher({ log, reader: new ReadModelReader(stores.readModels, { generations: supervisor }), clock, logger, intervalMs: config.scheduledPublishIntervalMs, entrySnapshots });
      publisher.start();
      // The webhook dispatcher performs the deliveries the webhooks projection lists.
      dispatcher = startWebhookDispatcher(config, { log, reader: new ReadModelReader(stores.readModels, { generations: supervisor }), clock, logger, ...(outboxObserver ? { observer: outboxObserver } : {}) });
      // Removes deleted assets' bytes from blob storage.
      mediaPurge = startMediaPurge({ blobs, log, reader: new ReadModelReader(stores.readModels, { generations: supervisor }), logger, ...(outboxObserver ? { observer: outboxObserver } : {}) });
      // The notices this process's outbox workers write as .eml files (no SMTP_URL) are kept MAIL_FOLDER_KEEP_DAYS.
      const { smtpUrl, mailDir, mailFolderKeepDays } = config.contactForms;
      if (smtpUrl === undefined && mailFolderKeepDays > 0) mailRetention = startMailFolderRetention({ dir: mailDir, keepDays: mailFolderKeepDays, clock, logger });
      workingCopyRetention = new WorkingCopyRetention({ store: workingCopyStore, clock, logger, retentionDays: config.workingCopyRetentionDays });
      workingCopyRetention.start();
    }
    // Contact forms: the key store of submission keys, the mail transport, the hosted pages' challenges.
    const contactOverrides = metrics
      ? { ...deps.contactForms, mail: countingMail(deps.contactForms?.mail ?? openMailTransport(mailConfigFrom(config.contactForms.smtpUrl, config.dataDir)), config.contactForms.smtpUrl ? 'smtp' : 'eml-files', metrics) }
      : deps.contactForms;
    // Read your writes: one watermark for every write of this process (it follows the process's appends).
    watermark = new ProjectionWatermark({ projections, log, store: stores.readModels, supervisor });
    contactForms = await openContactForms(config, { log, readModels: stores.readModels, supervisor, watermark, clock, logger, ...(outboxObserver ? { outboxObserver } : {}) }, contactOverrides);
    metrics?.watchProjections({ projections, store: stores.readModels, log, supervisor });
    const contact = contactForms;
    // Opened before the listener starts (src/main.ts installs its signal handlers before the start, so a signal
    // sent meanwhile waits for it).
    // The audit key ring (a key file, an HSM, or the key store's key), opened where checkpoints are signed: the
    // one place the service takes it from. Its key chain is recorded in the log.
    auditKeys = config.roles.has('projector') ? await openAuditKeyRing(config, contact.keyStore, clock, { logger, events: stores.events }) : undefined;
    if (auditKeys) await recordKeyAnnouncements(log, auditKeys.chain());
    logTree = await startLogTree(config, {
      events: stores.events,
      ungatedLog: new EventLog(appendedTo, serviceEventCatalog(), clock),
      log,
      readModels: stores.readModels,
      ring: auditKeys,
      clock,
      logger,
      ...(metrics ? { metrics: new AuditMetrics(metrics.registry) } : {}),
      projector: config.roles.has('projector'),
      gate: writeGate,
    });
    const drain = new DrainState();
    if (config.roles.has('api')) {
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
      versions = new ReadModelVersions(stores.readModels, projections.filter(({ name }) => name === 'public-content' || name === 'access'), { supervisor });
      await versions.start();
      responseCache = new PublicResponseCache({
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
      const adminDepsValue = adminDeps(config, { log, stores, supervisor, watermark, clock, logger, entrySnapshots, keyStore: contact.keyStore, workingCopies: workingCopyStore });
      refusals = adminDepsValue.refusals;
      refusals?.start();
      const media = await mediaFor(config, adminDepsValue, blobs);
      mediaClose = media.close;
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
              (exportRing ??= openAuditKeyRing(config, contact.keyStore, clock, { logger, events: stores.events }).catch((error: unknown) => {
                exportRing = undefined;
                throw error;
              })),
        log: { tree: tree.tree, ...(tree.checkpoints ? { sign: signNowOrNone(tree.checkpoints) } : {}) },
      };
      const admin = adminRouter(adminDepsValue, { webhooks: webhookServiceFor(config, adminDepsValue), media: media.admin, contactForms: contact, translation: translationProviderFor(config), operations, auditExports, logTree, invitations: { transport: contact.mail, mailFrom: config.contactForms.mailFrom, consoleBase: () => config.contactForms.consoleUrl ?? `${http?.url ?? ''}/console` } });
      app.use(admin.routes());
      app.use(admin.allowedMethods());
      const contentDeps = publicContentDeps(config, adminDepsValue, versions);
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
      lag = new EventLoopLag().start();
      const loopLag = lag;
      sampledRefusals = new SampledRefusalLog(logger);
      const refusalLog = sampledRefusals;
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
      http = await startHttpServer({
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
      logger.info({ url: http.url, roles: [...config.roles] }, 'annals listening');
    }
    // The contact-form notice sender runs beside the projectors (console links use the listening URL).
    if (config.roles.has('projector')) {
      contact.startWorker(http?.url);
      // Issued keys' replays end with their window: their data keys go (the key store is the contact forms').
      replayKeyShredder = new ReplayKeyShredder({ reader: new ReadModelReader(stores.readModels, { generations: supervisor }), keyStore: contact.keyStore, clock, logger });
      replayKeyShredder.start();
    }
    // A process without the api role listens nowhere: this line says it is up (its projectors started).
    if (!config.roles.has('api')) logger.info({ roles: [...config.roles] }, 'annals running');
  } catch (error) {
    lag?.stop();
    await refusals?.stop();
    await logTree?.stop();
    await auditKeys?.close();
    await closeRing(exportRing);
    versions?.stop();
    watermark?.close();
    await replayKeyShredder?.stop();
    await contactForms?.stop();
    await mediaClose?.();
    await mediaPurge?.stop();
    await mailRetention?.stop();
    await blobs.close();
    await dispatcher?.stop();
    await publisher?.stop();
    await supervisor?.stop();
    await workingCopyRetention?.stop();
    await workingCopyStore?.close();
    await snapshotStore?.close();
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
    logTree,
    keyStore: contactForms.keyStore,
    replayKeyShredder,
    stop: (progress = () => undefined) =>
      (stopping ??= (async () => {
        progress('the HTTP server to drain in-flight requests');
        await http?.close(config.shutdownGraceMs);
        sampledRefusals?.flush();
        lag?.stop();
        versions?.stop();
        watermark?.close();
        progress('the counts of refused writes to be recorded');
        await refusals?.stop();
        progress('the webhook dispatcher to finish its deliveries');
        await dispatcher?.stop();
        progress('the contact-form notice worker');
        await replayKeyShredder?.stop();
        await contactForms?.stop();
        await mailRetention?.stop();
        progress('media processing');
        await mediaClose?.();
        await mediaPurge?.stop();
        progress('the blob store to close');
        await blobs.close();
        progress('the scheduled publisher');
        await publisher?.stop();
        progress('the log tree and its checkpoints');
        await logTree?.stop();
        await auditKeys?.close();
        await closeRing(exportRing);
        progress('the projectors to stop at a checkpoint');
        await supervisor?.stop();
        progress('the stores to close');
        await workingCopyRetention?.stop();
        await workingCopyStore?.close();
        await snapshotStore?.close();
        await stores.close();
      })()),
  };
}

/** Signs a checkpoint of the tree as it is now; none while checkpoints are held (the start-up check). */
function signNowOrNone(checkpoints: LogCheckpoints): () => Promise<StoredCheckpoint | null> {
  return () =>
    checkpoints.checkpoint().catch((error: unknown) => {
      if (error instanceof CheckpointsHeldError) return null;
      throw error;
    });
}

/** Closes a ring opened for exports, if it opened. */
async function closeRing(ring: Promise<OpenedAuditKeyRing> | undefined): Promise<void> {
  await ring?.then((opened) => opened.close(), () => undefined);
}

/**
 * Domain refusals keep their spec code and status. A store that cannot be reached is the service's
 * temporary trouble, not the caller's: 503, retryable.
 */
function translateErrors(error: unknown): HttpError | undefined {
  const domain = domainErrorToHttp(error) ?? applicationErrorToHttp(error);
  if (domain) return domain;
  if (error instanceof EventTooLargeError) {
    return new HttpError({
      status: 413,
      code: ErrorCode.PAYLOAD_TOO_LARGE,
      message: `What this request would store is over the limit of ${error.limitBytes} bytes per write (the data and metadata of its events).`,
      hint: 'Store less in one request: shorter text, or files as media.',
      retryable: false,
      cause: error,
    });
  }
  if (error instanceof WritesRefusedError) {
    return new HttpError({ status: 503, code: ErrorCode.SERVICE_UNAVAILABLE, message: error.message, retryable: false, expose: true, cause: error });
  }
  if (error instanceof TextSearchUnavailableError) return unavailable('Full-text search is not available: the read-model server has no text indexes.', { cause: error });
  if (error instanceof UnavailableError || error instanceof NotLeaderError || error instanceof ReadModelUnavailableError) {
    return unavailable('A data store is temporarily unavailable; retry shortly.', { retryAfterSeconds: 5 });
  }
  return undefined;
}

/** The admin API's collaborators, built once per process. */
function adminDeps(
  config: Config,
  d: { log: EventLog; stores: Stores; supervisor: ProjectionSupervisor | undefined; watermark: ProjectionWatermark; clock: Clock; logger: Logger; entrySnapshots: AggregateSnapshots<EntryState>; keyStore: KeyStore; workingCopies: WorkingCopyStore },
): AdminDeps {
  // Reads agree with read-your-writes waits: the supervisor names the generation (see ReadModelReader).
  const reader = new ReadModelReader(d.stores.readModels, { generations: d.supervisor });
  const watermark = d.watermark;
  const content = new ContentService({
    log: d.log,
    reader,
    reservations: new Reservations(d.log),
    idempotency: new Idempotency(d.log, { clock: d.clock }),
    watermark,
    clock: d.clock,
    entrySnapshots: d.entrySnapshots,
    workingCopies: d.workingCopies,
  });
  return {
    reader,
    content,
    workingCopies: new WorkingCopies({ store: d.workingCopies, content, clock: d.clock }),
    access: new AccessService({ log: d.log, clock: d.clock }),
    log: d.log,
    watermark,
    sessions: new SessionTokens({ secret: resolveSessionSecret(config), clock: d.clock, sessionTtlSeconds: config.sessions.ttlSeconds }),
    rateLimiter: new RateLimiter({ clock: d.clock }),
    loginThrottle: new LoginThrottle({ clock: d.clock }),
    passwordChecks: new WorkSlots({ concurrency: config.sessions.passwordHashConcurrency, maxQueued: 64 }),
    clock: d.clock,
    logger: d.logger,
    issuedKeys: new IssuedKeyReplay({ keyStore: d.keyStore, clock: d.clock }),
    keyUsage: new KeyUsageRecorder({ log: d.log, clock: d.clock, logger: d.logger }),
    refusals: new RefusalRecorder({ log: d.log, clock: d.clock, logger: d.logger }),
  };
}

function ok(): CheckResult {
  return { ok: true };
}

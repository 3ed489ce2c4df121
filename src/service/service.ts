import { USER_STATE_VERSION, type UserState } from '../domain/access/user-decider.ts';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import { EventLog } from '../event-store/event-log.ts';
import { DrainState } from '../http/drain-state.ts';
import { ProjectionSupervisor } from '../projection-engine/projection-supervisor.ts';
import { projections, retiredProjections } from '../../projections/index.ts';
import { serviceEventCatalog } from './event-catalog.ts';
import { openStores, type Stores } from './open-stores.ts';
import { SqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { ReadModelReader } from '../read-models/read-model-reader.ts';
import { ProjectionWatermark } from '../application/projection-watermark.ts';
import { ScheduledPublisher } from '../application/scheduled-publisher.ts';
import { startWebhookDispatcher } from '../webhooks/webhook-setup.ts';
import type { WebhookDispatcher } from '../webhooks/webhook-dispatcher.ts';
import { openBlobStore } from '../blobs/open-blob-store.ts';
import { startMediaPurge } from '../media/media-purge.ts';
import { openContactForms, type ContactFormsOverrides } from './contact-forms-runtime.ts';
import type { ContactForms } from '../contact-forms/contact-forms.ts';
import { acquireDataDirLock, DataDirLockedError, type DataDirLock } from '../data-dir/data-dir-lock.ts';
import { dataDirState, undoFreshDataDir } from '../data-dir/fresh-data-dir.ts';
import { permissionWarnings } from '../data-dir/private-files.ts';
import { ReplayKeyShredder } from '../application/replay-key-shredder.ts';
import type { KeyStore } from '../key-store/key-store.ts';
import { ServiceMetrics } from '../metrics/service-metrics.ts';
import { countingAppends, countingMail } from '../metrics/instrumented-ports.ts';
import { startMailFolderRetention } from '../mail/mail-folder-retention.ts';
import { mailConfigFrom, openMailTransport } from '../mail/open-mail-transport.ts';
import type { OutboxObserver } from '../outbox/outbox-worker.ts';
import { AggregateSnapshots } from '../application/aggregate-snapshots.ts';
import { ENTRY_STATE_VERSION, type EntryState } from '../domain/content/entry/entry-decider.ts';
import { openSnapshotStore } from '../snapshots/open-snapshot-store.ts';
import { openWorkingCopyStore } from '../working-copies/open-working-copy-store.ts';
import type { WorkingCopyStore } from '../working-copies/working-copy-store.ts';
import { WorkingCopyRetention } from '../application/working-copies.ts';
import type { SnapshotStore } from '../snapshots/snapshot-store.ts';
import { openAuditKeyRing } from '../audit/open-audit-key-ring.ts';
import type { OpenedAuditKeyRing } from '../audit/chained-audit-key-ring.ts';
import { recordKeyAnnouncements } from '../audit/key-announcement-log.ts';
import { gatedAppends, WriteGate } from '../audit/log-integrity.ts';
import { startLogTree, type LogTreeRuntime } from '../audit/log-tree-runtime.ts';
import { AuditMetrics } from '../metrics/audit-metrics.ts';
import { markReviewNoticesStarted } from '../review-notices/review-notices-started.ts';
import { startApiRole, type ApiResources } from './api-role.ts';

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

/** What a service is started with besides its configuration. */
export interface ServiceDeps {
  logger: Logger;
  clock: Clock;
  contactForms?: ContactFormsOverrides;
  /** The log tree follower thread's module, when not the default (see LogTreeThreadOptions.workerModule). */
  logTreeFollowerModule?: URL;
}

/**
 * Starts every role the configuration names, on the stores it names. Fails, with nothing left running,
 * when a store cannot be opened or the port cannot be bound; a DATA_DIR that was empty is then left empty.
 * A process with the projector role on an embedded store holds the DATA_DIR's writer lock while it runs
 * (see DataDirLock): a second one on the same folder is refused; API-only processes (ROLES=api) may run
 * beside it.
 */
export async function startService(config: Config, deps: ServiceDeps): Promise<RunningService> {
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

async function startRoles(config: Config, deps: ServiceDeps): Promise<RunningService> {
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
  const blobs = await openBlobStore(config.media.blobs);
  let mediaPurge: { stop(): Promise<void> } | undefined;
  let mailRetention: { stop(): Promise<void> } | undefined;
  // What the api role starts (http, versions, mediaClose, ...): see ApiResources.
  const api: ApiResources = {};
  let contactForms: ContactForms | undefined;
  let snapshotStore: SnapshotStore | undefined;
  let workingCopyStore: WorkingCopyStore | undefined;
  let workingCopyRetention: WorkingCopyRetention | undefined;
  let watermark: ProjectionWatermark | undefined;
  let auditKeys: OpenedAuditKeyRing | undefined;
  let logTree: LogTreeRuntime | undefined;
  try {
    // Entry aggregates load from a verified snapshot or cached state, then the events after it.
    snapshotStore = await openSnapshotStore(config);
    // People's unsaved typing in the console, kept apart from the rebuildable read models.
    workingCopyStore = await openWorkingCopyStore(config);
    const entrySnapshots = new AggregateSnapshots<EntryState>({ kind: 'entry', version: ENTRY_STATE_VERSION, store: snapshotStore, cacheBytes: config.aggregateCacheBytes, clock, logger });
    // A user's stream grows by a sign-in each session: their commands load from a snapshot too.
    const userSnapshots = new AggregateSnapshots<UserState>({ kind: 'user', version: USER_STATE_VERSION, store: snapshotStore, cacheBytes: Math.floor(config.aggregateCacheBytes / 8), clock, logger });
    if (config.roles.has('projector')) {
      // Review notices are due for workflow events from the first start of this version on, never for older history.
      await markReviewNoticesStarted(log);
      supervisor = new ProjectionSupervisor({ projections, retired: retiredProjections, log, store: stores.readModels, clock, logger, readinessMaxLagMs: config.readinessMaxLagMs });
      await supervisor.start();
      // One active scheduler, beside the projectors (ROLES splits API replicas from this process).
      publisher = new ScheduledPublisher({ log, reader: new ReadModelReader(stores.readModels, { generations: supervisor }), clock, logger, intervalMs: config.scheduledPublishIntervalMs, entrySnapshots });
      publisher.start();
      // The webhook dispatcher performs the deliveries the webhooks projection lists.
      // Both wake at their projection's commits (commits), rather than polling for work.
      dispatcher = startWebhookDispatcher(config, { log, reader: new ReadModelReader(stores.readModels, { generations: supervisor }), clock, logger, commits: supervisor, ...(outboxObserver ? { observer: outboxObserver } : {}) });
      // Removes deleted assets' bytes from blob storage.
      mediaPurge = startMediaPurge({ blobs, log, reader: new ReadModelReader(stores.readModels, { generations: supervisor }), logger, commits: supervisor, ...(outboxObserver ? { observer: outboxObserver } : {}) });
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
      ...(deps.logTreeFollowerModule ? { followerModule: deps.logTreeFollowerModule } : {}),
    });
    const drain = new DrainState();
    if (config.roles.has('api')) {
      await startApiRole(
        { config, logger, clock, stores, blobs, log, metrics, supervisor, watermark, entrySnapshots, userSnapshots, workingCopyStore, contact, logTree, auditKeys, drain },
        api,
      );
    }
    // The contact-form notice sender runs beside the projectors (console links use the listening URL).
    if (config.roles.has('projector')) {
      contact.startWorker(api.http?.url);
      // Issued keys' replays end with their window: their data keys go (the key store is the contact forms').
      replayKeyShredder = new ReplayKeyShredder({ reader: new ReadModelReader(stores.readModels, { generations: supervisor }), keyStore: contact.keyStore, clock, logger });
      replayKeyShredder.start();
    }
    // A process without the api role listens nowhere: this line says it is up (its projectors started).
    if (!config.roles.has('api')) logger.info({ roles: [...config.roles] }, 'annals running');
  } catch (error) {
    api.lag?.stop();
    await api.refusals?.stop();
    await logTree?.stop();
    await auditKeys?.close();
    await closeRing(api.exportRing);
    api.versions?.stop();
    watermark?.close();
    await replayKeyShredder?.stop();
    await contactForms?.stop();
    await api.mediaClose?.();
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
    url: api.http?.url ?? '',
    port: api.http?.port ?? 0,
    log,
    stores,
    supervisor,
    logTree,
    keyStore: contactForms.keyStore,
    replayKeyShredder,
    stop: (progress = () => undefined) =>
      (stopping ??= (async () => {
        progress('the HTTP server to drain in-flight requests');
        await api.http?.close(config.shutdownGraceMs);
        api.sampledRefusals?.flush();
        api.lag?.stop();
        api.versions?.stop();
        watermark?.close();
        progress('the counts of refused writes to be recorded');
        await api.refusals?.stop();
        progress('the webhook dispatcher to finish its deliveries');
        await dispatcher?.stop();
        progress('the contact-form notice worker');
        await replayKeyShredder?.stop();
        await contactForms?.stop();
        await mailRetention?.stop();
        progress('media processing');
        await api.mediaClose?.();
        await mediaPurge?.stop();
        progress('the blob store to close');
        await blobs.close();
        progress('the scheduled publisher');
        await publisher?.stop();
        progress('the log tree and its checkpoints');
        await logTree?.stop();
        await auditKeys?.close();
        await closeRing(api.exportRing);
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

/** Closes a ring opened for exports, if it opened. */
async function closeRing(ring: Promise<OpenedAuditKeyRing> | undefined): Promise<void> {
  await ring?.then((opened) => opened.close(), () => undefined);
}

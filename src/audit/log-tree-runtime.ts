/**
 * The log tree in a running service: the tree store, proofs for the admin API, and, in the process with the
 * projector role, the follower that keeps the tree up with the log, the checkpoints signed over it and their
 * publishers, and the start-up check against the last published checkpoint (./log-integrity.ts).
 */
import os from 'node:os';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import type { EventLog } from '../event-store/event-log.ts';
import type { EventStore } from '../event-store/event-store.ts';
import type { ReadModelStore } from '../read-models/read-model-store.ts';
import type { AuditMetrics } from '../metrics/audit-metrics.ts';
import type { AuditKeyRing } from './audit-keys.ts';
import { AUDIT_CHECKPOINT_STREAM, auditCheckpointMismatchOverridden } from './audit-events.ts';
import { CheckpointFolder } from './checkpoint-folder.ts';
import { CheckpointRecorder } from './checkpoint-recorder.ts';
import { LogCheckpoints, type CheckpointPublisher } from './log-checkpoints.ts';
import { checkAgainstPublished, type WriteGate } from './log-integrity.ts';
import { LogProofs } from './log-proofs.ts';
import type { IntegrityRecord, LogTreeStore } from './log-tree-store.ts';
import { readModelLease } from './log-tree-follower.ts';
import { LogTreeThread, type TreeFollowing } from './log-tree-thread.ts';
import { logTreeLocation, openLogTreeStore } from './open-log-tree-store.ts';
import { WitnessPublisher } from './witness-publisher.ts';
import { TimestampPublisher } from './timestamp-publisher.ts';

export interface LogTreeRuntime {
  tree: LogTreeStore;
  proofs: LogProofs;
  /** Present in the process with the projector role. */
  checkpoints: LogCheckpoints | undefined;
  follower: TreeFollowing | undefined;
  /** Shut when the log does not extend its last published checkpoint (appends through the gated store fail). */
  gate: WriteGate;
  /** Resolves with the start-up check's finding (at once in a process without the projector role). */
  integrity: Promise<IntegrityRecord | null>;
  stop(): Promise<void>;
}

export interface LogTreeDeps {
  /** The log as stored, without the write gate (the override is recorded through it). */
  events: EventStore;
  /** An EventLog over the ungated store, to record an override. */
  ungatedLog: EventLog;
  /** The service's EventLog (through the write gate): checkpoints are recorded through it for webhooks. */
  log: EventLog;
  readModels: ReadModelStore;
  /** The audit key ring checkpoints are signed with: required with the projector role. */
  ring: AuditKeyRing | undefined;
  clock: Clock;
  logger: Logger;
  metrics?: AuditMetrics;
  projector: boolean;
  /** The gate the service's EventLog appends through (gatedAppends). */
  gate: WriteGate;
  /** How often a process without the projector role reads the start-up check's finding (default 5 s). */
  integrityPollMs?: number;
  /** The follower thread's module, when not the default (LogTreeThreadOptions.workerModule). */
  followerModule?: URL;
}

export async function startLogTree(config: Pick<Config, 'audit' | 'dataDir' | 'readModels' | 'eventStore'>, deps: LogTreeDeps): Promise<LogTreeRuntime> {
  const { logger, clock, metrics } = deps;
  const location = logTreeLocation(config);
  const tree = await openLogTreeStore(location);
  const { gate } = deps;
  const proofs = new LogProofs(tree, deps.events);
  if (!deps.projector) {
    // An API-only process follows the projector process's finding, through the tree store (on MongoDB, from any
    // host): writes are refused while it says the log does not extend its published checkpoint, and taken again
    // once a later start of the projector process found it does (or was overridden).
    const follow = (record: IntegrityRecord | null) => {
      if (record?.state === 'mismatch') gate.refuse(refusalOf(record));
      else gate.open();
      return record;
    };
    const poll = setInterval(() => void tree.integrity().then(follow, () => undefined), deps.integrityPollMs ?? 5000);
    poll.unref();
    const integrity = tree.integrity().then(follow, () => null);
    return { tree, proofs, checkpoints: undefined, follower: undefined, gate, integrity, stop: async () => { clearInterval(poll); await tree.close(); } };
  }

  const ring = deps.ring;
  if (!ring) throw new Error('the log tree of a process with the projector role needs the audit key ring');
  const publishers: CheckpointPublisher[] = [];
  const folder = config.audit.checkpointDir ? new CheckpointFolder(config.audit.checkpointDir, config.dataDir, logger) : undefined;
  if (folder) publishers.push(folder);
  for (const witness of config.audit.witnesses) {
    publishers.push(
      new WitnessPublisher({
        ...witness,
        tree,
        logger,
        onCosigned: (checkpoint, name, line) => folder?.append({ kind: 'cosignature', size: checkpoint.size, witness: name, line }),
        onOutcome: (name, outcome) => metrics?.witnessAnswered(name, outcome),
      }),
    );
  }
  publishers.push(new CheckpointRecorder({ log: deps.log, events: deps.events, tree, clock, logger, intervalMs: config.audit.webhookIntervalMs }));
  if (config.audit.tsaUrl) publishers.push(new TimestampPublisher({ url: config.audit.tsaUrl, tree, logger, onTimestamped: (checkpoint, token) => folder?.append({ kind: 'timestamp', size: checkpoint.size, token }) }));

  let uncoveredSince: number | null = null;
  const checkpoints = new LogCheckpoints({
    tree,
    ring: () => ring,
    origin: config.audit.origin,
    clock,
    logger,
    publishers,
    onCheckpoint: (checkpoint) => {
      metrics?.checkpointed(checkpoint.size, uncoveredSince === null ? null : (performance.now() - uncoveredSince) / 1000);
      if (follower.size <= checkpoint.size) uncoveredSince = null;
    },
  });
  // Until the log is checked against its last published checkpoint, nothing is signed over it.
  if (config.audit.checkpointDir) checkpoints.hold();
  // On a thread of its own: hashing every event never holds up the service's event loop.
  const follower: TreeFollowing = new LogTreeThread({
    eventStore: config.eventStore,
    tree: location,
    logger,
    ...(deps.followerModule ? { workerModule: deps.followerModule } : {}),
    // On the embedded default the DATA_DIR's writer lock makes this process the only follower.
    ...(config.readModels.kind === 'sqlite' && config.eventStore.kind === 'sqlite' ? {} : { lease: readModelLease(deps.readModels, clock) }),
    onGrow: (size) => {
      uncoveredSince ??= performance.now();
      metrics?.treeGrew(size);
      checkpoints.grew(size);
    },
  });

  const treeReaches = async (size: number): Promise<number> => {
    while (follower.size < size && !follower.caughtUp) await new Promise((resolve) => setTimeout(resolve, 50));
    // Caught up once: wait a little more if an append was in flight.
    while (follower.size < size) {
      const before = follower.size;
      await new Promise((resolve) => setTimeout(resolve, 200));
      if (follower.size === before) break;
    }
    return follower.size;
  };

  const integrity = (async (): Promise<IntegrityRecord | null> => {
    if (!config.audit.checkpointDir) return null;
    gate.refuse('the log is being checked against its last published checkpoint; writes are taken once it is (seconds)');
    let record: IntegrityRecord;
    try {
      record = await checkAgainstPublished({ tree, events: deps.events, published: config.audit.checkpointDir, keys: ring.publicKeys(), now: () => clock.now(), treeReaches });
    } catch (error) {
      record = { state: 'mismatch', detail: `the log could not be checked against its last published checkpoint: ${(error as Error).message}`, firstLeaf: null, checkedAt: clock.now().toISOString() };
    }
    if (record.state === 'mismatch' && config.audit.acceptCheckpointMismatch) {
      await deps.ungatedLog.append(AUDIT_CHECKPOINT_STREAM, [{ type: auditCheckpointMismatchOverridden.type, data: { reason: config.audit.acceptCheckpointMismatch, detail: record.detail, firstLeaf: record.firstLeaf, checkedAt: record.checkedAt } }], 'any', {
        actor: { type: 'operator', id: operatorName() },
      });
      logger.error({ detail: record.detail, reason: config.audit.acceptCheckpointMismatch }, 'audit: the log does not extend its last published checkpoint; writes are taken because AUDIT_ACCEPT_CHECKPOINT_MISMATCH is set (recorded in the log)');
      record = { ...record, state: 'overridden' };
    }
    await tree.setIntegrity(record);
    if (record.state === 'mismatch') {
      // Checkpoints stay held: one of the rewritten log must not replace the published one.
      gate.refuse(refusalOf(record));
      logger.error({ detail: record.detail, firstLeaf: record.firstLeaf }, 'audit: the log does not extend its last published checkpoint: writes are refused, reads go on (see docs/audit.md; AUDIT_ACCEPT_CHECKPOINT_MISMATCH overrides, recorded in the log)');
    } else {
      gate.open();
      checkpoints.release();
      logger.info({ detail: record.detail }, 'audit: log checked against its last published checkpoint');
    }
    metrics?.writesRefused(record.state === 'mismatch');
    return record;
  })();

  return {
    tree,
    proofs,
    checkpoints,
    follower,
    gate,
    integrity,
    async stop() {
      await follower.stop();
      await integrity.catch(() => undefined);
      await checkpoints.stop();
      await tree.close();
    },
  };
}

function refusalOf(record: IntegrityRecord): string {
  return `Writes are refused: ${record.detail}. Reads go on. An operator compares the log with its published checkpoints (annals audit verify --against), then restores the log or starts the service with AUDIT_ACCEPT_CHECKPOINT_MISMATCH=<reason> (recorded in the log).`;
}

/** Who started the service: the OS user (the override is theirs). */
function operatorName(): string {
  try {
    return os.userInfo().username || process.env['USER'] || 'operator';
  } catch {
    return process.env['USER'] || 'operator';
  }
}

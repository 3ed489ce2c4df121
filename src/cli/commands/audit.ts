import fs from 'node:fs';
import path from 'node:path';
import { systemClock } from '../../clock.ts';
import { openKeyStore } from '../../key-store/open-key-store.ts';
import { AuditSigner } from '../../audit/audit-signer.ts';
import { verifyLog, type VerifyReport } from '../../audit/chain-verifier.ts';
import { exportAudit, type AuditExportSelection, type AuditExportSummary } from '../../audit/audit-export.ts';
import type { LogTreeStore, StoredCheckpoint } from '../../audit/log-tree-store.ts';
import { anchorUnlinkedEvents } from '../../audit/legacy-anchor.ts';
import { openAuditKeyRing, openKeyChainFile, refuseMovingBack } from '../../audit/open-audit-key-ring.ts';
import { keyStoreAuditKey, keyStoreKeyGenesis } from '../../audit/key-store-audit-key-ring.ts';
import { KeyChain } from '../../audit/key-chain.ts';
import type { OpenedAuditKeyRing } from '../../audit/chained-audit-key-ring.ts';
import { rotateAuditKey } from '../../audit/rotate-audit-key.ts';
import { recordKeyAnnouncements } from '../../audit/key-announcement-log.ts';
import { auditKeyListing } from '../../audit/audit-key-listing.ts';
import { auditLogOrigin } from '../../audit/log-origin.ts';
import type { Logger } from 'pino';
import type { EventStore } from '../../event-store/event-store.ts';
import { RebuildProgressBar } from '../rebuild-progress-bar.ts';
import { note, parseCommandArgs, printResult, required, UsageError, withStores, type CommandGroup, type CommandOptions } from '../cli-support.ts';
import type { KeyStore } from '../../key-store/key-store.ts';
import { loadConfig, type Config } from '../../config/config.ts';
import { BACKDATING_TOLERANCE_MS, LeafCollector, checkLeavesAgainst, type CheckpointToCheck, type TreeReport } from '../../audit/tree-verifier.ts';
import { CHECKPOINT_FILE, CheckpointFolder, publishedCheckpoints } from '../../audit/checkpoint-folder.ts';
import { checkpointOfNote, LogCheckpoints, logOrigin, logVerifierKeys } from '../../audit/log-checkpoints.ts';
import { logTreeLocation, openExistingLogTreeStore, openLogTreeStore } from '../../audit/open-log-tree-store.ts';
import { LogTreeFollower } from '../../audit/log-tree-follower.ts';
import { checkpointView, consistencyPath, LogProofs, ProofUnavailableError } from '../../audit/log-proofs.ts';
import { diffAuditExports } from '../../audit/audit-export-diff.ts';
import { sqliteLeaves, type SqliteLeaves } from '../../audit/sqlite-leaf-workers.ts';
import { encodePosition } from '../../event-store/position.ts';
import { COMMAND_USAGE } from '../usage.ts';

const USAGE = COMMAND_USAGE.audit;

/**
 * The tamper-evident log's operator commands (see docs/audit.md). Progress on stderr; with --json the result
 * as one JSON document on stdout. verify exits 1 when it finds a break; export writes through a temporary
 * file renamed when complete.
 */
export const auditCommands: CommandGroup = {
  name: 'audit',
  usage: USAGE,
  async run(args, options) {
    const { values, positionals } = parseCommandArgs(
      args,
      { project: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, entry: { type: 'string' }, out: { type: 'string' }, 'previous-key-file': { type: 'string' }, 'public-key': { type: 'string' }, consistency: { type: 'string' }, against: { type: 'string' }, event: { type: 'string' }, size: { type: 'string' } },
      USAGE,
    );
    const [command, ...rest] = positionals;
    switch (command) {
      case 'verify':
        return verify(values.project, values.against, options);
      case 'checkpoint':
        return checkpointNow();
      case 'proof':
        if (rest[0] === 'inclusion') return proveInclusion(required(values.event, '--event', USAGE), values.size === undefined ? undefined : size(values.size, '--size'));
        if (rest[0] === 'consistency') return proveConsistency(size(required(values.from, '--from', USAGE), '--from'), values.to === undefined ? undefined : size(values.to, '--to'));
        throw new UsageError('audit proof needs inclusion or consistency', USAGE);
      case 'log-key':
        return logKey();
      case 'diff':
        if (rest.length !== 2) throw new UsageError('audit diff needs two exports: the earlier, then the later', USAGE);
        return diffExports(rest[0]!, rest[1]!, { keyList: values['public-key'], consistency: values.consistency });
      case 'export':
        return exportBundle({ project: required(values.project, '--project', USAGE), selection: exportSelection(values), out: required(values.out, '--out', USAGE) }, options);
      case 'public-key':
        return publicKey();
      case 'rotate-key':
        return rotateKey(values['previous-key-file']);
      case 'anchor':
        return anchor(options);
      default:
        throw new UsageError(command ? `unknown audit command: ${command}` : 'audit needs a command: verify, checkpoint, proof, log-key, diff, export, public-key, rotate-key or anchor', USAGE);
    }
  },
};

async function verify(projectId: string | undefined, against: string | undefined, options: CommandOptions): Promise<number> {
  return withStores(async ({ stores, config }) => {
    const chain = await withKeyStore(config, (store) => existingKeyChain(config, store, stores.events));
    const keys = chain?.publicKeys() ?? null;
    const target = await checkpointToCheck(config, against);
    const bar = options.json ? undefined : new RebuildProgressBar('verify', process.stderr);
    const leaves = new LeafCollector(target?.checkpoint.signedAt ? { size: checkpointOfNote(target.checkpoint.note).size, signedAt: target.checkpoint.signedAt } : undefined);
    let report: VerifyReport;
    try {
      if (target && config.eventStore.kind === 'sqlite') {
        // The embedded log: its leaves hashed on worker threads from the stored frames, which also tell whether any
        // event carries a chain link or an anchor. A log without either (every log begun since the tree) needs no
        // pass through the port; one with them gets the chain pass as before.
        const started = performance.now();
        const checkpoint = checkpointOfNote(target.checkpoint.note);
        const computed = await sqliteLeaves(config.eventStore.file, {
          ...(target.checkpoint.signedAt ? { checkAfter: { size: checkpoint.size, beforeMs: Date.parse(target.checkpoint.signedAt) - BACKDATING_TOLERANCE_MS } } : {}),
          onProgress: (events) => bar?.update({ events, fraction: checkpoint.size > 0 ? Math.min(1, events / checkpoint.size) : 1, checkpoint: null, head: null }),
        });
        leaves.setAll(computed.hashes, computed.count, computed.unreadable.map((row) => row.index));
        leaves.backdated.push(...computed.backdated);
        if (computed.chainedEvents === 0 && computed.anchors === 0) {
          report = unchainedReport(computed, projectId, performance.now() - started);
        } else {
          report = await verifyLog(stores.events, { projectId, keys, onProgress: (p) => bar?.update({ ...p, checkpoint: null, head: null }) });
        }
      } else {
        // Through the port (EventStoreDB): the leaves in the chain pass itself.
        report = await verifyLog(stores.events, { projectId, keys, onProgress: (p) => bar?.update({ ...p, checkpoint: null, head: null }), ...(target ? { onLeaf: (hash: Uint8Array | null, event: Parameters<LeafCollector['checkEvent']>[1]) => leaves.addEvent(hash, event) } : {}) });
      }
      bar?.finish(report.chainedEvents + report.unlinkedEvents);
    } finally {
      bar?.stop();
    }
    let tree: TreeReport | null = null;
    if (target) {
      const treeStore = await openExistingLogTreeStore(logTreeLocation(config));
      try {
        tree = await checkLeavesAgainst(leaves, target.checkpoint, { keys: keys ?? [], witnessVkeys: config.audit.witnesses.map((w) => w.vkey), earlier: target.earlier, ...(treeStore ? { tree: treeStore } : {}) });
      } finally {
        await treeStore?.close();
      }
    }
    if (report.verified) {
      note(`audit verify: every chain verifies: ${report.chainedEvents} chained events in ${report.streams} streams, ${report.unlinkedEvents} events without a link (${report.anchors.length} anchor(s)) (${report.eventsPerSecond} events/s)`);
    } else {
      const first = report.firstBreak!;
      note(`audit verify: BROKEN: ${report.breaks.length}${report.moreBreaks ? '+' : ''} break(s); the first: ${first.reason} at stream ${first.streamId || '(log)'} revision ${first.revision || '-'}, event ${first.eventId}: ${first.detail}`);
    }
    if (tree) {
      const c = tree.checkpoint;
      if (tree.verified) note(`audit verify: the log (${tree.logEvents} events) extends the checkpoint of size ${c.size} from ${c.source}, signed by key ${c.signedBy}${c.cosignatures.length ? ` and cosigned by ${c.cosignatures.map((w) => w.witness).join(', ')}` : ''}`);
      else if (tree.extendsCheckpoint && tree.backdated.length > 0) note(`audit verify: the log does NOT extend the checkpoint of size ${c.size} from ${c.source} honestly: event ${tree.backdated[0]!.eventId} (leaf ${tree.backdated[0]!.leaf}) was written after it but says it occurred at ${tree.backdated[0]!.occurredAt}, before the checkpoint was published: backdated`);
      else if (!tree.extendsCheckpoint) note(`audit verify: the log does NOT extend the checkpoint of size ${c.size} from ${c.source}: ${tree.firstDifference?.detail ?? 'its root differs'}`);
      else note(`audit verify: the log extends the checkpoint of size ${c.size} from ${c.source}, but ${c.signedBy === null ? 'its signature verifies with no audit key of this service' : `a cosignature does not verify (${c.cosignatures.filter((w) => !w.verified).map((w) => w.witness).join(', ')})`}`);
    }
    printResult(tree ? { ...report, verified: report.verified && tree.verified, chainsVerified: report.verified, tree } : report);
    return report.verified && (tree?.verified ?? true) ? 0 : 1;
  });
}

/** The checkpoint --against names (a published file, a note file, witness:NAME), or the last one published in AUDIT_CHECKPOINT_DIR. */
async function checkpointToCheck(config: Config, against: string | undefined): Promise<{ checkpoint: CheckpointToCheck; earlier: string[] } | null> {
  const published = config.audit.checkpointDir && fs.existsSync(path.join(config.audit.checkpointDir, CHECKPOINT_FILE)) ? publishedCheckpoints(config.audit.checkpointDir) : [];
  const earlierOf = (list: ReadonlyArray<{ note: string }>) => list.map((c) => c.note);
  if (against === undefined) {
    const last = published.at(-1);
    if (last) return { checkpoint: { note: last.note, signedAt: last.signedAt, source: path.join(config.audit.checkpointDir!, CHECKPOINT_FILE), cosignatures: last.cosignatures }, earlier: earlierOf(published) };
    // Nothing published: the latest checkpoint the tree store kept (it shows damage and outsiders' edits; against
    // an insider only a checkpoint held outside DATA_DIR counts).
    const store = await openExistingLogTreeStore(logTreeLocation(config));
    if (!store) return null;
    try {
      const latest = await store.latestCheckpoint();
      return latest ? { checkpoint: { note: latest.note, signedAt: latest.signedAt, source: 'the log tree store in DATA_DIR (nothing published: set AUDIT_CHECKPOINT_DIR)' }, earlier: [] } : null;
    } finally {
      await store.close();
    }
  }
  if (against.startsWith('witness:')) {
    const name = against.slice('witness:'.length);
    if (!config.audit.witnesses.some((w) => w.vkey.startsWith(`${name}+`))) throw new UsageError(`no witness named ${name} in AUDIT_WITNESSES`, USAGE);
    let candidates: Array<{ note: string; cosignatures: Record<string, string> }> = published;
    if (candidates.length === 0) {
      const store = await openLogTreeStore(logTreeLocation(config));
      try {
        const latest = await store.latestCheckpoint();
        candidates = latest ? [latest] : [];
      } finally {
        await store.close();
      }
    }
    const cosigned = [...candidates].reverse().find((c) => c.cosignatures[name] !== undefined);
    if (!cosigned) throw new UsageError(`no checkpoint cosigned by witness ${name} is published yet`, USAGE);
    return { checkpoint: { note: cosigned.note, source: `witness ${name}`, cosignatures: { [name]: cosigned.cosignatures[name]! }, ...('signedAt' in cosigned ? { signedAt: String(cosigned.signedAt) } : {}) }, earlier: earlierOf(published) };
  }
  if (!fs.existsSync(against)) throw new UsageError(`no checkpoint file ${against}`, USAGE);
  const text = fs.readFileSync(against, 'utf8');
  if (text.trimStart().startsWith('{')) {
    const list = publishedCheckpoints(against);
    const last = list.at(-1);
    if (!last) throw new UsageError(`${against} holds no checkpoint`, USAGE);
    return { checkpoint: { note: last.note, signedAt: last.signedAt, source: against, cosignatures: last.cosignatures }, earlier: earlierOf([...list, ...published]) };
  }
  try {
    checkpointOfNote(text);
  } catch (error) {
    throw new UsageError(`${against} is not a signed checkpoint: ${(error as Error).message}`, USAGE);
  }
  return { checkpoint: { note: text, source: against }, earlier: earlierOf(published) };
}

/** Brings the tree up to the log (the service's follower does it continuously), then signs a checkpoint. */
async function checkpointNow(): Promise<number> {
  return withStores(async ({ stores, config, logger }) => {
    const tree = await openLogTreeStore(logTreeLocation(config));
    try {
      const signed = await withAuditKeyRing(config, logger, stores.events, (ring) => signCheckpointNow({ tree, events: stores.events, config, logger, ring }));
      if (!signed.checkpoint) throw new UsageError('the log is empty: nothing to checkpoint', USAGE);
      note(`audit checkpoint: size ${signed.checkpoint.size}${signed.publishedTo ? `, published to ${signed.publishedTo}` : ''}`);
      printResult(checkpointView(signed.checkpoint));
      return 0;
    } finally {
      await tree.close();
    }
  });
}

/**
 * Brings the tree up to the log, then signs a checkpoint of it and publishes it to AUDIT_CHECKPOINT_DIR, as the
 * service would; refused while the service's start-up check found the log does not extend its last published
 * checkpoint (a checkpoint of a rewritten log must not be published).
 */
async function signCheckpointNow(args: { tree: LogTreeStore; events: EventStore; config: Config; logger: Logger; ring: OpenedAuditKeyRing }): Promise<{ checkpoint: StoredCheckpoint | null; publishedTo: string | null }> {
  const { tree, events, config, logger, ring } = args;
  const integrity = await tree.integrity();
  if (integrity?.state === 'mismatch') throw new UsageError(`no checkpoint is signed: ${integrity.detail} (found at ${integrity.checkedAt}; see annals audit verify --against, and AUDIT_ACCEPT_CHECKPOINT_MISMATCH)`, USAGE);
  const follower = new LogTreeFollower({ events, tree, logger, stopWhenCaughtUp: true, retryMs: 200 });
  await follower.run();
  const folder = config.audit.checkpointDir ? new CheckpointFolder(config.audit.checkpointDir, config.dataDir, logger) : undefined;
  const checkpoints = new LogCheckpoints({ tree, ring: () => ring, origin: config.audit.origin, clock: systemClock, logger, publishers: folder ? [folder] : [] });
  try {
    return { checkpoint: await checkpoints.checkpoint(), publishedTo: folder?.file ?? null };
  } finally {
    await checkpoints.stop();
  }
}

async function withProofs<T>(work: (proofs: LogProofs) => Promise<T>): Promise<T> {
  return withStores(async ({ stores, config }) => {
    const tree = await openLogTreeStore(logTreeLocation(config));
    try {
      return await work(new LogProofs(tree, stores.events));
    } catch (error) {
      if (error instanceof ProofUnavailableError) throw new UsageError(error.message, USAGE);
      throw error;
    } finally {
      await tree.close();
    }
  });
}

async function proveInclusion(eventId: string, treeSize: number | undefined): Promise<number> {
  return withProofs(async (proofs) => {
    const proof = await proofs.inclusion(eventId, treeSize === undefined ? {} : { size: treeSize });
    note(`audit proof: event ${eventId} is leaf ${proof.leafIndex} of the tree of size ${proof.treeSize} (${proof.proof.length} hashes)`);
    printResult(proof);
    return 0;
  });
}

async function proveConsistency(from: number, to: number | undefined): Promise<number> {
  return withProofs(async (proofs) => {
    const proof = await proofs.consistency(from, to);
    note(`audit proof: the tree of size ${proof.fromSize} is a prefix of the tree of size ${proof.toSize} (${proof.proof.length} hashes)`);
    printResult(proof);
    return 0;
  });
}

async function logKey(): Promise<number> {
  return withStores(async ({ config, logger, stores }) => {
    const chain = await withKeyStore(config, async (store) => (await existingKeyChain(config, store, stores.events)) ?? (await withRing(config, store, logger, stores.events, async (ring) => ring.chain())));
    const origin = logOrigin(chain, config.audit.origin);
    const keys = logVerifierKeys(chain, origin);
    note(`audit log key: checkpoints are signed under origin ${origin}; configure witnesses with: ${keys.at(-1)!.vkey}`);
    printResult({ origin, keys });
    return 0;
  });
}

/**
 * Export B extends export A. Signatures are checked with the auditor's key list when given (--public-key), else
 * with the bundles' own keys (said so). The consistency proof between their checkpoints comes from
 * --consistency, else from the log tree where this runs (the service's configuration), and is checked against
 * both signed roots; it is printed in the form `tlog-verifier consistency` reads.
 */
async function diffExports(earlier: string, later: string, args: { keyList: string | undefined; consistency: string | undefined }): Promise<number> {
  for (const file of [earlier, later, args.keyList, args.consistency]) if (file !== undefined && !fs.existsSync(file)) throw new UsageError(`no file ${file}`, USAGE);
  const keyList = args.keyList === undefined ? undefined : readJson(args.keyList, '--public-key');
  const given = args.consistency === undefined ? undefined : (readJson(args.consistency, '--consistency') as { fromSize?: unknown; toSize?: unknown; proof?: unknown });
  let tree: LogTreeStore | undefined;
  try {
    const consistencyProof = async (fromSize: number, toSize: number): Promise<string[] | null> => {
      if (given) return given.fromSize === fromSize && given.toSize === toSize && Array.isArray(given.proof) ? (given.proof as string[]) : null;
      tree ??= await logTreeHere();
      if (!tree || (await tree.state()).size < toSize) return null;
      return (await consistencyPath(tree, fromSize, toSize)).map((hash) => Buffer.from(hash).toString('base64'));
    };
    const result = await diffAuditExports(earlier, later, { ...(keyList === undefined ? {} : { keyList }), consistencyProof });
    const keys = result.keys === 'key list' ? `the keys of ${args.keyList}` : 'the keys the bundles carry (give --public-key to check who signed them)';
    if (result.extends) note(`audit diff: ${later} extends ${earlier}${result.consistency ? `: its checkpoint (size ${result.consistency.toSize}) extends ${earlier}'s (size ${result.consistency.fromSize})` : ''}; ${result.commonEvents} events of ${earlier} are in ${later} unchanged, ${result.newEvents} events added; signatures checked with ${keys}`);
    else note(`audit diff: ${later} does NOT extend ${earlier}: ${result.problems[0]?.detail ?? ''} (signatures checked with ${keys})`);
    printResult(result);
    return result.extends ? 0 : 1;
  } finally {
    await tree?.close();
  }
}

/** The log tree of the configured service, when this runs beside it (its tree store exists); else undefined. */
async function logTreeHere(): Promise<LogTreeStore | undefined> {
  let config: Config;
  try {
    config = loadConfig();
  } catch {
    return undefined;
  }
  return openExistingLogTreeStore(logTreeLocation(config));
}

function readJson(file: string, flag: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`${flag} ${file} is not JSON: ${(error as Error).message}`, USAGE);
  }
}

/** The chain report of a log with no link and no anchor (nothing to recompute but what its frames hold). */
function unchainedReport(computed: SqliteLeaves, projectId: string | undefined, ms: number): VerifyReport {
  const breaks = computed.unreadable.slice(0, 100).map((row) => ({ reason: 'unreadable' as const, streamId: row.streamId, revision: row.revision, eventId: row.eventId, type: row.type, position: encodePosition(BigInt(row.position)), detail: `the stored event cannot be read back: ${row.reason}` }));
  const durationMs = Math.round(ms);
  return {
    verified: breaks.length === 0,
    chainedEvents: 0,
    unlinkedEvents: computed.count - computed.unreadable.length,
    streams: computed.streams,
    anchors: [],
    breaks,
    moreBreaks: computed.unreadable.length > breaks.length,
    firstBreak: breaks[0] ?? null,
    projectId: projectId ?? null,
    durationMs,
    eventsPerSecond: durationMs > 0 ? Math.round((computed.count * 1000) / durationMs) : computed.count,
  };
}

function size(value: string, flag: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new UsageError(`${flag} must be a tree size (a whole number), got ${JSON.stringify(value)}`, USAGE);
  return Number(value);
}

/** What an export holds: --from and --to (a period), or --entry (one entry's whole history). */
function exportSelection(values: { from?: string | undefined; to?: string | undefined; entry?: string | undefined }): AuditExportSelection {
  if (values.entry !== undefined) {
    if (values.from !== undefined || values.to !== undefined) throw new UsageError('--entry exports the entry\'s whole history: give --entry, or --from and --to, not both', USAGE);
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(values.entry)) throw new UsageError(`--entry must be an entry id (a UUID), got ${JSON.stringify(values.entry)}`, USAGE);
    return { kind: 'entry', entryId: values.entry.toLowerCase() };
  }
  const from = instant(required(values.from, '--from', USAGE), '--from');
  const to = instant(required(values.to, '--to', USAGE), '--to');
  if (Date.parse(from) >= Date.parse(to)) throw new UsageError('--from must be before --to', USAGE);
  return { kind: 'period', from, to };
}

async function exportBundle(args: { project: string; selection: AuditExportSelection; out: string }, options: CommandOptions): Promise<number> {
  const file = path.resolve(args.out);
  if (fs.existsSync(file)) throw new UsageError(`${args.out} exists already: export to a new file`, USAGE);
  return withStores(async ({ stores, config, logger }) => {
    const tree = await openLogTreeStore(logTreeLocation(config));
    let summary: AuditExportSummary;
    try {
      summary = await withAuditKeyRing(config, logger, stores.events, async (ring) => {
        const bar = options.json ? undefined : new RebuildProgressBar('export', process.stderr);
        try {
          // The checkpoint the export belongs to: the tree brought up to the log and signed now.
          const sign = async () => (await signCheckpointNow({ tree, events: stores.events, config, logger, ring })).checkpoint;
          const result = await exportAudit(stores.events, ring, { tree, sign, waitMs: 0 }, { projectId: args.project, selection: args.selection, file, now: () => systemClock.now(), onProgress: (p) => bar?.update({ ...p, checkpoint: null, head: null }) });
          bar?.finish(result.events + result.actorEvents);
          return result;
        } finally {
          bar?.stop();
        }
      });
    } finally {
      await tree.close();
    }
    const what = summary.selection.kind === 'entry' ? `entry ${summary.selection.entryId}'s history` : `[${summary.selection.from}, ${summary.selection.to})`;
    note(`audit export: ${summary.events} events of ${what} in ${summary.streams} streams of project ${summary.projectId}, with ${summary.actorEvents} events of the actors they name, read to log position ${summary.through ?? '(empty log)'} (the checkpoint of size ${summary.checkpointSize}), written to ${args.out}, signed by key ${summary.keyId}`);
    printResult(summary);
    return 0;
  });
}

/**
 * Every key with its validity and the key chain. The first time, the chain is made (the key store's key
 * created, or the configured key's chain file), so that auditors can be given it before anything is signed.
 */
async function publicKey(): Promise<number> {
  return withStores(async ({ config, logger, stores }) => {
    const chain = await withKeyStore(config, async (keys) => (await existingKeyChain(config, keys, stores.events)) ?? (await withRing(config, keys, logger, stores.events, async (ring) => ring.chain())));
    const listing = auditKeyListing(chain, auditLogOrigin(config, chain.publicKeys()), systemClock.now());
    for (const key of listing.keys) note(`audit key ${key.keyId} (${key.status}): valid from ${key.validFrom}${key.validUntil ? ` until ${key.validUntil}` : ''}; ${key.vkey}`);
    note('give this list to auditors, again after each rotation (node scripts/audit/verify-audit-export.mjs BUNDLE --public-key KEYS.json)');
    printResult(listing);
    return 0;
  });
}

/** Announces the configured key as the current key's successor, records it in the log, and waits until it signs. */
async function rotateKey(previousKeyFile: string | undefined): Promise<number> {
  return withStores(async ({ config, log }) => {
    const result = await withKeyStore(config, (keys) => rotateAuditKey({ config, keyStore: keys, clock: systemClock, previousKeyFile, events: log.store }));
    const recorded = await recordKeyAnnouncements(log, result.chain);
    const chainFile = result.chainFile;
    if (result.outcome === 'current') {
      note(`audit rotate-key: key ${result.keyId} is the current key of ${chainFile} already (since ${result.validFrom}): nothing to announce`);
    } else if (result.outcome === 'created') {
      note(`audit rotate-key: created ${chainFile}: key ${result.keyId} signs from ${result.validFrom}`);
    } else {
      const wait = Date.parse(result.validFrom) - systemClock.now().getTime();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      note(`audit rotate-key: key ${result.keyId} signs from ${result.validFrom}; key ${result.previousKeyId} is retired (what it signed still verifies). Processes that hold the new key (the same key file path, the same token label) took it up; restart the others with this configuration. Give auditors the new list: annals audit public-key --json`);
    }
    printResult({ outcome: result.outcome, keyId: result.keyId, validFrom: result.validFrom, ...(result.outcome === 'rotated' ? { previousKeyId: result.previousKeyId } : {}), chainFile, recordedInLog: recorded, keys: result.chain.publicKeys().map(({ keyId, validFrom, validUntil }) => ({ keyId, validFrom, validUntil })) });
    return 0;
  });
}

async function anchor(options: CommandOptions): Promise<number> {
  return withStores(async ({ config, log, logger }) => {
    const result = await withAuditKeyRing(config, logger, log.store, (ring) =>
      anchorUnlinkedEvents({ log, signer: new AuditSigner(ring, systemClock), mode: 'after-last', onProgress: options.json ? undefined : (events) => note(`audit anchor: ${events} events read`) }),
    );
    note(result.anchored ? `audit anchor: ${result.coveredEvents} events without a chain link anchored (${result.digest})` : `audit anchor: nothing anchored: ${result.reason}`);
    printResult(result);
    return 0;
  });
}

/**
 * The key chain as it stands, without opening a key (no PIN, no key file read): the chain file, or the key
 * store's key's own announcement; null when neither exists yet.
 */
async function existingKeyChain(config: Config, keys: KeyStore, events: EventStore): Promise<KeyChain | null> {
  if (config.audit.key.kind !== 'key-store') return openKeyChainFile(config).readIfExists();
  await refuseMovingBack(events);
  const stored = await keyStoreAuditKey(keys);
  return stored ? KeyChain.verify([await keyStoreKeyGenesis(stored)]) : null;
}

/** The ring the configuration names (see openAuditKeyRing), with the key store it may need, closed after `work`. */
async function withAuditKeyRing<T>(config: Config, logger: Logger, events: EventStore, work: (ring: OpenedAuditKeyRing) => Promise<T>): Promise<T> {
  return withKeyStore(config, (keys) => withRing(config, keys, logger, events, work));
}

async function withRing<T>(config: Config, keys: KeyStore, logger: Logger, events: EventStore, work: (ring: OpenedAuditKeyRing) => Promise<T>): Promise<T> {
  const ring = await openAuditKeyRing(config, keys, systemClock, { logger, events });
  try {
    return await work(ring);
  } finally {
    await ring.close();
  }
}

async function withKeyStore<T>(config: Config, work: (keys: KeyStore) => Promise<T>): Promise<T> {
  const keys = await openKeyStore(config);
  try {
    return await work(keys);
  } finally {
    await keys.close();
  }
}

function instant(value: string, flag: string): string {
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/.test(value) || Number.isNaN(ms)) {
    throw new UsageError(`${flag} must be an ISO 8601 date or instant with an offset (2026-11-01 or 2026-11-01T00:00:00Z), got ${JSON.stringify(value)}`, USAGE);
  }
  return new Date(ms).toISOString();
}

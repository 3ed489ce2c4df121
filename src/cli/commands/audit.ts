import fs from 'node:fs';
import path from 'node:path';
import { systemClock } from '../../clock.ts';
import { openKeyStore } from '../../key-store/open-key-store.ts';
import { AuditSigner } from '../../audit/audit-signer.ts';
import { verifyLog } from '../../audit/chain-verifier.ts';
import { exportAudit } from '../../audit/audit-export.ts';
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
import type { Config } from '../../config/config.ts';

const USAGE = `  annals audit verify [--project ID] [--json]   recompute every hash chain and check the signed anchors; exit 1 on a break
  annals audit export --project ID --from T --to T --out FILE.ndjson [--json]
                                                 a project's events of [from, to) as a signed bundle (verify it with scripts/audit/verify-audit-export.mjs)
  annals audit public-key [--json]              every audit key with its validity (JWK, PEM, signed-note vkey) and the key chain: give it to auditors
  annals audit rotate-key [--previous-key-file FILE] [--json]
                                                 announce the configured key (AUDIT_KEY_FILE or the PKCS#11 key) as the successor of the current one
  annals audit anchor [--json]                  sign an anchor over events without a chain link written since the last anchor`;

/**
 * The tamper-evident log's operator commands (see docs/audit.md). Progress on stderr; with --json the result
 * as one JSON document on stdout. verify exits 1 when it finds a break; export writes through a temporary
 * file renamed when complete.
 */
export const auditCommands: CommandGroup = {
  name: 'audit',
  usage: USAGE,
  async run(args, options) {
    const { values, positionals } = parseCommandArgs(args, { project: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, out: { type: 'string' }, 'previous-key-file': { type: 'string' } }, USAGE);
    const [command] = positionals;
    switch (command) {
      case 'verify':
        return verify(values.project, options);
      case 'export':
        return exportBundle({ project: required(values.project, '--project', USAGE), from: instant(required(values.from, '--from', USAGE), '--from'), to: instant(required(values.to, '--to', USAGE), '--to'), out: required(values.out, '--out', USAGE) }, options);
      case 'public-key':
        return publicKey();
      case 'rotate-key':
        return rotateKey(values['previous-key-file']);
      case 'anchor':
        return anchor(options);
      default:
        throw new UsageError(command ? `unknown audit command: ${command}` : 'audit needs a command: verify, export, public-key, rotate-key or anchor', USAGE);
    }
  },
};

async function verify(projectId: string | undefined, options: CommandOptions): Promise<number> {
  return withStores(async ({ stores, config }) => {
    const chain = await withKeyStore(config, (keys) => existingKeyChain(config, keys, stores.events));
    const bar = options.json ? undefined : new RebuildProgressBar('verify', process.stderr);
    let report;
    try {
      report = await verifyLog(stores.events, { projectId, keys: chain?.publicKeys() ?? null, onProgress: (p) => bar?.update({ ...p, checkpoint: null, head: null }) });
      bar?.finish(report.chainedEvents + report.unlinkedEvents);
    } finally {
      bar?.stop();
    }
    if (report.verified) {
      note(`audit verify: every chain verifies: ${report.chainedEvents} chained events in ${report.streams} streams, ${report.unlinkedEvents} events written before chains under ${report.anchors.length} anchor(s) (${report.eventsPerSecond} events/s)`);
    } else {
      const first = report.firstBreak!;
      note(`audit verify: BROKEN: ${report.breaks.length}${report.moreBreaks ? '+' : ''} break(s); the first: ${first.reason} at stream ${first.streamId || '(log)'} revision ${first.revision || '-'}, event ${first.eventId}: ${first.detail}`);
    }
    printResult(report);
    return report.verified ? 0 : 1;
  });
}

async function exportBundle(args: { project: string; from: string; to: string; out: string }, options: CommandOptions): Promise<number> {
  if (Date.parse(args.from) >= Date.parse(args.to)) throw new UsageError('--from must be before --to', USAGE);
  const file = path.resolve(args.out);
  if (fs.existsSync(file)) throw new UsageError(`${args.out} exists already: export to a new file`, USAGE);
  return withStores(async ({ stores, config, logger }) => {
    const summary = await withAuditKeyRing(config, logger, stores.events, async (ring) => {
      const bar = options.json ? undefined : new RebuildProgressBar('export', process.stderr);
      try {
        const result = await exportAudit(stores.events, ring, { projectId: args.project, from: args.from, to: args.to, file, now: () => systemClock.now(), onProgress: (p) => bar?.update({ ...p, checkpoint: null, head: null }) });
        bar?.finish(result.events);
        return result;
      } finally {
        bar?.stop();
      }
    });
    note(`audit export: ${summary.events} events of ${summary.streams} streams of project ${summary.projectId} written to ${args.out}, signed by key ${summary.keyId}`);
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

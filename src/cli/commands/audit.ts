import fs from 'node:fs';
import path from 'node:path';
import { systemClock } from '../../clock.ts';
import { openKeyStore } from '../../key-store/open-key-store.ts';
import { AuditSigner, auditPublicKey } from '../../audit/audit-signer.ts';
import { verifyLog } from '../../audit/chain-verifier.ts';
import { exportAudit, type AuditExportSelection } from '../../audit/audit-export.ts';
import { anchorUnlinkedEvents } from '../../audit/legacy-anchor.ts';
import { RebuildProgressBar } from '../rebuild-progress-bar.ts';
import { note, parseCommandArgs, printResult, required, UsageError, withStores, type CommandGroup, type CommandOptions } from '../cli-support.ts';
import type { KeyStore } from '../../key-store/key-store.ts';
import type { Config } from '../../config/config.ts';

const USAGE = `  annals audit verify [--project ID] [--json]   recompute every hash chain and check the signed anchors; exit 1 on a break
  annals audit export --project ID --from T --to T --out FILE.ndjson [--json]
  annals audit export --project ID --entry ENTRY_ID --out FILE.ndjson [--json]
                                                 a signed bundle of a project's events of [from, to), or of one entry's whole history,
                                                 with the actors they name (verify it with scripts/audit/verify-audit-export.mjs)
  annals audit public-key [--json]              the audit public key (JWK) auditors verify exports with
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
    const { values, positionals } = parseCommandArgs(args, { project: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, entry: { type: 'string' }, out: { type: 'string' } }, USAGE);
    const [command] = positionals;
    switch (command) {
      case 'verify':
        return verify(values.project, options);
      case 'export':
        return exportBundle({ project: required(values.project, '--project', USAGE), selection: exportSelection(values), out: required(values.out, '--out', USAGE) }, options);
      case 'public-key':
        return publicKey();
      case 'anchor':
        return anchor(options);
      default:
        throw new UsageError(command ? `unknown audit command: ${command}` : 'audit needs a command: verify, export, public-key or anchor', USAGE);
    }
  },
};

async function verify(projectId: string | undefined, options: CommandOptions): Promise<number> {
  return withStores(async ({ stores, config }) => {
    const key = await withKeyStore(config, (keys) => auditPublicKey(keys));
    const bar = options.json ? undefined : new RebuildProgressBar('verify', process.stderr);
    let report;
    try {
      report = await verifyLog(stores.events, { projectId, publicKey: key, onProgress: (p) => bar?.update({ ...p, checkpoint: null, head: null }) });
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
  return withStores(async ({ stores, config }) => {
    const summary = await withKeyStore(config, async (keys) => {
      const signer = await AuditSigner.open(keys, systemClock);
      const bar = options.json ? undefined : new RebuildProgressBar('export', process.stderr);
      try {
        const result = await exportAudit(stores.events, signer, { projectId: args.project, selection: args.selection, file, now: () => systemClock.now(), onProgress: (p) => bar?.update({ ...p, checkpoint: null, head: null }) });
        bar?.finish(result.events + result.actorEvents);
        return result;
      } finally {
        bar?.stop();
      }
    });
    const what = summary.selection.kind === 'entry' ? `entry ${summary.selection.entryId}'s history` : `[${summary.selection.from}, ${summary.selection.to})`;
    note(`audit export: ${summary.events} events of ${what} in ${summary.streams} streams of project ${summary.projectId}, with ${summary.actorEvents} events of the actors they name, read to log position ${summary.through ?? '(empty log)'}, written to ${args.out}, signed by key ${summary.keyId}`);
    printResult(summary);
    return 0;
  });
}

/** The public key, creating the key pair the first time (so it can be handed to auditors before any export). */
async function publicKey(): Promise<number> {
  return withStores(async ({ config }) => {
    const signer = await withKeyStore(config, (keys) => AuditSigner.open(keys, systemClock));
    note(`audit public key ${signer.publicKey.keyId}: give it to auditors to verify exports with (node scripts/audit/verify-audit-export.mjs BUNDLE --public-key KEY.json)`);
    printResult(signer.publicKey);
    return 0;
  });
}

async function anchor(options: CommandOptions): Promise<number> {
  return withStores(async ({ config, log }) => {
    const result = await withKeyStore(config, async (keys) => {
      const signer = await AuditSigner.open(keys, systemClock);
      return anchorUnlinkedEvents({ log, signer, clock: systemClock, mode: 'after-last', onProgress: options.json ? undefined : (events) => note(`audit anchor: ${events} events read`) });
    });
    note(result.anchored ? `audit anchor: ${result.coveredEvents} events without a chain link anchored (${result.digest})` : `audit anchor: nothing anchored: ${result.reason}`);
    printResult(result);
    return 0;
  });
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

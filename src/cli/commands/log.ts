import fs from 'node:fs';
import path from 'node:path';
import { systemClock } from '../../clock.ts';
import { digestStore, exportLog, fileEvents, ImportTargetError, importLog, outlineSummary } from '../../event-store/log-transfer.ts';
import { copySubmissionKeys, submissionIdOf, type KeyCopyResult } from '../../key-store/copy-submission-keys.ts';
import { SqliteKeyStore } from '../../key-store/sqlite-key-store.ts';
import { openKeyStore } from '../../key-store/open-key-store.ts';
import type { Config } from '../../config/config.ts';
import { LogFileError } from '../../event-store/log-file.ts';
import { EventTooLargeError } from '../../event-store/errors.ts';
import { OperationError } from '../../projection-engine/projection-operations.ts';
import { RebuildProgressBar } from '../rebuild-progress-bar.ts';
import { BlobLocationError, parseBlobLocation, type BlobLocation } from '../../blobs/blob-location.ts';
import { BlobStoreUnavailableError } from '../../blobs/blob-store.ts';
import { loggedAssetsOfFile } from '../../media/logged-assets.ts';
import { serviceEventCatalog } from '../../service/event-catalog.ts';
import { copyMediaBetween } from './media.ts';
import { loadConfig } from '../../config/config.ts';
import { acquireDataDirLock } from '../../data-dir/data-dir-lock.ts';
import { compactEventLog, CompactionMismatchError } from '../../event-store/sqlite-log-compaction.ts';
import { note, parseCommandArgs, printResult, UsageError, withStores, type CommandGroup, type CommandOptions } from '../cli-support.ts';
import { COMMAND_USAGE } from '../usage.ts';

const USAGE = COMMAND_USAGE.log;

/**
 *   log export --to FILE   every event in global order (ids, revisions, types, versions, data, metadata; personal
 *                          data stays encrypted) and every stream deletion, with a digest of the whole log
 *   log import FILE        into the configured event store (EVENTSTORE_CONNECTION_STRING, or DATA_DIR's SQLite),
 *                          which must be empty or hold the file's first events (an interrupted import: it resumes);
 *                          then reads the store back and compares event and stream counts and the digest;
 *                          --media-from copies the bytes of the file's live assets into the configured blob store
 *                          (S3_BUCKET, else DATA_DIR/media), each checked against its recorded SHA-256 (media copy)
 *   log verify FILE        the comparison alone
 *   log compact            the embedded log (DATA_DIR's events.sqlite) only: its events written as JSON text by
 *                          builds before frames rewritten as frames, in place (see sqlite-log-compaction.ts);
 *                          safe while the service runs. --vacuum then runs VACUUM, holding the data folder's
 *                          lock (refused while the service runs)
 *
 * Progress (events, events/s, ETA) on stderr; the result as one JSON object on stdout. Exit 1 when the
 * verification finds a difference. The read models are not part of the log: the service builds them on its
 * new stores when it starts (or run `projections rebuild`).
 */
export const logCommands: CommandGroup = {
  name: 'log',
  usage: USAGE,
  async run(args, options) {
    try {
      return await run(args, options);
    } catch (error) {
      // A damaged file or a store holding another log: one line and exit 1, like other refused operations.
      if (error instanceof LogFileError || error instanceof ImportTargetError || error instanceof EventTooLargeError || error instanceof CompactionMismatchError) {
        throw new OperationError(`log: ${error.message}`);
      }
      if (error instanceof BlobStoreUnavailableError) throw new OperationError(`log: ${error.message}; run the import again once it answers (what was imported or copied stays)`);
      throw error;
    }
  },
};

async function run(args: string[], options: CommandOptions): Promise<number> {
  {
    const { values: parsed, positionals } = parseCommandArgs(args, { to: { type: 'string' }, 'keys-from': { type: 'string' }, 'media-from': { type: 'string' }, vacuum: { type: 'boolean' }, batch: { type: 'string' } }, USAGE);
    const values = { ...parsed, json: options.json };
    const [command, file] = positionals;
    if (!command) throw new UsageError('log needs a command: export, import, verify or compact', USAGE);
    if (command === 'compact') {
      const batch = values.batch === undefined ? 1000 : Number(values.batch);
      if (!Number.isInteger(batch) || batch < 1 || batch > 100_000) throw new UsageError('--batch: a whole number of events from 1 to 100000', USAGE);
      return compact({ vacuum: values.vacuum ?? false, batch, json: values.json ?? false });
    }
    if (command === 'export') {
      if (!values.to) throw new UsageError('export needs --to FILE.ndjson', USAGE);
      const target = path.resolve(values.to);
      if (fs.existsSync(target)) throw new UsageError(`${values.to} exists already: export to a new file`, USAGE);
      return withStores(async ({ stores }) => {
        const started = Date.now();
        const bar = values.json ? undefined : new RebuildProgressBar('export', process.stderr);
        try {
          const summary = await exportLog(stores.events, target, { now: () => systemClock.now(), onProgress: (p) => bar?.update({ ...p, checkpoint: null, head: null }) });
          bar?.finish(summary.events);
          bar?.stop();
          const durationMs = Date.now() - started;
          note(`log export: ${summary.events} events of ${summary.streams} streams written to ${values.to}`);
          printResult({ file: target, ...summary, durationMs, eventsPerSecond: rate(summary.events, durationMs) });
          return 0;
        } finally {
          bar?.stop();
        }
      });
    }
    if (command === 'import' || command === 'verify') {
      if (!file) throw new UsageError(`${command} needs the file to read`, USAGE);
      if (!fs.existsSync(file)) throw new UsageError(`no file ${file}`, USAGE);
      const keysFrom = values['keys-from'];
      if (keysFrom !== undefined && (command !== 'import' || !fs.existsSync(keysFrom))) throw new UsageError(command !== 'import' ? '--keys-from goes with import' : `no key store file ${keysFrom}`, USAGE);
      if (values['media-from'] !== undefined && command !== 'import') throw new UsageError('--media-from goes with import', USAGE);
      const mediaFrom = values['media-from'] === undefined ? undefined : mediaLocation(values['media-from']);
      return withStores(async ({ stores, config }) => {
        const started = Date.now();
        if (command === 'verify') {
          const [source, target] = await Promise.all([outlineSummary(file), digestStore(stores.events)]);
          const verified = source.digest === target.digest && source.events === target.events && source.streams === target.streams;
          printResult({ file: path.resolve(file), verified, source, target });
          if (!verified) note('log verify: the event store and the file differ');
          return verified ? 0 : 1;
        }
        const bar = values.json ? undefined : new RebuildProgressBar('import', process.stderr);
        let result;
        try {
          result = await importLog(stores.events, file, { onProgress: (p) => bar?.update({ ...p, checkpoint: null, head: null }) });
          bar?.finish(result.events);
        } finally {
          bar?.stop();
        }
        const keys = keysFrom === undefined ? undefined : await copyKeys(file, keysFrom, config);
        const media = mediaFrom === undefined ? undefined : await copyMediaBetween(mediaFrom, config.media.blobs, await loggedAssetsOfFile(fileEvents(file), serviceEventCatalog()), { concurrency: 4, json: values.json ?? false, label: 'log import media' });
        const durationMs = Date.now() - started;
        if (keys) note(`log import: submission keys: ${keys.copied} copied, ${keys.erased} erased, ${keys.missing} missing from ${keysFrom}`);
        if (result.alreadyPresent > 0) note(`log import: ${result.alreadyPresent} events were already imported (an earlier run); continued after them`);
        note(
          result.verified
            ? `log import: verified: ${result.target.events} events of ${result.target.streams} streams, digest ${result.target.digest}. Start the service on these stores to build the read models (or run: projections rebuild).`
            : `log import: the event store and the file differ after the import (file: ${result.source.events} events, ${result.source.digest}; store: ${result.target.events} events, ${result.target.digest})`,
        );
        printResult({ file: path.resolve(file), ...result, ...(keys ? { keys } : {}), ...(media ? { media } : {}), durationMs, eventsPerSecond: rate(result.appended, durationMs) });
        return result.verified && (media?.verified ?? true) ? 0 : 1;
      });
    }
    throw new UsageError(`unknown log command: ${command}`, USAGE);
  }
}

/** `log compact`: see the module comment. */
async function compact({ vacuum, batch, json }: { vacuum: boolean; batch: number; json: boolean }): Promise<number> {
  const config = loadConfig();
  if (config.eventStore.kind !== 'sqlite') throw new UsageError('log compact is for the embedded event log (DATA_DIR\'s events.sqlite); EventStoreDB keeps its own storage', USAGE);
  const file = config.eventStore.file;
  if (!fs.existsSync(file)) throw new UsageError(`no event log at ${file}`, USAGE);
  // VACUUM rewrites the whole file: the service must not be writing to it meanwhile, and its copy needs the disk.
  const lock = vacuum ? acquireDataDirLock(config.dataDir, 'annals log compact --vacuum') : undefined;
  if (vacuum) {
    const { bavail, bsize } = fs.statfsSync(path.dirname(file));
    const needed = fs.statSync(file).size;
    if (bavail * bsize < needed) {
      lock?.release();
      throw new OperationError(`log compact --vacuum: VACUUM copies the log, which needs about ${megabytes(needed)} free beside it; ${megabytes(bavail * bsize)} are: free some space, or run it without --vacuum (which frees none)`);
    }
  }
  const bar = json ? undefined : new RebuildProgressBar('compact', process.stderr);
  try {
    const result = await compactEventLog(file, { vacuum, batch, onProgress: (p) => bar?.update({ ...p, checkpoint: null, head: null }) });
    bar?.finish(result.rewritten);
    bar?.stop();
    note(
      result.rewritten === 0
        ? 'log compact: every event is stored compressed already'
        : `log compact: ${result.rewritten} events rewritten compressed, ${megabytes(result.textBytes)} -> ${megabytes(result.frameBytes)}`,
    );
    note(
      result.vacuumed
        ? `log compact: the file ${megabytes(result.fileBytesBefore)} -> ${megabytes(result.fileBytesAfter)}`
        : `log compact: the file stays ${megabytes(result.fileBytesAfter)}: run \`annals log compact --vacuum\` with the service stopped to give back the space the texts left inside it${result.rewritten > 0 ? ` (about ${megabytes(result.textBytes - result.frameBytes)})` : ''}`,
    );
    printResult({ file, ...result, eventsPerSecond: rate(result.rewritten, result.durationMs) });
    return 0;
  } finally {
    bar?.stop();
    lock?.release();
  }
}

/** --media-from: a folder or s3:// location (BlobLocation), checked before anything is imported. */
function mediaLocation(value: string): BlobLocation {
  try {
    const location = parseBlobLocation(value);
    if (location.kind === 'local-folder' && !fs.existsSync(location.dir)) throw new UsageError(`no folder ${location.dir} to copy media from`, USAGE);
    return location;
  } catch (error) {
    if (error instanceof BlobLocationError) throw new UsageError(`--media-from: ${error.message}`, USAGE);
    throw error;
  }
}

/** Copies the keys of the file's submissions from a key store file into the configured key store. */
async function copyKeys(file: string, keysFrom: string, config: Config): Promise<KeyCopyResult> {
  const ids: string[] = [];
  for await (const event of fileEvents(file)) {
    const id = submissionIdOf(event);
    if (id !== null) ids.push(id);
  }
  const from = SqliteKeyStore.open(keysFrom);
  const to = await openKeyStore(config);
  try {
    return await copySubmissionKeys(ids, from, to);
  } finally {
    await from.close();
    await to.close();
  }
}

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

function rate(events: number, ms: number): number {
  return ms > 0 ? Math.round((events * 1000) / ms) : events;
}

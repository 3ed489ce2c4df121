import fs from 'node:fs';
import { loadConfig } from '../../config/config.ts';
import { BlobLocationError, describeBlobLocation, parseBlobLocation, sameBlobLocation, type BlobLocation } from '../../blobs/blob-location.ts';
import { BlobStoreUnavailableError } from '../../blobs/blob-store.ts';
import { openBlobStore } from '../../blobs/open-blob-store.ts';
import { fileEvents } from '../../event-store/log-transfer.ts';
import { LogFileError } from '../../event-store/log-file.ts';
import { loggedAssetsOfFile, loggedAssetsOfLog, type LoggedAsset } from '../../media/logged-assets.ts';
import { copyMedia, type MediaCopyResult } from '../../media/media-copy.ts';
import type { AssetProblem } from '../../media/media-transfer.ts';
import { countReadModelAssets, readModelAssets, verifyMedia } from '../../media/media-verify.ts';
import { ReadModelReader } from '../../read-models/read-model-reader.ts';
import { OperationError } from '../../projection-engine/projection-operations.ts';
import { serviceEventCatalog } from '../../service/event-catalog.ts';
import { MediaProgressBar, megabytes } from '../media-progress-bar.ts';
import { note, parseCommandArgs, printResult, UsageError, withStores, type CommandGroup, type CommandOptions } from '../cli-support.ts';
import { COMMAND_USAGE } from '../usage.ts';

const USAGE = COMMAND_USAGE.media;

/**
 * Operator commands for media bytes, which live apart from the log (DATA_DIR/media or an S3 bucket):
 *
 *   media copy     carries them from one store to another (a move to S3, or back; see src/media/media-copy.ts)
 *   media verify   checks the configured store against the read models (src/media/media-verify.ts)
 *
 * Progress on stderr, each problem asset as a line on stderr, the result as one JSON object on stdout; exit 1
 * when any asset is missing or corrupt (each is listed in the JSON with its id, project, key and what is
 * wrong). A store that cannot be reached ends the command (exit 1); what was copied stays copied.
 */
export const mediaCommands: CommandGroup = {
  name: 'media',
  usage: USAGE,
  async run(args, options) {
    try {
      return await run(args, options);
    } catch (error) {
      if (error instanceof BlobLocationError) throw new UsageError(error.message, USAGE);
      if (error instanceof LogFileError) throw new OperationError(`media: ${error.message}`);
      if (error instanceof BlobStoreUnavailableError) throw new OperationError(`media: ${error.message}; run the command again once it answers (what was copied stays copied)`);
      throw error;
    }
  },
};

async function run(args: string[], options: CommandOptions): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    args,
    { from: { type: 'string' }, to: { type: 'string' }, log: { type: 'string' }, concurrency: { type: 'string' }, project: { type: 'string' }, quick: { type: 'boolean' } },
    USAGE,
  );
  const [command, extra] = positionals;
  if (extra !== undefined) throw new UsageError(`unexpected argument: ${extra}`, USAGE);
  const concurrency = values.concurrency === undefined ? 4 : Number(values.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) throw new UsageError('--concurrency: a whole number of assets from 1 to 64', USAGE);
  if (command === 'copy') {
    if (values.project !== undefined || values.quick !== undefined) throw new UsageError('--project and --quick go with verify', USAGE);
    if (!values.from) throw new UsageError('copy needs --from LOCATION', USAGE);
    const from = parseBlobLocation(values.from);
    const to = values.to === undefined ? loadConfig().media.blobs : parseBlobLocation(values.to);
    if (values.log !== undefined && !fs.existsSync(values.log)) throw new UsageError(`no file ${values.log}`, USAGE);
    const assets = values.log !== undefined ? await loggedAssetsOfFile(fileEvents(values.log), serviceEventCatalog()) : await withStores(({ log }) => loggedAssetsOfLog(log));
    const result = await copyMediaBetween(from, to, assets, { concurrency, json: options.json, label: 'media copy' });
    printResult(result);
    return result.verified ? 0 : 1;
  }
  if (command === 'verify') {
    if (values.from !== undefined || values.to !== undefined || values.log !== undefined) throw new UsageError('--from, --to and --log go with copy', USAGE);
    return verify({ projectId: values.project, quick: values.quick ?? false, concurrency, json: options.json });
  }
  throw new UsageError(command ? `unknown media command: ${command}` : 'media needs a command: copy or verify', USAGE);
}

export interface MediaCopySummary extends MediaCopyResult {
  from: string;
  to: string;
  durationMs: number;
  bytesPerSecond: number;
}

/**
 * Copies the assets' bytes from one location to the other with a progress bar (unless json), a line on stderr
 * per problem asset and one summing up; also `log import --media-from`.
 */
export async function copyMediaBetween(from: BlobLocation, to: BlobLocation, assets: readonly LoggedAsset[], options: { concurrency: number; json: boolean; label: string }): Promise<MediaCopySummary> {
  if (from.kind === 'local-folder' && !fs.existsSync(from.dir)) throw new UsageError(`no folder ${from.dir} to copy media from`, USAGE);
  if (sameBlobLocation(from, to)) throw new UsageError(`${describeBlobLocation(from)} is both the source and the target`, USAGE);
  const [source, target] = await Promise.all([openBlobStore(from), openBlobStore(to)]);
  const bar = options.json ? undefined : new MediaProgressBar(options.label, process.stderr);
  const started = Date.now();
  try {
    await Promise.all([source.ping(), target.ping()]);
    const result = await copyMedia(assets, source, target, { concurrency: options.concurrency, onProgress: (p) => bar?.update(p) });
    bar?.stop();
    const durationMs = Date.now() - started;
    reportProblems(options.label, result.problems);
    note(
      `${options.label}: ${result.copied} copied (${megabytes(result.copiedBytes)}), ${result.present} already there, ${result.problems.length} with problems, of ${result.assets} assets (${megabytes(result.bytes)}) in ${(durationMs / 1000).toFixed(1)} s` +
        (result.verified ? `: every asset is at ${describeBlobLocation(to)} with the SHA-256 the log records` : ': fix the source (or restore the assets named above), then run it again'),
    );
    return { from: describeBlobLocation(from), to: describeBlobLocation(to), ...result, durationMs, bytesPerSecond: durationMs > 0 ? Math.round((result.copiedBytes * 1000) / durationMs) : result.copiedBytes };
  } finally {
    bar?.stop();
    await Promise.all([source.close(), target.close()]);
  }
}

async function verify(options: { projectId: string | undefined; quick: boolean; concurrency: number; json: boolean }): Promise<number> {
  return withStores(async ({ stores, config }) => {
    const reader = new ReadModelReader(stores.readModels);
    const [total, checkpoint, head] = await Promise.all([countReadModelAssets(reader, options.projectId), reader.checkpoint('media'), stores.events.headPosition()]);
    if (checkpoint === null && head !== null) note('media verify: the media read model has not been built yet: start the service (or run projections rebuild media) first');
    else if (head !== null && checkpoint !== null && checkpoint < head) note(`media verify: the read models have folded the log to position ${checkpoint} of ${head}: assets uploaded since are not checked`);
    const blobs = await openBlobStore(config.media.blobs);
    const bar = options.json ? undefined : new MediaProgressBar('media verify', process.stderr);
    const started = Date.now();
    try {
      await blobs.ping();
      const result = await verifyMedia(readModelAssets(reader, options.projectId), blobs, total, { quick: options.quick, concurrency: options.concurrency, onProgress: (p) => bar?.update(p) });
      bar?.stop();
      const durationMs = Date.now() - started;
      reportProblems('media verify', result.problems, false);
      note(
        result.verified
          ? `media verify: all ${result.assets} assets (${megabytes(result.bytes)}) are in ${describeBlobLocation(config.media.blobs)} with the recorded ${options.quick ? 'size' : 'size and SHA-256'}`
          : `media verify: ${result.problems.length} of ${result.assets} assets are missing or corrupt in ${describeBlobLocation(config.media.blobs)}: restore them from a copy (annals media copy --from <copy>)`,
      );
      printResult({ store: describeBlobLocation(config.media.blobs), ...(options.projectId ? { projectId: options.projectId } : {}), ...result, readModelsAt: checkpoint?.toString() ?? null, logHead: head?.toString() ?? null, durationMs });
      return result.verified ? 0 : 1;
    } finally {
      bar?.stop();
      await blobs.close();
    }
  });
}

const SHOWN_PROBLEMS = 50;

function reportProblems(label: string, problems: readonly AssetProblem[], sides = true): void {
  for (const problem of problems.slice(0, SHOWN_PROBLEMS)) {
    note(`${label}: ${problem.problem}${sides ? ` at the ${problem.store}` : ''}: asset ${problem.assetId} (${JSON.stringify(problem.fileName)}, project ${problem.projectId}): ${problem.detail}`);
  }
  if (problems.length > SHOWN_PROBLEMS) note(`${label}: ... and ${problems.length - SHOWN_PROBLEMS} more (every one is in the JSON result)`);
}

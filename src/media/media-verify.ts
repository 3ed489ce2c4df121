import type { BlobStore } from '../blobs/blob-store.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import type { AssetDoc } from '../../projections/media.ts';
import { blobDigest } from './blob-digest.ts';
import type { LoggedAsset } from './logged-assets.ts';
import { mediaQueries } from '../../projections/media-queries.ts';
import { assetProblem, endsTheRun, forEachAsset, ProgressTally, type AssetProblem, type MediaProgress } from './media-transfer.ts';

export interface MediaVerifyResult {
  /** Assets checked, and the bytes their records name. */
  assets: number;
  bytes: number;
  /** Sizes only (stat), without reading the bytes. */
  quick: boolean;
  problems: AssetProblem[];
  /** Every asset's blob is there with the recorded size (and, unless quick, SHA-256). */
  verified: boolean;
}

export interface MediaVerifyOptions {
  quick?: boolean;
  concurrency?: number;
  onProgress?: (progress: MediaProgress) => void;
}

/**
 * Checks that the blob store holds every asset's bytes as its upload recorded them: a blob that is not there
 * is `missing`; one of another size, or (reading it through) of another SHA-256, is `corrupt`. With `quick`,
 * sizes only (one stat per asset). `total` (the number of assets, for progress) may be 0 when unknown.
 */
export async function verifyMedia(assets: AsyncIterable<LoggedAsset> | Iterable<LoggedAsset>, blobs: BlobStore, total: number, options: MediaVerifyOptions = {}): Promise<MediaVerifyResult> {
  const quick = options.quick ?? false;
  const tally = new ProgressTally(total, 0, options.onProgress);
  const result: MediaVerifyResult = { assets: 0, bytes: 0, quick, problems: [], verified: false };
  await forEachAsset(assets, options.concurrency ?? 4, async (asset) => {
    result.assets += 1;
    result.bytes += asset.byteSize;
    try {
      const problem = await checkOne(asset, blobs, quick, tally);
      if (problem) result.problems.push(problem);
    } catch (error) {
      if (endsTheRun(error)) throw error;
      result.problems.push(assetProblem(asset, 'failed', 'target', error instanceof Error ? error.message : String(error)));
    } finally {
      tally.assetDone();
    }
  });
  result.verified = result.problems.length === 0;
  return result;
}

async function checkOne(asset: LoggedAsset, blobs: BlobStore, quick: boolean, tally: ProgressTally): Promise<AssetProblem | null> {
  const { blobKey: key, byteSize: size, sha256 } = asset;
  const stored = quick ? await blobs.stat(key) : await blobDigest(blobs, key, tally.bytes);
  if (!stored) return assetProblem(asset, 'missing', 'target', `the blob store holds nothing under ${key}`);
  if (stored.size !== size) return assetProblem(asset, 'corrupt', 'target', `the blob under ${key} holds ${stored.size} bytes; the log records ${size}`);
  if ('sha256' in stored && stored.sha256 !== sha256) return assetProblem(asset, 'corrupt', 'target', `the blob under ${key} has SHA-256 ${stored.sha256}; the log records ${sha256}`);
  return null;
}

const PAGE = 500;
const FIELDS = ['assetId', 'projectId', 'fileName', 'mimeType', 'byteSize', 'sha256', 'blobKey', 'seq'] as const;

/**
 * Every asset the media read model knows (of one project, or of all), a page at a time in the order of its
 * project index: memory does not grow with the number of assets.
 */
export async function* readModelAssets(reader: ReadModelReader, projectId?: string): AsyncGenerator<LoggedAsset> {
  const media = mediaQueries(reader);
  let after: { values: Array<string | number | null>; id: string } | undefined;
  for (;;) {
    const page = await media.assetPage(projectId, FIELDS, PAGE, after);
    for (const { doc } of page) {
      const asset = doc as unknown as AssetDoc;
      yield { assetId: asset.assetId, projectId: asset.projectId, fileName: asset.fileName, mimeType: asset.mimeType, byteSize: asset.byteSize, sha256: asset.sha256, blobKey: asset.blobKey };
    }
    const last = page.at(-1);
    if (page.length < PAGE || !last) return;
    after = { values: [(last.doc as unknown as AssetDoc).projectId, (last.doc as unknown as AssetDoc).seq], id: last.id };
  }
}

/** How many assets readModelAssets yields. */
export function countReadModelAssets(reader: ReadModelReader, projectId?: string): Promise<number> {
  return mediaQueries(reader).countAssets(projectId);
}

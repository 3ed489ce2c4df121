import { pipeline } from 'node:stream';
import type { BlobStore } from '../blobs/blob-store.ts';
import { blobDigest, DigestMismatchError, digestGate } from './blob-digest.ts';
import type { LoggedAsset } from './logged-assets.ts';
import { assetProblem, endsTheRun, forEachAsset, ProgressTally, type AssetProblem, type MediaProgress } from './media-transfer.ts';

export interface MediaCopyResult {
  /** Live assets the log records, and their bytes. */
  assets: number;
  bytes: number;
  /** Copied by this run, each read back from the target and checked. */
  copied: number;
  copiedBytes: number;
  /** Found at the target already with the recorded SHA-256 (an earlier run, or a store both sides share): not copied again. */
  present: number;
  problems: AssetProblem[];
  /** Every asset is at the target with the recorded size and SHA-256. */
  verified: boolean;
}

export interface MediaCopyOptions {
  /** Assets copied at once (4 by default). */
  concurrency?: number;
  onProgress?: (progress: MediaProgress) => void;
}

/**
 * Copies the bytes of every asset from one blob store to another (the local folder and S3, either way),
 * checking them against the SHA-256 the log recorded at upload, on both sides:
 *
 * - an asset the target already holds with the recorded size and SHA-256 is left as it is, so a run that
 *   was interrupted, or failed on some assets, is simply run again: it copies only what is not there;
 * - the bytes stream from the source through a digest gate into the target (no temporary file, no whole
 *   blob in memory); the gate releases the last chunk only once the SHA-256 matches, so bytes that differ
 *   from the record are never stored: the asset is reported corrupt at the source;
 * - once stored, the blob is read back from the target and hashed: what lands is proven, not assumed.
 *
 * A source that holds nothing for an asset, or bytes of another size or SHA-256, is reported per asset and
 * the run goes on; a store that cannot be reached ends the run (BlobStoreUnavailableError).
 */
export async function copyMedia(assets: readonly LoggedAsset[], from: BlobStore, to: BlobStore, options: MediaCopyOptions = {}): Promise<MediaCopyResult> {
  const bytes = assets.reduce((sum, asset) => sum + asset.byteSize, 0);
  // Each asset's bytes are read twice: from the source (or the target, when already there) and back from the target.
  const tally = new ProgressTally(assets.length, 2 * bytes, options.onProgress);
  const result: MediaCopyResult = { assets: assets.length, bytes, copied: 0, copiedBytes: 0, present: 0, problems: [], verified: false };
  await forEachAsset(assets, options.concurrency ?? 4, async (asset) => {
    try {
      const outcome = await copyOne(asset, from, to, tally);
      if (outcome === 'present') result.present += 1;
      else if (outcome === 'copied') {
        result.copied += 1;
        result.copiedBytes += asset.byteSize;
      } else result.problems.push(outcome);
    } catch (error) {
      if (endsTheRun(error)) throw error;
      result.problems.push(assetProblem(asset, 'failed', error instanceof SourceReadError ? 'source' : 'target', describe(error)));
    } finally {
      tally.assetDone();
    }
  });
  result.verified = result.problems.length === 0 && result.present + result.copied === assets.length;
  return result;
}

async function copyOne(asset: LoggedAsset, from: BlobStore, to: BlobStore, tally: ProgressTally): Promise<'present' | 'copied' | AssetProblem> {
  const { blobKey: key, byteSize: size, sha256 } = asset;
  const there = await to.stat(key);
  if (there?.size === size) {
    const digest = await blobDigest(to, key, tally.bytes);
    if (digest?.sha256 === sha256 && digest.size === size) {
      tally.bytes(size);
      return 'present';
    }
  }
  const read = await readSource(from, asset);
  if (!read) return assetProblem(asset, 'missing', 'source', `the source holds nothing under ${key}`);
  if (read.size !== size) {
    read.body.destroy();
    return assetProblem(asset, 'corrupt', 'source', `the source holds ${read.size} bytes under ${key}; the log records ${size}`);
  }
  const gated = pipeline(read.body, digestGate(sha256, tally.bytes), () => {});
  try {
    await to.put(key, { stream: gated, size }, { contentType: asset.mimeType });
  } catch (error) {
    if (error instanceof DigestMismatchError) return assetProblem(asset, 'corrupt', 'source', `the source's bytes under ${key} have SHA-256 ${error.actual}; the log records ${sha256} (nothing was written to the target)`);
    throw error;
  }
  const landed = await blobDigest(to, key, tally.bytes);
  if (!landed) return assetProblem(asset, 'missing', 'target', `the target holds nothing under ${key} after the copy`);
  if (landed.sha256 !== sha256 || landed.size !== size) {
    return assetProblem(asset, 'corrupt', 'target', `after the copy the target holds ${landed.size} bytes with SHA-256 ${landed.sha256} under ${key}; the log records ${size} bytes, ${sha256}`);
  }
  return 'copied';
}

/** The source's blob, with a refusal of the source (not of the target) reported as the source's. */
async function readSource(from: BlobStore, asset: LoggedAsset) {
  try {
    return await from.get(asset.blobKey);
  } catch (error) {
    if (endsTheRun(error)) throw error;
    throw new SourceReadError(describe(error));
  }
}

class SourceReadError extends Error {}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

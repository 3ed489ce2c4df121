import { BlobStoreUnavailableError } from '../blobs/blob-store.ts';
import type { LoggedAsset } from './logged-assets.ts';

/**
 * What copying and verifying media share: the problems they report per asset, their progress, and the
 * pool that works on several assets at once.
 */

/** An asset whose bytes are not what the log records. */
export interface AssetProblem {
  assetId: string;
  projectId: string;
  fileName: string;
  blobKey: string;
  /**
   * missing: the store holds nothing under the key; corrupt: it holds bytes of another size or SHA-256 than
   * the log records; failed: the store refused the read or write (the detail says how).
   */
  problem: 'missing' | 'corrupt' | 'failed';
  /** For a copy, which side: the store copied from, or the one copied to. */
  store: 'source' | 'target';
  detail: string;
}

export function assetProblem(asset: LoggedAsset, problem: AssetProblem['problem'], store: AssetProblem['store'], detail: string): AssetProblem {
  return { assetId: asset.assetId, projectId: asset.projectId, fileName: asset.fileName, blobKey: asset.blobKey, problem, store, detail };
}

export interface MediaProgress {
  /** Assets finished, of `assets`. */
  assetsDone: number;
  assets: number;
  /** Bytes read so far (from either store). */
  bytesDone: number;
  /** Share of the work done, 0..1. */
  fraction: number;
}

/** Counts assets and bytes as they are worked on; reports at most every 200 ms, and at each asset's end. */
export class ProgressTally {
  #assetsDone = 0;
  #bytesDone = 0;
  #reportedAt = 0;

  constructor(
    private readonly assets: number,
    /** Bytes the whole run is expected to read (0 when unknown: the fraction then follows the assets). */
    private readonly expectedBytes: number,
    private readonly onProgress?: (progress: MediaProgress) => void,
  ) {}

  readonly bytes = (count: number): void => {
    this.#bytesDone += count;
    if (Date.now() - this.#reportedAt >= 200) this.#report();
  };

  assetDone(): void {
    this.#assetsDone += 1;
    this.#report();
  }

  #report(): void {
    this.#reportedAt = Date.now();
    const byBytes = this.expectedBytes > 0 ? this.#bytesDone / this.expectedBytes : 0;
    const byAssets = this.assets > 0 ? this.#assetsDone / this.assets : 1;
    const fraction = this.#assetsDone === this.assets ? 1 : Math.min(0.999, this.expectedBytes > 0 ? Math.max(byBytes, byAssets * 0.5) : byAssets);
    this.onProgress?.({ assetsDone: this.#assetsDone, assets: this.assets, bytesDone: this.#bytesDone, fraction });
  }
}

/**
 * Runs `work` on every asset, `concurrency` at once. `work` reports an asset's own trouble itself; an error
 * it throws stops the run: no further asset starts, those under way finish, then the first error is thrown.
 * A store that cannot be reached (BlobStoreUnavailableError) ends the run that way, rather than being
 * reported once per asset; the operator runs it again once the store answers.
 */
export async function forEachAsset(assets: Iterable<LoggedAsset> | AsyncIterable<LoggedAsset>, concurrency: number, work: (asset: LoggedAsset) => Promise<void>): Promise<void> {
  const iterator = Symbol.asyncIterator in assets ? assets[Symbol.asyncIterator]() : (assets as Iterable<LoggedAsset>)[Symbol.iterator]();
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (!failure) {
      const next = await iterator.next();
      if (next.done) return;
      try {
        await work(next.value);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  if (failure) throw failure.error;
}

/** Whether an error ends a whole run (the store is unreachable) rather than one asset's work. */
export function endsTheRun(error: unknown): boolean {
  return error instanceof BlobStoreUnavailableError;
}

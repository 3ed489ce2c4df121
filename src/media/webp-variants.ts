import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { loadSharp } from './load-sharp.ts';
import type { Logger } from 'pino';
import { BlobStoreError, type BlobStore } from '../blobs/blob-store.ts';
import { isWebpConvertible } from './image-metadata.ts';

/** The part of an asset the variants need. */
export interface VariantSource {
  assetId: string;
  blobKey: string;
  mimeType: string;
  animated: boolean;
}

export interface Variant {
  key: string;
  size: number;
}

/** Variants whose existence and size this process remembers (variants never change once stored). */
const KNOWN_LIMIT = 10_000;

/**
 * WebP renditions of raster images, made once with sharp and kept in blob storage beside the original
 * (`<blobKey>.webp`). The first request for an asset converts it; concurrent first requests in this process
 * share that one conversion. Two processes converting the same asset at once each store the same bytes,
 * which the blob store's atomic replace makes harmless. The original's EXIF orientation is applied, so the
 * WebP looks as the original displays. A conversion that fails is logged and answered with null: the
 * caller serves the original instead.
 */
export class WebpVariants {
  readonly #pending = new Map<string, Promise<Variant | null>>();
  readonly #known = new Map<string, Variant>();
  /** Assets whose conversion failed: not tried again by this process (their original is served). */
  readonly #failed = new Set<string>();

  constructor(
    private readonly deps: { blobs: BlobStore; tempDir: string; logger: Logger; quality?: number },
  ) {}

  static keyOf(blobKey: string): string {
    return `${blobKey}.webp`;
  }

  /** The stored WebP variant of the asset, made now if need be; null when the asset has none. */
  async ensure(asset: VariantSource): Promise<Variant | null> {
    if (!isWebpConvertible(asset) || this.#failed.has(asset.assetId)) return null;
    const known = this.#known.get(asset.assetId);
    if (known) return known;
    let pending = this.#pending.get(asset.assetId);
    if (!pending) {
      pending = this.#make(asset).finally(() => this.#pending.delete(asset.assetId));
      this.#pending.set(asset.assetId, pending);
    }
    return pending;
  }

  /** Forgets a variant (its asset was deleted). */
  forget(assetId: string): void {
    this.#known.delete(assetId);
    this.#failed.delete(assetId);
  }

  async #make(asset: VariantSource): Promise<Variant | null> {
    const { blobs, logger } = this.deps;
    const key = WebpVariants.keyOf(asset.blobKey);
    try {
      const existing = await blobs.stat(key);
      if (existing) return this.#remember(asset.assetId, { key, size: existing.size });
      const original = await blobs.get(asset.blobKey);
      if (!original) return null;
      const file = path.join(this.deps.tempDir, `webp-${randomUUID()}`);
      try {
        const sharp = await loadSharp();
        const converter = sharp({ failOn: 'error' }).rotate().webp({ quality: this.deps.quality ?? 80, effort: 4 });
        original.body.once('error', (error) => converter.destroy(error));
        original.body.pipe(converter);
        await converter.toFile(file);
        await blobs.put(key, { path: file }, { contentType: 'image/webp' });
        const { size } = await fs.stat(file);
        logger.debug({ assetId: asset.assetId, size }, 'media: WebP variant stored');
        return this.#remember(asset.assetId, { key, size });
      } finally {
        await fs.rm(file, { force: true });
      }
    } catch (error) {
      logger.warn({ err: error, assetId: asset.assetId }, 'media: WebP conversion failed; serving the original');
      // The image itself, not the store's trouble of the moment: do not try it again.
      if (!(error instanceof BlobStoreError)) {
        if (this.#failed.size >= KNOWN_LIMIT) this.#failed.clear();
        this.#failed.add(asset.assetId);
      }
      return null;
    }
  }

  #remember(assetId: string, variant: Variant): Variant {
    if (this.#known.size >= KNOWN_LIMIT) this.#known.delete(this.#known.keys().next().value!);
    this.#known.set(assetId, variant);
    return variant;
  }
}

import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { ReadModelReader } from '../../read-models/read-model-reader.ts';
import { BlobRangeError, type BlobRead, type BlobStore } from '../../blobs/blob-store.ts';
import type { AssetDoc } from '../../../projections/media.ts';
import { mediaQueries, type MediaQueries } from '../../../projections/media-queries.ts';
import { acceptsWebp } from '../../media/accepts-webp.ts';
import { contentRange, parseRange, rangeNotSatisfiable } from './byte-range.ts';
import { isWebpConvertible } from '../../media/image-metadata.ts';
import { asHttp } from '../errors/media-http-errors.ts';
import type { WebpVariants } from '../../media/webp-variants.ts';
import { notFound } from '../errors/error-factory.ts';
import type { HttpError } from '../errors/http-error.ts';
import { isUuid } from '../../event-store/position.ts';
import { publicProjectOf } from './public-context.ts';
import type { PublicRoutes } from './public-router.ts';

export interface PublicMediaDeps {
  reader: ReadModelReader;
  blobs: BlobStore;
  variants: WebpVariants;
  logger: Logger;
}

/** Spec section 8: media may be cached for a year; an asset's bytes never change (a new upload is a new id). */
export const MEDIA_CACHE_CONTROL = 'public, max-age=31536000, immutable';
/** Media from a content API's origin must not run as a page there (SVG, HTML uploaded as text). */
const MEDIA_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

/** One stored form of an asset: the original, or its WebP variant. */
interface Representation {
  key: string;
  contentType: string;
  size: number;
  etag: string;
}

/**
 * GET (and HEAD) /media/{assetId} on both public bases (spec section 4.1): the bytes streamed from blob
 * storage, never held whole in memory. Strong ETag from the content hash (304 for a matching If-None-Match),
 * a year's immutable Cache-Control, single byte ranges (206; 416 beyond the end; If-Range honoured), and
 * WebP for raster images when the Accept header names image/webp, with `Vary: Accept` on every image
 * response. An id that is malformed, unknown, of another project or deleted is 404 NOT_FOUND; so is an
 * asset whose bytes the blob store does not hold, or holds at another size than recorded (a damaged store, a
 * move that did not carry them), with an error line naming the asset and the blob key, never a 500.
 */
export function publicMediaRoutes(deps: PublicMediaDeps): PublicRoutes {
  const media = mediaQueries(deps.reader);
  return (router) => {
    router.get('/media/:assetId', async (ctx) => {
      const { projectId } = publicProjectOf(ctx);
      const id = String(ctx.params['assetId'] ?? '');
      if (!isUuid(id)) throw notFound(`No asset ${JSON.stringify(String(id).slice(0, 64))}.`, { hint: 'Asset ids are UUIDs.' });
      const asset = await media.asset(id.toLowerCase());
      if (!asset || asset.projectId !== projectId) throw notFound(`No asset ${id}.`);

      const isImage = asset.kind === 'image';
      if (isImage) ctx.vary('Accept');
      let representation = await asHttp(() => choose(asset, ctx, deps.variants));
      if (noneMatch(ctx.get('If-None-Match'), representation.etag)) {
        ctx.set('Cache-Control', MEDIA_CACHE_CONTROL);
        ctx.set('ETag', representation.etag);
        ctx.status = 304;
        return;
      }
      let range = rangeOf(ctx, representation);
      let stored = await open(deps, asset, representation, range, ctx.method === 'HEAD');
      if ((stored === 'missing' || stored === 'damaged') && representation.key !== asset.blobKey) {
        // The WebP variant went missing (removed by hand, or not carried by a move): serve the original, and
        // make the variant again on the next request.
        deps.variants.forget(asset.assetId);
        representation = original(asset);
        range = rangeOf(ctx, representation);
        stored = await open(deps, asset, representation, range, ctx.method === 'HEAD');
      }
      if (stored === 'missing') return notFoundWithoutBlob(deps, media, asset, representation.key);
      if (stored === 'damaged') throw notAvailable(asset);

      ctx.set('Cache-Control', MEDIA_CACHE_CONTROL);
      ctx.set('ETag', representation.etag);
      ctx.set('Accept-Ranges', 'bytes');
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Content-Security-Policy', MEDIA_CSP);
      ctx.attachment(representation.contentType === 'image/webp' && asset.mimeType !== 'image/webp' ? withExtension(asset.fileName, '.webp') : asset.fileName, { type: 'inline' });
      ctx.type = representation.contentType === 'text/plain' ? 'text/plain; charset=utf-8' : representation.contentType;
      const partial = range.kind === 'partial' ? range : undefined;
      if (partial) ctx.set('Content-Range', contentRange(partial.start, partial.end, representation.size));
      ctx.status = partial ? 206 : 200;
      ctx.length = partial ? partial.end - partial.start + 1 : representation.size;
      if (stored !== 'head') {
        ctx.body = stored.body;
        ctx.length = stored.length;
      }
    });
  };
}

/** The range the request asks for, checked against the representation's size (416 when it cannot be met). */
function rangeOf(ctx: Context, representation: Representation): { kind: 'whole' } | { kind: 'partial'; start: number; end: number } {
  const range = rangeApplies(ctx.get('If-Range'), representation.etag) ? parseRange(ctx.get('Range'), representation.size) : ({ kind: 'whole' } as const);
  if (range.kind === 'unsatisfiable') throw rangeNotSatisfiable(representation.size);
  return range;
}

/**
 * The stored bytes of the representation: the open read (GET), 'head' when a HEAD finds them there,
 * 'missing' when the blob store holds nothing under the key, or 'damaged' (logged) when it holds bytes of
 * another size than the asset's record (a blob damaged or replaced behind the service's back: never served
 * under the asset's ETag).
 */
async function open(deps: PublicMediaDeps, asset: AssetDoc, representation: Representation, range: { kind: 'whole' } | { kind: 'partial'; start: number; end: number }, head: boolean): Promise<BlobRead | 'head' | 'missing' | 'damaged'> {
  if (head) {
    const stat = await asHttp(() => deps.blobs.stat(representation.key));
    if (!stat) return 'missing';
    return stat.size === representation.size ? 'head' : sizeDiffers(deps, asset, representation, stat.size);
  }
  const read = await asHttp(() => deps.blobs.get(representation.key, range.kind === 'partial' ? range : undefined)).catch((error: unknown) => {
    // A range the recorded size allows that starts beyond the stored bytes: the blob is shorter than recorded.
    if (error instanceof BlobRangeError) return 'short' as const;
    throw error;
  });
  if (!read) return 'missing';
  if (read === 'short') return sizeDiffers(deps, asset, representation, null);
  if (read.size === representation.size) return read;
  read.body.destroy();
  return sizeDiffers(deps, asset, representation, read.size);
}

function sizeDiffers(deps: PublicMediaDeps, asset: AssetDoc, representation: Representation, size: number | null): 'damaged' {
  if (representation.key === asset.blobKey) {
    deps.logger.error(
      { assetId: asset.assetId, projectId: asset.projectId, blobKey: representation.key, recordedBytes: representation.size, storedBytes: size },
      `media: asset ${asset.assetId}: the blob ${representation.key} holds ${size ?? 'fewer'} bytes where the log records ${representation.size}; answered 404 (annals media verify lists every such asset)`,
    );
  }
  return 'damaged';
}

/**
 * 404 for an asset whose bytes are not in the blob store. Logged as an error naming the asset and the key,
 * unless the asset was deleted meanwhile (its purge may remove the bytes between the two reads).
 */
async function notFoundWithoutBlob(deps: PublicMediaDeps, media: MediaQueries, asset: AssetDoc, key: string): Promise<never> {
  const current = await media.asset(asset.assetId);
  if (current) {
    deps.logger.error(
      { assetId: asset.assetId, projectId: asset.projectId, blobKey: key },
      `media: asset ${asset.assetId} has no blob at ${key}; answered 404 (annals media verify lists every such asset; annals media copy restores them from a copy)`,
    );
  }
  throw notAvailable(asset);
}

function notAvailable(asset: AssetDoc): HttpError {
  return notFound(`The file of asset ${asset.assetId} is not available.`);
}

/** The WebP variant when the client asks for it and the asset has one; the original otherwise. */
async function choose(asset: AssetDoc, ctx: Context, variants: WebpVariants): Promise<Representation> {
  if (isWebpConvertible(asset) && acceptsWebp(ctx.get('Accept'))) {
    const variant = await variants.ensure(asset);
    if (variant) return { key: variant.key, contentType: 'image/webp', size: variant.size, etag: `"${asset.sha256}-webp"` };
  }
  return original(asset);
}

function original(asset: AssetDoc): Representation {
  return { key: asset.blobKey, contentType: asset.mimeType, size: asset.byteSize, etag: `"${asset.sha256}"` };
}

/** If-None-Match (RFC 9110 section 13.1.2): `*`, or a list of entity tags compared weakly. */
function noneMatch(header: string, etag: string): boolean {
  if (header.trim() === '') return false;
  if (header.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === opaque);
}

/** If-Range (RFC 9110 section 13.1.5): ranges apply unless it names another (or a weak) entity tag, or a date. */
function rangeApplies(header: string, etag: string): boolean {
  const value = header.trim();
  return value === '' || value === etag;
}

/** The file name with its extension replaced (or added), for a converted representation. */
function withExtension(fileName: string, extension: string): string {
  const dot = fileName.lastIndexOf('.');
  return `${dot > 0 ? fileName.slice(0, dot) : fileName}${extension}`;
}

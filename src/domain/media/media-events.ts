import { z } from 'zod';
import { defineEvent } from '../../event-store/event-catalog.ts';

/**
 * The events of one media asset, on stream `media-asset-${assetId}`: its upload (everything known about
 * the bytes, which are already in blob storage under `blobKey` when the event is appended), changes to its
 * alt text and caption, and its deletion. The purge of a deleted asset's bytes is recorded by the media
 * purge outbox on its own stream (media.blobs-purged). Every event carries projectId and assetId.
 */
export const assetStreamId = (assetId: string): string => `media-asset-${assetId}`;

export const FILE_NAME_MAX = 255;
export const ALT_TEXT_MAX = 1000;
export const CAPTION_MAX = 2000;

const ids = { projectId: z.uuid(), assetId: z.uuid() };
const instant = z.iso.datetime({ offset: true });
/** Blob keys as the blob port accepts them (src/blobs/blob-store.ts). */
const blobKey = z.string().min(1).max(1024).regex(/^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/);

export const assetUploaded = defineEvent({
  type: 'media.asset-uploaded',
  version: 1,
  schema: z.object({
    ...ids,
    fileName: z.string().min(1).max(FILE_NAME_MAX),
    /** Sniffed from the bytes, never taken from the client. */
    mimeType: z.string().min(3).max(255),
    byteSize: z.int().min(1),
    /** Lower-case hex SHA-256 of the bytes: the ETag. */
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    /** Raster and vector images: pixel size, EXIF orientation applied. */
    width: z.int().min(1).nullable(),
    height: z.int().min(1).nullable(),
    /** More than one frame (animated GIF, WebP, APNG): such an image is never converted to WebP. */
    animated: z.boolean(),
    altText: z.string().max(ALT_TEXT_MAX),
    caption: z.string().max(CAPTION_MAX),
    blobKey,
    uploadedAt: instant,
    /** Where the bytes came from: a multipart file, base64 in JSON, a source URL the service fetched, or made by annals itself (the demo's images). */
    source: z.enum(['multipart', 'base64', 'source-url', 'generated']),
  }),
});

export const assetDetailsChanged = defineEvent({
  type: 'media.asset-details-changed',
  version: 1,
  /** Alt text and caption as they are after the change. */
  schema: z.object({ ...ids, altText: z.string().max(ALT_TEXT_MAX), caption: z.string().max(CAPTION_MAX), changedAt: instant }),
});

/** Folder names: segments joined by "/", '' for the library's top. */
export const FOLDER_MAX = 255;
export const FOLDER_SEGMENT_MAX = 64;
export const FOLDER_DEPTH_MAX = 8;

/** The asset was put in a folder of the media library ('' is the top): where people find it, nothing more. */
export const assetFiled = defineEvent({
  type: 'media.asset-filed',
  version: 1,
  schema: z.object({ ...ids, folder: z.string().max(FOLDER_MAX), changedAt: instant }),
});

/**
 * The point of an image that crops keep in view, as fractions of its width and height from the top left
 * (0.5, 0.5 is the centre), or null for none (crops keep the centre).
 */
export const focalPointSet = defineEvent({
  type: 'media.focal-point-set',
  version: 1,
  schema: z.object({ ...ids, focalPoint: z.object({ x: z.number().min(0).max(1), y: z.number().min(0).max(1) }).nullable(), changedAt: instant }),
});

export const assetDeleted = defineEvent({
  type: 'media.asset-deleted',
  version: 1,
  /** The blob keys the purge outbox removes (original and WebP variant). */
  schema: z.object({ ...ids, blobKeys: z.array(blobKey).min(1), deletedAt: instant }),
});

/** Completion of a deleted asset's purge (stream `outbox-media-purge-${assetId}`, appended once). */
export const blobsPurged = defineEvent({
  type: 'media.blobs-purged',
  version: 1,
  schema: z.object({ ...ids, ok: z.boolean(), error: z.string().max(2000).optional() }),
});

export const mediaEvents = [assetUploaded, assetDetailsChanged, assetFiled, focalPointSet, assetDeleted, blobsPurged];

type Of<D extends { type: string; schema: z.ZodType }> = { type: D['type']; data: z.output<D['schema']> };
export type AssetEvent = Of<typeof assetUploaded> | Of<typeof assetDetailsChanged> | Of<typeof assetFiled> | Of<typeof focalPointSet> | Of<typeof assetDeleted>;
export type MediaEvent = AssetEvent | Of<typeof blobsPurged>;

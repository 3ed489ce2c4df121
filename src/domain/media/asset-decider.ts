import type { ApprovalPolicy } from '../access/project-decider.ts';
import { requirePersonFor } from '../approval-policy.ts';
import type { Decider } from '../decider.ts';
import { invalid, notFound } from '../domain-error.ts';
import { assertCan } from '../access/permissions.ts';
import type { Principal } from '../principal.ts';
import { ALT_TEXT_MAX, CAPTION_MAX, FILE_NAME_MAX, FOLDER_DEPTH_MAX, FOLDER_MAX, FOLDER_SEGMENT_MAX, type AssetEvent } from './media-events.ts';

export interface FocalPoint {
  x: number;
  y: number;
}

export interface Asset {
  assetId: string;
  projectId: string;
  fileName: string;
  mimeType: string;
  byteSize: number;
  sha256: string;
  width: number | null;
  height: number | null;
  animated: boolean;
  altText: string;
  caption: string;
  blobKey: string;
  /** The media library's folder ('' for the top). */
  folder: string;
  /** The point crops keep in view (images), or null. */
  focalPoint: FocalPoint | null;
}

export type AssetState = { status: 'absent' } | ({ status: 'active' } & Asset) | ({ status: 'deleted' } & Asset);

export type UploadSource = 'multipart' | 'base64' | 'source-url' | 'generated';

/** What an upload learned about the bytes, which are in blob storage under blobKey before the command runs. */
export type UploadedFile = Omit<Asset, 'assetId' | 'projectId' | 'altText' | 'caption' | 'folder' | 'focalPoint'> & { source: UploadSource };

export type AssetCommand =
  | ({ type: 'register_upload'; assetId: string; projectId: string; altText: string; caption: string; folder?: string | undefined } & UploadedFile)
  /** Replaces the given parts; an absent one is kept (focalPoint null clears it). */
  | { type: 'update_details'; projectId: string; altText?: string | undefined; caption?: string | undefined; folder?: string | undefined; focalPoint?: FocalPoint | null | undefined }
  | { type: 'delete_asset'; projectId: string; blobKeys: string[] };

export interface AssetContext {
  principal: Principal;
  /** ISO 8601 UTC. */
  now: string;
  /** The project's approval policy (absent: both rules off). humanApproval: an agent key may not delete an asset (every asset is served by its URL). */
  approvalPolicy?: ApprovalPolicy | undefined;
}

/**
 * One media asset (stream `media-asset-${assetId}`). Permissions (spec section 5): uploading and editing
 * alt text or caption need `media.upload` (console users; agent keys of scope full or schema, not content,
 * which may only list media), deleting needs `media.delete` (tenant_admin; full or schema keys). An asset
 * of another project, or a deleted one, is NOT_FOUND.
 */
export const assetDecider: Decider<AssetState, AssetCommand, AssetEvent, AssetContext> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'media.asset-uploaded': {
        const { uploadedAt: _at, source: _source, ...asset } = event.data;
        return { status: 'active', ...asset, folder: '', focalPoint: null };
      }
      case 'media.asset-details-changed':
        return state.status === 'active' ? { ...state, altText: event.data.altText, caption: event.data.caption } : state;
      case 'media.asset-filed':
        return state.status === 'active' ? { ...state, folder: event.data.folder } : state;
      case 'media.focal-point-set':
        return state.status === 'active' ? { ...state, focalPoint: event.data.focalPoint } : state;
      case 'media.asset-deleted':
        return state.status === 'active' ? { ...state, status: 'deleted' } : state;
      default:
        return state;
    }
  },

  decide(command, state, context) {
    const { principal, now } = context;
    if (principal.kind === 'agent' && principal.projectId !== command.projectId) throw notFound('No such asset in this project.');
    switch (command.type) {
      case 'register_upload': {
        assertCan(principal, 'media.upload');
        if (state.status !== 'absent') {
          // A retry of the same upload (idempotency key, crash recovery) finds its own work done.
          if (state.projectId === command.projectId && state.sha256 === command.sha256) return [];
          throw invalid(`Asset ${command.assetId} already exists.`);
        }
        assertText('fileName', command.fileName, FILE_NAME_MAX, { required: true });
        assertText('altText', command.altText, ALT_TEXT_MAX);
        assertText('caption', command.caption, CAPTION_MAX);
        if (!Number.isSafeInteger(command.byteSize) || command.byteSize < 1) throw invalid('The file is empty.');
        const folder = command.folder === undefined ? '' : folderName(command.folder);
        const { type: _type, folder: _folder, ...data } = command;
        const uploaded: AssetEvent = { type: 'media.asset-uploaded', data: { ...data, uploadedAt: now } };
        return folder === '' ? [uploaded] : [uploaded, { type: 'media.asset-filed', data: { projectId: command.projectId, assetId: command.assetId, folder, changedAt: now } }];
      }
      case 'update_details': {
        // Editing alt text and captions is part of uploading media (console users, full or schema keys).
        assertCan(principal, 'media.upload');
        const asset = requireActive(state, command.projectId);
        if (command.altText !== undefined) assertText('altText', command.altText, ALT_TEXT_MAX);
        if (command.caption !== undefined) assertText('caption', command.caption, CAPTION_MAX);
        const altText = command.altText ?? asset.altText;
        const caption = command.caption ?? asset.caption;
        const folder = command.folder === undefined ? asset.folder : folderName(command.folder);
        const focalPoint = command.focalPoint === undefined ? asset.focalPoint : focalPointOf(command.focalPoint, asset);
        const ids = { projectId: asset.projectId, assetId: asset.assetId };
        const events: AssetEvent[] = [];
        if (altText !== asset.altText || caption !== asset.caption) events.push({ type: 'media.asset-details-changed', data: { ...ids, altText, caption, changedAt: now } });
        if (folder !== asset.folder) events.push({ type: 'media.asset-filed', data: { ...ids, folder, changedAt: now } });
        if (JSON.stringify(focalPoint) !== JSON.stringify(asset.focalPoint)) events.push({ type: 'media.focal-point-set', data: { ...ids, focalPoint, changedAt: now } });
        return events;
      }
      case 'delete_asset': {
        assertCan(principal, 'media.delete');
        const asset = requireActive(state, command.projectId);
        requirePersonFor(principal, context.approvalPolicy, 'delete_media', { assetId: asset.assetId }, 'delete media (the public media URL of every asset answers 404 after it, wherever live content uses it)');
        return [{ type: 'media.asset-deleted', data: { projectId: asset.projectId, assetId: asset.assetId, blobKeys: command.blobKeys, deletedAt: now } }];
      }
    }
  },
};

/**
 * A folder name as kept: segments trimmed and joined by "/" ('' is the top); VALIDATION_ERROR for an empty
 * segment, "." or "..", a control character, or beyond the limits.
 */
export function folderName(folder: string): string {
  if (typeof folder !== 'string') throw invalid('folder: a text, segments joined by "/".');
  const trimmed = folder.trim().replace(/^\/+|\/+$/g, '');
  if (trimmed === '') return '';
  const segments = trimmed.split('/').map((segment) => segment.trim());
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..')) throw invalid(`folder: "${folder.slice(0, 80)}" has an empty, "." or ".." segment.`);
  if (segments.length > FOLDER_DEPTH_MAX) throw invalid(`folder: at most ${FOLDER_DEPTH_MAX} levels.`);
  if (segments.some((segment) => [...segment].length > FOLDER_SEGMENT_MAX)) throw invalid(`folder: each level at most ${FOLDER_SEGMENT_MAX} characters.`);
  const name = segments.join('/');
  if ([...name].length > FOLDER_MAX) throw invalid(`folder: at most ${FOLDER_MAX} characters.`);
  if (/[\u0000-\u001f\u007f]/.test(name)) throw invalid('folder: must not contain control characters.');
  return name;
}

/** A focal point as kept: x and y from 0 to 1, to 4 decimals; only on images with a size. */
function focalPointOf(point: FocalPoint | null, asset: Asset): FocalPoint | null {
  if (point === null) return null;
  if (asset.width === null || asset.height === null) throw invalid('focalPoint: only images have one.');
  const valid = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1;
  if (!valid(point.x) || !valid(point.y)) throw invalid('focalPoint: x and y are fractions of the width and height, from 0 to 1.');
  return { x: Math.round(point.x * 10_000) / 10_000, y: Math.round(point.y * 10_000) / 10_000 };
}

function requireActive(state: AssetState, projectId: string): Asset {
  if (state.status !== 'active' || state.projectId !== projectId) throw notFound('No such asset in this project.');
  return state;
}

/** Lengths in characters; no control characters (line breaks are allowed in captions and alt text). */
function assertText(field: string, value: string, max: number, options: { required?: boolean } = {}): void {
  if (options.required && value.trim().length === 0) throw invalid(`${field}: must not be empty.`);
  if ([...value].length > max) throw invalid(`${field}: at most ${max} characters.`);
  const allowed = field === 'fileName' ? /[\u0000-\u001f\u007f]/ : /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
  if (allowed.test(value)) throw invalid(`${field}: must not contain control characters.`);
}

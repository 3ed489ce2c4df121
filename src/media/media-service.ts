import type { ApprovalPolicy } from '../domain/access/project-decider.ts';
import type { Clock } from '../clock.ts';
import type { EventLog } from '../event-store/event-log.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import type { FieldCondition } from '../read-models/read-model-store.ts';
import type { Principal } from '../domain/principal.ts';
import { notFound } from '../domain/domain-error.ts';
import { actorOf } from '../domain/access/caller.ts';
import { assertCan } from '../domain/access/permissions.ts';
import { assetDecider, folderName, type AssetCommand, type FocalPoint, type UploadSource } from '../domain/media/asset-decider.ts';
import { assetStreamId } from '../domain/media/media-events.ts';
import { mediaKindOf, MEDIA_KINDS, type MediaKind } from '../domain/media/media-kind.ts';
import { handleCommand } from '../application/command-handler.ts';
import { keysetPage, type Page, type PageRequest } from '../application/keyset-page.ts';
import type { Idempotency, IdempotentResult } from '../application/idempotency.ts';
import type { ProjectionWatermark } from '../application/projection-watermark.ts';
import { ProjectWrites } from '../application/project-writes.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import type { AssetDoc } from '../../projections/media.ts';
import { imageMetadata } from './image-metadata.ts';
import { MediaRejectedError } from './media-errors.ts';
import type { ReceivedFile } from './received-file.ts';
import { sniffMimeType } from './sniff-mime-type.ts';
import { normaliseFileName } from './file-name.ts';
import { mediaQueries, MAX_FOLDERS_LISTED, MEDIA_LISTS, type MediaQueries } from '../../projections/media-queries.ts';
import { WebpVariants } from './webp-variants.ts';

/** An asset as the admin API and the MCP tools show it. */
/** Folders listed at most (a library with more shows the first ones by name). */
export { MAX_FOLDERS_LISTED };

export interface AssetView {
  id: string;
  fileName: string;
  mimeType: string;
  kind: MediaKind;
  byteSize: number;
  sha256: string;
  width: number | null;
  height: number | null;
  altText: string;
  caption: string;
  /** The media library's folder ('' for the top). */
  folder: string;
  /** Images: the point crops keep in view, fractions of width and height from the top left; null for none. */
  focalPoint: FocalPoint | null;
  uploadedAt: string;
  updatedAt: string;
}

export interface UploadDetails {
  /** As the client named the file (normalised here); absent: the fallback. */
  fileName?: string | undefined;
  altText?: string | undefined;
  caption?: string | undefined;
  folder?: string | undefined;
  source: UploadSource;
}

export interface MediaListQuery extends PageRequest {
  /** image, video, audio, document, or a MIME type prefix (image/png, application/). */
  type?: string | undefined;
  /** Case-insensitive substring of the file name. */
  name?: string | undefined;
  /** Only the assets in this folder ('' for the top), not its subfolders. */
  folder?: string | undefined;
}

/**
 * Media use cases (spec: list_media and upload_media, section 4.4): upload, list, read, edit alt text and
 * caption, delete. An upload's bytes are stored first and the event appended after, so a crash leaves at
 * worst an unreferenced blob, never an asset without bytes. Writes return once the read models show them.
 */
export class MediaService {
  readonly #writes: ProjectWrites;

  constructor(
    private readonly deps: {
      log: EventLog;
      reader: ReadModelReader;
      blobs: BlobStore;
      idempotency: Idempotency;
      watermark: ProjectionWatermark;
      clock: Clock;
    },
  ) {
    this.#writes = new ProjectWrites(deps);
    this.#media = mediaQueries(deps.reader);
  }

  readonly #media: MediaQueries;

  /** The permission check an upload route makes before reading any byte of the body. */
  assertMayUpload(principal: Principal): void {
    assertCan(principal, 'media.upload');
  }

  /**
   * Stores an upload received into `file` (the caller removes the file afterwards) and records it. The MIME
   * type is sniffed from the bytes; images get their size. Idempotent by key: the same key and file answer
   * with the first upload's asset.
   */
  async upload(principal: Principal, project: { projectId: string }, file: ReceivedFile, details: UploadDetails, idempotencyKey?: string): Promise<IdempotentResult> {
    if (file.size === 0) throw new MediaRejectedError('The file is empty.', 'Upload a file with content.');
    const mimeType = await sniffMimeType(file.path);
    const image = await imageMetadata(file.path, mimeType);
    const fileName = normaliseFileName(details.fileName, details.source === 'source-url' ? 'download' : 'upload');
    const altText = details.altText ?? '';
    const caption = details.caption ?? '';
    const folder = folderName(details.folder ?? '');
    const request = { sha256: file.sha256, byteSize: file.size, fileName, altText, caption, ...(folder ? { folder } : {}) };
    return this.#writes.idempotent(principal, project.projectId, 'upload_media', idempotencyKey, request, ['assetId'], async (ids) => {
      const assetId = ids['assetId']!;
      const blobKey = `${project.projectId}/${assetId}`;
      const command: AssetCommand = {
        type: 'register_upload',
        assetId,
        projectId: project.projectId,
        fileName,
        mimeType,
        byteSize: file.size,
        sha256: file.sha256,
        width: image.width,
        height: image.height,
        animated: image.animated,
        altText,
        caption,
        folder,
        blobKey,
        source: details.source,
      };
      const context = { principal, now: this.deps.clock.now().toISOString() };
      // Decide before storing anything: bad details (an over-long caption) leave no blob behind.
      assetDecider.decide(command, assetDecider.initialState(), context);
      await this.deps.blobs.put(blobKey, { path: file.path }, { contentType: mimeType });
      const result = await handleCommand(this.deps.log, assetStreamId(assetId), assetDecider, command, context, { actor: actorOf(principal) });
      await this.#writes.settle(result.position);
      const doc = await this.#media.asset(assetId);
      const at = context.now;
      return {
        status: 201,
        body: doc ? assetView(doc) : { id: assetId, fileName, mimeType, kind: mediaKindOf(mimeType), byteSize: file.size, sha256: file.sha256, width: image.width, height: image.height, altText, caption, folder, focalPoint: null, uploadedAt: at, updatedAt: at },
      };
    });
  }

  /**
   * The project's assets, newest first, a page at a time (keyset: see keyset-page.ts). Conditions the read
   * models cannot express (name substrings, MIME prefixes) are applied while reading the project's assets in
   * list order, at most a bounded number per page: such a page may be short, or empty, with a nextCursor.
   */
  async list(project: { projectId: string }, query: MediaListQuery): Promise<Page<AssetView>> {
    const type = typeFilter(query.type);
    const filter: Record<string, FieldCondition> = { projectId: project.projectId, ...type.filter, ...(query.folder === undefined ? {} : { folder: folderName(query.folder) }) };
    const needle = query.name?.toLowerCase();
    const predicates = [type.matches, needle ? (doc: AssetDoc) => doc.fileName.toLowerCase().includes(needle) : undefined].filter((p) => p !== undefined);
    const keep = predicates.length === 0 ? undefined : (doc: Record<string, unknown>) => predicates.every((matches) => matches(doc as unknown as AssetDoc));
    const { cursor: _cursor, limit: _limit, ...list } = query;
    return keysetPage(this.deps.reader, { ...MEDIA_LISTS.assets, filter, sort: [['seq', 'desc']], identity: ['media', project.projectId, list], map: (doc) => assetView(doc as unknown as AssetDoc), ...(keep ? { keep } : {}) }, query);
  }

  async get(project: { projectId: string }, assetId: string): Promise<AssetView> {
    return assetView(await this.#docOrFail(project.projectId, assetId));
  }

  /** The folders of the project's media library that hold assets, by name, with how many each holds. */
  async folders(project: { projectId: string }): Promise<Array<{ folder: string; assets: number }>> {
    const docs = await this.#media.foldersOfProject(project.projectId);
    return docs.map((doc) => ({ folder: doc.folder, assets: doc.assets }));
  }

  async updateDetails(
    principal: Principal,
    project: { projectId: string },
    assetId: string,
    details: { altText?: string | undefined; caption?: string | undefined; folder?: string | undefined; focalPoint?: FocalPoint | null | undefined },
  ): Promise<AssetView> {
    await this.#docOrFail(project.projectId, assetId);
    const result = await handleCommand(
      this.deps.log,
      assetStreamId(assetId),
      assetDecider,
      { type: 'update_details', projectId: project.projectId, altText: details.altText, caption: details.caption, folder: details.folder, focalPoint: details.focalPoint },
      { principal, now: this.deps.clock.now().toISOString() },
      { actor: actorOf(principal) },
    );
    await this.#writes.settle(result.position);
    return assetView(await this.#docOrFail(project.projectId, assetId));
  }

  /** Deletes the asset: it answers 404 at once; its bytes are removed by the media purge outbox. */
  async delete(principal: Principal, project: { projectId: string; approvalPolicy?: ApprovalPolicy | undefined }, assetId: string): Promise<void> {
    const doc = await this.#docOrFail(project.projectId, assetId);
    const result = await handleCommand(
      this.deps.log,
      assetStreamId(assetId),
      assetDecider,
      { type: 'delete_asset', projectId: project.projectId, blobKeys: [doc.blobKey, WebpVariants.keyOf(doc.blobKey)] },
      { principal, now: this.deps.clock.now().toISOString(), approvalPolicy: project.approvalPolicy },
      { actor: actorOf(principal) },
    );
    await this.#writes.settle(result.position);
  }

  async #docOrFail(projectId: string, assetId: string): Promise<AssetDoc> {
    const doc = await this.#media.asset(assetId);
    if (!doc || doc.projectId !== projectId) throw notFound(`No asset ${assetId} in this project.`);
    return doc;
  }
}

export function assetView(doc: AssetDoc): AssetView {
  return {
    id: doc.assetId,
    fileName: doc.fileName,
    mimeType: doc.mimeType,
    kind: doc.kind,
    byteSize: doc.byteSize,
    sha256: doc.sha256,
    width: doc.width,
    height: doc.height,
    altText: doc.altText,
    caption: doc.caption,
    folder: doc.folder ?? '',
    focalPoint: doc.focalPoint ?? null,
    uploadedAt: doc.uploadedAt,
    updatedAt: doc.updatedAt,
  };
}

/**
 * `type` as a read-model filter: a kind; a top-level type (`image/`); or a MIME prefix (`image/png`,
 * `application/vnd.`), filtered by its top-level type in the store and by the prefix while scanning.
 */
function typeFilter(type: string | undefined): { filter: Record<string, FieldCondition>; matches?: (doc: AssetDoc) => boolean } {
  if (!type) return { filter: {} };
  if ((MEDIA_KINDS as readonly string[]).includes(type)) return { filter: { kind: type } };
  const prefix = type.toLowerCase();
  const [top, rest] = prefix.split('/', 2) as [string, string | undefined];
  if (!rest) return { filter: { mimeTop: top } };
  return { filter: { mimeTop: top }, matches: (doc) => doc.mimeType.toLowerCase().startsWith(prefix) };
}

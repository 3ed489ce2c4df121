import type { Router } from '@koa/router';
import { newRouter } from '../router.ts';
import type { Context } from 'koa';
import { z } from 'zod';
import type { OutboundPolicy } from '../../security/ssrf-guard.ts';
import type { MediaService, AssetView } from '../../media/media-service.ts';
import { MEDIA_KINDS } from '../../domain/media/media-kind.ts';
import { ALT_TEXT_MAX, CAPTION_MAX, FOLDER_MAX } from '../../domain/media/media-events.ts';
import { receiveMultipart, FILE_FIELD } from '../../media/multipart-upload.ts';
import { discard, receiveBytes, type ReceivedFile } from '../../media/received-file.ts';
import { fetchSource } from '../../media/source-fetch.ts';
import { asHttp, mediaHttpError } from '../errors/media-http-errors.ts';
import { MediaRejectedError, MediaTooLargeError } from '../../media/media-errors.ts';
import { notFound, unsupportedMediaType, validationError } from '../errors/error-factory.ts';
import type { ApiRegistry } from './api-registry.ts';
import { listQuery, pageSchema } from './list-query.ts';
import { type AdminDeps, idempotencyKeyOf, principalOf, projectOf } from './admin-context.ts';
import { isUuid } from './request-body.ts';

/** What the media routes need beyond the admin API's collaborators. */
export interface MediaAdminDeps {
  service: MediaService;
  /** MEDIA_MAX_BYTES. */
  maxBytes: number;
  /** MEDIA_SOURCE_TIMEOUT_MS. */
  sourceTimeoutMs: number;
  /** OUTBOUND_ALLOWLIST, parsed. */
  outbound: OutboundPolicy;
  /** Where uploads wait between arriving and being stored. */
  tempDir: string;
}

/** Room for a multipart body's boundaries and text fields beside the file. */
const MULTIPART_OVERHEAD_BYTES = 128 * 1024;
const JSON_OVERHEAD_BYTES = 64 * 1024;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
const DATA_URL_PREFIX = /^data:[^,]{0,200};base64,/i;

const mediaType = z
  .string()
  .max(255)
  .refine((value) => (MEDIA_KINDS as readonly string[]).includes(value) || /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9!#$&^_.+-]*$/i.test(value), {
    message: `must be ${MEDIA_KINDS.join(', ')} or a MIME type prefix such as image/png or application/`,
  })
  .optional();

const focalPointSchema = z.object({ x: z.number().min(0, 'from 0 to 1').max(1, 'from 0 to 1'), y: z.number().min(0, 'from 0 to 1').max(1, 'from 0 to 1') }).meta({ id: 'FocalPoint' });

/** An asset as the admin API answers it (AssetView and its media URL). */
export const assetSchema = z.object({
  id: z.uuid(),
  fileName: z.string(),
  mimeType: z.string(),
  kind: z.enum(MEDIA_KINDS),
  byteSize: z.number().int(),
  sha256: z.string(),
  width: z.number().int().nullable(),
  height: z.number().int().nullable(),
  altText: z.string(),
  caption: z.string(),
  folder: z.string().describe('The media library\'s folder, segments joined by "/" (\'\' for the top).'),
  focalPoint: focalPointSchema.nullable().describe('Images: the point crops should keep in view, as fractions of the width and height from the top left; null for none (keep the centre).'),
  uploadedAt: z.string(),
  updatedAt: z.string(),
  url: z.string().describe('The public media URL (GET /media/{assetId} on the project-pinned public base).'),
}).meta({ id: 'Asset' });
const assetPageSchema = pageSchema(assetSchema);
const mediaFoldersSchema = z.object({ items: z.array(z.object({ folder: z.string(), assets: z.number().int() })) }).meta({ id: 'MediaFolders' });

const mediaListQuery = listQuery({
  type: mediaType,
  folder: z.string().max(FOLDER_MAX, `at most ${FOLDER_MAX} characters`).optional().describe('Only the assets in this folder (\'\' for the top), not its subfolders.'),
  name: z.string().min(1, 'must not be empty').max(255, 'at most 255 characters').optional(),
});

const details = {
  fileName: z.string().max(1000, 'at most 1000 characters').optional(),
  altText: z.string().max(ALT_TEXT_MAX, `at most ${ALT_TEXT_MAX} characters`).optional(),
  caption: z.string().max(CAPTION_MAX, `at most ${CAPTION_MAX} characters`).optional(),
  folder: z.string().max(FOLDER_MAX, `at most ${FOLDER_MAX} characters`).optional().describe('The media library\'s folder to put it in, segments joined by "/" (created when first used).'),
};

const jsonUploadBody = z
  .object({
    base64: z.string().optional(),
    sourceUrl: z.string().max(8192, 'at most 8192 characters').optional(),
    ...details,
    idempotencyKey: z.string().optional(),
  })
  .superRefine((body, ctx) => {
    if ((body.base64 === undefined) === (body.sourceUrl === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['base64'], message: 'send exactly one of base64 and sourceUrl (or a multipart/form-data body with the field "file")' });
    }
  });

/** The multipart/form-data upload, documented beside the JSON one. */
const multipartUploadBody = z.object({
  [FILE_FIELD]: z.file().describe('The file; its MIME type is sniffed from the bytes.'),
  ...details,
  idempotencyKey: z.string().optional(),
});

const patchBody = z.object({
  altText: details.altText,
  caption: details.caption,
  folder: details.folder,
  focalPoint: focalPointSchema.nullable().optional(),
});

/**
 * Media (spec: list_media and upload_media): upload by multipart/form-data, base64 in JSON, or a source URL
 * the service fetches; list with filters; read; edit alt text and caption; delete. Uploads check the
 * caller's permission before reading the body and enforce MEDIA_MAX_BYTES while reading it.
 */
export function mediaRoutes(_deps: AdminDeps, api: ApiRegistry, media: MediaAdminDeps): Router {
  const router = newRouter();
  const { service } = media;
  const assetId = (ctx: Context): string => {
    const value = ctx.params['assetId'];
    if (!isUuid(value)) throw notFound(`No asset ${value}.`);
    return value;
  };
  const withUrl = (ctx: Context, projectId: string, view: AssetView) => ({ ...view, url: `${ctx.protocol}://${ctx.host}/public/p/${projectId}/v1/media/${view.id}` });

  // Multipart uploads are handled here; JSON ones fall through to the documented route below.
  router.post('/media', async (ctx, next) => {
    const principal = principalOf(ctx);
    service.assertMayUpload(principal);
    const project = projectOf(ctx);
    if (!ctx.is('multipart')) {
      if (hasBody(ctx) && !ctx.is(['application/json', '+json'])) {
        throw unsupportedMediaType('Upload media as multipart/form-data or as JSON.', { hint: `Send multipart/form-data with the file in the field "${FILE_FIELD}", or JSON {base64 | sourceUrl, fileName?, altText?, caption?}.` });
      }
      return next();
    }
    const declared = ctx.request.length;
    if (declared !== undefined && declared > media.maxBytes + MULTIPART_OVERHEAD_BYTES) throw mediaHttpError(new MediaTooLargeError(media.maxBytes))!;
    const upload = await asHttp(() => receiveMultipart(ctx, { dir: media.tempDir, maxBytes: media.maxBytes }));
    try {
      if (!upload.file) throw validationError(`${FILE_FIELD}: required, the file to upload (a multipart part with a file name and Content-Type).`);
      const fields = parseFields(upload.fields);
      const result = await asHttp(() =>
        service.upload(
          principal,
          project,
          upload.file!,
          { fileName: fields.fileName ?? upload.file!.originalFilename, altText: fields.altText, caption: fields.caption, folder: fields.folder, source: 'multipart' },
          idempotencyKeyOf(ctx, upload.fields),
        ),
      );
      ctx.status = result.status;
      ctx.body = withUrl(ctx, project.projectId, result.body as AssetView);
    } finally {
      await discard(upload.file ?? undefined);
    }
  });

  api.add(
    router,
    {
      method: 'post',
      path: '/media',
      operationId: 'uploadMedia',
      permission: 'media.upload',
      summary: `Upload a media file (upload_media): multipart/form-data with the file in the field "${FILE_FIELD}" (and text fields fileName, altText, caption), or JSON with base64 (a data: URL prefix is allowed) or sourceUrl (fetched by the service; http(s) only, private and metadata addresses refused unless OUTBOUND_ALLOWLIST names them, redirects within the same host only). The MIME type is sniffed from the bytes. 413 PAYLOAD_TOO_LARGE above MEDIA_MAX_BYTES; 400 for an empty or unreadable file. Idempotent by key. Agent keys need scope full or schema.`,
      tag: 'Media',
      body: jsonUploadBody,
      bodyLimitBytes: Math.ceil(media.maxBytes / 3) * 4 + JSON_OVERHEAD_BYTES,
      alternativeBodies: { 'multipart/form-data': multipartUploadBody },
      responses: { 201: { description: 'The asset, with its public URL on the project-pinned base', schema: assetSchema } },
      errors: {},
    },
    async (ctx, { body }) => {
      const principal = principalOf(ctx);
      const project = projectOf(ctx);
      let file: ReceivedFile | undefined;
      try {
        let fileName = body.fileName;
        let source: 'base64' | 'source-url';
        if (body.base64 !== undefined) {
          file = await asHttp(() => receiveBytes(decodeBase64(body.base64!, media.maxBytes), { dir: media.tempDir, maxBytes: media.maxBytes }));
          source = 'base64';
        } else {
          const fetched = await asHttp(() => fetchSource(body.sourceUrl!, { policy: media.outbound, maxBytes: media.maxBytes, timeoutMs: media.sourceTimeoutMs, dir: media.tempDir }));
          file = fetched;
          fileName ??= fetched.fileName;
          source = 'source-url';
        }
        const received = file;
        const result = await asHttp(() => service.upload(principal, project, received, { fileName, altText: body.altText, caption: body.caption, folder: body.folder, source }, idempotencyKeyOf(ctx, body)));
        ctx.status = result.status;
        ctx.body = withUrl(ctx, project.projectId, result.body as AssetView);
      } finally {
        await discard(file);
      }
    },
  );

  api.add(router, { method: 'get', path: '/media', operationId: 'listMedia', permission: 'media.list', summary: `List media, newest first (list_media): filter by type (${MEDIA_KINDS.join(', ')}, or a MIME type prefix such as image/png) and by a name substring (case-insensitive); limit and cursor as every list (a page filtered by name or MIME prefix may be short, with a nextCursor)`, tag: 'Media', query: mediaListQuery, responses: { 200: { description: 'A page of assets', schema: assetPageSchema } }, errors: {} }, async (ctx, { query }) => {
    const project = projectOf(ctx);
    const result = await service.list(project, query);
    ctx.body = { items: result.items.map((item) => withUrl(ctx, project.projectId, item)), nextCursor: result.nextCursor };
  });

  api.add(
    router,
    {
      method: 'get',
      path: '/media/folders',
      operationId: 'listMediaFolders',
      permission: 'media.list',
      summary: 'The folders of the media library that hold assets, by name, each with how many it holds (a folder is made by putting an asset in it, and goes with its last one)',
      tag: 'Media',
      responses: { 200: { description: 'The folders', schema: mediaFoldersSchema } },
      errors: {},
    },
    async (ctx) => {
      ctx.body = { items: await service.folders(projectOf(ctx)) };
    },
  );

  api.add(router, { method: 'get', path: '/media/:assetId', operationId: 'getMedia', permission: 'media.list', summary: 'Read an asset', tag: 'Media', responses: { 200: { description: 'The asset', schema: assetSchema } }, errors: {} }, async (ctx) => {
    const project = projectOf(ctx);
    ctx.body = withUrl(ctx, project.projectId, await service.get(project, assetId(ctx)));
  });

  api.add(router, { method: 'patch', path: '/media/:assetId', operationId: 'updateMedia', permission: 'media.upload', summary: `Change an asset's altText (at most ${ALT_TEXT_MAX} characters), caption (at most ${CAPTION_MAX}), folder and (images) focal point (null clears it); an absent one is kept`, tag: 'Media', body: patchBody, responses: { 200: { description: 'The asset', schema: assetSchema } }, errors: {} }, async (ctx, { body }) => {
    const project = projectOf(ctx);
    ctx.body = withUrl(ctx, project.projectId, await service.updateDetails(principalOf(ctx), project, assetId(ctx), body));
  });

  api.add(router, { method: 'delete', path: '/media/:assetId', operationId: 'deleteMedia', permission: 'media.delete', summary: 'Delete an asset (tenant_admin, or an agent key of scope full or schema): GET /media/{assetId} answers 404 at once, and the bytes are removed from storage shortly after', tag: 'Media', responses: { 204: { description: 'Deleted', empty: true } }, errors: { 403: ['HUMAN_APPROVAL_REQUIRED'] } }, async (ctx) => {
    await service.delete(principalOf(ctx), projectOf(ctx), assetId(ctx));
    ctx.status = 204;
  });

  return router;
}

/** The multipart text fields, checked as the JSON body's are. */
function parseFields(fields: Record<string, string>): { fileName?: string | undefined; altText?: string | undefined; caption?: string | undefined; folder?: string | undefined } {
  const result = z.object(details).safeParse(fields);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw validationError(`${issue.path.map(String).join('.')}: ${issue.message}`);
  }
  return result.data;
}

/** Standard or URL-safe base64, optionally as a data: URL, whitespace ignored; refused when malformed or decoding to more than maxBytes. */
function decodeBase64(value: string, maxBytes: number): Buffer {
  const text = value.replace(DATA_URL_PREFIX, '').replace(/\s+/g, '');
  if (!BASE64.test(text) || text.replace(/=+$/, '').length % 4 === 1) throw new MediaRejectedError('base64: not valid base64.');
  const decodedLength = Math.floor((text.replace(/=+$/, '').length * 3) / 4);
  if (decodedLength > maxBytes) throw new MediaTooLargeError(maxBytes);
  if (decodedLength === 0) throw new MediaRejectedError('The file is empty.', 'Upload a file with content.');
  return Buffer.from(text, 'base64');
}

/** RFC 9112: a request has a body when it has Transfer-Encoding or a non-zero Content-Length. */
function hasBody(ctx: Context): boolean {
  if (ctx.get('Transfer-Encoding') !== '') return true;
  const length = ctx.request.length;
  return length !== undefined && length > 0;
}

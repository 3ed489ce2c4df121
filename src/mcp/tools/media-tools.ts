import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineTool, idempotencyKey, READ_ONLY, WRITES, type ToolDefinition } from '../tool-kit.ts';
import { ToolFailure } from '../tool-result.ts';
import { assetSchema } from '../../http/admin/media-routes.ts';
import { pageSchema } from '../../http/admin/list-query.ts';

const MEDIA_TYPES = ['image', 'video', 'audio', 'document'] as const;

/** Media: list and upload. */
export const mediaTools: ToolDefinition[] = [
  defineTool({
    name: 'list_media',
    title: 'List media',
    description:
      'Lists the project\'s media assets, newest first, a page at a time: {items: [{id, fileName, mimeType, kind, byteSize, width, height, altText, caption, url, uploadedAt}], nextCursor}; pass nextCursor as cursor for the next page. Filter by type (image, video, audio, document, or a MIME type prefix such as image/png) and by a file name substring. An asset id goes into image, file and image_gallery fields. Any agent key scope.',
    input: {
      type: z.string().min(1).max(255).optional().describe(`${MEDIA_TYPES.join(', ')}, or a MIME type prefix such as image/png or application/.`),
      name: z.string().min(1).max(255).optional().describe('A substring of the file name (case-insensitive).'),
      cursor: z.string().min(1).optional().describe('nextCursor of the previous page.'),
      limit: z.number().int().min(1).max(100).optional().describe('Assets per page, default 20, at most 100.'),
    },
    output: pageSchema(assetSchema),
    annotations: READ_ONLY,
    run: async (args, { api }) => api.get('/media', { query: args }),
  }),

  defineTool({
    name: 'upload_media',
    title: 'Upload media',
    description:
      'Uploads a file and returns the asset: {id, fileName, mimeType, kind, byteSize, width, height, url, ...}; put its id in an image, file or image_gallery field (then save_revision). Give exactly one source: base64 (the bytes, a data: URL prefix is allowed), sourceUrl (an http(s) URL the service fetches; private and internal addresses are refused), or filePath (a file on the machine running this MCP server; stdio server only). The type is detected from the bytes; images get their width and height. The service refuses files above its MEDIA_MAX_BYTES (413) and empty or unreadable files (400). Needs an agent key of scope full or schema (content keys may only list media).',
    input: {
      base64: z.string().min(1).optional().describe('The file\'s bytes in base64 (standard or URL-safe), optionally as a data: URL.'),
      sourceUrl: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).max(8192).optional().describe('An http(s) URL the service downloads the file from.'),
      filePath: z.string().min(1).max(4096).optional().describe('A path to a local file (stdio MCP server only; relative paths are from its working directory).'),
      fileName: z.string().min(1).max(1000).optional().describe('The file name to store, e.g. "hero.png" (default: from filePath or sourceUrl, else "upload").'),
      altText: z.string().max(1000).optional().describe('Alternative text for images.'),
      caption: z.string().max(2000).optional().describe('A caption.'),
      idempotencyKey,
    },
    output: assetSchema,
    annotations: { ...WRITES, openWorldHint: true },
    run: async (args, context) => {
      const sources = (['base64', 'sourceUrl', 'filePath'] as const).filter((k) => args[k] !== undefined);
      if (sources.length !== 1) {
        throw new ToolFailure('VALIDATION_ERROR', `Give exactly one of base64, sourceUrl and filePath${sources.length ? ` (got ${sources.join(' and ')})` : ''}.`);
      }
      const details = {
        ...(args.fileName === undefined ? {} : { fileName: args.fileName }),
        ...(args.altText === undefined ? {} : { altText: args.altText }),
        ...(args.caption === undefined ? {} : { caption: args.caption }),
        ...(args.idempotencyKey === undefined ? {} : { idempotencyKey: args.idempotencyKey }),
      };
      if (args.filePath === undefined) {
        return context.api.request('POST', '/media', { body: args.base64 !== undefined ? { base64: args.base64, ...details } : { sourceUrl: args.sourceUrl, ...details } });
      }
      if (context.transport !== 'stdio') {
        throw new ToolFailure('VALIDATION_ERROR', 'filePath is not available on the remote MCP endpoint: the file would be read on the server.', 'Send the bytes as base64, or a sourceUrl the service can fetch.');
      }
      const form = new FormData();
      form.append('file', await openFile(args.filePath), args.fileName ?? path.basename(args.filePath));
      for (const [key, value] of Object.entries(details)) form.append(key, value);
      return context.api.request('POST', '/media', { form });
    },
  }),
];

async function openFile(filePath: string): Promise<Blob> {
  const resolved = path.resolve(filePath);
  let stat: fs.Stats;
  try {
    stat = await fs.promises.stat(resolved);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ToolFailure('VALIDATION_ERROR', `filePath: ${resolved} ${code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? 'error'})`}.`);
  }
  if (!stat.isFile()) throw new ToolFailure('VALIDATION_ERROR', `filePath: ${resolved} is not a file.`);
  try {
    return await fs.openAsBlob(resolved);
  } catch (error) {
    throw new ToolFailure('VALIDATION_ERROR', `filePath: ${resolved} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
}

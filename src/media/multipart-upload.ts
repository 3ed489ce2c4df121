import fs from 'node:fs/promises';
import type { Context } from 'koa';
import { koaBody } from 'koa-body';
import { MediaRejectedError, MediaTooLargeError } from './media-errors.ts';
import type { ReceivedFile } from './received-file.ts';

/** The multipart field that carries the file; the other fields are text. */
export const FILE_FIELD = 'file';
const MAX_FIELDS = 20;
const MAX_FIELDS_BYTES = 64 * 1024;

export interface MultipartUpload {
  /** Null when the form has no part named `file` with a file in it. */
  file: (ReceivedFile & { originalFilename: string | undefined }) | null;
  /** Text fields, first value of each. */
  fields: Record<string, string>;
}

/** formidable's error codes (formidable/src/FormidableError.js) that are the client's doing. */
const TOO_LARGE = new Set([1009, 1016]);
const CLIENT_ERRORS: Record<number, string> = {
  1002: 'The upload was aborted before it was complete.',
  1006: `The form's text fields exceed ${MAX_FIELDS_BYTES} bytes.`,
  1007: `The form has more than ${MAX_FIELDS} fields.`,
  1010: 'The file is empty.',
  1011: 'The multipart body has no Content-Type.',
  1012: 'The multipart body is malformed.',
  1013: 'The multipart body has no boundary.',
  1014: 'The multipart body has an unknown Transfer-Encoding.',
  1015: `Send one file per upload, in the field "${FILE_FIELD}".`,
};

/**
 * Reads a multipart/form-data upload with formidable (through koa-body): the file streams into a temporary
 * file in `dir`, hashed with SHA-256 on the way, and reading stops past `maxBytes` (MediaTooLargeError).
 * Malformed forms are MediaRejectedError. The request body is drained after a refusal so the connection
 * stays usable, and every temporary file but the one returned is removed.
 */
export async function receiveMultipart(ctx: Context, options: { dir: string; maxBytes: number }): Promise<MultipartUpload> {
  const written: string[] = [];
  let refusal: unknown;
  const parse = koaBody({
    multipart: true,
    json: false,
    urlencoded: false,
    text: false,
    patchKoa: true,
    patchNode: false,
    formidable: {
      uploadDir: options.dir,
      maxFiles: 1,
      maxFileSize: options.maxBytes,
      maxTotalFileSize: options.maxBytes,
      allowEmptyFiles: true,
      minFileSize: 0,
      maxFields: MAX_FIELDS,
      maxFieldsSize: MAX_FIELDS_BYTES,
      hashAlgorithm: 'sha256',
      filter: (part) => part.name === FILE_FIELD,
      onFileBegin: (_name, file) => {
        written.push(file.filepath);
      },
    },
    onError: (error) => {
      refusal = error;
    },
  });
  await parse(ctx, async () => {});
  if (refusal !== undefined) {
    ctx.req.resume();
    await removeAll(written);
    throw translate(refusal, options.maxBytes);
  }
  const files = (ctx.request as { files?: Record<string, unknown> }).files ?? {};
  const candidate = files[FILE_FIELD];
  const file = Array.isArray(candidate) ? candidate[0] : candidate;
  const body = ((ctx.request as { body?: unknown }).body ?? {}) as Record<string, unknown>;
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === 'string') fields[name] = first;
  }
  if (!file || typeof file !== 'object') {
    await removeAll(written);
    return { file: null, fields };
  }
  const persisted = file as { filepath: string; size: number; hash?: string | null; originalFilename?: string | null };
  await removeAll(written.filter((p) => p !== persisted.filepath));
  return {
    file: { path: persisted.filepath, size: persisted.size, sha256: String(persisted.hash ?? ''), originalFilename: persisted.originalFilename ?? undefined },
    fields,
  };
}

function translate(error: unknown, maxBytes: number): Error {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'number' && TOO_LARGE.has(code)) return new MediaTooLargeError(maxBytes);
  if (typeof code === 'number' && CLIENT_ERRORS[code]) return new MediaRejectedError(CLIENT_ERRORS[code]!);
  return error instanceof Error ? error : new Error(String(error));
}

async function removeAll(paths: readonly string[]): Promise<void> {
  await Promise.all(paths.map((p) => fs.rm(p, { force: true })));
}

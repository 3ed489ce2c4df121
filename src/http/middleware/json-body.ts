import type { Context, Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { unsupportedMediaType, validationError } from '../errors/error-factory.ts';
import { isContentDecodingError } from '../errors/to-http-error.ts';

export const DEFAULT_JSON_LIMIT_BYTES = 1024 * 1024;
/**
 * Deepest nesting of arrays and objects accepted in a JSON body. Real documents (rich text included) stay far
 * below it; bodies nested thousands deep exist only to overflow recursive code downstream (canonical JSON for
 * idempotency keys, validators).
 */
export const DEFAULT_JSON_MAX_DEPTH = 64;

export interface JsonBodyOptions {
  /** Largest body accepted, in bytes after decompression. Default DEFAULT_JSON_LIMIT_BYTES (1 MiB). */
  limitBytes?: number;
  /** Deepest nesting of arrays and objects accepted. Default DEFAULT_JSON_MAX_DEPTH (64). */
  maxDepth?: number;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
/** The media types taken as JSON bodies: application/json and any *\/*+json. */
export const JSON_TYPES: string[] = ['application/json', '+json'];

/**
 * JSON request bodies for the routes that take them (mount per router or per route, not app-wide).
 *
 * On POST, PUT and PATCH:
 * - a body that is not `application/json` (or `*\/*+json`) -> 415 UNSUPPORTED_MEDIA_TYPE;
 * - Content-Encoding gzip, deflate or br (any case) is decoded; another coding -> 415; a body that does not
 *   decode as its coding says -> 400 VALIDATION_ERROR naming the coding;
 * - a body over `limitBytes` (after decoding) -> 413 PAYLOAD_TOO_LARGE;
 * - anything but a JSON object or array (strict), or a `__proto__` key -> 400 VALIDATION_ERROR;
 * - arrays and objects nested deeper than `maxDepth` -> 400 VALIDATION_ERROR naming the limit;
 * - otherwise the parsed value is in `ctx.request.body`. With no body at all, `ctx.request.body` stays
 *   undefined, and the route's schema decides whether that is allowed.
 * Other methods are passed through untouched. Errors are thrown for the error envelope to answer (koa-body's
 * own errors are mapped there, see toHttpError).
 */
export function jsonBody(options: JsonBodyOptions = {}): Middleware {
  const limitBytes = options.limitBytes ?? DEFAULT_JSON_LIMIT_BYTES;
  const maxDepth = options.maxDepth ?? DEFAULT_JSON_MAX_DEPTH;
  if (!Number.isSafeInteger(limitBytes) || limitBytes <= 0) {
    throw new RangeError(`jsonBody limitBytes must be a positive integer, got ${limitBytes}`);
  }
  if (!Number.isSafeInteger(maxDepth) || maxDepth <= 0) {
    throw new RangeError(`jsonBody maxDepth must be a positive integer, got ${maxDepth}`);
  }
  const parse = koaBody({
    json: true,
    jsonStrict: true,
    jsonLimit: limitBytes,
    jsonTypes: JSON_TYPES,
    urlencoded: false,
    text: false,
    multipart: false,
    patchNode: false,
    patchKoa: true,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH],
  });

  return async function jsonBodyMiddleware(ctx, next) {
    if (!BODY_METHODS.has(ctx.method)) return next();
    if (hasBody(ctx) && !ctx.is(JSON_TYPES)) {
      throw unsupportedMediaType('The request body must be JSON.', {
        hint: 'Send the body with Content-Type: application/json.',
      });
    }
    const coding = normaliseContentEncoding(ctx);
    let parsed = false;
    try {
      await parse(ctx, async () => {
        parsed = true;
        if (nestedDeeperThan((ctx.request as { body?: unknown }).body, maxDepth)) {
          throw validationError(`The request body is nested more than ${maxDepth} levels deep.`, {
            hint: `Send JSON whose arrays and objects nest at most ${maxDepth} levels deep.`,
          });
        }
        await next();
      });
    } catch (error) {
      // Only errors of reading the body are ours to name; the rest of the stack's errors pass through.
      if (!parsed && isContentDecodingError(error)) {
        throw validationError(`The request body does not decode as Content-Encoding ${coding} says.`, {
          hint: `Send the body compressed with ${coding}, or uncompressed without Content-Encoding.`,
          cause: error,
        });
      }
      throw error;
    }
  };
}

/** RFC 9112: a request has a body when it has Transfer-Encoding or a non-zero Content-Length. */
function hasBody(ctx: Context): boolean {
  if (ctx.get('Transfer-Encoding') !== '') return true;
  const length = ctx.request.length;
  return length !== undefined && length > 0;
}

/**
 * Content codings are case-insensitive (RFC 9110 8.4.1) and x-gzip is gzip; the decoder downstream knows only
 * the lower-case names. Returns the coding, or 'identity'.
 */
function normaliseContentEncoding(ctx: Context): string {
  const raw = ctx.get('Content-Encoding');
  if (raw === '') return 'identity';
  let coding = raw.trim().toLowerCase();
  if (coding === 'x-gzip') coding = 'gzip';
  ctx.req.headers['content-encoding'] = coding;
  return coding;
}

/** Whether arrays and objects in `value` nest deeper than `max` levels (iteratively: the input is hostile). */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

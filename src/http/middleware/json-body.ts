import type { Context, Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { unsupportedMediaType } from '../errors/error-factory.ts';

export const DEFAULT_JSON_LIMIT_BYTES = 1024 * 1024;

export interface JsonBodyOptions {
  /** Largest body accepted, in bytes after decompression. Default DEFAULT_JSON_LIMIT_BYTES (1 MiB). */
  limitBytes?: number;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const JSON_TYPES = ['application/json', '+json'];

/**
 * JSON request bodies for the routes that take them (mount per router or per route, not app-wide).
 *
 * On POST, PUT and PATCH:
 * - a body that is not `application/json` (or `*\/*+json`) -> 415 UNSUPPORTED_MEDIA_TYPE;
 * - a body over `limitBytes` -> 413 PAYLOAD_TOO_LARGE;
 * - anything but a JSON object or array (strict), or a `__proto__` key -> 400 VALIDATION_ERROR;
 * - otherwise the parsed value is in `ctx.request.body`. With no body at all, `ctx.request.body` stays
 *   undefined, and the route's schema decides whether that is allowed.
 * Other methods are passed through untouched. Errors are thrown for the error envelope to answer (koa-body's
 * own errors are mapped there, see toHttpError).
 */
export function jsonBody(options: JsonBodyOptions = {}): Middleware {
  const limitBytes = options.limitBytes ?? DEFAULT_JSON_LIMIT_BYTES;
  if (!Number.isSafeInteger(limitBytes) || limitBytes <= 0) {
    throw new RangeError(`jsonBody limitBytes must be a positive integer, got ${limitBytes}`);
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
    return parse(ctx, next);
  };
}

/** RFC 9112: a request has a body when it has Transfer-Encoding or a non-zero Content-Length. */
function hasBody(ctx: Context): boolean {
  if (ctx.get('Transfer-Encoding') !== '') return true;
  const length = ctx.request.length;
  return length !== undefined && length > 0;
}

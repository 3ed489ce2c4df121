import { STATUS_CODES } from 'node:http';
import {
  ErrorCode,
  internal,
  methodNotAllowed,
  notFound,
  payloadTooLarge,
  unavailable,
  unsupportedMediaType,
  validationError,
} from './error-factory.ts';
import { HttpError } from './http-error.ts';

/**
 * Any thrown value as an HttpError, for the error envelope:
 * - an HttpError as is;
 * - body-parsing errors of koa-body / co-body / raw-body / inflation: 413 PAYLOAD_TOO_LARGE, 400
 *   VALIDATION_ERROR (invalid JSON, aborted or truncated body, a body that does not decompress as its
 *   Content-Encoding says), 415 UNSUPPORTED_MEDIA_TYPE (an unknown Content-Encoding);
 * - http-errors (Koa's ctx.throw / ctx.assert, @koa/router's allowedMethods({throw: true})): their status, a
 *   code from the status, their message only when they say it may be exposed;
 * - anything else: 500 INTERNAL_ERROR with a generic message, the original kept as `cause` for the logs.
 *
 * Other engineers' domain errors (event-store conflicts, ...) are mapped before this, through the envelope's
 * `translate` option.
 */
export function toHttpError(thrown: unknown): HttpError {
  if (thrown instanceof HttpError) return thrown;
  if (!(thrown instanceof Error)) return internal({ cause: thrown });
  return fromBodyParsingError(thrown) ?? fromHttpErrorsError(thrown) ?? internal({ cause: thrown });
}

interface StatusBearing {
  status?: unknown;
  statusCode?: unknown;
  expose?: unknown;
  type?: unknown;
  limit?: unknown;
  headers?: unknown;
}

/** raw-body's error types (`err.type`). */
const RAW_BODY_TYPES = new Set([
  'entity.too.large',
  'request.aborted',
  'request.size.invalid',
  'encoding.unsupported',
  'charset.unsupported',
  'stream.encoding.set',
  'stream.not.readable',
]);

/**
 * zlib's (Z_DATA_ERROR, Z_BUF_ERROR, ...) and brotli's (ERR__ERROR_FORMAT_...) errors: a request body that does
 * not decode as its Content-Encoding says. The client's mistake, not ours.
 */
export function isContentDecodingError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (/^Z_[A-Z_]+$/.test(code) || /^ERR__ERROR_/.test(code) || code.includes('BROTLI'));
}

function fromBodyParsingError(error: Error & StatusBearing): HttpError | undefined {
  const status = error.status;
  if (isContentDecodingError(error)) {
    return validationError('The request body does not decode as its Content-Encoding says.', {
      hint: 'Send the body compressed as Content-Encoding names it (gzip, deflate or br), or uncompressed without Content-Encoding.',
      cause: error,
    });
  }
  if (typeof error.type === 'string' && RAW_BODY_TYPES.has(error.type)) {
    switch (error.type) {
      case 'entity.too.large':
        return payloadTooLarge(typeof error.limit === 'number' ? error.limit : undefined, { cause: error });
      case 'request.aborted':
        return validationError('The request body was aborted before it was complete.', { cause: error });
      case 'request.size.invalid':
        return validationError('The request body does not match its Content-Length.', { cause: error });
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return unsupportedMediaType('The request body has an unsupported charset.', { cause: error });
      default:
        return undefined; // stream.* are our bugs: internal error
    }
  }
  // co-body: JSON.parse (or the strict object/array check, or the __proto__ guard) failed.
  if (status === 400 && error instanceof SyntaxError) {
    return validationError('The request body is not valid JSON.', {
      hint: `Send a JSON object or array (${truncate(error.message, 160)}).`,
      cause: error,
    });
  }
  // inflation: Content-Encoding other than gzip, deflate, br or identity.
  if (status === 415 && error.message.startsWith('Unsupported Content-Encoding')) {
    return unsupportedMediaType('Unsupported Content-Encoding; use gzip, deflate, br or identity.', { cause: error });
  }
  return undefined;
}

function fromHttpErrorsError(error: Error & StatusBearing): HttpError | undefined {
  const status = typeof error.status === 'number' ? error.status : error.statusCode;
  // http-errors always set a boolean `expose`; requiring it keeps an upstream client's `status` (a webhook
  // receiver's 404, say) from becoming our response status.
  if (typeof status !== 'number' || typeof error.expose !== 'boolean') return undefined;
  if (!Number.isInteger(status) || status < 400 || status > 599) return undefined;
  const shown = error.expose ? error.message : undefined;
  const options = { cause: error };
  switch (status) {
    case 400:
      return validationError(shown ?? 'Invalid request.', options);
    case 404:
      return notFound(shown ?? 'Not found.', options);
    case 405:
      return methodNotAllowed(allowHeader(error.headers), options);
    case 413:
      return payloadTooLarge(undefined, options);
    case 415:
      return unsupportedMediaType(shown ?? 'Unsupported media type.', options);
    case 500:
      return internal(options);
    case 503:
      return unavailable(undefined, options);
    default:
      return new HttpError({
        status,
        code: codeForStatus(status),
        message: shown ?? STATUS_CODES[status] ?? 'Error',
        retryable: status === 408 || status === 429 ? true : status < 500 ? false : undefined,
        expose: status < 500,
        headers: stringHeaders(error.headers),
        cause: error,
      });
  }
}

/** 401 -> UNAUTHORIZED, 412 -> PRECONDITION_FAILED, 502 -> BAD_GATEWAY, ... (the spec's names where it has one). */
function codeForStatus(status: number): string {
  const known: Record<number, string> = {
    401: ErrorCode.UNAUTHORIZED,
    403: ErrorCode.FORBIDDEN,
    409: ErrorCode.CONFLICT,
    429: ErrorCode.RATE_LIMITED,
  };
  const reason = STATUS_CODES[status];
  return known[status] ?? (reason ? reason.toUpperCase().replace(/[^A-Z0-9]+/g, '_') : `HTTP_${status}`);
}

function allowHeader(headers: unknown): string[] {
  const allow = stringHeaders(headers)['Allow'] ?? stringHeaders(headers)['allow'] ?? '';
  return allow.split(',').map((method) => method.trim()).filter(Boolean);
}

function stringHeaders(headers: unknown): Record<string, string> {
  if (typeof headers !== 'object' || headers === null) return {};
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string' || typeof value === 'number') result[name] = String(value);
  }
  return result;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

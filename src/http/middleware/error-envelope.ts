import type { Context, Middleware } from 'koa';
import type { Logger } from '../../logging/logger.ts';
import type { ErrorEnvelope, HttpError } from '../errors/http-error.ts';
import { INTERNAL_ERROR_MESSAGE } from '../errors/error-factory.ts';
import { toHttpError } from '../errors/to-http-error.ts';
import { requestLoggerOf, setErrorCode } from '../request-context.ts';

/**
 * Response headers an error response keeps from before the error. Everything else set earlier (Cache-Control,
 * ETag, Location, Content-Disposition, Set-Cookie, ...) described the response that failed and is removed,
 * as Koa's own error handler does. Lower-case names; a trailing `*` matches a prefix.
 */
export const HEADERS_KEPT_ON_ERROR: readonly string[] = [
  'access-control-*', // CORS: the public API answers `Access-Control-Allow-Origin: *` on errors too
  'vary',
  'x-request-id',
  'timing-allow-origin',
  'strict-transport-security',
  'x-content-type-options',
  'x-frame-options',
  'referrer-policy',
  'content-security-policy',
  'connection',
];

export interface ErrorEnvelopeOptions {
  /** Used when the request logger has not put a request-bound logger on the context. */
  logger: Logger;
  /**
   * Maps errors that are not HTTP errors (domain errors, store errors) to one, before the generic mapping
   * (see toHttpError). Return undefined to leave an error to the generic mapping.
   */
  translate?: (error: unknown) => HttpError | undefined;
  /** Default HEADERS_KEPT_ON_ERROR. */
  keepHeaders?: readonly string[];
}

/**
 * The one place errors become responses: mount it first after the request logger. Whatever the downstream
 * middleware throws is answered with `{error: {code, message, hint?, retryable?}}`, Content-Type
 * application/json, Cache-Control no-store, the error's status and headers (Retry-After, WWW-Authenticate,
 * Allow). Errors of status 500 and above are logged with their stack and cause; their message is never sent
 * unless the error says it may be (an unexpected error always reads INTERNAL_ERROR_MESSAGE).
 */
export function errorEnvelope(options: ErrorEnvelopeOptions): Middleware {
  const keep = compileKeepList(options.keepHeaders ?? HEADERS_KEPT_ON_ERROR);
  return async function errorEnvelopeMiddleware(ctx, next) {
    try {
      await next();
    } catch (thrown) {
      const error = options.translate?.(thrown) ?? toHttpError(thrown);
      const log = requestLoggerOf(ctx, options.logger);
      setErrorCode(ctx, error.code);
      logError(log, error, thrown);

      if (ctx.headerSent || !ctx.writable) {
        // Part of the response is out (or the client is gone): nothing to answer. Cut the connection so the
        // client sees a truncated response rather than a well-formed one.
        if (!ctx.res.writableEnded) ctx.res.destroy();
        return;
      }
      writeEnvelope(ctx, error, keep);
    }
  };
}

function writeEnvelope(ctx: Context, error: HttpError, keep: (name: string) => boolean): void {
  for (const name of ctx.res.getHeaderNames()) {
    if (!keep(name)) ctx.res.removeHeader(name);
  }
  for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);

  const body: ErrorEnvelope = {
    error: { code: error.code, message: error.expose ? error.message : INTERNAL_ERROR_MESSAGE },
  };
  if (error.expose && error.hint !== undefined) body.error.hint = error.hint;
  if (error.retryable !== undefined) body.error.retryable = error.retryable;

  ctx.status = error.status;
  ctx.body = body;
  ctx.type = 'application/json';
  ctx.set('Cache-Control', 'no-store');
}

function logError(log: Logger, error: HttpError, thrown: unknown): void {
  if (error.status < 500) {
    // Client errors are reported by the request line (status and error code). Their causes (a body parser's
    // error carries the raw body) are not logged.
    log.debug({ status: error.status, code: error.code, reason: error.message }, 'request rejected');
    return;
  }
  const cause = thrown === error ? error.cause ?? error : thrown;
  const level = error.status === 503 ? 'warn' : 'error';
  log[level]({ status: error.status, code: error.code, err: cause }, 'request failed');
}

function compileKeepList(names: readonly string[]): (name: string) => boolean {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const name of names) {
    const lower = name.toLowerCase();
    if (lower.endsWith('*')) prefixes.push(lower.slice(0, -1));
    else exact.add(lower);
  }
  return (name) => {
    const lower = name.toLowerCase();
    return exact.has(lower) || prefixes.some((prefix) => lower.startsWith(prefix));
  };
}

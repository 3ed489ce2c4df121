import { randomUUID } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import type { Logger } from '../../logging/logger.ts';
import { errorCodeOf, setRequestContext } from '../request-context.ts';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/**
 * Longest path (with its query string) written in a request line. Clients choose URLs up to the server's header
 * limit; copying each into the log would let them multiply the log's volume and the memory it is buffered in.
 */
export const MAX_LOGGED_PATH_LENGTH = 1024;

/** A client-supplied request id is used only when it is 1 to 128 characters of [A-Za-z0-9._-]. */
const VALID_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Query parameters left out of logged paths because they carry credentials (public API key, preview token,
 * signatures). Compared case-insensitively.
 */
export const QUERY_PARAMS_NOT_LOGGED: readonly string[] = [
  'api_key',
  'apikey',
  'api-key',
  'key',
  'token',
  'access_token',
  'preview_token',
  'signature',
  'sig',
  'secret',
  'password',
];

export interface RequestLoggerOptions {
  logger: Logger;
  /** Default QUERY_PARAMS_NOT_LOGGED. */
  omitQueryParams?: readonly string[];
  /** Request id when the client sent none (or an invalid one). Default crypto.randomUUID. */
  generateId?: () => string;
}

/**
 * Mount first. Gives every request an id (a valid X-Request-Id from the client, else a new UUID), echoes it
 * as X-Request-Id, puts it and a logger bound to it (`reqId`) on the context (see request-context.ts), and
 * writes one line per request when the response is finished or the connection closed:
 * `{reqId, method, path, status, durationMs, errorCode?, aborted?}`, at info (2xx/3xx), warn (4xx) or
 * error (5xx). `path` keeps the query string minus credential parameters.
 */
export function requestLogger(options: RequestLoggerOptions): Middleware {
  const omitted = new Set((options.omitQueryParams ?? QUERY_PARAMS_NOT_LOGGED).map((name) => name.toLowerCase()));
  const generateId = options.generateId ?? randomUUID;

  return async function requestLoggerMiddleware(ctx, next) {
    const started = process.hrtime.bigint();
    const requestId = requestIdFrom(ctx.get(REQUEST_ID_HEADER), generateId);
    const log = options.logger.child({ reqId: requestId });
    setRequestContext(ctx, requestId, log);
    ctx.set(REQUEST_ID_HEADER, requestId);

    // Log when the response is really over (streamed bodies included), once.
    ctx.res.once('close', () => {
      const status = ctx.res.statusCode;
      const level = status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
      if (!log.isLevelEnabled(level)) return;
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const line: Record<string, unknown> = {
        method: ctx.method,
        path: loggablePath(ctx, omitted),
        status,
        durationMs: Math.round(durationMs * 100) / 100,
      };
      const errorCode = errorCodeOf(ctx);
      if (errorCode !== undefined) line['errorCode'] = errorCode;
      if (!ctx.res.writableFinished) line['aborted'] = true;
      log[level](line, 'request');
    });

    await next();
  };
}

/** The id of a request: the X-Request-Id the client offered when it is valid, else a new one. */
export function requestIdFrom(offered: string | string[] | undefined, generate: () => string = randomUUID): string {
  return typeof offered === 'string' && VALID_REQUEST_ID.test(offered) ? offered : generate();
}

const NOT_LOGGED = new Set(QUERY_PARAMS_NOT_LOGGED);

/**
 * The request line of a request answered before Koa (the public response cache and fast reads), as
 * requestLogger writes it; their answers are 200s and 304s, so at info.
 */
export function logAnsweredBeforeKoa(logger: Logger, line: { reqId: string; method: string | undefined; url: string; status: number; seconds: number; cache?: 'hit' }): void {
  if (!logger.isLevelEnabled('info')) return;
  const mark = line.url.indexOf('?');
  const path = mark < 0 ? line.url : line.url.slice(0, mark);
  const querystring = mark < 0 ? '' : line.url.slice(mark + 1);
  const durationMs = Math.round(line.seconds * 1e5) / 100;
  logger.info({ reqId: line.reqId, method: line.method, path: loggablePath({ path, querystring }, NOT_LOGGED), status: line.status, durationMs, ...(line.cache ? { cache: line.cache } : {}) }, 'request');
}

/**
 * The path with its query string, minus the parameters that carry credentials, cut at MAX_LOGGED_PATH_LENGTH
 * characters (the cut says how many were left out).
 */
export function loggablePath(ctx: Pick<Context, 'path' | 'querystring'>, omitted: ReadonlySet<string>): string {
  const full = withoutCredentials(ctx, omitted);
  if (full.length <= MAX_LOGGED_PATH_LENGTH) return full;
  return `${full.slice(0, MAX_LOGGED_PATH_LENGTH)}…[${full.length - MAX_LOGGED_PATH_LENGTH} more characters]`;
}

function withoutCredentials(ctx: Pick<Context, 'path' | 'querystring'>, omitted: ReadonlySet<string>): string {
  if (ctx.querystring === '') return ctx.path;
  const kept: string[] = [];
  for (const pair of ctx.querystring.split('&')) {
    const rawName = pair.split('=', 1)[0] ?? '';
    let name: string;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '));
    } catch {
      name = rawName;
    }
    if (!omitted.has(name.toLowerCase())) kept.push(pair);
  }
  return kept.length === 0 ? ctx.path : `${ctx.path}?${kept.join('&')}`;
}

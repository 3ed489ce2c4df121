import { hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Middleware } from 'koa';

/** Request headers a browser may send cross-origin to the public API. */
const ALLOWED_HEADERS = 'Authorization, Content-Type, If-None-Match, X-Service-Public-Api-Key';
/** Response headers scripts on other origins may read. */
const EXPOSED_HEADERS = 'ETag, Location, Retry-After, Content-Range, Content-Length, Accept-Ranges';

/** The CORS headers of every public response (the fast lane of public reads sends them too). */
export const PUBLIC_CORS_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['Access-Control-Allow-Origin', '*'],
  ['Access-Control-Expose-Headers', EXPOSED_HEADERS],
];

/** Cache-Control of public 200s: reuse for PUBLIC_CACHE_MAX_AGE seconds, or revalidate on every use (0). */
export function publicCacheControl(maxAgeSeconds: number): string {
  return maxAgeSeconds > 0 ? `public, max-age=${maxAgeSeconds}, stale-while-revalidate=${maxAgeSeconds}` : 'public, no-cache';
}

/** The strong ETag of a body: over its exact bytes. */
export function bodyEtag(bytes: Buffer | string): string {
  return `"${hash('sha1', bytes, 'base64url')}"`;
}

/**
 * Scheme and host a request answered before Koa was addressed to, as Koa's ctx.protocol and ctx.host give them:
 * X-Forwarded-Proto and X-Forwarded-Host (their first entries) only behind a trusted proxy (TRUST_PROXY).
 */
export function requestOrigin(req: IncomingMessage, trustProxy: boolean): { protocol: string; host: string } {
  const forwarded = (name: string) => (trustProxy ? String(req.headers[name] ?? '').split(',')[0]!.trim() : '');
  const protocol = forwarded('x-forwarded-proto') || ((req.socket as TLSSocket).encrypted ? 'https' : 'http');
  const host = forwarded('x-forwarded-host') || req.headers.host || '';
  return { protocol, host };
}

/** Bodies this long or longer may be answered gzipped by the response cache: caches must vary on Accept-Encoding. */
export const VARY_ENCODING_MIN_BYTES = 1024;

/**
 * CORS for everything under /public/ (spec section 1: every origin), on every response: successes, errors
 * (the error envelope keeps Access-Control-* headers) and the 404 of unknown paths. Preflight requests are
 * answered here with 204. Mount it before the routers and after the error envelope.
 */
export function publicCors(prefix = '/public/'): Middleware {
  return async function cors(ctx, next) {
    if (!ctx.path.startsWith(prefix)) return next();
    for (const [name, value] of PUBLIC_CORS_HEADERS) ctx.set(name, value);
    if (ctx.method === 'OPTIONS' && ctx.get('Access-Control-Request-Method')) {
      ctx.set('Access-Control-Allow-Methods', 'GET, HEAD, POST, OPTIONS');
      ctx.set('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      ctx.set('Access-Control-Max-Age', '86400');
      ctx.status = 204;
      return;
    }
    await next();
  };
}

export interface ConditionalOptions {
  /** Seconds shared caches and browsers may reuse a response without asking; 0: always revalidate (with the ETag). */
  maxAgeSeconds: number;
}

/**
 * ETag and Cache-Control for the public API's JSON, XML and text responses. A GET/HEAD answered 200 with a
 * body that is not a stream gets a strong ETag over the exact bytes sent, and 304 when If-None-Match names it.
 * Responses that already carry an ETag (media, sitemaps cached by content version) keep theirs, and only the
 * 304 check applies. Content changes on publish, so by default caches must revalidate on every use
 * (`public, no-cache`): a published change shows at once, and an unchanged one costs a 304.
 */
export function publicConditional(options: ConditionalOptions): Middleware {
  const cacheControl = publicCacheControl(options.maxAgeSeconds);
  return async function conditional(ctx, next) {
    await next();
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || ctx.status !== 200) return;
    if (!ctx.response.get('Cache-Control')) ctx.set('Cache-Control', cacheControl);
    const body: unknown = ctx.body;
    let bytes: Buffer | undefined;
    if (Buffer.isBuffer(body)) bytes = body;
    else if (typeof body === 'string' || (body !== null && typeof body === 'object' && typeof (body as { pipe?: unknown }).pipe !== 'function')) {
      // The exact bytes sent, so that the ETag (and the response cache, which keeps buffers) is over them.
      bytes = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
      const type = ctx.response.get('Content-Type');
      ctx.body = bytes;
      ctx.set('Content-Type', type || 'application/json; charset=utf-8');
    }
    if (bytes !== undefined) {
      // Routes that know their content version (sitemaps, llms.txt, media) set their own ETag.
      if (!ctx.response.get('ETag')) ctx.set('ETag', bodyEtag(bytes));
      // The response cache may answer the same URL gzipped (see public-response-cache.ts): caches must know.
      if (bytes.length >= VARY_ENCODING_MIN_BYTES) ctx.vary('Accept-Encoding');
    }
    if (ctx.fresh) {
      ctx.status = 304;
      ctx.body = null;
    }
  };
}

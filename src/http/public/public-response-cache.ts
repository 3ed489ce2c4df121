import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import accepts from 'accepts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Middleware } from 'koa';
import type { Logger } from '../../logging/logger.ts';
import type { ReadModelChange, ReadModelVersions } from '../../projection-engine/read-model-versions.ts';
import { cacheScopesOf } from './public-context.ts';
import { logAnsweredBeforeKoa, REQUEST_ID_HEADER, requestIdFrom } from '../middleware/request-logger.ts';
import { requestOrigin } from './public-http-manners.ts';
import { unreadQueryParams } from './query-params.ts';
import { FrequencySketch } from './frequency-sketch.ts';

interface CachedResponse {
  /** The change count when the request that filled it began: valid while nothing it is made of changed since. */
  filledAt: number;
  /** What it is made of (see setCacheScopes). */
  scopes: readonly string[];
  /** The entry's key in the cache. */
  key: string;
  /** Every byte this entry holds (key, body, headers, the gzip variant), as counted against maxBytes. */
  bytes: number;
  body: Buffer;
  etag: string;
  /** Every header of the response as first sent, but the per-request ones (X-Request-Id, Date, ...). */
  headers: Array<[string, string]>;
  /** The same as a flat [name, value, ...] list with Content-Length, for one writeHead call. */
  rawHeaders: string[];
  /** The same without Content-Type and Content-Length, for a 304. */
  rawHeaders304: string[];
  /** Compressible bodies: the br and gzip representations, each made on the first request that accepts it. */
  encoded?: Partial<Record<'br' | 'gzip', EncodedResponse>>;
  compressible: boolean;
  /**
   * Compressible bodies: the encoding their requests take, negotiated on the first hit. The key holds the
   * request's Accept-Encoding, so every request that finds this entry negotiates the same.
   */
  encoding?: string | false;
  /** The router's path pattern of the request that filled the entry, for metrics. */
  route: string | undefined;
}

interface EncodedResponse {
  body: Buffer;
  etag: string;
  rawHeaders: string[];
  rawHeaders304: string[];
}

/**
 * Longest key (scheme, host, URL and the varying headers) an entry may have. Real public URLs are far
 * shorter; without a bound, distinct long URLs would make the keys, not the bodies, the cache's memory.
 */
export const MAX_KEY_LENGTH = 8192;
/**
 * What an entry costs beyond the bytes of its strings and buffers: the entry and header objects, the arrays
 * of raw headers, the Buffer objects and the map slot. Measured at about 1 KB on Node 20; rounded up.
 */
const ENTRY_OVERHEAD_BYTES = 1536;

/** Bodies worth compressing: text of at least this many bytes. */
const COMPRESS_MIN_BYTES = 1024;
const COMPRESSIBLE_TYPE = /json|xml|text|markdown/i;

export interface PublicResponseCacheOptions {
  /**
   * The read models public responses are made of. A change of public-content drops the responses made of
   * what changed (its scopes: public-content's changedScopes, in this process or, in an API-only one, from
   * its change feed); any other change, or one whose scopes are unknown, drops them all.
   */
  versions: Pick<ReadModelVersions, 'onChange'>;
  /** PUBLIC_RESPONSE_CACHE_MB in bytes; 0 turns the cache off. */
  maxBytes: number;
  /** TRUST_PROXY: whether X-Forwarded-Host/-Proto choose the base URL (and so the cache key). */
  trustProxy: boolean;
  logger: Logger;
  prefix?: string;
  /** Told about every hit `serveRaw` answers (metrics): the entry's route pattern, the status sent, the time taken. */
  onHit?: (hit: { route: string | undefined; status: number; seconds: number }) => void;
}

/** A request answered outside Koa, to keep its response (see PublicResponseCache.ticket). */
export interface CacheTicket {
  key: string;
  filledAt: number;
}

const PUBLIC_CONTENT = 'public-content';
/** Changed scopes remembered at most (one per changed entry); beyond, everything counts as changed. */
const MAX_TRACKED_SCOPES = 100_000;

/**
 * Headers that select the project or the variant of a public response, besides the URL. Accept-Encoding:
 * a route may compress its response itself (sitemaps), and that response is kept for the clients that send
 * the same header.
 */
const VARYING_HEADERS = ['x-service-public-api-key', 'authorization', 'accept', 'accept-encoding'] as const;
/** Response headers that belong to one request and are never replayed. */
const PER_REQUEST_HEADERS = new Set(['x-request-id', 'date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

/**
 * Whole public GET responses kept in memory, keyed by what selects them (scheme, host, URL and the headers
 * that can change the answer) and valid until what they were read from changes (invalidation by scope: a
 * publish drops that entry's responses, its form set's lists and sitemap and its project's sitemap and
 * llms.txt, and keeps every other entry's), so a publish is visible on the next request. Only 200s with a
 * buffered body, an ETag and a public Cache-Control are kept: never preview responses (private), never
 * streamed media, never errors.
 *
 * Memory is bounded by `maxBytes`, counting every byte an entry holds: its key, body, headers and compressed
 * variants, plus a fixed overhead per entry (so many tiny entries cannot exceed it either). Unauthenticated
 * clients choose the URLs, so a response is not kept when its URL carries a query parameter its route did not
 * read (`?n=1`, `?n=2`, ... would be copies of one answer) or when its key is longer than MAX_KEY_LENGTH.
 * The oldest stored entries go first once `maxBytes` is reached (first in, first out: a hit costs one map
 * lookup and no reordering, which measurably matters with tens of thousands of entries).
 *
 * Admission, as TinyLFU's: a sketch of how often each key was asked for lately (FrequencySketch, 256 KB, hits
 * and misses counted) decides what is kept. A response is never kept the first time its key misses; while
 * the cache has room, from the second; once it is full, only when its key was asked for more often than the
 * key of the entry it would evict first. A long tail of URLs read once or twice (random entries of a large
 * site) would otherwise each cost a copy, an entry and the eviction of one that mattered: at 100,000 entries
 * that made random single-entry reads 7x the bare server's CPU with the cache on against 4x with it off. A
 * key whose entry is held but out of date (its entry changed) is kept again at once: it has earned its place.
 *
 * Two ways in: `middleware()` fills the cache (and serves it) inside Koa; `serveRaw()` answers a hit straight
 * from the HTTP server, before Koa builds a context, with the same headers, a fresh X-Request-Id, a 304 for
 * a matching If-None-Match and the same request log line. Public reads are the service's hot path: a hit
 * costs a map lookup instead of routing, project resolution and reads.
 */
export class PublicResponseCache {
  readonly #entries = new Map<string, CachedResponse>();
  readonly #prefix: string;
  #bytes = 0;
  /** Counts changes; a scope's entry is the number of its last change. */
  #changes = 0;
  #everythingChangedAt = 0;
  readonly #scopeChangedAt = new Map<string, number>();
  readonly #frequencies = new FrequencySketch();
  /** The key serveRaw built for a request it could not answer, for ticket() to take instead of building it again. */
  readonly #missedKeys = new WeakMap<IncomingMessage, string>();

  constructor(private readonly options: PublicResponseCacheOptions) {
    this.#prefix = options.prefix ?? '/public/';
    options.versions.onChange((change) => this.#changed(change));
  }

  #changed(change: ReadModelChange): void {
    // A checkpoint moved past events the projection does not fold: nothing changed.
    if (change.scopes?.size === 0) return;
    const at = ++this.#changes;
    // One number per changed entry: beyond MAX_TRACKED_SCOPES, forget them all and treat it all as changed.
    if (change.projection !== PUBLIC_CONTENT || change.scopes === undefined || this.#scopeChangedAt.size > MAX_TRACKED_SCOPES) {
      this.#everythingChangedAt = at;
      this.#scopeChangedAt.clear();
      return;
    }
    for (const scope of change.scopes) this.#scopeChangedAt.set(scope, at);
  }

  get enabled(): boolean {
    return this.options.maxBytes > 0;
  }

  middleware(): Middleware {
    return async (ctx, next) => {
      if (!this.enabled || (ctx.method !== 'GET' && ctx.method !== 'HEAD') || !ctx.path.startsWith(this.#prefix)) return next();
      const filledAt = this.#changes;
      const key = this.#key(ctx.protocol, ctx.host, ctx.url, (name) => ctx.get(name));
      const hit = this.#lookup(key);
      if (hit) {
        for (const [name, value] of hit.headers) ctx.set(name, value);
        if (ctx.fresh) {
          ctx.status = 304;
          return;
        }
        ctx.body = hit.body;
        return;
      }
      await next();
      const body: unknown = ctx.body;
      const etag = ctx.response.get('ETag');
      if (ctx.status !== 200 || !etag || !ctx.response.get('Cache-Control').startsWith('public') || !Buffer.isBuffer(body)) return;
      if (key.length > MAX_KEY_LENGTH || unreadQueryParams(ctx).length > 0 || !this.#admits(key)) return;
      const headers: Array<[string, string]> = [];
      for (const [name, value] of Object.entries(ctx.response.headers)) {
        if (!PER_REQUEST_HEADERS.has(name) && value !== undefined) headers.push([name, Array.isArray(value) ? value.join(', ') : String(value)]);
      }
      // A body its route compressed already (a sitemap) is sent as it is.
      const compressible = !ctx.response.get('Content-Encoding') && body.length >= COMPRESS_MIN_BYTES && COMPRESSIBLE_TYPE.test(ctx.response.get('Content-Type'));
      const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      const route = typeof matched === 'string' ? matched : undefined;
      this.#store(key, this.#entry(key, filledAt, cacheScopesOf(ctx), body, etag, headers, compressible, route));
    };
  }

  /** An entry, with every byte it holds counted. */
  #entry(key: string, filledAt: number, scopes: readonly string[], body: Buffer, etag: string, headers: Array<[string, string]>, compressible: boolean, route: string | undefined): CachedResponse {
    const own = ownBuffer(body);
    const rawHeaders304 = headers.filter(([name]) => name !== 'content-type').flat();
    const entry: CachedResponse = { filledAt, scopes, key, bytes: 0, body: own, etag, headers, rawHeaders: [...headers.flat(), 'content-length', String(own.length)], rawHeaders304, compressible, route };
    entry.bytes = ENTRY_OVERHEAD_BYTES + scopes.reduce((sum, scope) => sum + stringBytes(scope), 0) + stringBytes(key) + own.length + stringBytes(etag) + headers.reduce((sum, [name, value]) => sum + 3 * (stringBytes(name) + stringBytes(value)), 0);
    return entry;
  }

  /**
   * For a GET answered outside Koa (PublicFastReads): its key and the change count before the read, to pass
   * to remember() with the response. Undefined when the cache is off, and when the response is not to be
   * kept this time (see Admission above).
   */
  ticket(req: IncomingMessage): CacheTicket | undefined {
    if (!this.enabled || req.method !== 'GET' || !req.url?.startsWith(this.#prefix)) return undefined;
    const key = this.#missedKeys.get(req) ?? this.#rawKey(req, req.url);
    // Decided before the read, so that a response not kept costs no copy.
    return this.#admits(key) ? { key, filledAt: this.#changes } : undefined;
  }

  /**
   * Keeps a 200 answered outside Koa, with every header it was sent with but the per-request ones. The caller
   * passes no ticket for a request with query parameters its route does not know (see unreadQueryParams).
   */
  remember(ticket: CacheTicket, response: { body: Buffer; etag: string; headers: ReadonlyArray<readonly [string, string]>; route: string; scopes: readonly string[] }): void {
    if (ticket.key.length > MAX_KEY_LENGTH) return;
    const headers = response.headers.filter(([name]) => !PER_REQUEST_HEADERS.has(name.toLowerCase())).map(([name, value]): [string, string] => [name.toLowerCase(), value]);
    const compressible = response.body.length >= COMPRESS_MIN_BYTES && COMPRESSIBLE_TYPE.test(headers.find(([name]) => name === 'content-type')?.[1] ?? '');
    this.#store(ticket.key, this.#entry(ticket.key, ticket.filledAt, response.scopes, response.body, response.etag, headers, compressible, response.route));
  }

  #rawKey(req: IncomingMessage, url: string): string {
    const { protocol, host } = requestOrigin(req, this.options.trustProxy);
    return this.#key(protocol, host, url, (name) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(', ') : (value ?? '');
    });
  }

  /** Answers a GET that the cache holds, before Koa; false leaves the request to Koa. */
  serveRaw(req: IncomingMessage, res: ServerResponse): boolean {
    if (!this.enabled || req.method !== 'GET' || !req.url?.startsWith(this.#prefix)) return false;
    const started = process.hrtime.bigint();
    const key = this.#rawKey(req, req.url);
    const hit = this.#lookup(key);
    if (!hit) {
      this.#missedKeys.set(req, key);
      return false;
    }
    const requestId = requestIdFrom(req.headers['x-request-id']);
    // br or gzip when the client takes it (negotiated as Koa does) and the body is worth it (a sitemap of
    // 10,000 URLs shrinks ~20x).
    const encoding = hit.compressible ? (hit.encoding ??= accepts(req).encodings('br', 'gzip', 'identity')) : 'identity';
    const variant = encoding === 'br' || encoding === 'gzip' ? this.#encoded(hit, encoding) : hit;
    // One writeHead with a flat list: the cheapest way to send a known set of headers.
    if (notModified(req, variant.etag)) {
      res.writeHead(304, [...variant.rawHeaders304, REQUEST_ID_HEADER, requestId]);
      res.end();
    } else {
      res.writeHead(200, [...variant.rawHeaders, REQUEST_ID_HEADER, requestId]);
      res.end(variant.body);
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    this.options.onHit?.({ route: hit.route, status: res.statusCode, seconds });
    logAnsweredBeforeKoa(this.options.logger, { reqId: requestId, method: 'GET', url: req.url, status: res.statusCode, seconds, cache: 'hit' });
    return true;
  }

  #encoded(hit: CachedResponse, encoding: 'br' | 'gzip'): EncodedResponse {
    hit.encoded ??= {};
    let encoded = hit.encoded[encoding];
    if (!encoded) {
      // brotli at quality 5: close to gzip's speed, smaller output (the default 11 takes seconds on a large sitemap).
      const body = ownBuffer(encoding === 'br' ? brotliCompressSync(hit.body, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } }) : gzipSync(hit.body));
      const etag = hit.etag.replace(/"$/, `-${encoding}"`);
      const headers = hit.headers.map(([name, value]): [string, string] => [name, name === 'etag' ? etag : value]);
      headers.push(['content-encoding', encoding]);
      encoded = { body, etag, rawHeaders: [...headers.flat(), 'content-length', String(body.length)], rawHeaders304: headers.filter(([name]) => name !== 'content-type' && name !== 'content-encoding').flat() };
      hit.encoded[encoding] = encoded;
      // The variant is part of the entry: counted, and room made for it like for a new entry.
      const added = body.length + stringBytes(etag) + headers.reduce((sum, [name, value]) => sum + 2 * (stringBytes(name) + stringBytes(value)), 0);
      if (this.#entries.get(hit.key) === hit) {
        hit.bytes += added;
        this.#bytes += added;
        this.#evict();
      }
    }
    return encoded;
  }

  #key(protocol: string, host: string, url: string, header: (name: string) => string): string {
    let key = `${protocol}://${host}${url}`;
    for (const name of VARYING_HEADERS) {
      const value = header(name);
      if (value) key += `\n${name}:${value}`;
    }
    return key;
  }

  #lookup(key: string): CachedResponse | undefined {
    const hit = this.#entries.get(key);
    if (!hit || hit.filledAt < this.#everythingChangedAt) return undefined;
    for (const scope of hit.scopes) if ((this.#scopeChangedAt.get(scope) ?? 0) > hit.filledAt) return undefined;
    // Hits count too: an entry read often keeps its place against newcomers.
    this.#frequencies.add(key);
    return hit;
  }

  /** Bytes held by the entries now, as counted against maxBytes. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Entries held now. */
  get size(): number {
    return this.#entries.size;
  }

  /** Whether a response to this key, which missed, is kept now (see Admission above). */
  #admits(key: string): boolean {
    if (this.#entries.has(key)) return true;
    const frequency = this.#frequencies.add(key);
    if (frequency < 2) return false;
    if (this.#bytes < this.options.maxBytes) return true;
    // Full: it would evict the oldest entry first.
    const oldest = this.#entries.keys().next().value;
    return oldest === undefined || frequency > this.#frequencies.frequency(oldest);
  }

  #store(key: string, entry: CachedResponse): void {
    const previous = this.#entries.get(key);
    if (previous) {
      this.#bytes -= previous.bytes;
      this.#entries.delete(key);
    }
    if (entry.bytes > this.options.maxBytes) return;
    this.#entries.set(key, entry);
    this.#bytes += entry.bytes;
    this.#evict();
  }

  /** Drops the oldest entries until the bytes held fit maxBytes. */
  #evict(): void {
    for (const [oldest, value] of this.#entries) {
      if (this.#bytes <= this.options.maxBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= value.bytes;
    }
  }
}

/**
 * A body the entry alone holds. Small buffers made by Buffer.from share an 8 KB pool slab: keeping a 300-byte
 * slice would keep the whole slab alive and make the count a lie.
 */
function ownBuffer(body: Buffer): Buffer {
  if (body.byteOffset === 0 && body.buffer.byteLength === body.length) return body;
  const copy = Buffer.allocUnsafeSlow(body.length);
  body.copy(copy);
  return copy;
}

/** An upper bound of a string's memory: two bytes a character (V8's two-byte form) and a header. */
function stringBytes(text: string): number {
  return 2 * text.length + 16;
}

/**
 * Whether a GET answered before Koa gets a 304: its If-None-Match names `etag`, and it does not ask for the
 * body whatever (Cache-Control: no-cache), as Koa's ctx.fresh decides.
 */
export function notModified(req: IncomingMessage, etag: string): boolean {
  return matches(req.headers['if-none-match'], etag) && !/no-cache/i.test(String(req.headers['cache-control'] ?? ''));
}

/** If-None-Match against one strong ETag: a list, weak forms and `*` included (weak comparison, as for GET). */
export function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const strip = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = strip(etag);
  return ifNoneMatch.split(',').some((tag) => strip(tag) === wanted);
}

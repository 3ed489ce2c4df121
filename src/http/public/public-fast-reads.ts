import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'koa';
import { parse as parseQuery } from 'node:querystring';
import type { Logger } from '../../logging/logger.ts';
import type { ReadModelReader } from '../../read-models/read-model-reader.ts';
import { isUuid } from '../../event-store/position.ts';
import { nonCanonicalPathReason } from '../middleware/canonical-path.ts';
import { logAnsweredBeforeKoa, REQUEST_ID_HEADER, requestIdFrom } from '../middleware/request-logger.ts';
import { publicContentQueries, type PublicContentQueries } from '../../../projections/public-content-queries.ts';
import { entryListRequest, entryListResponse, liveEntryResponse } from './entry-reads.ts';
import { requestedLocale, type FormSetLookup } from './entry-lookup.ts';
import { type AccessLookups, HOST_BASE, hostBaseProject, PINNED_BASE, publicKeyOf } from './project-resolution.ts';
import type { PublicProject } from './public-context.ts';
import { bodyEtag, publicCacheControl, PUBLIC_CORS_HEADERS, requestOrigin, VARY_ENCODING_MIN_BYTES } from './public-http-manners.ts';
import { notModified, type CacheTicket, type PublicResponseCache } from './public-response-cache.ts';
import { QueryParams, unreadQueryParams } from './query-params.ts';

export interface PublicFastReadsOptions {
  reader: ReadModelReader;
  access: AccessLookups;
  formSets: FormSetLookup;
  /** PUBLIC_CACHE_MAX_AGE. */
  cacheMaxAgeSeconds: number;
  /** TRUST_PROXY: whether X-Forwarded-Host/-Proto choose the base URL. */
  trustProxy: boolean;
  logger: Logger;
  /** Keeps what this answers, when the response cache is on. */
  responseCache?: PublicResponseCache | undefined;
  /** Told about every answer (metrics): the route pattern, the status, the time taken. */
  onAnswer?: (answer: { route: string; status: number; seconds: number }) => void;
}

interface RouteMatch {
  base: 'pinned' | 'host';
  projectId: string | undefined;
  formSetSlug: string;
  /** Undefined for the list. */
  entrySlug: string | undefined;
}

/**
 * The public API's hottest reads answered from the read model before Koa: GET of one entry by slug and of a
 * list page, on both bases. A read is a project and form set lookup (cached per read-model version), one index
 * lookup or range scan of entry views that reads only their serialised JSON (Query.fields), and one write of
 * the bytes: the same functions as the Koa routes produce the body (entry-reads.ts), and the same headers go
 * with it (CORS, Cache-Control, a strong ETag, Vary, X-Request-Id; 304 to a matching If-None-Match), with the
 * same request log line. Anything else (HEAD, a redirect, a 404, a 400 or 403 of a parameter, an error of
 * the store) resolves false and Koa answers it as always, so clients see one behaviour whichever path served.
 */
export class PublicFastReads {
  readonly #cacheControl: string;
  /** The headers every answer has before its ETag, as writeHead takes them (a flat list). */
  readonly #fixedHeaders: readonly string[];
  /** The same less Content-Type: a 304's. */
  readonly #notModifiedHeaders: readonly string[];
  readonly #publicContent: PublicContentQueries;

  constructor(private readonly options: PublicFastReadsOptions) {
    this.#publicContent = publicContentQueries(options.reader);
    this.#cacheControl = publicCacheControl(options.cacheMaxAgeSeconds);
    this.#fixedHeaders = [...PUBLIC_CORS_HEADERS, ['Content-Type', 'application/json; charset=utf-8'], ['Cache-Control', this.#cacheControl]].flat();
    this.#notModifiedHeaders = [...PUBLIC_CORS_HEADERS, ['Cache-Control', this.#cacheControl]].flat();
  }

  /** Answers the request when it is a read this serves; false leaves it to Koa (nothing has been sent then). */
  async serve(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    if (req.method !== 'GET' || !req.url?.startsWith('/public/')) return false;
    const started = process.hrtime.bigint();
    const split = koaPathAndQuery(req.url);
    if (!split) return false;
    const [path, querystring] = split;
    // A path Koa refuses before routing (canonicalPath) is Koa's to refuse.
    const match = nonCanonicalPathReason(path) === null ? matchRoute(path) : undefined;
    if (!match) return false;
    try {
      const ticket = this.options.responseCache?.ticket(req);
      // What Koa's context would hold: the query as Koa parses it, and the state that notes the parameters read.
      const request = { query: parseQuery(querystring), state: {} } as Pick<Context, 'query' | 'state'>;
      const target = await this.#target(req, match, request);
      if (!target) return false;
      const params = new QueryParams(request);
      const formSet = await this.options.formSets.bySlug(target.projectId, match.formSetSlug);
      let json: string | undefined;
      let etag: string | undefined;
      let scope: string;
      if (match.entrySlug === undefined) {
        // A conditional request for the page the client holds is answered from the list's last change alone.
        ({ json, etag } = await entryListResponse(this.#publicContent, entryListRequest(params, target, formSet), target.baseUrl, (tag) => notModified(req, tag)));
        scope = `form-set:${formSet.formSetId}`;
      } else {
        // No live entry with the slug: Koa answers the 301 of a former slug, or the 404 (so the former slugs are looked up once).
        const found = await liveEntryResponse(this.#publicContent, formSet.formSetId, match.entrySlug, requestedLocale(params, target), target.mediaBaseUrl);
        if (!found) return false;
        json = found.json;
        scope = `entry:${found.entryId}`;
      }
      const route = `${match.base === 'pinned' ? PINNED_BASE : HOST_BASE}/form-sets/:formSetSlug/entries${match.entrySlug === undefined ? '' : '/:entrySlug'}`;
      // As the cache middleware: a URL with a parameter the route did not read is never kept (?n=1, ?n=2, ...).
      const keep = ticket && unreadQueryParams(request).length === 0 ? { ...ticket, scopes: [scope] } : undefined;
      const requestId = json === undefined ? this.#sendNotModified(req, res, etag!) : this.#send(req, res, json, etag, route, keep);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      this.options.onAnswer?.({ route, status: res.statusCode, seconds });
      logAnsweredBeforeKoa(this.options.logger, { reqId: requestId, method: req.method, url: req.url, status: res.statusCode, seconds });
      return true;
    } catch (error) {
      // Once the answer is on its way, Koa must not answer again (a failed metric or log line after it).
      if (res.headersSent) {
        try {
          this.options.logger.warn({ err: error }, 'a public read was answered, but recording it failed');
        } catch {
          // The logger is what failed: the answer stands.
        }
        return true;
      }
      // Koa answers it: the error envelope, a redirect, or the same read again.
      return false;
    }
  }

  async #target(req: IncomingMessage, match: RouteMatch, request: Pick<Context, 'query' | 'state'>): Promise<PublicProject | undefined> {
    const { protocol, host } = requestOrigin(req, this.options.trustProxy);
    if (match.base === 'pinned') {
      const project = await this.options.access.project(match.projectId!);
      const baseUrl = `${protocol}://${host}/public/p/${match.projectId}/v1`;
      return project ? { projectId: project.projectId, project, baseUrl, mediaBaseUrl: baseUrl, resolvedBy: 'path' } : undefined;
    }
    const header = (name: string) => {
      const value = req.headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(', ') : (value ?? '');
    };
    const key = publicKeyOf({ get: header, ...request });
    const project = await hostBaseProject(this.options.access, key, hostnameOf(host));
    if (project === null || project === 'key-refused') return undefined;
    const baseUrl = `${protocol}://${host}/public/v1`;
    // As resolveHostProject: media URLs handed out on the key's base are on the project-pinned one (no key needed).
    const mediaBaseUrl = key === undefined ? baseUrl : `${protocol}://${host}/public/p/${project.projectId}/v1`;
    return { projectId: project.projectId, project, baseUrl, mediaBaseUrl, resolvedBy: key === undefined ? 'host' : 'public-key' };
  }

  /**
   * Sends the body as a string: node:http writes it with the headers in one write, a Buffer takes two. The
   * ETag is the read's own (a list's last change), or one over the bytes. Returns the request id it sent.
   */
  #send(req: IncomingMessage, res: ServerResponse, body: string, knownEtag: string | undefined, route: string, ticket: (CacheTicket & { scopes: readonly string[] }) | undefined): string {
    const etag = knownEtag ?? bodyEtag(body);
    const length = Buffer.byteLength(body);
    const vary = length >= VARY_ENCODING_MIN_BYTES;
    if (ticket) {
      const headers: Array<readonly [string, string]> = [...PUBLIC_CORS_HEADERS, ['Content-Type', 'application/json; charset=utf-8'], ['Cache-Control', this.#cacheControl], ['ETag', etag]];
      if (vary) headers.push(['Vary', 'Accept-Encoding']);
      this.options.responseCache!.remember(ticket, { body: Buffer.from(body), etag, headers, route, scopes: ticket.scopes });
    }
    if (notModified(req, etag)) return this.#sendNotModified(req, res, etag, vary);
    const requestId = requestIdFrom(req.headers['x-request-id']);
    // One writeHead with a flat list: the cheapest way to send a known set of headers.
    const headers = [...this.#fixedHeaders, 'ETag', etag];
    if (vary) headers.push('Vary', 'Accept-Encoding');
    headers.push(REQUEST_ID_HEADER, requestId, 'Content-Length', String(length));
    res.writeHead(200, headers);
    res.end(body);
    return requestId;
  }

  /**
   * 304 to a conditional request for what the client holds: the headers of the 200 less Content-Type and the
   * length. Vary as the 200 would send it; unknown when the page was not read, and then sent (a list page is
   * rarely under VARY_ENCODING_MIN_BYTES, and a cache varying where it need not loses nothing).
   */
  #sendNotModified(req: IncomingMessage, res: ServerResponse, etag: string, vary = true): string {
    const requestId = requestIdFrom(req.headers['x-request-id']);
    const headers = [...this.#notModifiedHeaders, 'ETag', etag];
    if (vary) headers.push('Vary', 'Accept-Encoding');
    headers.push(REQUEST_ID_HEADER, requestId);
    res.writeHead(304, headers);
    res.end();
    return requestId;
  }

}

/**
 * `/public/p/{projectId}/v1/form-sets/{slug}/entries[/{entrySlug}]` or the same on `/public/v1`; undefined for
 * any other path, and for segments Koa would decode differently (percent-encoded, empty).
 */
function matchRoute(path: string): RouteMatch | undefined {
  const parts = path.split('/');
  // ['', 'public', 'p', id, 'v1', 'form-sets', slug, 'entries', entrySlug?] or ['', 'public', 'v1', 'form-sets', ...]
  let base: RouteMatch['base'];
  let projectId: string | undefined;
  let rest: string[];
  if (parts[2] === 'p' && parts[4] === 'v1') {
    base = 'pinned';
    projectId = parts[3]!;
    if (!isUuid(projectId)) return undefined;
    rest = parts.slice(5);
  } else if (parts[2] === 'v1') {
    base = 'host';
    rest = parts.slice(3);
  } else return undefined;
  if (rest[0] !== 'form-sets' || rest[2] !== 'entries' || rest.length > 4) return undefined;
  const plain = (segment: string | undefined) => segment !== undefined && segment !== '' && !segment.includes('%');
  if (!plain(rest[1]) || (rest.length === 4 && !plain(rest[3]))) return undefined;
  return { base, projectId, formSetSlug: rest[1]!, entrySlug: rest[3] };
}

/**
 * The path and query string of a request target as Koa reads them (ctx.path, ctx.querystring, by parseurl):
 * split at the first '?', so a '?' inside the query is part of it. Undefined for a target parseurl reads with
 * url.parse instead (one with a '#' or white space, where the query stops at the '#'): Koa answers those.
 */
function koaPathAndQuery(url: string): [path: string, querystring: string] | undefined {
  if (/[\t\n\f\r #\u00a0\ufeff]/.test(url)) return undefined;
  const mark = url.indexOf('?');
  return mark === -1 ? [url, ''] : [url.slice(0, mark), url.slice(mark + 1)];
}

/** The host name without port, as Koa's ctx.hostname gives it (an IPv6 literal in brackets). */
function hostnameOf(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  return host.split(':')[0]!;
}

import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { assertOutboundAllowed, guardedLookup, OutboundRefusedError, type OutboundPolicy, type Resolver } from '../security/ssrf-guard.ts';
import { MediaRejectedError, MediaTooLargeError } from './media-errors.ts';
import { receiveStream, type ReceivedFile } from './received-file.ts';

export const MAX_REDIRECTS = 5;

export interface SourceFetchOptions {
  policy: OutboundPolicy;
  maxBytes: number;
  /** For the whole fetch: connecting, every redirect, headers and body. */
  timeoutMs: number;
  /** Temporary folder for the bytes. */
  dir: string;
  /** DNS resolution, for tests; the system resolver by default. */
  resolve?: Resolver;
}

export interface FetchedSource extends ReceivedFile {
  /** The last path segment of the final URL, decoded (may be empty). */
  fileName: string;
}

/**
 * Fetches a media source URL into a temporary file, guarded against server-side request forgery:
 * - http and https only, no credentials in the URL;
 * - every hop's host is checked with the SSRF guard before connecting (loopback, private, link-local and
 *   cloud-metadata addresses refused unless OUTBOUND_ALLOWLIST names them), and again at connect time
 *   through the guarded DNS lookup, so a name that re-resolves elsewhere (DNS rebinding) is refused too;
 * - redirects are followed (at most MAX_REDIRECTS) only within the same origin, or from http to https on the
 *   same host: a redirect to another host is refused;
 * - the size limit applies to Content-Length and to the bytes actually received; one timeout covers it all.
 * Refusals and failures throw MediaRejectedError naming sourceUrl; too large throws MediaTooLargeError.
 */
export async function fetchSource(sourceUrl: string, options: SourceFetchOptions): Promise<FetchedSource> {
  let url = parseSourceUrl(sourceUrl);
  const signal = AbortSignal.timeout(options.timeoutMs);
  const lookup = guardedLookup(options.policy, options.resolve);
  try {
    for (let hop = 0; ; hop++) {
      try {
        await assertOutboundAllowed(url, options.policy, options.resolve);
      } catch (error) {
        if (error instanceof OutboundRefusedError) throw refused(error, hop);
        throw error;
      }
      const response = await get(url, lookup, signal);
      const status = response.statusCode ?? 0;
      if (status >= 300 && status < 400 && response.headers.location !== undefined) {
        response.destroy();
        if (hop >= MAX_REDIRECTS) throw new MediaRejectedError(`sourceUrl: more than ${MAX_REDIRECTS} redirects.`);
        const next = parseRedirect(response.headers.location, url);
        if (!sameOrigin(url, next)) {
          // Name what the SSRF guard thinks of the target too: the clearer reason when it is a private address.
          try {
            await assertOutboundAllowed(next, options.policy, options.resolve);
          } catch (error) {
            if (error instanceof OutboundRefusedError) throw refused(error, hop + 1);
          }
          throw new MediaRejectedError(`sourceUrl: redirected to another host (${next.host}); redirects are followed within the same host only.`, 'Give the final URL of the file.');
        }
        url = next;
        continue;
      }
      if (status < 200 || status > 299) {
        response.destroy();
        throw new MediaRejectedError(`sourceUrl: the server answered HTTP ${status}.`);
      }
      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > options.maxBytes) {
        response.destroy();
        throw new MediaTooLargeError(options.maxBytes);
      }
      const received = await receiveStream(response, { dir: options.dir, maxBytes: options.maxBytes, signal });
      return { ...received, fileName: fileNameOf(url) };
    }
  } catch (error) {
    if (error instanceof MediaRejectedError || error instanceof MediaTooLargeError) throw error;
    if (error instanceof OutboundRefusedError) throw refused(error, 0);
    if (signal.aborted) throw new MediaRejectedError(`sourceUrl: no complete answer within ${options.timeoutMs} ms.`);
    const code = (error as NodeJS.ErrnoException).code;
    throw new MediaRejectedError(`sourceUrl: the file could not be fetched (${code ?? (error as Error).message}).`);
  }
}

function parseSourceUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new MediaRejectedError('sourceUrl: not a valid absolute URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new MediaRejectedError(`sourceUrl: the scheme ${url.protocol.replace(/:$/, '')} is not allowed; use http or https.`);
  if (url.username || url.password) throw new MediaRejectedError('sourceUrl: credentials in the URL are not allowed.');
  return url;
}

function parseRedirect(location: string, base: URL): URL {
  let next: URL;
  try {
    next = new URL(location, base);
  } catch {
    throw new MediaRejectedError('sourceUrl: the server redirected to an invalid URL.');
  }
  if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new MediaRejectedError(`sourceUrl: redirected to a ${next.protocol.replace(/:$/, '')} URL; only http and https are followed.`);
  if (next.username || next.password) throw new MediaRejectedError('sourceUrl: redirected to a URL with credentials.');
  return next;
}

/** The same scheme, host and port; or an upgrade from http to https on the same host name (default ports). */
function sameOrigin(from: URL, to: URL): boolean {
  if (from.origin === to.origin) return true;
  return from.protocol === 'http:' && to.protocol === 'https:' && from.hostname === to.hostname && from.port === '' && to.port === '';
}

function refused(error: OutboundRefusedError, hop: number): MediaRejectedError {
  const where = hop === 0 ? '' : ' (after a redirect)';
  return new MediaRejectedError(`sourceUrl: refused${where}: ${error.message}.`);
}

function get(url: URL, lookup: ReturnType<typeof guardedLookup>, signal: AbortSignal): Promise<IncomingMessage> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.get(url, {
      // A fresh connection per request, so the guarded lookup runs for it.
      agent: false,
      lookup,
      signal,
      headers: { 'user-agent': 'annals-media-fetch/1', accept: '*/*', 'accept-encoding': 'identity' },
    });
    request.once('response', resolve);
    request.once('error', reject);
  });
}

function fileNameOf(url: URL): string {
  const last = url.pathname.split('/').filter(Boolean).pop() ?? '';
  try {
    return path.basename(decodeURIComponent(last));
  } catch {
    return last;
  }
}

import { setMaxListeners } from 'node:events';
import https from 'node:https';
import tls from 'node:tls';
import { performance } from 'node:perf_hooks';
import { assertOutboundAllowed, guardedLookup, OutboundRefusedError, type OutboundPolicy, type Resolver } from '../security/ssrf-guard.ts';

/** What one POST to a receiver came to. Never holds the secret; the error names the host, not the URL. */
export interface SendResult {
  ok: boolean;
  /** The receiver's status; null when none arrived. */
  status: number | null;
  durationMs: number;
  responseBody: string | null;
  responseTruncated: boolean;
  error: string | null;
}

export interface SenderOptions {
  policy: OutboundPolicy;
  /** Default 10 000 (spec section 6, delivery rule 2). */
  timeoutMs: number;
  /** Extra trusted CAs (PEM), added to Node's default roots. Verification is never turned off. */
  extraCa?: string | undefined;
  /** The response body kept for the history, in bytes (the rest is read no further). */
  responseBodyLimit?: number;
  /** Injected in tests; default the system resolver. */
  resolve?: Resolver;
  /**
   * Sockets per host and port: at least the dispatcher's overall concurrency, so that webhooks sharing a
   * host never queue behind each other here (the dispatcher bounds concurrency per webhook itself).
   */
  maxSockets?: number;
}

export const RESPONSE_BODY_LIMIT = 4096;

/**
 * POSTs a body to a receiver over HTTPS: no redirects followed (node's client never follows them; a 3xx
 * is a failure), a deadline over the whole exchange (connect, TLS, response head and the body kept),
 * certificates verified against Node's roots plus the configured extra CAs, and the SSRF guard applied
 * to the URL before connecting and, through `lookup`, to the address actually connected to.
 */
export class WebhookSender {
  readonly #agent: https.Agent;
  readonly #lookup;

  constructor(private readonly options: SenderOptions) {
    this.#agent = new https.Agent({
      keepAlive: true,
      maxSockets: options.maxSockets ?? 16,
      // One secure context, built once: passing `ca` instead would make the agent rebuild its pool key from
      // every root certificate on each request, and a context on each connection.
      ...(options.extraCa ? { secureContext: tls.createSecureContext({ ca: [...tls.rootCertificates, options.extraCa] }) } : {}),
    });
    this.#lookup = guardedLookup(options.policy, options.resolve);
  }

  async send(target: string, body: Buffer, headers: Record<string, string>, signal?: AbortSignal): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const failed = (error: string, status: number | null = null): SendResult => ({ ok: false, status, durationMs: elapsed(), responseBody: null, responseTruncated: false, error });
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return failed('the webhook URL is not a valid URL');
    }
    if (url.protocol !== 'https:') return failed('refused: webhooks are delivered over HTTPS only');
    try {
      await assertOutboundAllowed(url, this.options.policy, this.options.resolve);
    } catch (error) {
      return failed(describeError(error, url, this.options.timeoutMs));
    }
    const limit = this.options.responseBodyLimit ?? RESPONSE_BODY_LIMIT;
    return new Promise<SendResult>((resolve) => {
      let settled = false;
      let status: number | null = null;
      const chunks: Buffer[] = [];
      let kept = 0;
      let truncated = false;
      const finish = (result: Omit<SendResult, 'durationMs'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve({ ...result, durationMs: elapsed() });
      };
      const bodyText = () => (chunks.length === 0 ? (status === null ? null : '') : Buffer.concat(chunks).toString('utf8'));
      const request = https.request(
        {
          protocol: 'https:',
          hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
          port: url.port || 443,
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          headers: { ...headers, 'Content-Length': String(body.length) },
          agent: this.#agent,
          lookup: this.#lookup,
        },
        (response) => {
          status = response.statusCode ?? null;
          response.on('data', (chunk: Buffer) => {
            if (kept < limit) {
              const part = chunk.subarray(0, limit - kept);
              chunks.push(part);
              kept += part.length;
              if (part.length < chunk.length) truncated = true;
            } else {
              truncated = true;
            }
            if (truncated) {
              // Enough kept for the history: read no further.
              response.destroy();
              const ok = status !== null && status >= 200 && status < 300;
              finish({ ok, status, responseBody: bodyText(), responseTruncated: true, error: ok ? null : statusError(status) });
            }
          });
          response.on('end', () => {
            const ok = status !== null && status >= 200 && status < 300;
            finish({ ok, status, responseBody: bodyText(), responseTruncated: truncated, error: ok ? null : statusError(status, response.headers.location) });
          });
          response.on('error', (error) => {
            // The head arrived: its status decides; the body was cut.
            const ok = status !== null && status >= 200 && status < 300;
            finish({ ok, status, responseBody: bodyText(), responseTruncated: true, error: ok ? null : `${statusError(status)}; ${describeError(error, url, this.options.timeoutMs)}` });
          });
        },
      );
      const timer = setTimeout(() => {
        if (status !== null) {
          // The head came in time; the body did not finish: keep what arrived.
          const ok = status >= 200 && status < 300;
          finish({ ok, status, responseBody: bodyText(), responseTruncated: true, error: ok ? null : statusError(status) });
        } else {
          finish({ ok: false, status: null, responseBody: null, responseTruncated: false, error: `timeout: no response within ${this.options.timeoutMs} ms` });
        }
        request.destroy();
      }, this.options.timeoutMs);
      const onAbort = () => {
        finish({ ok: false, status, responseBody: bodyText(), responseTruncated: false, error: 'aborted: the dispatcher stopped' });
        request.destroy();
      };
      if (signal) {
        // One listener per request in flight on the dispatcher's shared signal.
        setMaxListeners(0, signal);
        signal.addEventListener('abort', onAbort, { once: true });
      }
      request.on('error', (error) => {
        finish({ ok: false, status, responseBody: bodyText(), responseTruncated: false, error: describeError(error, url, this.options.timeoutMs) });
      });
      request.end(body);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}

function statusError(status: number | null, location?: string): string {
  if (status !== null && status >= 300 && status < 400) {
    return `HTTP ${status}: redirects are not followed${location ? ` (Location: ${truncate(location, 200)})` : ''}`;
  }
  return `HTTP ${status}: the receiver did not answer with a 2xx status`;
}

/** A failure in words an operator can act on; names the host and port, never the path or query (they may carry tokens). */
function describeError(error: unknown, url: URL, _timeoutMs: number): string {
  if (error instanceof OutboundRefusedError) return error.reason === 'unresolvable' ? error.message : `refused by the SSRF guard: ${error.message}`;
  const e = error as NodeJS.ErrnoException & { reason?: string };
  const where = `${url.hostname}:${url.port || 443}`;
  const code = e.code ?? '';
  switch (code) {
    case 'ECONNREFUSED':
      return `connection refused by ${where} (ECONNREFUSED)`;
    case 'ECONNRESET':
      return `connection reset by ${where} (ECONNRESET)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${url.hostname} could not be resolved (${code})`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${where} is unreachable (${code})`;
    case 'ETIMEDOUT':
      return `connecting to ${where} timed out (ETIMEDOUT)`;
  }
  if (code.startsWith('ERR_TLS') || /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO/.test(code)) return `TLS error with ${where}: ${truncate(e.message, 300)} (${code})`;
  return `request to ${where} failed: ${truncate(e.message ?? String(error), 300)}${code ? ` (${code})` : ''}`;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

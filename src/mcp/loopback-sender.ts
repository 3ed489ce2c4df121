import http from 'node:http';
import type { AdminSender } from './admin-api-client.ts';
import { INTERNAL_CALL_HEADER, internalCallToken } from '../security/internal-call.ts';

/**
 * A sender for the service's own MCP endpoint: each admin call goes over HTTP to the very socket address
 * the MCP request arrived on (the service itself), carrying the caller's credentials, so it passes the
 * same authentication, validation and permissions as any admin request; the rate limit counted the MCP
 * request itself, and the internal-call header keeps its admin calls from counting again. The original Host
 * and protocol are passed on (Host, X-Forwarded-Host, X-Forwarded-Proto: honoured only with TRUST_PROXY,
 * as for any request), so URLs in answers (media URLs) name the host the agent called.
 */
export function loopbackSender(target: { address: string; port: number }, original: { host: string; protocol: string }, timeoutMs: number): AdminSender {
  return (request) =>
    new Promise((resolve, reject) => {
      if (typeof request.body !== 'string' && request.body !== undefined) {
        reject(new Error('multipart bodies are not sent over the loopback'));
        return;
      }
      const url = new URL(request.url);
      const body = request.body;
      const outgoing = http.request(
        {
          host: target.address,
          port: target.port,
          method: request.method,
          path: `${url.pathname}${url.search}`,
          headers: {
            ...request.headers,
            Host: original.host,
            'X-Forwarded-Host': original.host,
            'X-Forwarded-Proto': original.protocol,
            // The MCP request was counted against the key's rate limit; its admin calls are not counted again.
            [INTERNAL_CALL_HEADER]: internalCallToken(),
            ...(body === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(body)) }),
          },
          timeout: timeoutMs,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', reject);
          response.on('end', () => {
            const retryAfter = response.headers['retry-after'];
            resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), retryAfter: typeof retryAfter === 'string' ? retryAfter : null });
          });
        },
      );
      outgoing.on('timeout', () => outgoing.destroy(Object.assign(new Error('timeout'), { name: 'TimeoutError' })));
      outgoing.on('error', reject);
      outgoing.end(body);
    });
}

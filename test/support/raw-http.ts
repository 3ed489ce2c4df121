import http from 'node:http';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON when it is JSON, else undefined. */
  json: unknown;
}

/**
 * One HTTP request with the path sent exactly as given (fetch and the URL class normalise dot segments,
 * case of the scheme and host, and percent-encoding; attackers' clients do not).
 */
export function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string | Buffer; timeoutMs?: number } = {},
): Promise<RawResponse> {
  const base = new URL(baseUrl);
  const headers: Record<string, string> = { connection: 'close', ...options.headers };
  if (options.body !== undefined && !Object.keys(headers).some((name) => /^(content-length|transfer-encoding)$/i.test(name))) {
    headers['content-length'] = String(Buffer.byteLength(options.body));
  }
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: base.hostname, port: base.port, method, path, headers, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          if (String(response.headers['content-type'] ?? '').includes('json') && text !== '') {
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, json });
        });
      },
    );
    request.setTimeout(options.timeoutMs ?? 15_000, () => request.destroy(new Error(`${method} ${path}: no answer in ${options.timeoutMs ?? 15_000} ms`)));
    request.on('error', reject);
    request.end(options.body);
  });
}

/** True when `value` is the error envelope of spec section 7: {error: {code, message, hint?, retryable?}}. */
export function isErrorEnvelope(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const error = (value as { error?: unknown }).error;
  if (typeof error !== 'object' || error === null) return false;
  const { code, message, hint, retryable } = error as Record<string, unknown>;
  return (
    typeof code === 'string' &&
    typeof message === 'string' &&
    (hint === undefined || typeof hint === 'string') &&
    (retryable === undefined || typeof retryable === 'boolean')
  );
}

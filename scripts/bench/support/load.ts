/**
 * Load-generation helpers shared by the HTTP benchmarks (media, public API): a bare node:http baseline
 * server, and an autocannon run reduced to requests per second, p99 latency and non-2xx answers. The baseline
 * runs in its own process, as the service under test does, so that neither competes with autocannon for the
 * benchmark process's event loop; compare figures only with a baseline measured in the same run.
 */
import { spawn } from 'node:child_process';
import autocannon from 'autocannon';

export interface LoadResult {
  requestsPerSecond: number;
  p99Ms: number;
  non2xx: number;
}

export interface MeasureOptions {
  /** Concurrent connections (default 10). */
  connections?: number;
  /** Seconds of load (default 10). */
  durationSeconds?: number;
  headers?: Record<string, string>;
}

/** Runs autocannon against one URL (GET, keep-alive) and reduces its result. */
export async function measure(url: string, options: MeasureOptions = {}): Promise<LoadResult> {
  const result = await autocannon({
    url,
    connections: options.connections ?? 10,
    duration: options.durationSeconds ?? 10,
    headers: options.headers ?? {},
  });
  if (result.errors > 0 && result.requests.total === 0) throw new Error(`${url}: every request failed (${result.errors} errors)`);
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p99Ms: result.latency.p99,
    non2xx: result.non2xx + result.errors,
  };
}

/** The baseline server's whole program: a constant 1 KB JSON body for every request. */
const BASELINE_PROGRAM = `
const http = require('node:http');
const body = JSON.stringify({ items: Array.from({ length: 16 }, (_, i) => ({ id: i, name: 'item-' + String(i).padStart(4, '0'), note: 'x'.repeat(32) })) }).slice(0, 1024);
const payload = Buffer.from(body.length < 1024 ? body + ' '.repeat(1024 - body.length) : body);
const server = http.createServer((request, response) => {
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': payload.length });
  response.end(payload);
});
server.keepAliveTimeout = 65000;
server.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: server.address().port }) + '\\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

/** A bare node:http server in a child process answering every request with the same 1 KB JSON body. */
export function startBaselineServer(): Promise<{ url: string; pid: number; close(): Promise<void> }> {
  const child = spawn(process.execPath, ['-e', BASELINE_PROGRAM], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let output = '';
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`baseline server exited (${code}) before listening`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n')[0];
      if (!output.includes('\n') || !line) return;
      const { port } = JSON.parse(line) as { port: number };
      resolve({
        url: `http://127.0.0.1:${port}/`,
        pid: child.pid!,
        close: async () => {
          child.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
}

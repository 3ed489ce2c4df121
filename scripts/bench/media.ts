/**
 * GET /media/{assetId} throughput for a ~50 KB image, as the original and as WebP, against a bare node:http
 * baseline (a constant 1 KB JSON body) measured in the same run, and beside a reference: bare node:http
 * streaming the same file, which shows what moving 50 KB per request costs on this machine at all.
 *
 *   npm run bench:media -- [--duration 10] [--connections 10] [--json]
 *
 * The service runs as `npm start` would (a child process on the embedded default, LOG_LEVEL=warn so request
 * logging does not dominate), with a project bootstrapped by the CLI and the image uploaded through the admin
 * API; the WebP variant is made by a first request before measuring. Load comes from autocannon in this
 * process. Prints req/s, p99 latency and the ratio of each to the baseline; absolute figures on a shared
 * machine are noisy, the ratios less so.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { measure, startBaselineServer, type LoadResult } from './support/load.ts';
import { freePort } from '../../test/support/ports.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    json: { type: 'boolean', default: false },
  },
});
const durationSeconds = Number(values.duration);
const connections = Number(values.connections);
const ROOT = path.resolve(import.meta.dirname, '../..');
const TARGET_BYTES = 50 * 1024;
const say = (line: string) => process.stderr.write(`${line}\n`);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'annals-bench-media-'));
const dataDir = path.join(dir, 'data');
let service: ChildProcess | undefined;
let baseline: { url: string; close(): Promise<void> } | undefined;
let fileServer: { url: string; close(): Promise<void> } | undefined;
try {
  const bootstrap = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'bootstrap', '--project', 'Bench', '--plan', 'business', '--admin-email', 'bench@example.com', '--admin-password', 'bench password 1234'], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, ANNALS_ADMIN_PASSWORD: '' },
    encoding: 'utf8',
  });
  if (bootstrap.status !== 0) throw new Error(`bootstrap failed: ${bootstrap.stderr}`);
  const { projectId, agentKey } = JSON.parse(bootstrap.stdout.trim()) as { projectId: string; agentKey: string };

  const port = await freePort();
  service = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  await waitForHealth(`${base}/healthz`, 60_000);

  const image = await imageOfAbout(TARGET_BYTES);
  const form = new FormData();
  form.append('file', new Blob([image]), 'bench.jpg');
  const upload = await fetch(`${base}/admin/v1/media`, { method: 'POST', headers: { authorization: `Bearer ${agentKey}` }, body: form });
  const asset = (await upload.json()) as { id: string; byteSize: number; mimeType: string };
  if (upload.status !== 201) throw new Error(`upload failed: ${upload.status} ${JSON.stringify(asset)}`);
  const url = `${base}/public/p/${projectId}/v1/media/${asset.id}`;
  const webp = await fetch(url, { headers: { accept: 'image/webp' } });
  const webpBytes = (await webp.arrayBuffer()).byteLength;
  if (webp.headers.get('content-type') !== 'image/webp') throw new Error(`no WebP variant: ${webp.headers.get('content-type')}`);
  say(`image: ${asset.mimeType}, ${asset.byteSize} bytes; WebP variant ${webpBytes} bytes; ${connections} connections, ${durationSeconds} s per run`);

  baseline = await startBaselineServer();
  const imageFile = path.join(dir, 'bench.jpg');
  fs.writeFileSync(imageFile, image);
  fileServer = await startFileServer(imageFile);
  const options = { connections, durationSeconds };
  const runs: Array<[string, () => Promise<LoadResult>]> = [
    ['baseline (node:http, 1 KB JSON)', () => measure(baseline!.url, options)],
    ['reference (node:http, same file streamed)', () => measure(fileServer!.url, options)],
    ['GET /media/{id} original', () => measure(url, options)],
    ['GET /media/{id} Accept: image/webp', () => measure(url, { ...options, headers: { accept: 'image/webp' } })],
  ];
  const results: Array<{ name: string } & LoadResult> = [];
  for (const [name, run] of runs) {
    say(`measuring ${name} ...`);
    results.push({ name, ...(await run()) });
  }
  const reference = results[0]!;
  const rows = results.map((r) => ({
    ...r,
    ratioRequestsPerSecond: Number((r.requestsPerSecond / reference.requestsPerSecond).toFixed(3)),
    ratioP99: Number((r.p99Ms / Math.max(reference.p99Ms, 1)).toFixed(2)),
  }));
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ imageBytes: asset.byteSize, webpBytes, connections, durationSeconds, results: rows }, null, 2)}\n`);
  } else {
    const pad = (text: string | number, width: number) => String(text).padStart(width);
    process.stdout.write(`\n${'run'.padEnd(44)}${pad('req/s', 9)}${pad('p99 ms', 9)}${pad('non-2xx', 9)}${pad('req/s vs baseline', 19)}${pad('p99 vs baseline', 17)}\n`);
    for (const r of rows) {
      process.stdout.write(`${r.name.padEnd(44)}${pad(r.requestsPerSecond, 9)}${pad(r.p99Ms, 9)}${pad(r.non2xx, 9)}${pad(r.ratioRequestsPerSecond.toFixed(3), 19)}${pad(`${r.ratioP99.toFixed(2)}x`, 17)}\n`);
    }
  }
} finally {
  await baseline?.close();
  await fileServer?.close();
  if (service && service.exitCode === null) {
    const exited = new Promise((resolve) => service!.once('exit', resolve));
    service.kill('SIGTERM');
    await exited;
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * A bare node:http server in a child process streaming one file with fs.createReadStream: how fast this
 * machine can serve these bytes at all (loopback and autocannon included), beside the 1 KB baseline.
 */
function startFileServer(file: string): Promise<{ url: string; close(): Promise<void> }> {
  const program = `
const http = require('node:http');
const fs = require('node:fs');
const file = ${JSON.stringify(file)};
const size = fs.statSync(file).size;
const server = http.createServer((request, response) => {
  response.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': size });
  fs.createReadStream(file).pipe(response);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;
  const child = spawn(process.execPath, ['-e', program], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`file server exited (${code}) before listening`)));
    child.stdout!.once('data', (chunk: Buffer) => {
      const port = Number(chunk.toString().trim());
      resolve({
        url: `http://127.0.0.1:${port}/`,
        close: async () => {
          child.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
}

/** A JPEG of noise, sized so that it comes out at about `bytes`. */
async function imageOfAbout(bytes: number): Promise<Buffer> {
  let side = 64;
  for (;;) {
    const candidate = await sharp({ create: { width: side, height: side, channels: 3, background: { r: 120, g: 140, b: 160 }, noise: { type: 'gaussian', mean: 128, sigma: 40 } } })
      .jpeg({ quality: 80 })
      .toBuffer();
    if (candidate.length >= bytes * 0.95) return candidate;
    side += 8;
  }
}


async function waitForHealth(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`service not healthy at ${url} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

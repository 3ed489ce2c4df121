/**
 * Overload: what a normal client sees while 1,000 connections hammer uncached public URLs, and the service's
 * memory afterwards (issue 12 item 7).
 *
 *   npm run bench:overload -- [--connections 1000] [--seconds 15] [--service-root DIR] [--json]
 *
 * Seeds the demo project (`npm run cli -- demo`) into a temporary DATA_DIR and starts `src/main.ts` in a child
 * process. A prober (its own process, connecting from 127.0.0.2 so that per-client shedding can tell it from
 * the flood) reads one entry every 250 ms with a 15 s timeout: first with the service idle (the baseline,
 * measured in the same run), then while autocannon (this process) keeps `--connections` connections busy with
 * entry lists at random offsets (mostly cache misses). Prints the prober's latency and statuses idle and under
 * load, the ratio of the two p50s, the flood's answers, and the service's RSS before, at its peak and 5 s after.
 * `--service-root` runs another checkout's service (for before/after figures). On 2 shared cores the load
 * generator competes with the service: compare only figures of one run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';

const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '15' },
    'service-root': { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const CONNECTIONS = Number(values.connections);
const SECONDS = Number(values.seconds);
const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const serviceRoot = path.resolve(values['service-root'] ?? here);
const say = (line: string) => process.stderr.write(`${line}\n`);
const MB = 1024 * 1024;

function run(args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: serviceRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')} exited ${code}: ${err}`))));
  });
}

function startService(dataDir: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(serviceRoot, 'src/main.ts')], {
    cwd: serviceRoot,
    env: { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (d: Buffer) => {
      text += d.toString();
      const match = /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"annals listening"/.exec(text);
      if (match) {
        child.stdout!.off('data', onData);
        child.stdout!.resume(); // request lines are read and dropped
        resolve({ url: match[1]!, child });
      }
    };
    child.stdout!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`service exited (${code}) before listening`)));
  });
}

function rss(pid: number): number {
  const match = /VmRSS:\s+(\d+)\s+kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

/** The prober's program: one GET every 250 ms from 127.0.0.2, a JSON line per answer, until stdin closes. */
const PROBER = `
const http = require('node:http');
const url = new URL(process.argv[1]);
let stop = false;
process.stdin.on('end', () => (stop = true)).resume();
(async () => {
  while (!stop) {
    const started = performance.now();
    const line = await new Promise((resolve) => {
      let connectedMs;
      const req = http.get({ host: url.hostname, port: url.port, path: url.pathname, localAddress: '127.0.0.2', agent: false, timeout: 15000 }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - started, connectedMs }));
      });
      req.on('socket', (socket) => socket.once('connect', () => (connectedMs = performance.now() - started)));
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (e) => resolve({ status: e.message === 'timeout' ? 'timeout' : 'error', ms: performance.now() - started }));
    });
    process.stdout.write(JSON.stringify({ at: Date.now(), ...line }) + '\\n');
    await new Promise((r) => setTimeout(r, 250));
  }
})();
`;

interface Probe {
  at: number;
  status: number | string;
  ms: number;
  /** When the TCP connection was established, ms after the request was started. */
  connectedMs?: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function summarise(probes: Probe[]) {
  const ms = probes.map((p) => p.ms).sort((a, b) => a - b);
  const statuses: Record<string, number> = {};
  for (const p of probes) statuses[String(p.status)] = (statuses[String(p.status)] ?? 0) + 1;
  const connect = probes.map((p) => p.connectedMs ?? NaN).filter((n) => !Number.isNaN(n)).sort((a, b) => a - b);
  return { count: probes.length, p50Ms: Math.round(percentile(ms, 50)), p99Ms: Math.round(percentile(ms, 99)), maxMs: Math.round(ms[ms.length - 1] ?? NaN), connectP50Ms: Math.round(percentile(connect, 50)), statuses };
}

const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'annals-overload-')), 'data');
say(`seeding the demo into ${dataDir} (service from ${serviceRoot})`);
const demo = JSON.parse(await run([path.join(serviceRoot, 'src/cli/main.ts'), 'demo'], { DATA_DIR: dataDir })) as { projectId: string };
const { url, child } = await startService(dataDir);
// The service ends with this script, whatever happens to it.
process.once('exit', () => child.kill('SIGKILL'));
const publicPath = `/public/p/${demo.projectId}/v1`;
const base = `${url}${publicPath}`;
const entryList = JSON.parse(await (await fetch(`${base}/form-sets/blog/entries?limit=1`)).text()) as { items: Array<{ entry: { slug: string } }> };
const probeUrl = `${base}/form-sets/blog/entries/${entryList.items[0]!.entry.slug}`;

const prober = spawn(process.execPath, ['-e', PROBER, probeUrl], { stdio: ['pipe', 'pipe', 'inherit'] });
const probes: Probe[] = [];
let buffer = '';
prober.stdout!.on('data', (d: Buffer) => {
  buffer += d.toString();
  const lines = buffer.split('\n');
  buffer = lines.pop()!;
  for (const line of lines) if (line) probes.push(JSON.parse(line) as Probe);
});

say('idle: the prober alone for 5 s');
await new Promise((r) => setTimeout(r, 5000));
const loadStart = Date.now();
const rssBefore = rss(child.pid!);
let rssPeak = rssBefore;
const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rss(child.pid!))), 250);
say(`load: ${CONNECTIONS} connections for ${SECONDS} s on random entry-list offsets`);
const flood = await autocannon({
  url: `${base}/form-sets/blog/entries?limit=1&offset=0`,
  connections: CONNECTIONS,
  duration: SECONDS,
  timeout: 20,
  requests: [{ setupRequest: (request) => ({ ...request, path: `${publicPath}/form-sets/blog/entries?limit=1&offset=${Math.floor(Math.random() * 100_000)}` }) }],
});
const loadEnd = Date.now();
clearInterval(sampler);
await new Promise((r) => setTimeout(r, 5000));
const rssAfter = rss(child.pid!);
prober.stdin!.end();
await new Promise((r) => prober.once('exit', r));
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));

// A probe belongs to the phase it was sent in (its line is written when it is answered).
const sentAt = (p: Probe) => p.at - p.ms;
const idle = summarise(probes.filter((p) => sentAt(p) < loadStart));
const underLoad = summarise(probes.filter((p) => sentAt(p) >= loadStart && sentAt(p) <= loadEnd));
const result = {
  serviceRoot,
  connections: CONNECTIONS,
  seconds: SECONDS,
  normalRequest: { idle, underLoad, p50Ratio: Math.round((underLoad.p50Ms / Math.max(1, idle.p50Ms)) * 10) / 10 },
  flood: {
    requestsPerSecond: Math.round(flood.requests.average),
    total: flood.requests.total,
    status2xx: flood['2xx'],
    non2xx: flood.non2xx,
    errors: flood.errors,
    timeouts: flood.timeouts,
    p50Ms: flood.latency.p50,
    p99Ms: flood.latency.p99,
  },
  rssMb: { before: Math.round(rssBefore / MB), peak: Math.round(rssPeak / MB), fiveSecondsAfter: Math.round(rssAfter / MB) },
};
if (values.json) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else {
  say(`normal request, idle:       p50 ${idle.p50Ms} ms, p99 ${idle.p99Ms} ms, ${JSON.stringify(idle.statuses)}`);
  say(`normal request, under load: p50 ${underLoad.p50Ms} ms (${result.normalRequest.p50Ratio}x idle), p99 ${underLoad.p99Ms} ms, max ${underLoad.maxMs} ms, ${JSON.stringify(underLoad.statuses)}`);
  say(`flood: ${result.flood.requestsPerSecond} req/s, ${result.flood.status2xx} 2xx, ${result.flood.non2xx} non-2xx, ${result.flood.errors} errors (${result.flood.timeouts} timeouts), p50 ${result.flood.p50Ms} ms, p99 ${result.flood.p99Ms} ms`);
  say(`service RSS: ${result.rssMb.before} MB before, ${result.rssMb.peak} MB peak, ${result.rssMb.fiveSecondsAfter} MB 5 s after`);
}

/**
 * Overload: what a normal client sees while 1,000 connections hammer uncached public URLs, and the service's
 * memory afterwards (issue 12 item 7).
 *
 *   npm run bench:overload -- [--connections 1000] [--seconds 10] [--idle-seconds 5] [--rounds 3] [--service-root DIR] [--json]
 *
 * Seeds the demo project (`npm run cli -- demo`) into a temporary DATA_DIR and starts `src/main.ts` in a child
 * process. A prober (its own process, connecting from 127.0.0.2 so that per-client shedding can tell it from
 * the flood) reads one entry every 100 ms with a 15 s timeout throughout. The run alternates `--rounds` times
 * between the service idle but for the prober (the baseline; from the second round on, a second after the
 * flood ended) and a flood: autocannon (this process) keeping
 * `--connections` connections busy with entry lists at random offsets (mostly cache misses). Prints the
 * prober's latency and statuses idle and under load (all rounds pooled, and each round), the ratio of the two
 * p50s, the flood's answers, and the service's RSS before the first flood, at its peak and 5 s after the last.
 * `--service-root` runs another checkout's service (for before/after figures). On 2 shared cores the load
 * generator competes with the service: compare only figures of one run.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { rssBytes, startDemoService, stopService } from './support/service-process.ts';
import { median, percentile } from './support/percentile.ts';

const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '10' },
    'idle-seconds': { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    'service-root': { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const CONNECTIONS = Number(values.connections);
const SECONDS = Number(values.seconds);
const IDLE_SECONDS = Number(values['idle-seconds']);
const ROUNDS = Number(values.rounds);
const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const serviceRoot = path.resolve(values['service-root'] ?? here);
const say = (line: string) => process.stderr.write(`${line}\n`);
const MB = 1024 * 1024;

/** The prober's program: one GET every 100 ms from 127.0.0.2, a JSON line per answer, until stdin closes. */
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
    await new Promise((r) => setTimeout(r, 100));
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

function summarise(probes: Probe[]) {
  const ms = probes.map((p) => p.ms);
  const statuses: Record<string, number> = {};
  for (const p of probes) statuses[String(p.status)] = (statuses[String(p.status)] ?? 0) + 1;
  const connect = probes.map((p) => p.connectedMs ?? NaN).filter((n) => !Number.isNaN(n));
  return { count: probes.length, p50Ms: Math.round(median(ms)), p99Ms: Math.round(percentile(ms, 99)), maxMs: Math.round(percentile(ms, 100)), connectP50Ms: Math.round(median(connect)), statuses };
}

// The flood stands for a crowd of clients, but its connections all come from one address: the per-client
// connection limit (HTTP_MAX_CONNECTIONS_PER_CLIENT, 100 by default) would close most of them before load
// shedding is asked. Off here, so that what is measured is shedding.
const service = await startDemoService(serviceRoot, { HTTP_MAX_CONNECTIONS_PER_CLIENT: '0' }, say);
const { url, child, publicPath } = service;
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// A probe belongs to the phase it was sent in (its line is written when it is answered).
const sentAt = (p: Probe) => p.at - p.ms;
const within = (window: { start: number; end: number }) => probes.filter((p) => sentAt(p) >= window.start && sentAt(p) < window.end);
const idleWindows: Array<{ start: number; end: number }> = [];
const loadWindows: Array<{ start: number; end: number }> = [];
const floods: autocannon.Result[] = [];
let rssBefore = 0;
let rssPeak = 0;
const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssBytes(child.pid!))), 250);
for (let round = 1; round <= ROUNDS; round++) {
  say(`round ${round}/${ROUNDS}: idle, the prober alone for ${IDLE_SECONDS} s`);
  // The flood's connections close and its garbage is collected in the second after it ends: counted in neither phase.
  if (round > 1) await sleep(1000);
  const idleStart = Date.now();
  await sleep(IDLE_SECONDS * 1000);
  idleWindows.push({ start: idleStart, end: Date.now() });
  if (round === 1) rssBefore = rssBytes(child.pid!);
  say(`round ${round}/${ROUNDS}: load, ${CONNECTIONS} connections for ${SECONDS} s on random entry-list offsets`);
  const loadStart = Date.now();
  floods.push(
    await autocannon({
      url: `${base}/form-sets/blog/entries?limit=1&offset=0`,
      connections: CONNECTIONS,
      duration: SECONDS,
      timeout: 20,
      requests: [{ setupRequest: (request) => ({ ...request, path: `${publicPath}/form-sets/blog/entries?limit=1&offset=${Math.floor(Math.random() * 100_000)}` }) }],
    }),
  );
  loadWindows.push({ start: loadStart, end: Date.now() });
}
await sleep(5000);
clearInterval(sampler);
const rssAfter = rssBytes(child.pid!);
prober.stdin!.end();
await new Promise((r) => prober.once('exit', r));
await stopService(service);

const idle = summarise(idleWindows.flatMap(within));
const underLoad = summarise(loadWindows.flatMap(within));
const sum = (pick: (r: autocannon.Result) => number) => floods.reduce((total, r) => total + pick(r), 0);
const result = {
  serviceRoot,
  connections: CONNECTIONS,
  seconds: SECONDS,
  idleSeconds: IDLE_SECONDS,
  rounds: ROUNDS,
  normalRequest: {
    idle,
    underLoad,
    p50Ratio: Math.round((underLoad.p50Ms / Math.max(1, idle.p50Ms)) * 10) / 10,
    p99Ratio: Math.round((underLoad.p99Ms / Math.max(1, idle.p99Ms)) * 10) / 10,
    perRound: idleWindows.map((window, i) => ({ idle: summarise(within(window)), underLoad: summarise(within(loadWindows[i]!)) })),
  },
  flood: {
    requestsPerSecond: Math.round(sum((r) => r.requests.total) / (ROUNDS * SECONDS)),
    total: sum((r) => r.requests.total),
    status2xx: sum((r) => r['2xx']),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    p50Ms: Math.max(...floods.map((r) => r.latency.p50)),
    p99Ms: Math.max(...floods.map((r) => r.latency.p99)),
  },
  rssMb: { before: Math.round(rssBefore / MB), peak: Math.round(rssPeak / MB), fiveSecondsAfter: Math.round(rssAfter / MB) },
};
if (values.json) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else {
  say(`normal request, idle (${ROUNDS} × ${IDLE_SECONDS} s):       p50 ${idle.p50Ms} ms, p99 ${idle.p99Ms} ms, ${JSON.stringify(idle.statuses)}`);
  say(`normal request, under load (${ROUNDS} × ${SECONDS} s): p50 ${underLoad.p50Ms} ms (${result.normalRequest.p50Ratio}x idle), p99 ${underLoad.p99Ms} ms (${result.normalRequest.p99Ratio}x idle), max ${underLoad.maxMs} ms, ${JSON.stringify(underLoad.statuses)}`);
  for (const [i, r] of result.normalRequest.perRound.entries()) say(`  round ${i + 1}: idle p50 ${r.idle.p50Ms} ms, p99 ${r.idle.p99Ms} ms; under load p50 ${r.underLoad.p50Ms} ms, p99 ${r.underLoad.p99Ms} ms, ${JSON.stringify(r.underLoad.statuses)}`);
  say(`flood: ${result.flood.requestsPerSecond} req/s, ${result.flood.total} requests, ${result.flood.status2xx} 2xx, ${result.flood.non2xx} non-2xx, ${result.flood.errors} errors (${result.flood.timeouts} timeouts), p50 ${result.flood.p50Ms} ms, p99 ${result.flood.p99Ms} ms (worst round)`);
  say(`service RSS: ${result.rssMb.before} MB before the first flood, ${result.rssMb.peak} MB peak, ${result.rssMb.fiveSecondsAfter} MB 5 s after the last`);
}

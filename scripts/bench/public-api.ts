/**
 * Public read API on the embedded default (SQLite), each scenario interleaved with a bare node:http baseline.
 *
 *   npm run bench:public -- [--entries 10000 | --data SEED_DIR] [--seconds 5] [--connections 10] [--writes 20] [--rounds 1]
 *                           [--cache off,on] [--only single,popular,page1,page250,pagelast,sitemap,fieldsort,sync,syncdeep,stalls] [--service-root DIR] [--json]
 *                           [--topology one,split]
 *                           [--cold-start [--drop-page-cache]] [--restarted] [--runtime compiled|tsx]
 *
 * The data: `--entries` published entries (en and ja values) seeded into a temporary folder, or a copy of a
 * folder made by `npm run bench:public:seed` (the 100,000-entry seed is a separate command). Either way
 * the service under test builds its read models from the log at its first start (timed: the rebuild of
 * every projection), so `--service-root /work/main` measures another checkout on the same events with the
 * same harness.
 *
 * For each cache mode (PUBLIC_RESPONSE_CACHE_MB=0, then the default 64) and each load (reads alone, then
 * reads during `--writes` publishes per second: save, submit and publish of a random entry's new revision,
 * through the admin API as a console user), every scenario runs right after a baseline measurement:
 * - single entry by random slug, and among the 100 popular ones; list page 1 and page 250 (limit 20, sort
 *   published_date:desc);
 * - the form set's sitemap (all entries' URLs), asking for gzip and br;
 * - list page 1 sorted by a form field (title, which has a sort slot and its index);
 * - stalls: after the scenarios, still under the same load, an open-loop probe of 200 GET /healthz per second
 *   for twice --seconds (support/open-loop-probe.ts): p50/p99/p99.9/max and how many took over 20 ms. The
 *   scenarios' 10 waiting connections barely sample a stall of the event loop; this catches it.
 * Reported per scenario: the server's CPU time per request (user + system, from /proc) divided by the
 * baseline's measured just before (the load generator's share of the two cores does not distort it),
 * p50/p99, req/s, the service's RSS after it, with the cache on the share of requests the cache answered,
 * and for deep list pages how many were walked with OFFSET rather than found through the list's counts (from
 * /metrics: a deep page's figure is what counted lists cost only when none was). Also the time to the first
 * /readyz (the read models built from the log), the data folder's bytes per entry, and the writes' rate, p99 and failures, and with stalls the service's CPU per
 * publish cycle while only the probe reads (it adds ~1%). Measurements start once the outboxes
 * are idle (the review notices of the seed's publishes sent: minutes at 10,000 entries the first time).
 *
 * `--restarted`: the service that serves the measurements is not the one that built the read models at its first
 * start but the same service started again on them, as a deployed service runs after its first start (the split
 * topology always measures such processes). A process that has just folded the whole log serves reads with
 * 20-40% more CPU per request than after a restart (see docs/benchmarks.md); without the flag, the cache-off
 * rows measure that process.
 *
 * `--runtime`: `compiled` (default) measures the service as `npm start` and the Dockerfile run it, `node
 * dist/src/main.js`, compiled first from the service root's sources (`tsc -p tsconfig.build.json`, so the
 * figures are never of a stale build); `tsx` runs src/main.ts through tsx, as the tests do (its transform adds
 * work of its own to some functions, e.g. esbuild's `__name` on each closure made).
 *
 * `--topology`: `one` (default) runs the service as one process; `split` as docs/operations.md's way to serve more
 * requests, a `ROLES=projector` process and a `ROLES=api` one on the same data folder, measured on the
 * built read models (a first start of one process builds them). Reads, their CPU and the cache hits are
 * the API process's; the CPU per publish cycle counts both processes.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { articleFields, seedPublicBench, type BenchSeed } from './public-seed.ts';
import { startBaselineServer } from './support/load.ts';
import { probeOpenLoop } from './support/open-loop-probe.ts';
import { rssBytes } from './support/service-process.ts';
import { median, percentile } from './support/percentile.ts';

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '10000' },
    data: { type: 'string' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
    /** Each scenario measured this many times, round after round, each right after its own baseline; the summary gives the median and spread. */
    rounds: { type: 'string', default: '1' },
    writes: { type: 'string', default: '20' },
    cache: { type: 'string', default: 'off,on' },
    only: { type: 'string', default: 'single,popular,page1,page250,pagelast,sitemap,fieldsort,sync,syncdeep,stalls' },
    topology: { type: 'string', default: 'one' },
    'service-root': { type: 'string' },
    /** Also restart the service in each --cache mode and measure random single entries over its first minute. */
    'cold-start': { type: 'boolean', default: false },
    /** With --cold-start: write back and drop the OS page cache before the restart (root on a machine of one's own), so the read models come from disk. */
    'drop-page-cache': { type: 'boolean', default: false },
    /** Measure a service restarted on the read models its first start built, as a deployed service runs (the split topology always is). */
    restarted: { type: 'boolean', default: false },
    /** compiled: node dist/src/main.js, built first (what npm start and the Dockerfile run); tsx: src/main.ts through tsx. */
    runtime: { type: 'string', default: 'compiled' },
    json: { type: 'boolean', default: false },
  },
});
const SECONDS = Number(values.seconds);
const CONNECTIONS = Number(values.connections);
const ROUNDS = Number(values.rounds);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`--rounds: a whole number from 1, not ${values.rounds}`);
const WRITES_PER_SECOND = Number(values.writes);
const TOPOLOGIES = values.topology.split(',').map((name) => {
  if (name !== 'one' && name !== 'split') throw new Error(`--topology: one or split, not ${name}`);
  return name;
});
const root = path.resolve(values['service-root'] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '../..'));
const say = (line: string) => process.stderr.write(`${line}\n`);
if (values.runtime !== 'compiled' && values.runtime !== 'tsx') throw new Error(`--runtime: compiled or tsx, not ${values.runtime}`);
/** How the service under test is started (node's arguments, in the service root). */
const SERVICE_ARGS = values.runtime === 'compiled' ? ['dist/src/main.js'] : ['--import', 'tsx', 'src/main.ts'];
if (values.runtime === 'compiled') {
  say(`compiling the service in ${root} (tsc -p tsconfig.build.json)...`);
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
}

interface Measured {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  /** Server CPU time (user + system) per request, µs. */
  cpuMicros: number;
}

/** user + system CPU time of a process so far, in microseconds (Linux /proc; USER_HZ 100). */
function cpuMicros(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100;
}

async function measure(url: string, pid: number, paths?: () => string, headers: Record<string, string> = {}, seconds = SECONDS): Promise<Measured> {
  const before = cpuMicros(pid);
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    headers,
    ...(paths ? { requests: [{ setupRequest: (request: Record<string, unknown>) => ({ ...request, path: paths() }) }] } : {}),
  } as autocannon.Options);
  const requests = Math.max(1, result.requests.total);
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx + result.errors,
    cpuMicros: Math.round((cpuMicros(pid) - before) / requests),
  };
}

function child(args: string[], env: Record<string, string>): ChildProcess {
  const process_ = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  process_.stderr!.on('data', (chunk: Buffer) => void (errors = (errors + chunk.toString()).slice(-4000)));
  process_.once('exit', (code) => code && code !== 0 && say(`child exited ${code}: ${errors}`));
  return process_;
}

async function untilReady(url: string, timeoutMs = 3_600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not become ready`);
}

/** Until every projection's lag (annals_projection_lag_positions) is 0. */
async function untilCaughtUp(serviceUrl: string): Promise<void> {
  for (;;) {
    const lags = (await (await fetch(`${serviceUrl}/metrics`)).text()).split('\n').filter((line) => line.startsWith('annals_projection_lag_positions{'));
    if (lags.length > 0 && lags.every((line) => Number(line.split(' ').pop()) === 0)) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Until the outboxes are idle (annals_outbox_items_total unchanged for 3 s): a seed's publishes leave
 * review notices to work through (two per entry, ~550/s: minutes for a 100k seed), which would count in the CPU per request.
 */
async function untilOutboxesIdle(serviceUrl: string): Promise<void> {
  let last = -1;
  let since = performance.now();
  let told = 0;
  for (;;) {
    const text = await (await fetch(`${serviceUrl}/metrics`)).text();
    let performed = 0;
    for (const line of text.split('\n')) if (line.startsWith('annals_outbox_items_total{')) performed += Number(line.split(' ').pop());
    const now = performance.now();
    if (performed !== last) {
      last = performed;
      since = now;
    } else if (now - since >= 3000) return;
    if (performed > 0 && now - told >= 10_000) {
      told = now;
      say(`waiting for the outboxes to be idle: ${performed} items performed since the start`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function stop(process_: ChildProcess): Promise<void> {
  if (process_.exitCode !== null) return;
  await new Promise((resolve) => {
    process_.once('exit', resolve);
    process_.kill('SIGTERM');
  });
}

/**
 * What the service's /metrics say so far of how its reads were answered: from the response cache, and deep
 * list pages found through the list's counts or walked with OFFSET (a deep-page figure means what it says
 * only when OFFSET walked none of them).
 */
async function readCounters(serviceUrl: string): Promise<{ cacheHits: number; deepByCounts: number; deepByOffset: number }> {
  const text = await (await fetch(`${serviceUrl}/metrics`)).text();
  const counters = { cacheHits: 0, deepByCounts: 0, deepByOffset: 0 };
  for (const line of text.split('\n')) {
    const value = Number(line.split(' ').pop());
    if (line.startsWith('annals_http_request_duration_seconds_count{') && line.includes('answered_by="response-cache"')) counters.cacheHits += value;
    else if (line.startsWith('annals_deep_page_reads_total{found_by="counts"}')) counters.deepByCounts += value;
    else if (line.startsWith('annals_deep_page_reads_total{found_by="offset"}')) counters.deepByOffset += value;
  }
  return counters;
}

/** Publishes new revisions of random entries at a steady rate through the admin API (as a console user). */
class WriteLoad {
  #timer: NodeJS.Timeout | undefined;
  #inFlight = 0;
  readonly latencies: number[] = [];
  failures = 0;
  #revision = 1;

  constructor(private readonly serviceUrl: string, private readonly seed: BenchSeed, private readonly token: string) {}

  start(perSecond: number): void {
    this.#timer = setInterval(() => {
      if (this.#inFlight < 16) void this.#cycle();
    }, 1000 / perSecond);
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    while (this.#inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  async #cycle(): Promise<void> {
    this.#inFlight++;
    const started = performance.now();
    try {
      const index = Math.floor(Math.random() * this.seed.entries.length);
      const entry = this.seed.entries[index]!;
      const saved = await this.#post(`/entries/${entry.entryId}/revisions`, { fields: articleFields(index, ++this.#revision) }, 201);
      await this.#post(`/revisions/${saved.id}/submit`, {}, 200);
      await this.#post(`/revisions/${saved.id}/publish`, { revision: saved.revision }, 200);
      this.latencies.push(performance.now() - started);
    } catch (error) {
      if (this.failures++ === 0) say(`first failed publish: ${(error as Error).message}`);
    } finally {
      this.#inFlight--;
    }
  }

  async #post(route: string, body: unknown, expected: number): Promise<{ id: string; revision: number }> {
    const response = await fetch(`${this.serviceUrl}/admin/v1${route}`, { method: 'POST', headers: { authorization: `Bearer ${this.token}`, 'x-project-id': this.seed.projectId, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json = (await response.json()) as { id: string; revision: number };
    if (response.status !== expected) throw new Error(`${route}: ${response.status} ${JSON.stringify(json).slice(0, 300)}`);
    return json;
  }
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'annals-bench-public-'));
const children: ChildProcess[] = [];
try {
  let seed: BenchSeed;
  if (values.data) {
    say(`copying the event log of ${values.data}...`);
    for (const name of fs.readdirSync(values.data)) if (!/^(read-models|snapshots)\.sqlite/.test(name)) fs.cpSync(path.join(values.data, name), path.join(dataDir, name), { recursive: true });
    seed = JSON.parse(fs.readFileSync(path.join(dataDir, 'bench-seed.json'), 'utf8')) as BenchSeed;
  } else {
    say(`seeding ${values.entries} published entries...`);
    seed = await seedPublicBench(dataDir, Number(values.entries), say);
  }
  const report = await run(seed);
  if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} finally {
  await Promise.all(children.map(stop));
  fs.rmSync(dataDir, { recursive: true, force: true });
}

async function run(seed: BenchSeed) {
  const baseline = await startBaselineServer();
  try {
    return await runAgainst(seed, baseline);
  } finally {
    await baseline.close();
  }
}

async function runAgainst(seed: BenchSeed, baseline: { url: string; pid: number }) {
  const slugs = seed.entries.map((e) => e.slug);
  const lastPage = Math.min(Math.ceil(slugs.length / 20), 5_000);
  /** A random entry's path, each call another. */
  const randomEntryPaths = (basePath: string) => () => `${basePath}/form-sets/articles/entries/${slugs[Math.floor(Math.random() * slugs.length)]}`;
  const scenarios = [
    { name: 'single', label: 'single entry, random slug', path: '', paths: randomEntryPaths },
    // The 100 most read entries: what a site's traffic mostly is, and what a write elsewhere should not evict.
    { name: 'popular', label: 'single entry, 100 popular', path: '', paths: (basePath: string) => () => `${basePath}/form-sets/articles/entries/${slugs[Math.floor(Math.random() * 100)]}` },
    { name: 'page1', label: 'list page 1', path: '/form-sets/articles/entries?limit=20&sort=published_date:desc' },
    { name: 'page250', label: 'list page 250', path: '/form-sets/articles/entries?limit=20&page=250&sort=published_date:desc' },
    // The list's last page (the deepest the API serves at 100,000 entries): what a crawler of every page reaches.
    { name: 'pagelast', label: `list page ${lastPage} (last)`, path: `/form-sets/articles/entries?limit=20&page=${lastPage}&sort=published_date:desc` },
    { name: 'sitemap', label: 'form-set sitemap, gzip/br', path: '/form-sets/articles/sitemap.xml', headers: { 'accept-encoding': 'gzip, br' } },
    // A sort by a form field: title has a sort slot (see docs/api.md "Sorting"); before slots, this read the whole form set.
    { name: 'fieldsort', label: 'list page 1, sort by a field', path: '/form-sets/articles/entries?limit=20&sort=title:asc' },
    // The sync feed (GET /sync): a site's first page, and a page after a cursor 2,500 changes in (an index range either way).
    { name: 'sync', label: 'sync page of 50, first', path: '/sync?limit=50' },
    { name: 'syncdeep', label: 'sync page of 50, deep cursor', path: '', paths: (basePath: string) => () => `${basePath}/sync?limit=50&cursor=${deepCursor}` },
  ].filter((s) => values.only.split(',').includes(s.name));
  /** The cursor 2,500 changes into the sync feed (or its end, when shorter), found once the service is up. */
  let deepCursor = '';

  const rows: Array<Record<string, unknown>> = [];
  /** With --rounds above 1: each scenario's median over its rounds. */
  const summary: Array<Record<string, unknown>> = [];
  const writes: Array<Record<string, unknown>> = [];
  const stalls: Array<Record<string, unknown>> = [];
  let firstReadyMs = 0;
  let firstStart = true;
  /** The service on the data folder with the cache mode, as one process or split; ready, caught up and its outboxes idle. */
  const startService = async (cache: string, topology: 'one' | 'split') => {
    const env = { DATA_DIR: dataDir, HOST: '127.0.0.1', LOG_LEVEL: 'warn', PUBLIC_RESPONSE_CACHE_MB: cache === 'off' ? '0' : '64' };
    let started = performance.now();
    const start = (roles: string | undefined) => {
      const port = 18_000 + Math.floor(Math.random() * 1000);
      const process_ = child(SERVICE_ARGS, { ...env, PORT: String(port), ...(roles ? { ROLES: roles } : {}) });
      children.push(process_);
      return { process_, url: `http://127.0.0.1:${port}` };
    };
    if (firstStart && (topology === 'split' || values.restarted)) {
      // The first start builds the read models from the log (timed), as one process: the split (or, with
      // --restarted, the one process started again) runs on them.
      const builder = start(undefined);
      await untilReady(`${builder.url}/readyz`);
      await untilCaughtUp(builder.url);
      await untilOutboxesIdle(builder.url);
      await stop(builder.process_);
      firstReadyMs = Math.round(performance.now() - started);
      say(`first start: read models built from the log and ready in ${firstReadyMs} ms`);
      firstStart = false;
      started = performance.now();
    }
    const projector = topology === 'split' ? start('projector').process_ : undefined;
    const api = start(topology === 'split' ? 'api' : undefined);
    await untilReady(`${api.url}/readyz`);
    // Ready means caught up with the log's recent past: the first start is over once every projection has
    // folded the whole log (its work would count in the CPU per request otherwise).
    await untilCaughtUp(api.url);
    await untilOutboxesIdle(api.url);
    if (firstStart) {
      firstReadyMs = Math.round(performance.now() - started);
      say(`first start: read models built from the log and ready in ${firstReadyMs} ms`);
      firstStart = false;
    }
    return { service: api.process_, projector, serviceUrl: api.url };
  };
  for (const cache of values.cache.split(',')) for (const topology of TOPOLOGIES) {
    const { service, projector, serviceUrl } = await startService(cache, topology);
    const tag = `cache ${cache.padEnd(3)}${TOPOLOGIES.length > 1 ? ` ${topology.padEnd(5)}` : ''}`;
    /** CPU of the service's processes so far, µs (with split, both). */
    const serviceCpu = () => cpuMicros(service.pid!) + (projector ? cpuMicros(projector.pid!) : 0);
    const base = `${serviceUrl}/public/p/${seed.projectId}/v1`;
    const basePath = new URL(base).pathname;
    const login = await fetch(`${serviceUrl}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: seed.adminEmail, password: seed.adminPassword }) });
    const { token } = (await login.json()) as { token: string };
    // Warm-up: the JIT, and the pages of the read models that lists and random entries read (at 100,000 entries a
    // random entry first faults in pages of a 2.4 GB file: 41 µs a request in the first seconds, 32 after). The
    // rows are steady state; a restart's first minute is what --cold-start measures.
    await measure(`${base}/form-sets/articles/entries?limit=20&sort=published_date:desc`, service.pid!);
    await measure(base, service.pid!, randomEntryPaths(basePath));
    if (scenarios.some((s) => s.name === 'syncdeep')) {
      deepCursor = '';
      for (let pages = 0; pages < 25; pages++) {
        const page = (await (await fetch(`${base}/sync?limit=100${deepCursor ? `&cursor=${deepCursor}` : ''}`)).json()) as { cursor: string | null; hasMore: boolean };
        deepCursor = page.cursor ?? deepCursor;
        if (!page.hasMore) break;
      }
    }
    for (const load of WRITES_PER_SECOND > 0 ? ['reads only', `${WRITES_PER_SECOND} publishes/s`] : ['reads only']) {
      const writer = load === 'reads only' ? undefined : new WriteLoad(serviceUrl, seed, token);
      writer?.start(WRITES_PER_SECOND);
      const loadStarted = performance.now();
      for (let round = 1; round <= ROUNDS; round++) for (const scenario of scenarios) {
        const reference = await measure(baseline.url, baseline.pid);
        const before = await readCounters(serviceUrl);
        const result = await measure(`${base}${scenario.path}`, service.pid!, scenario.paths?.(basePath), scenario.headers);
        const after = await readCounters(serviceUrl);
        const hits = after.cacheHits - before.cacheHits;
        const deepPages = { byCounts: after.deepByCounts - before.deepByCounts, byOffset: after.deepByOffset - before.deepByOffset };
        const total = Math.max(1, result.requestsPerSecond * SECONDS);
        const row = {
          cache,
          topology,
          load,
          scenario: scenario.label,
          round,
          cpuRatio: Math.round((result.cpuMicros / Math.max(1, reference.cpuMicros)) * 10) / 10,
          cpuMicros: result.cpuMicros,
          baselineCpuMicros: reference.cpuMicros,
          p50Ms: result.p50Ms,
          p99Ms: result.p99Ms,
          requestsPerSecond: result.requestsPerSecond,
          baselineRequestsPerSecond: reference.requestsPerSecond,
          non2xx: result.non2xx,
          rssMiB: Math.round(rssBytes(service.pid!) / 1024 / 1024),
          ...(cache === 'off' ? {} : { cacheHitRate: Math.min(1, Math.round((hits / total) * 100) / 100) }),
          ...(deepPages.byCounts + deepPages.byOffset > 0 ? { deepPages } : {}),
        };
        rows.push(row);
        say(
          `${tag} ${load.padEnd(16)} ${ROUNDS > 1 ? `round ${round} ` : ''}${scenario.label.padEnd(26)} CPU/req ${String(row.cpuRatio).padStart(5)}x baseline (${result.cpuMicros} / ${reference.cpuMicros} µs)  p50 ${result.p50Ms} ms  p99 ${result.p99Ms} ms  ${result.requestsPerSecond} req/s  RSS ${row.rssMiB} MiB${row.cacheHitRate === undefined ? '' : `  cache hits ${Math.round(row.cacheHitRate * 100)}%`}${row.deepPages ? `  deep pages by OFFSET ${row.deepPages.byOffset} of ${row.deepPages.byCounts + row.deepPages.byOffset}` : ''}${result.non2xx ? `  non-2xx ${result.non2xx}` : ''}`,
        );
      }
      if (ROUNDS > 1) {
        for (const scenario of scenarios) {
          const measured = rows.filter((r) => r.cache === cache && r.topology === topology && r.load === load && r.scenario === scenario.label);
          const ratios = measured.map((r) => r.cpuRatio as number);
          const entry = { cache, topology, load, scenario: scenario.label, rounds: ratios.length, medianCpuRatio: median(ratios), minCpuRatio: Math.min(...ratios), maxCpuRatio: Math.max(...ratios), medianCpuMicros: median(measured.map((r) => r.cpuMicros as number)), medianBaselineCpuMicros: median(measured.map((r) => r.baselineCpuMicros as number)) };
          summary.push(entry);
          say(`${tag} ${load.padEnd(16)} ${scenario.label.padEnd(26)} median of ${entry.rounds}: CPU/req ${entry.medianCpuRatio}x baseline (spread ${entry.minCpuRatio}-${entry.maxCpuRatio}; ${entry.medianCpuMicros} / ${entry.medianBaselineCpuMicros} µs)`);
        }
      }
      // The service's CPU per publish cycle, measured while only the probe (200 light requests a second) reads.
      let cpuPerPublishMs: number | undefined;
      if (values.only.split(',').includes('stalls')) {
        const [cpuBefore, cyclesBefore] = [serviceCpu(), writer?.latencies.length ?? 0];
        const probe = await probeOpenLoop(`${serviceUrl}/healthz`, { seconds: SECONDS * 2, perSecond: 200 });
        const cycles = (writer?.latencies.length ?? 0) - cyclesBefore;
        if (writer && cycles > 0) cpuPerPublishMs = Math.round((serviceCpu() - cpuBefore) / cycles / 100) / 10;
        stalls.push({ cache, topology, load, ...probe });
        say(
          `${tag} ${load.padEnd(16)} ${'open-loop probe, 200/s'.padEnd(26)} p50 ${probe.p50Ms} ms  p99 ${probe.p99Ms} ms  p99.9 ${probe.p999Ms} ms  max ${probe.maxMs} ms  over 20 ms: ${probe.over20Ms} of ${probe.answered}${probe.answered < probe.sent ? ` (${probe.sent - probe.answered} unanswered)` : ''}`,
        );
      }
      if (writer) {
        await writer.stop();
        const seconds = (performance.now() - loadStarted) / 1000;
        const summary = { cache, topology, publishesPerSecond: Math.round((writer.latencies.length / seconds) * 10) / 10, publishP99Ms: Math.round(percentile(writer.latencies, 99)), failures: writer.failures, ...(cpuPerPublishMs === undefined ? {} : { cpuPerPublishMs }) };
        writes.push(summary);
        say(`${tag} writes: ${summary.publishesPerSecond} publishes/s done, publish cycle p99 ${summary.publishP99Ms} ms, ${summary.failures} failed${cpuPerPublishMs === undefined ? '' : `, service CPU ${cpuPerPublishMs} ms per publish cycle (during the probe)`}`);
      }
    }
    await stop(service);
    if (projector) await stop(projector);
  }
  const coldStart = values['cold-start'] ? await sequentially(values.cache.split(',') as Array<'off' | 'on'>, (cache) => measureColdStart(seed, slugs, cache)) : undefined;
  let bytes = 0;
  for (const name of fs.readdirSync(dataDir)) if (/\.sqlite(-wal)?$/.test(name)) bytes += fs.statSync(path.join(dataDir, name)).size;
  const bytesPerEntry = Math.round(bytes / seed.entries.length);
  // The notices written as .eml files (no SMTP_URL): apart, as they are not the stores (and are kept MAIL_FOLDER_KEEP_DAYS).
  const mailDir = path.join(dataDir, 'mail');
  let mailBytes = 0;
  if (fs.existsSync(mailDir)) for (const name of fs.readdirSync(mailDir)) mailBytes += fs.statSync(path.join(mailDir, name)).size;
  const mailBytesPerEntry = Math.round(mailBytes / seed.entries.length);
  say(`data folder: stores (.sqlite files) ${(bytes / 1024 / 1024).toFixed(1)} MiB, ${(bytesPerEntry / 1024).toFixed(1)} KB per entry; mail/ ${(mailBytes / 1024 / 1024).toFixed(1)} MiB, ${(mailBytesPerEntry / 1024).toFixed(1)} KB per entry (after the write load)`);
  return { entries: seed.entries.length, serviceRoot: root, runtime: values.runtime, restarted: values.restarted, connections: CONNECTIONS, secondsPerMeasurement: SECONDS, firstReadyMs, bytesPerEntry, mailBytesPerEntry, rows, summary, stalls, writes, coldStart };
}

/**
 * A restart on the built read models, in each --cache mode, then random single entries in six 10-second windows from the moment
 * /readyz answers, and one more after a further minute of reads: each window's p99 against the last (warm)
 * one. The OS page cache is kept unless --drop-page-cache (it needs root, and empties it for everything on the
 * machine): then the files are written back and the cache dropped first, as after a reboot.
 */
async function measureColdStart(seed: BenchSeed, slugs: string[], cache: 'off' | 'on') {
  if (values['drop-page-cache']) {
    execFileSync('sync');
    fs.writeFileSync('/proc/sys/vm/drop_caches', '3');
    say('cold start: OS page cache dropped');
  }
  const port = 18_000 + Math.floor(Math.random() * 1000);
  const service = child(SERVICE_ARGS, { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', PUBLIC_RESPONSE_CACHE_MB: cache === 'off' ? '0' : '64' });
  children.push(service);
  const serviceUrl = `http://127.0.0.1:${port}`;
  const started = performance.now();
  await untilReady(`${serviceUrl}/readyz`, 600_000);
  const readyMs = Math.round(performance.now() - started);
  const basePath = `/public/p/${seed.projectId}/v1`;
  const random = () => `${basePath}/form-sets/articles/entries/${slugs[Math.floor(Math.random() * slugs.length)]}`;
  const windows: Measured[] = [];
  const window = () => measure(serviceUrl, service.pid!, random, {}, 10);
  for (let i = 0; i < 6; i++) windows.push(await window());
  for (let i = 0; i < 6; i++) await window();
  const warm = await window();
  await stop(service);
  const worst = Math.max(...windows.map((w) => w.p99Ms));
  say(`cold start, cache ${cache}: ready in ${readyMs} ms; first minute p99 by 10 s window ${windows.map((w) => w.p99Ms).join(' / ')} ms (req/s ${windows.map((w) => w.requestsPerSecond).join(' / ')}); warm p99 ${warm.p99Ms} ms: worst ${Math.round((worst / Math.max(1, warm.p99Ms)) * 10) / 10}x warm`);
  return { cache, readyMs, pageCacheDropped: values['drop-page-cache'], firstMinute: windows, warm, worstToWarm: Math.round((worst / Math.max(1, warm.p99Ms)) * 10) / 10 };
}

/** Runs `step` for each item, one after another, and collects what each returned. */
async function sequentially<T, R>(items: readonly T[], step: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (const item of items) results.push(await step(item));
  return results;
}

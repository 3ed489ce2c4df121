/**
 * Public read API throughput on the embedded default (SQLite), against a bare node:http baseline measured in
 * the same run.
 *
 *   npm run bench:public -- [--entries 10000] [--seconds 10] [--connections 10] [--json] [--cpu-prof DIR]
 *   npm run bench:public -- --metrics-ab [--rounds 3]
 *
 * Seeds a project with `--entries` published entries (en and ja values each), waits for the projections,
 * then serves them from `npm start` in a child process and drives it with autocannon from this process:
 * - baseline: a bare node:http server (also a child process) answering a constant 1 KB JSON body;
 * - single entry by slug: one hot entry; a random entry per request, first with the response cache cold
 *   (mostly misses: every read goes to the read models), then warm;
 * - list page 1 (limit 20, sort published_date:desc) and page 250 (offset 4980);
 * - the per-form-set sitemap (10,000 URLs), plain and gzipped.
 * Also the server's CPU time per request (from /proc), which the load generator's share of the CPU does
 * not distort. PUBLIC_RESPONSE_CACHE_MB=0 in the environment measures every request without the cache.
 * Prints req/s, p50 and p99 for each, and ratios to the baseline. On 2 cores the load generator competes
 * with the server, which is why only same-run ratios mean anything.
 *
 * --metrics-ab measures what the metrics cost: two services on copies of the same data, one with METRICS=off
 * (A) and one with METRICS=on (B), measured in turn (A, B, A, B, ... for `--rounds`) on the hot single entry,
 * random entries and list page 1; prints B/A for req/s and server CPU per request. BENCH_B_METRICS=off makes
 * B like A: an A/A control run that shows how far apart two identical services measure on this machine.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { pino } from 'pino';
import { systemClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config/config.ts';
import { startService } from '../../src/service/service.ts';
import { AccessService } from '../../src/application/access-service.ts';
import { entryStream } from '../../src/domain/content/entry/entry-events.ts';

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '10000' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    json: { type: 'boolean', default: false },
    /** Only these scenarios (comma-separated: hot,single,page1,page250,sitemap); all by default. */
    only: { type: 'string' },
    /** Keep the seeded data folder (its path is printed) for inspection. */
    keep: { type: 'boolean', default: false },
    /** Write a V8 CPU profile of the service child into this folder (for finding hot spots). */
    'cpu-prof': { type: 'string' },
    /** Compare METRICS=off and METRICS=on instead of the scenarios against the baseline. */
    'metrics-ab': { type: 'boolean', default: false },
    rounds: { type: 'string', default: '3' },
  },
});
const ENTRIES = Number(values.entries);
const SECONDS = Number(values.seconds);
const CONNECTIONS = Number(values.connections);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const say = (line: string) => process.stderr.write(`${line}\n`);
const OPERATOR = { kind: 'operator' as const, operatorId: 'bench' };

const LOREM =
  'Public readers hit projected read models shaped at projection time, so that a request is a lookup and a little string formatting. ' +
  'Editors save revisions, reviewers approve them, and the scheduler publishes what was approved for later. ';

async function seed(dataDir: string): Promise<{ projectId: string; slugs: string[]; projectionMs: number }> {
  const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' });
  const service = await startService(config, { logger: pino({ level: 'silent' }), clock: systemClock });
  try {
    const access = new AccessService({ log: service.log, clock: systemClock });
    const project = await access.bootstrap(OPERATOR, {
      projectName: 'Bench',
      plan: 'business',
      adminEmail: 'bench@example.com',
      adminPassword: 'correct horse battery staple',
      contentLocales: { locales: ['en', 'ja'], defaultLocale: 'en' },
    });
    await service.supervisor!.waitFor(project.position, 10_000);
    const response = await fetch(`${service.url}/admin/v1/form-sets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${project.agentKey.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        slug: 'articles',
        name: 'Articles',
        fields: [
          { key: 'title', type: 'text', label: 'Title', required: true },
          { key: 'body', type: 'textarea', label: 'Body' },
          { key: 'published_date', type: 'date', label: 'Date' },
          { key: 'rating', type: 'number', label: 'Rating' },
        ],
        widgetRoles: { title: 'title', date: 'published_date' },
      }),
    });
    const formSet = (await response.json()) as { id: string };
    if (response.status !== 201) throw new Error(`creating the form set: ${response.status} ${JSON.stringify(formSet)}`);

    say(`seeding ${ENTRIES} published entries...`);
    // From the first append to the projections having folded the last one: appends and projection overlap.
    const started = performance.now();
    const slugs: string[] = [];
    const scope = { projectId: project.projectId, formSetId: formSet.id };
    const context = { actor: { type: 'operator' as const, id: 'bench' } };
    for (let i = 0; i < ENTRIES; i++) {
      const entryId = randomUUID();
      const revisionId = randomUUID();
      const slug = `article-${i}`;
      slugs.push(slug);
      const day = new Date(Date.UTC(2020, 0, 1) + i * 3_600_000).toISOString().slice(0, 10);
      const now = new Date().toISOString();
      await service.log.append(
        entryStream(entryId),
        [
          { type: 'entry.created', data: { ...scope, entryId, slug } },
          {
            type: 'entry.revision-saved',
            data: {
              ...scope,
              entryId,
              revisionId,
              revision: 1,
              snapshot: { title: { en: `Article ${i}`, ja: `記事 ${i}` }, body: { en: `${LOREM}${i}`, ja: `公開APIの記事です。${i}` }, published_date: day, rating: i % 5 },
              savedAt: now,
            },
          },
          { type: 'entry.revision-submitted', data: { ...scope, entryId, revisionId, revision: 1 } },
          { type: 'entry.revision-published', data: { ...scope, entryId, revisionId, revision: 1, publishedAt: now, trigger: 'publish' } },
        ],
        'no_stream',
        context,
      );
    }
    const head = await service.stores.events.headPosition();
    if (!(await service.supervisor!.waitFor(head!, 600_000))) throw new Error('projections did not catch up');
    const projectionMs = performance.now() - started;
    return { projectId: project.projectId, slugs, projectionMs };
  } finally {
    await service.stop();
  }
}

function child(args: string[], env: Record<string, string>): ChildProcess {
  const process_ = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  process_.stderr!.on('data', () => {});
  return process_;
}

async function untilUp(url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} did not come up`);
}

const BASELINE = `
const http = require('node:http');
const body = JSON.stringify({ data: 'x'.repeat(1000) });
http.createServer((req, res) => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }); res.end(body); })
  .listen(Number(process.env.PORT), '127.0.0.1');
`;

interface Result {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  /** CPU time the server process spent per request (user + system), in microseconds. */
  serverCpuMicrosPerRequest: number;
}

/** user + system CPU time of a process so far, in microseconds (Linux /proc). */
function cpuMicros(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1_000_000) / 100; // USER_HZ is 100 on Linux
}

let serverPid = 0;
async function measure(name: string, url: string, paths?: () => string, pid = serverPid, headers: Record<string, string> = {}): Promise<Result> {
  const cpuBefore = pid ? cpuMicros(pid) : 0;
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: SECONDS,
    headers,
    ...(paths ? { requests: [{ setupRequest: (request: Record<string, unknown>) => ({ ...request, path: paths() }) }] } : {}),
  } as autocannon.Options);
  const requests = Math.max(1, result.requests.total);
  const r = {
    name,
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    serverCpuMicrosPerRequest: pid ? Math.round((cpuMicros(pid) - cpuBefore) / requests) : 0,
  };
  say(
    `${name.padEnd(28)} ${String(r.requestsPerSecond).padStart(7)} req/s   p50 ${String(r.p50Ms).padStart(3)} ms   p99 ${String(r.p99Ms).padStart(3)} ms   server CPU ${String(r.serverCpuMicrosPerRequest).padStart(5)} µs/req${r.non2xx ? `   non-2xx ${r.non2xx}` : ''}`,
  );
  return r;
}

/**
 * METRICS=off (A) against METRICS=on (B), each a service on its own copy of the seeded data, measured in
 * turn scenario by scenario so that both see the same machine.
 */
async function metricsAb(dataDir: string, projectId: string, slugs: string[]): Promise<void> {
  const copy = `${dataDir}-b`;
  fs.cpSync(dataDir, copy, { recursive: true });
  const port = 18_000 + Math.floor(Math.random() * 1000);
  const env = { HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
  const off = child(['--import', 'tsx', 'src/main.ts'], { ...env, DATA_DIR: dataDir, PORT: String(port), METRICS: 'off' });
  const on = child(['--import', 'tsx', 'src/main.ts'], { ...env, DATA_DIR: copy, PORT: String(port + 1), METRICS: process.env['BENCH_B_METRICS'] ?? 'on' });
  children.push(off, on);
  try {
    await untilUp(`http://127.0.0.1:${port}/readyz`);
    await untilUp(`http://127.0.0.1:${port + 1}/readyz`);
    const bases = [`http://127.0.0.1:${port}/public/p/${projectId}/v1`, `http://127.0.0.1:${port + 1}/public/p/${projectId}/v1`] as const;
    const pids = [off.pid!, on.pid!] as const;
    const basePath = new URL(bases[0]).pathname;
    const scenarios: Array<{ name: string; path: (base: string) => string; paths?: () => string }> = [
      { name: 'single entry, one hot slug', path: (base) => `${base}/form-sets/articles/entries/${slugs[0]}` },
      { name: 'single entry, random slug', path: (base) => base, paths: () => `${basePath}/form-sets/articles/entries/${slugs[Math.floor(Math.random() * slugs.length)]}` },
      { name: 'list page 1', path: (base) => `${base}/form-sets/articles/entries?limit=20&sort=published_date:desc` },
    ];
    for (const [i, base] of bases.entries()) await measure(`warm-up ${i === 0 ? 'A' : 'B'}`, `${base}/form-sets/articles/entries?limit=20&sort=published_date:desc`, undefined, pids[i]);
    const rows = [];
    for (const scenario of scenarios) {
      const results: [Result[], Result[]] = [[], []];
      for (let round = 0; round < Number(values.rounds); round++) {
        for (const i of [0, 1] as const) results[i].push(await measure(`${scenario.name} ${i === 0 ? 'A off' : 'B on'}`, scenario.path(bases[i]), scenario.paths, pids[i]));
      }
      const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
      const [a, b] = results.map((r) => ({ rps: median(r.map((x) => x.requestsPerSecond)), cpu: median(r.map((x) => x.serverCpuMicrosPerRequest)) })) as [{ rps: number; cpu: number }, { rps: number; cpu: number }];
      rows.push({ scenario: scenario.name, off: a, on: b, requestsRatio: Math.round((b.rps / a.rps) * 1000) / 1000, cpuPerRequestRatio: Math.round((b.cpu / Math.max(1, a.cpu)) * 1000) / 1000 });
    }
    say('');
    for (const row of rows) say(`${row.scenario.padEnd(28)} metrics on/off: req/s ${row.requestsRatio.toFixed(3)}, server CPU per request ${row.cpuPerRequestRatio.toFixed(3)} (medians of ${values.rounds})`);
    if (values.json) process.stdout.write(`${JSON.stringify({ rounds: Number(values.rounds), secondsPerMeasurement: SECONDS, responseCacheMb: process.env['PUBLIC_RESPONSE_CACHE_MB'] ?? '64', rows }, null, 2)}\n`);
  } finally {
    await Promise.all([off, on].map((c) => new Promise((resolve) => (c.exitCode !== null ? resolve(null) : (c.once('exit', resolve), c.kill('SIGTERM'))))));
    fs.rmSync(copy, { recursive: true, force: true });
  }
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'annals-bench-public-'));
const children: ChildProcess[] = [];
try {
  const { projectId, slugs, projectionMs } = await seed(dataDir);
  say(`appended and projected ${ENTRIES} published entries (x2 locales) in ${Math.round(projectionMs)} ms`);
  if (values['metrics-ab']) await metricsAb(dataDir, projectId, slugs);
  else await againstBaseline(projectId, slugs, projectionMs);
} finally {
  // SIGTERM lets the service drain and write its CPU profile before the data folder goes.
  await Promise.all(children.map((c) => new Promise((resolve) => (c.exitCode !== null ? resolve(null) : (c.once('exit', resolve), c.kill('SIGTERM'))))));
  if (values.keep) say(`data kept in ${dataDir}`);
  else fs.rmSync(dataDir, { recursive: true, force: true });
}

/** The scenarios against the bare node:http baseline (the default). */
async function againstBaseline(projectId: string, slugs: string[], projectionMs: number): Promise<void> {
  const servicePort = 18_000 + Math.floor(Math.random() * 1000);
  const baselinePort = servicePort + 1000;
  const profile = values['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(values['cpu-prof'])] : [];
  children.push(child([...profile, '--import', 'tsx', 'src/main.ts'], { DATA_DIR: dataDir, PORT: String(servicePort), HOST: '127.0.0.1', LOG_LEVEL: 'warn' }));
  const baselineChild = child(['-e', BASELINE], { PORT: String(baselinePort) });
  children.push(baselineChild);
  serverPid = children[0]!.pid!;
  await untilUp(`http://127.0.0.1:${servicePort}/readyz`);
  await untilUp(`http://127.0.0.1:${baselinePort}/`);
  const base = `http://127.0.0.1:${servicePort}/public/p/${projectId}/v1`;
  const basePath = new URL(base).pathname;
  // Warm up the service (JIT, SQLite page cache, the sitemap cache).
  await measure('warm-up', `${base}/form-sets/articles/entries?limit=20&sort=published_date:desc`);

  const baseline = await measure('baseline (bare node:http)', `http://127.0.0.1:${baselinePort}/`, undefined, baselineChild.pid!);
  const wanted = new Set((values.only ?? 'hot,single,page1,page250,sitemap').split(','));
  const skipped: Result = { name: 'skipped', requestsPerSecond: 0, p50Ms: 0, p99Ms: 0, non2xx: 0, serverCpuMicrosPerRequest: 0 };
  const hot = !wanted.has('hot') ? skipped : await measure('single entry, one hot slug', `${base}/form-sets/articles/entries/${slugs[0]}`);
  const single = !wanted.has('single') ? skipped : await measure('single entry, random slug', base, () => `${basePath}/form-sets/articles/entries/${slugs[Math.floor(Math.random() * slugs.length)]}`);
  // The same again: by now most entries' responses are in the response cache (the steady state of a site).
  const singleWarm = !wanted.has('single') ? skipped : await measure('single entry, random, warm', base, () => `${basePath}/form-sets/articles/entries/${slugs[Math.floor(Math.random() * slugs.length)]}`);
  const page1 = !wanted.has('page1') ? skipped : await measure('list page 1', `${base}/form-sets/articles/entries?limit=20&sort=published_date:desc`);
  const page250 = !wanted.has('page250') ? skipped : await measure('list page 250', `${base}/form-sets/articles/entries?limit=20&page=250&sort=published_date:desc`);
  const sitemap = !wanted.has('sitemap') ? skipped : await measure('form set sitemap', `${base}/form-sets/articles/sitemap.xml`);
  const sitemapGzip = !wanted.has('sitemap') ? skipped : await measure('form set sitemap, gzip', `${base}/form-sets/articles/sitemap.xml`, undefined, serverPid, { 'accept-encoding': 'gzip' });

  const ratio = (r: Result) => Math.round((r.requestsPerSecond / baseline.requestsPerSecond) * 100) / 100;
  const summary = {
    entries: ENTRIES,
    connections: CONNECTIONS,
    secondsPerScenario: SECONDS,
    /** Entries appended (4 events each, one append per entry) and folded into every read model, per second. */
    seedEntriesPerSecond: Math.round((ENTRIES * 1000) / projectionMs),
    baseline,
    scenarios: [hot, single, singleWarm, page1, page250, sitemap, sitemapGzip].filter((r) => r !== skipped).map((r) => ({ ...r, ratioToBaseline: ratio(r), cpuRatioToBaseline: Math.round((baseline.serverCpuMicrosPerRequest / Math.max(1, r.serverCpuMicrosPerRequest)) * 100) / 100 })),
    page250ToPage1Latency: { p50: Math.round((page250.p50Ms / Math.max(page1.p50Ms, 1)) * 100) / 100, p99: Math.round((page250.p99Ms / Math.max(page1.p99Ms, 1)) * 100) / 100 },
    targets: {
      singleEntryAtLeast60Percent: ratio(singleWarm) >= 0.6,
      listPage1AtLeast40Percent: ratio(page1) >= 0.4,
      page250Within1_5xOfPage1: page250.p99Ms <= page1.p99Ms * 1.5 || page250.p99Ms - page1.p99Ms <= 1,
      p99Under20Ms: [hot, single, singleWarm, page1, page250, sitemapGzip].filter((r) => r !== skipped).every((r) => r.p99Ms < 20),
    },
  };
  if (values.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  else {
    say('');
    for (const s of summary.scenarios) say(`${s.name.padEnd(28)} ${s.ratioToBaseline.toFixed(2)} of baseline req/s; baseline needs ${s.cpuRatioToBaseline.toFixed(2)} of its server CPU per request`);
    say(`page 250 / page 1 latency: p50 ${summary.page250ToPage1Latency.p50}x, p99 ${summary.page250ToPage1Latency.p99}x`);
    say(`targets: ${JSON.stringify(summary.targets)}`);
  }
}

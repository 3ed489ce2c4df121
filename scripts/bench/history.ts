/**
 * bench:history: the cost of writing to and reading an entry whose history is long, through the admin API
 * of a service started in this process on the embedded default.
 *
 * Entries are grown to each size asked for (default 10, 1,000 and 10,000 revisions). Measuring adds
 * revisions, so each entry takes at most a tenth of its size in rounds before the next entry of that size
 * is used: the sizes stay what they say. Rounds interleave the sizes, so a busy machine weighs on each
 * alike, and each round measures per size:
 * - save (POST /entries/{id}/revisions) p50 and p99, and the read-model bytes that save writes: the JSON of
 *   every document the projections commit for it, summed over projections, counted at the read-model
 *   port (the save answers once every projection has folded it, so its commits are done by then);
 * - GET /entries/{id}: bytes and p50;
 * - GET /entries/{id}/diff between its first revision and the one just saved: p50;
 * - submit + withdraw (workflow commands on the same aggregate): p50.
 * Every figure comes with its ratio to the smallest size's in the same run (the baseline).
 *
 * Modes: "cached" is a running service with its aggregate cache (the default, AGGREGATE_CACHE_MB)
 * holding the entries measured (after a restart, a refused command loads each first); "uncached" restarts
 * it on the same data with AGGREGATE_CACHE_MB=0, so every command loads the stored snapshot and the
 * events after it. --repeat runs both modes that many times, alternating, and
 * prints each figure's median with its range across repeats.
 *
 *   npm run bench:history -- [--sizes 10,1000,10000] [--samples 100] [--repeat 3] [--json]
 */
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/config.ts';
import { systemClock } from '../../src/clock.ts';
import { startService, type RunningService } from '../../src/service/service.ts';
import { AccessService } from '../../src/application/access-service.ts';
import type { ReadModelStore } from '../../src/read-models/read-model-store.ts';
import { tempDir } from '../../test/support/temp-dir.ts';
import { median, percentile } from './support/percentile.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
};
const sizes = option('sizes', '10,1000,10000').split(',').map(Number);
const samples = Number(option('samples', '100'));
const repeats = Number(option('repeat', '3'));
const json = args.includes('--json');
if (sizes.some((s) => !Number.isInteger(s) || s < 1) || !(samples >= 1) || !(repeats >= 1)) {
  process.stderr.write('usage: npm run bench:history -- [--sizes 10,1000,10000] [--samples 100] [--repeat 3] [--json]\n');
  process.exit(2);
}

type Mode = 'cached' | 'uncached';
const MODES: Mode[] = ['cached', 'uncached'];
const ADMIN = { email: 'bench@example.com', password: 'bench password 123' };
const BODY = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(16);

interface Figures {
  revisions: number;
  saveP50: number;
  saveP99: number;
  bytesPerSave: number;
  documentsPerSave: number;
  getBytes: number;
  getP50: number;
  diffP50: number;
  workflowP50: number;
}

/** Counts what the projections commit: the JSON bytes of every document written, by projection. */
function countCommits(store: ReadModelStore): { bytes: number; documents: number } {
  const counted = { bytes: 0, documents: 0 };
  const commit = store.commit.bind(store);
  store.commit = (target, writes, checkpoint, now, options) => {
    for (const write of writes) {
      counted.documents++;
      if (write.doc !== null) counted.bytes += Buffer.byteLength(JSON.stringify(write.doc));
    }
    return commit(target, writes, checkpoint, now, options);
  };
  return counted;
}

/** An admin API client on a console session (agent keys are rate limited, spec section 8; sessions are not). */
async function session(service: RunningService, projectId: string) {
  const login = await fetch(`${service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
  const { token } = (await login.json()) as { token: string };
  return async (method: string, route: string, body?: unknown) => {
    const response = await fetch(`${service.url}/admin/v1${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'x-project-id': projectId, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${route}: ${response.status} ${text}`);
    return { text, body: JSON.parse(text) };
  };
}

const dataDir = path.join(tempDir(), 'data');
const start = (cacheMb: number | undefined) =>
  startService(loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...(cacheMb === undefined ? {} : { AGGREGATE_CACHE_MB: String(cacheMb) }) }), { logger: pino({ level: 'silent' }), clock: systemClock });

/** Rounds one entry takes before the next of its size is used: its size stays within 10 %. */
const roundsPerEntry = (size: number) => Math.max(1, Math.floor(size / 10));
const totalRounds = samples * repeats * MODES.length;

// Grow the entries, on a service with its cache (the cached rounds then find them warm, as a running service would).
let service = await start(undefined);
const access = new AccessService({ log: service.log, clock: systemClock });
const project = await access.bootstrap({ kind: 'operator', operatorId: 'bench' }, { projectName: 'Bench', plan: 'business', adminEmail: ADMIN.email, adminPassword: ADMIN.password, contentLocales: { locales: ['en'], defaultLocale: 'en' } });
await service.supervisor!.waitFor(project.position, 10_000);
let call = await session(service, project.projectId);
const formSet = await call('POST', '/form-sets', { slug: 'articles', name: 'Articles', fields: [{ key: 'title', type: 'text', label: 'Title' }, { key: 'body', type: 'textarea', label: 'Body' }] });
const entries: Array<Array<{ id: string; first: string; revisions: number }>> = [];
for (const size of sizes) {
  const count = Math.ceil(totalRounds / roundsPerEntry(size));
  const started = Date.now();
  const ofSize: Array<{ id: string; first: string; revisions: number }> = [];
  for (let e = 0; e < count; e++) {
    const created = await call('POST', `/form-sets/${formSet.body.id}/entries`, { slug: `entry-${size}-${e}`, fields: { title: `Entry ${size}/${e}`, body: BODY } });
    const entry = { id: created.body.entry.id as string, first: created.body.revision.id as string, revisions: 1 };
    while (entry.revisions < size) {
      await call('POST', `/entries/${entry.id}/revisions`, { fields: { title: `Entry ${size}/${e} v${entry.revisions + 1}`, body: BODY } });
      entry.revisions++;
      if (entry.revisions % 2000 === 0) process.stderr.write(`  ${size} revisions: entry ${e + 1}/${count} at ${entry.revisions} (${Math.round((Date.now() - started) / 1000)} s)\n`);
    }
    ofSize.push(entry);
  }
  process.stderr.write(`grown ${count} ${count === 1 ? 'entry' : 'entries'} of ${size} revisions in ${Math.round((Date.now() - started) / 1000)} s\n`);
  entries.push(ofSize);
}

let round = 0;
/** The entries the next `samples` rounds use, per size. */
const upcoming = (i: number) => {
  const per = roundsPerEntry(sizes[i]!);
  return [...new Set(Array.from({ length: samples }, (_, r) => Math.floor((round + r) / per)))].map((e) => entries[i]![e]!);
};

/**
 * Loads the aggregates of the entries the next rounds use into the cache of a freshly started service, as
 * a running service has them: a command the entry refuses (withdraw a draft: 409) loads it and changes
 * nothing.
 */
async function warm(): Promise<void> {
  for (let i = 0; i < sizes.length; i++) {
    for (const entry of upcoming(i)) {
      const latest = (await call('GET', `/entries/${entry.id}`)).body.latestRevision.revisionId as string;
      await call('POST', `/revisions/${latest}/withdraw`, {}).then(
        () => { throw new Error(`withdrawing the draft of ${entry.id} was not refused`); },
        (error: Error) => { if (!/: 409 /.test(error.message)) throw error; },
      );
    }
  }
}

/** samples interleaved rounds on the running service. */
async function measure(counted: { bytes: number; documents: number }): Promise<Figures[]> {
  const saves = sizes.map(() => [] as number[]);
  const gets = sizes.map(() => [] as number[]);
  const diffs = sizes.map(() => [] as number[]);
  const workflow = sizes.map(() => [] as number[]);
  const bytes = sizes.map(() => 0);
  const documents = sizes.map(() => 0);
  const getBytes = sizes.map(() => 0);
  const revisions = sizes.map(() => [] as number[]);
  for (let r = 0; r < samples; r++, round++) {
    for (let i = 0; i < sizes.length; i++) {
      const entry = entries[i]![Math.floor(round / roundsPerEntry(sizes[i]!))]!;
      revisions[i]!.push(entry.revisions);
      const before = { ...counted };
      let t = performance.now();
      const saved = await call('POST', `/entries/${entry.id}/revisions`, { fields: { title: `Entry v${entry.revisions + 1}`, body: BODY } });
      saves[i]!.push(performance.now() - t);
      bytes[i]! += counted.bytes - before.bytes;
      documents[i]! += counted.documents - before.documents;
      entry.revisions++;
      t = performance.now();
      const read = await call('GET', `/entries/${entry.id}`);
      gets[i]!.push(performance.now() - t);
      getBytes[i] = Buffer.byteLength(read.text);
      t = performance.now();
      await call('GET', `/entries/${entry.id}/diff?from=${entry.first}&to=${saved.body.id}`);
      diffs[i]!.push(performance.now() - t);
      t = performance.now();
      await call('POST', `/revisions/${saved.body.id}/submit`, {});
      await call('POST', `/revisions/${saved.body.id}/withdraw`, {});
      workflow[i]!.push((performance.now() - t) / 2);
    }
  }
  return sizes.map((_, i) => ({
    revisions: median(revisions[i]!),
    saveP50: median(saves[i]!),
    saveP99: percentile(saves[i]!, 99),
    bytesPerSave: Math.round(bytes[i]! / samples),
    documentsPerSave: documents[i]! / samples,
    getBytes: getBytes[i]!,
    getP50: median(gets[i]!),
    diffP50: median(diffs[i]!),
    workflowP50: median(workflow[i]!),
  }));
}

const results: Record<Mode, Figures[][]> = { cached: [], uncached: [] };
for (let repeat = 0; repeat < repeats; repeat++) {
  for (const mode of MODES) {
    if (repeat > 0 || mode === 'uncached') {
      await service.stop();
      service = await start(mode === 'cached' ? undefined : 0);
      call = await session(service, project.projectId);
    }
    process.stderr.write(`repeat ${repeat + 1}/${repeats}, ${mode}: ${samples} rounds\n`);
    if (mode === 'cached' && repeat > 0) await warm();
    results[mode].push(await measure(countCommits(service.stores.readModels)));
  }
}
await service.stop();

const spread = (values: number[], digits: number) => {
  const low = Math.min(...values);
  const high = Math.max(...values);
  return repeats === 1 ? median(values).toFixed(digits) : `${median(values).toFixed(digits)} [${low.toFixed(digits)}–${high.toFixed(digits)}]`;
};

if (json) {
  process.stdout.write(`${JSON.stringify({ sizes, samples, repeats, results }, null, 2)}\n`);
} else {
  for (const mode of MODES) {
    const runs = results[mode];
    console.log(`\n${mode}: ${repeats} × ${samples} interleaved rounds; median [min–max] over repeats; ratios against ${sizes[0]} revisions in the same repeat`);
    console.log('revisions | save p50 ms | ratio | save p99 ms | read-model bytes/save | documents/save | GET entry bytes | GET p50 ms | ratio | diff p50 ms | ratio | submit/withdraw p50 ms | ratio');
    for (let i = 0; i < sizes.length; i++) {
      const of = (pick: (f: Figures) => number) => runs.map((run) => pick(run[i]!));
      const ratio = (pick: (f: Figures) => number) => runs.map((run) => pick(run[i]!) / pick(run[0]!));
      console.log(
        [
          median(of((f) => f.revisions)),
          spread(of((f) => f.saveP50), 2),
          spread(ratio((f) => f.saveP50), 2),
          spread(of((f) => f.saveP99), 1),
          spread(of((f) => f.bytesPerSave), 0),
          spread(of((f) => f.documentsPerSave), 1),
          spread(of((f) => f.getBytes), 0),
          spread(of((f) => f.getP50), 2),
          spread(ratio((f) => f.getP50), 2),
          spread(of((f) => f.diffP50), 2),
          spread(ratio((f) => f.diffP50), 2),
          spread(of((f) => f.workflowP50), 2),
          spread(ratio((f) => f.workflowP50), 2),
        ].join(' | '),
      );
    }
  }
}

/**
 * bench:history: the cost of writing to and reading an entry whose history is long. One entry is saved
 * through the admin API until it has each of the sizes asked for (default 10, 1000, 10000 revisions);
 * at each size it measures, interleaved round by round so a busy machine weighs on every size alike:
 * - save p50/p99 (POST /entries/{id}/revisions), with the read-model bytes written per save (growth of the
 *   read-model file and its write-ahead log, divided by the saves);
 * - GET /entries/{id}: bytes and p50;
 * - submit + withdraw p50 (a workflow command on the same aggregate).
 * Each size is reported with its ratio to the smallest size's figure (the baseline of the same run).
 * Runs twice: with the aggregate cache (the default) and without (AGGREGATE_CACHE_ENTRIES=0: stored
 * snapshots only), so the uncached cost is shown beside the cached one.
 *
 *   npm run bench:history -- [--sizes 10,1000,10000] [--samples 40] [--json]
 */
import fs from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/config.ts';
import { systemClock } from '../../src/clock.ts';
import { startService } from '../../src/service/service.ts';
import { AccessService } from '../../src/application/access-service.ts';
import { tempDir } from '../../test/support/temp-dir.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
};
const sizes = option('sizes', '10,1000,10000').split(',').map(Number);
const samples = Number(option('samples', '40'));
const json = args.includes('--json');

interface Figures {
  revisions: number;
  saveP50: number;
  saveP99: number;
  bytesPerSave: number;
  getBytes: number;
  getP50: number;
  workflowP50: number;
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function run(cacheEntries: number): Promise<Figures[]> {
  const dataDir = path.join(tempDir(), 'data');
  const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', AGGREGATE_CACHE_ENTRIES: String(cacheEntries) });
  const service = await startService(config, { logger: pino({ level: 'silent' }), clock: systemClock });
  try {
    const access = new AccessService({ log: service.log, clock: systemClock });
    const project = await access.bootstrap({ kind: 'operator', operatorId: 'bench' }, { projectName: 'Bench', plan: 'business', adminEmail: 'bench@example.com', adminPassword: 'bench password 123', contentLocales: { locales: ['en'], defaultLocale: 'en' } });
    await service.supervisor!.waitFor(project.position, 10_000);
    // A console session: agent keys are rate limited (spec section 8), sessions are not.
    const login = await fetch(`${service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'bench@example.com', password: 'bench password 123' }) });
    const { token } = (await login.json()) as { token: string };
    const call = async (method: string, route: string, body?: unknown) => {
      const response = await fetch(`${service.url}/admin/v1${route}`, { method, headers: { authorization: `Bearer ${token}`, 'x-project-id': project.projectId, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
      const text = await response.text();
      if (response.status >= 300) throw new Error(`${method} ${route}: ${response.status} ${text}`);
      return { text, body: JSON.parse(text) };
    };
    const formSet = await call('POST', '/form-sets', { slug: 'articles', name: 'Articles', fields: [{ key: 'title', type: 'text', label: 'Title' }, { key: 'body', type: 'textarea', label: 'Body' }] });
    const body = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(16);
    // One entry per size, grown one after the other; the rounds then interleave the sizes.
    const entries: Array<{ id: string; revisions: number }> = [];
    for (const size of sizes) {
      const created = await call('POST', `/form-sets/${formSet.body.id}/entries`, { slug: `entry-${size}`, fields: { title: `Entry ${size}`, body } });
      const entry = { id: created.body.entry.id as string, revisions: 1 };
      const started = Date.now();
      while (entry.revisions < size) {
        await call('POST', `/entries/${entry.id}/revisions`, { fields: { title: `Entry ${size} v${entry.revisions + 1}`, body } });
        entry.revisions++;
        if (entry.revisions % 1000 === 0) process.stderr.write(`  cache ${cacheEntries}: entry of ${size}: ${entry.revisions} revisions (${Math.round((Date.now() - started) / 1000)} s)\n`);
      }
      entries.push(entry);
    }
    const readModelBytes = () => ['read-models.sqlite', 'read-models.sqlite-wal'].reduce((sum, f) => sum + (fs.existsSync(path.join(dataDir, f)) ? fs.statSync(path.join(dataDir, f)).size : 0), 0);
    const saves = sizes.map(() => [] as number[]);
    const gets = sizes.map(() => [] as number[]);
    const workflow = sizes.map(() => [] as number[]);
    const written = sizes.map(() => 0);
    const getBytes = sizes.map(() => 0);
    for (let round = 0; round < samples; round++) {
      for (let i = 0; i < sizes.length; i++) {
        const entry = entries[i]!;
        const before = readModelBytes();
        let t = performance.now();
        const saved = await call('POST', `/entries/${entry.id}/revisions`, { fields: { title: `Entry v${entry.revisions + 1}`, body } });
        saves[i]!.push(performance.now() - t);
        written[i]! += Math.max(0, readModelBytes() - before);
        entry.revisions++;
        t = performance.now();
        const read = await call('GET', `/entries/${entry.id}`);
        gets[i]!.push(performance.now() - t);
        getBytes[i] = Buffer.byteLength(read.text);
        t = performance.now();
        await call('POST', `/revisions/${saved.body.id}/submit`, {});
        await call('POST', `/revisions/${saved.body.id}/withdraw`, {});
        workflow[i]!.push((performance.now() - t) / 2);
      }
    }
    return sizes.map((size, i) => ({
      revisions: size,
      saveP50: quantile(saves[i]!, 0.5),
      saveP99: quantile(saves[i]!, 0.99),
      bytesPerSave: Math.round(written[i]! / samples),
      getBytes: getBytes[i]!,
      getP50: quantile(gets[i]!, 0.5),
      workflowP50: quantile(workflow[i]!, 0.5),
    }));
  } finally {
    await service.stop();
  }
}

const results: Record<string, Figures[]> = {};
for (const [name, cache] of [['cached (default)', 1000], ['uncached (snapshots only)', 0]] as const) {
  process.stderr.write(`bench:history ${name}: growing entries to ${sizes.join(', ')} revisions...\n`);
  results[name] = await run(cache);
}

if (json) {
  process.stdout.write(`${JSON.stringify({ sizes, samples, results }, null, 2)}\n`);
} else {
  for (const [name, figures] of Object.entries(results)) {
    const base = figures[0]!;
    console.log(`\n${name}, ${samples} interleaved rounds; ratios against ${base.revisions} revisions in the same run`);
    console.log('revisions | save p50 ms (ratio) | save p99 ms | read-model bytes/save | GET entry bytes | GET p50 ms (ratio) | submit/withdraw p50 ms (ratio)');
    for (const f of figures) {
      const r = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : '-');
      console.log(
        `${f.revisions} | ${f.saveP50.toFixed(2)} (${r(f.saveP50, base.saveP50)}) | ${f.saveP99.toFixed(2)} | ${f.bytesPerSave} | ${f.getBytes} | ${f.getP50.toFixed(2)} (${r(f.getP50, base.getP50)}) | ${f.workflowP50.toFixed(2)} (${r(f.workflowP50, base.workflowP50)})`,
      );
    }
  }
}

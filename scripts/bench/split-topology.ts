/**
 * bench:split: what a write costs when the API and the projectors run in separate processes (docs/operations.md's way
 * to serve more requests: `ROLES=api` beside one `ROLES=projector` process), against one process, in the same run.
 *
 * Two data folders are set up alike (a bootstrapped project, a form set, one entry per topology): "one" runs
 * the service as one process, "split" as a `ROLES=projector` process and a `ROLES=api` one on the same folder
 * (and, with MongoDB read models, the same database). Rounds interleave the topologies, the order alternating,
 * so that a busy machine weighs on both alike; each round makes `--saves` admin saves (POST
 * /entries/{id}/revisions on a console session) one after another on each, timing each from request to answer,
 * and reads the entry after every save: the read must show the revision just saved (read your writes), or
 * the bench counts it as stale.
 *
 * It prints save p50, p99 and max per topology and the split's ratio to one process's, and the service's CPU
 * time per save and read (every process of the topology, from /proc: unlike latency, barely moved by other
 * work on the machine).
 *
 *   npm run bench:split -- [--rounds 5] [--saves 100] [--runtime compiled|tsx] [--mongodb-url URL | --ferretdb]
 *                          [--compare-root DIR] [--cpu-prof-dir DIR] [--json]
 *
 * `--compare-root` also runs both topologies of another checkout (its sources, built there first when compiled:
 * a commit before a change, with node_modules) in the same interleaved rounds, labelled with the folder's name,
 * and prints this checkout's ratios to it.
 * `--cpu-prof-dir` has every service process write a V8 CPU profile into DIR when it stops (node --cpu-prof).
 * `--ferretdb` starts FerretDB (scripts/peers/build.sh ferretdb builds it) and puts the read models there;
 * `--mongodb-url` uses an existing server (a database per topology, named after it).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { median, percentile } from './support/percentile.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    saves: { type: 'string', default: '100' },
    runtime: { type: 'string', default: 'compiled' },
    'mongodb-url': { type: 'string' },
    ferretdb: { type: 'boolean', default: false },
    'compare-root': { type: 'string' },
    'cpu-prof-dir': { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
const saves = Number(values.saves);
if (!(Number.isInteger(rounds) && rounds >= 1 && Number.isInteger(saves) && saves >= 1) || (values.runtime !== 'compiled' && values.runtime !== 'tsx')) {
  process.stderr.write('usage: npm run bench:split -- [--rounds 5] [--saves 100] [--runtime compiled|tsx] [--mongodb-url URL | --ferretdb] [--compare-root DIR] [--json]\n');
  process.exit(2);
}
const say = (line: string) => process.stderr.write(`${line}\n`);

type Topology = 'one' | 'split';
const TOPOLOGIES: Topology[] = ['one', 'split'];
/** A topology of a checkout: this one's are labelled by the topology, another's (--compare-root) also by its folder. */
interface Variant {
  label: string;
  topology: Topology;
  root: string;
}
const compareRoot = values['compare-root'] === undefined ? undefined : path.resolve(values['compare-root']);
const VARIANTS: Variant[] = [
  ...TOPOLOGIES.map((topology) => ({ label: topology, topology, root: ROOT })),
  ...(compareRoot ? TOPOLOGIES.map((topology) => ({ label: `${topology}@${path.basename(compareRoot)}`, topology, root: compareRoot })) : []),
];
const ADMIN = { email: 'bench@example.com', password: 'bench password 123' };
const BODY = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(16);

const [SERVICE, CLI] = values.runtime === 'compiled' ? [['dist/src/main.js'], ['dist/src/cli/main.js']] : [['--import', 'tsx', 'src/main.ts'], ['--import', 'tsx', 'src/cli/main.ts']];
if (values.runtime === 'compiled') {
  for (const root of new Set(VARIANTS.map((v) => v.root))) {
    say(`compiling the service in ${root} (tsc -p tsconfig.build.json)...`);
    execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  }
}

let mongoUrl = values['mongodb-url'];
let readModels = 'SQLite';
if (values.ferretdb) {
  const { mongoServer } = await import('../../test/support/mongo-server.ts');
  const server = await mongoServer();
  if (server.flavour !== 'ferretdb') throw new Error(`--ferretdb: the MongoDB server found is ${server.flavour}`);
  mongoUrl = server.url;
}
if (mongoUrl) readModels = values.ferretdb ? 'MongoDB wire protocol (FerretDB)' : 'MongoDB';
/** The read-model database of a variant: its own, so that no two share read models. */
const mongoUrlFor = (variant: Variant) => {
  const url = new URL(mongoUrl!);
  url.pathname = `/annals_bench_split_${variant.label.replace(/[^A-Za-z0-9]/g, '_')}_${process.pid}`;
  return url.toString();
};

const children: ChildProcess[] = [];
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});
/** What each service process last wrote to stderr (LOG_LEVEL=warn: its warnings and errors go to stdout; fatal start errors here). */
const lastWords = new Map<ChildProcess, string>();

function start(root: string, args: string[], env: Record<string, string>): ChildProcess {
  // --cpu-prof-dir: each service process writes a V8 CPU profile there when it stops (node --cpu-prof).
  if (values['cpu-prof-dir']) args = ['--cpu-prof', '--cpu-prof-dir', path.resolve(values['cpu-prof-dir']), ...args];
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  lastWords.set(child, '');
  const keep = (chunk: Buffer) => void lastWords.set(child, (lastWords.get(child)! + chunk.toString()).slice(-4000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  children.push(child);
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** Until `check` passes; fails at once, with what it said, when one of `processes` exits or logs an error. */
async function until(what: string, processes: ChildProcess[], check: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const failed = processes.find((child) => child.exitCode !== null || /"level":(50|60)/.test(lastWords.get(child)!));
    if (failed) throw new Error(`${what}: a service process failed: ${lastWords.get(failed)}`);
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}

interface Setup {
  variant: Variant;
  processes: ChildProcess[];
  call: (method: string, route: string, body?: unknown) => Promise<any>;
  entryId: string;
  latencies: number[];
  stale: number;
  /** CPU time of the topology's processes during the measured saves and reads, µs. */
  cpuMicros: number;
}

/** user + system CPU time of a process so far, µs (Linux /proc; USER_HZ 100). */
function cpuMicros(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100;
}

async function setUp(variant: Variant): Promise<Setup> {
  const { label: topology, root } = variant;
  const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'annals-bench-split-')), 'data');
  const env: Record<string, string> = { DATA_DIR: dataDir, HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...(mongoUrl ? { MONGODB_URL: mongoUrlFor(variant) } : {}) };
  const bootstrap = execFileSync(process.execPath, [...CLI, 'bootstrap', '--project', 'Bench', '--plan', 'business', '--admin-email', ADMIN.email, '--admin-password', ADMIN.password, '--locales', 'en', '--json'], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'ignore'] });
  const port = 18_000 + Math.floor(Math.random() * 2000);
  const processes = variant.topology === 'split' ? [start(root, SERVICE, { ...env, ROLES: 'projector' }), start(root, SERVICE, { ...env, ROLES: 'api', PORT: String(port) })] : [start(root, SERVICE, { ...env, PORT: String(port) })];
  const url = `http://127.0.0.1:${port}`;
  await until(`${topology}: /healthz`, processes, async () => (await fetch(`${url}/healthz`)).status === 200);
  // The bootstrap's events folded (login reads the access read model): every projection started and live
  // (a projection not started yet has no lag to report).
  await until(`${topology}: caught up`, processes, async () => {
    const live = (await (await fetch(`${url}/metrics`)).text()).split('\n').filter((line) => line.startsWith('annals_projection_state{') && line.includes('state="live"'));
    return live.length > 0 && live.every((line) => Number(line.split(' ').pop()) === 1);
  });
  const login = await fetch(`${url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
  if (login.status !== 200) throw new Error(`${topology}: login answered ${login.status} ${await login.text()}`);
  const { token } = (await login.json()) as { token: string };
  const { projectId } = JSON.parse(bootstrap.toString()) as { projectId: string };
  const call = async (method: string, route: string, body?: unknown) => {
    const response = await fetch(`${url}/admin/v1${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'x-project-id': projectId, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${topology}: ${method} ${route}: ${response.status} ${text}`);
    return JSON.parse(text) as any;
  };
  const formSet = await call('POST', '/form-sets', { slug: 'articles', name: 'Articles', fields: [{ key: 'title', type: 'text', label: 'Title' }, { key: 'body', type: 'textarea', label: 'Body' }] });
  const created = await call('POST', `/form-sets/${formSet.id}/entries`, { slug: 'entry', fields: { title: 'Entry', body: BODY } });
  return { variant, processes, call, entryId: created.entry.id as string, latencies: [], stale: 0, cpuMicros: 0 };
}

/** `count` saves one after another, each followed by a read of the entry that must show it. */
async function measure(setup: Setup, count: number, keep: boolean): Promise<void> {
  const cpu = () => setup.processes.reduce((sum, child) => sum + cpuMicros(child.pid!), 0);
  const cpuBefore = cpu();
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    const saved = await setup.call('POST', `/entries/${setup.entryId}/revisions`, { fields: { title: `Entry v${i}`, body: BODY } });
    const elapsed = performance.now() - t;
    const read = await setup.call('GET', `/entries/${setup.entryId}`);
    if (!keep) continue;
    setup.latencies.push(elapsed);
    if (read.latestRevision?.revisionId !== saved.id) setup.stale++;
  }
  if (keep) setup.cpuMicros += cpu() - cpuBefore;
}

interface Figures {
  saves: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  staleReads: number;
  cpuMsPerSave: number;
}

const setups: Setup[] = [];
try {
  for (const variant of VARIANTS) setups.push(await setUp(variant));
  say(`read models on ${readModels}; ${rounds} interleaved rounds of ${saves} saves per topology`);
  // Warm-up (the JIT, the statements, the caches): not counted.
  for (const setup of setups) await measure(setup, 20, false);
  const perRound: Array<Record<string, number>> = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? setups : [...setups].reverse();
    const p50s: Record<string, number> = {};
    for (const setup of order) {
      const before = setup.latencies.length;
      await measure(setup, saves, true);
      p50s[setup.variant.label] = median(setup.latencies.slice(before));
    }
    perRound.push(p50s);
    say(`round ${round + 1}/${rounds}: save p50 ${setups.map((s) => `${s.variant.label} ${p50s[s.variant.label]!.toFixed(2)} ms`).join(', ')}`);
  }
  const figures: Record<string, Figures> = Object.fromEntries(
    setups.map((s) => [s.variant.label, { saves: s.latencies.length, p50Ms: round2(median(s.latencies)), p99Ms: round2(percentile(s.latencies, 99)), maxMs: round2(percentile(s.latencies, 100)), staleReads: s.stale, cpuMsPerSave: round2(s.cpuMicros / 1000 / s.latencies.length) }]),
  );
  /** a ÷ b: p50, p99, CPU, and the p50 of each round. */
  const ratio = (a: string, b: string) => ({
    of: `${a} / ${b}`,
    p50: round2(figures[a]!.p50Ms / figures[b]!.p50Ms),
    p99: round2(figures[a]!.p99Ms / figures[b]!.p99Ms),
    cpu: round2(figures[a]!.cpuMsPerSave / figures[b]!.cpuMsPerSave),
    roundP50s: perRound.map((r) => round2(r[a]! / r[b]!)),
  });
  const ratios = [ratio('split', 'one'), ...(compareRoot ? [ratio(VARIANTS[3]!.label, VARIANTS[2]!.label), ratio('one', VARIANTS[2]!.label), ratio('split', VARIANTS[3]!.label)] : [])];
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ readModels, rounds, saves, figures, ratios }, null, 2)}\n`);
  } else {
    console.log(`\nadmin save (POST /entries/{id}/revisions), read models on ${readModels}, ${rounds} × ${saves} interleaved`);
    console.log('topology | saves | p50 ms | p99 ms | max ms | stale reads after a save | service CPU ms per save and read');
    for (const { label } of VARIANTS) {
      const f = figures[label]!;
      console.log(`${label} | ${f.saves} | ${f.p50Ms} | ${f.p99Ms} | ${f.maxMs} | ${f.staleReads} | ${f.cpuMsPerSave}`);
    }
    for (const r of ratios) console.log(`${r.of}: p50 ${r.p50}×, p99 ${r.p99}×, CPU ${r.cpu}× (p50 per round: ${r.roundP50s.join(', ')})`);
  }
} finally {
  for (const setup of setups) for (const child of [...setup.processes].reverse()) await stop(child);
  if (values.ferretdb) await (await import('../../test/support/mongo-server.ts')).stopMongoServer();
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

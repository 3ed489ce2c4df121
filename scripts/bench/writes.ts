/**
 * bench:writes: what a command costs the service, against what the same number of durable commits cost a bare
 * SQLite, in the same run (issue 50's bench).
 *
 * The service (this checkout's sources, or dist/ with --runtime compiled) runs on a fresh DATA_DIR with a
 * bootstrapped project (business plan, no approval policy) and one form set. `--clients` concurrent clients, each
 * on its own console session (sessions are exempt from the agent rate limit), run the publish cycle in a loop:
 * create an entry, save a revision, submit it, approve it (approving publishes it at once). Each command is timed
 * from request to answer (the answer comes after read-your-writes: the projections that handle it have folded
 * it). The server's CPU is read from /proc (utime + stime of the process: every thread, the writer and the log
 * tree's included) before and after each round.
 *
 * The baseline, in its own process and in the same rounds (interleaved, the order alternating), is what the
 * commands' appends would cost at the least: the same number of SQLite transactions as the round made commands,
 * each inserting one event-sized row (1 KB JSON) with `synchronous=FULL` in WAL mode, from `--clients` loops
 * taking turns as the clients do (better-sqlite3, one connection).
 *
 * It prints per command its p50 and p99 latency, the cycles per second, the server's CPU per command and the
 * baseline's CPU per commit, and their ratio; per round the figures behind the medians; and the baseline's
 * commits' own p50, p99 and max (the disk's tail, which no command's p99 can beat).
 *
 * With --profile DIR the service runs under `node --cpu-prof` (every thread) and, once it has stopped, the
 * bench prints its CPU by stage (scripts/bench/support/profile-stages.ts), per command over every command the
 * service answered (the warm-up's included; its start, ~2 s of CPU, lands mostly in "runtime"). A thread the
 * service ends with terminate() (the SQLite writers, the log tree's) writes no profile: the table is then the
 * main thread's, and the rest of the all-thread CPU from /proc is theirs. The profiler costs CPU of its own:
 * compare the shares, and take the CPU per command from a run without it.
 *
 *   npm run bench:writes -- [--rounds 5] [--seconds 10] [--clients 4] [--runtime tsx|compiled] [--profile DIR] [--json]
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { median, percentile } from './support/percentile.ts';
import { listeningUrl } from './support/service-process.ts';
import { formatStageTable, stagesOfProfiles } from './support/profile-stages.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '10' },
    clients: { type: 'string', default: '4' },
    runtime: { type: 'string', default: 'tsx' },
    profile: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const clients = Number(values.clients);
if (![rounds, seconds, clients].every((n) => Number.isInteger(n) && n >= 1) || (values.runtime !== 'compiled' && values.runtime !== 'tsx')) {
  process.stderr.write('usage: npm run bench:writes -- [--rounds 5] [--seconds 10] [--clients 4] [--runtime tsx|compiled] [--profile DIR] [--json]\n');
  process.exit(2);
}
const say = (line: string) => process.stderr.write(`${line}\n`);
const COMMANDS = ['create', 'save', 'submit', 'approve'] as const;
type Command = (typeof COMMANDS)[number];
const ADMIN = { email: 'bench@example.com', password: 'bench password 123' };
const BODY = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(16);

/** user + system CPU time of a process so far (all its threads), µs (Linux /proc; USER_HZ 100). */
function cpuMicros(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100;
}

const children: ChildProcess[] = [];
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

// ---- the service ----
const [SERVICE, CLI] = values.runtime === 'compiled' ? [['dist/src/main.js'], ['dist/src/cli/main.js']] : [['--import', 'tsx', 'src/main.ts'], ['--import', 'tsx', 'src/cli/main.ts']];
if (values.runtime === 'compiled') {
  say('compiling the service (tsc -p tsconfig.build.json)...');
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
}
const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'annals-bench-writes-')), 'data');
const env = { ...process.env, DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn' };
const bootstrap = JSON.parse(
  execFileSync(process.execPath, [...CLI, 'bootstrap', '--project', 'Bench', '--plan', 'business', '--admin-email', ADMIN.email, '--admin-password', ADMIN.password, '--locales', 'en', '--json'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'ignore'] }).toString(),
) as { projectId: string };
const profileDir = values.profile === undefined ? undefined : path.resolve(values.profile);
if (profileDir) fs.mkdirSync(profileDir, { recursive: true });
const service = spawn(process.execPath, [...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), ...SERVICE], { cwd: ROOT, env: { ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] });
children.push(service);
const url = await listeningUrl(service);

async function signIn(): Promise<(method: string, route: string, body?: unknown) => Promise<Record<string, unknown>>> {
  const login = await fetch(`${url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
  if (login.status !== 200) throw new Error(`login answered ${login.status} ${await login.text()}`);
  const { token } = (await login.json()) as { token: string };
  return async (method, route, body) => {
    const response = await fetch(`${url}/admin/v1${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'x-project-id': bootstrap.projectId, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${route}: ${response.status} ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
}

const sessions = await Promise.all(Array.from({ length: clients }, () => signIn()));
const formSet = await sessions[0]!('POST', '/form-sets', { slug: 'articles', name: 'Articles', fields: [{ key: 'title', type: 'text', label: 'Title' }, { key: 'body', type: 'textarea', label: 'Body' }] });
let serial = 0;
/** Every command the service answered, the warm-up's included (what a profile covers). */
let commandsAnswered = 0;

/** One client's publish cycles until `until`; each command's latency into `latencies`. */
async function cycles(call: (typeof sessions)[number], until: number, latencies: Record<Command, number[]>): Promise<number> {
  let done = 0;
  const timed = async <T>(command: Command, run: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    const result = await run();
    latencies[command].push(performance.now() - t);
    commandsAnswered++;
    return result;
  };
  while (performance.now() < until) {
    const n = serial++;
    const created = await timed('create', () => call('POST', `/form-sets/${formSet['id']}/entries`, { slug: `entry-${n}`, fields: { title: `Entry ${n}`, body: BODY } }));
    const entryId = (created['entry'] as { id: string }).id;
    const saved = await timed('save', () => call('POST', `/entries/${entryId}/revisions`, { fields: { title: `Entry ${n}, revised`, body: BODY } }));
    await timed('submit', () => call('POST', `/revisions/${saved['id']}/submit`, {}));
    await timed('approve', () => call('POST', `/revisions/${saved['id']}/approve`, {}));
    done++;
  }
  return done;
}

interface ServiceRound {
  cycles: number;
  cyclesPerSecond: number;
  cpuMsPerCommand: number;
  latencies: Record<Command, number[]>;
}

async function serviceRound(durationSeconds: number): Promise<ServiceRound> {
  const latencies = Object.fromEntries(COMMANDS.map((c) => [c, [] as number[]])) as Record<Command, number[]>;
  const cpuBefore = cpuMicros(service.pid!);
  const started = performance.now();
  const until = started + durationSeconds * 1000;
  const done = (await Promise.all(sessions.map((call) => cycles(call, until, latencies)))).reduce((a, b) => a + b, 0);
  const elapsed = (performance.now() - started) / 1000;
  const cpu = cpuMicros(service.pid!) - cpuBefore;
  return { cycles: done, cyclesPerSecond: done / elapsed, cpuMsPerCommand: cpu / 1000 / (done * COMMANDS.length), latencies };
}

// ---- the baseline: bare durable SQLite commits, in a process of its own ----
const BASELINE = `
const Database = require('better-sqlite3');
const db = new Database(process.argv[1]);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec('CREATE TABLE IF NOT EXISTS events (position INTEGER PRIMARY KEY, stream TEXT NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL)');
const insert = db.prepare('INSERT INTO events (stream, type, data) VALUES (?, ?, ?)');
const data = JSON.stringify({ title: 'Entry', body: ${JSON.stringify(BODY)}, padding: 'x'.repeat(1024 - ${BODY.length}) });
const commit = db.transaction((stream) => insert.run(stream, 'entry.revision-saved', data));
process.on('message', ({ commits, clients }) => {
  const cpu = process.cpuUsage();
  const t = performance.now();
  const each = new Array(commits);
  for (let i = 0; i < commits; i++) {
    const at = performance.now();
    commit('entry-' + (i % clients));
    each[i] = performance.now() - at;
  }
  const used = process.cpuUsage(cpu);
  process.send({ ms: performance.now() - t, cpuMicros: used.user + used.system, each });
});
`;
const baselineFile = path.join(path.dirname(dataDir), 'baseline.sqlite');
const baseline = spawn(process.execPath, ['-e', BASELINE, baselineFile], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
children.push(baseline);
type BaselineRound = { cpuMsPerCommit: number; msPerCommit: number; commitMs: number[] };
async function baselineRound(commits: number): Promise<BaselineRound> {
  const answer = new Promise<{ ms: number; cpuMicros: number; each: number[] }>((resolve) => baseline.once('message', (m) => resolve(m as { ms: number; cpuMicros: number; each: number[] })));
  baseline.send({ commits, clients });
  const { ms, cpuMicros: cpu, each } = await answer;
  return { cpuMsPerCommit: cpu / 1000 / commits, msPerCommit: ms / commits, commitMs: each };
}

// ---- rounds ----
try {
  say(`service ${values.runtime === 'compiled' ? 'dist/' : 'sources (tsx)'} on ${dataDir}; ${clients} clients; ${rounds} rounds of ${seconds} s, interleaved with the baseline`);
  await serviceRound(Math.min(3, seconds)); // warm-up: the JIT, the statements, the caches
  await baselineRound(200);
  const perRound: Array<{ service: ServiceRound; baseline: BaselineRound }> = [];
  for (let round = 0; round < rounds; round++) {
    let s: ServiceRound;
    let b: BaselineRound;
    if (round % 2 === 0) {
      s = await serviceRound(seconds);
      b = await baselineRound(s.cycles * COMMANDS.length);
    } else {
      // The baseline first: as many commits as the last round's commands.
      b = await baselineRound(perRound[round - 1]!.service.cycles * COMMANDS.length);
      s = await serviceRound(seconds);
    }
    perRound.push({ service: s, baseline: b });
    say(
      `round ${round + 1}/${rounds}: ${s.cyclesPerSecond.toFixed(1)} cycles/s, server CPU ${s.cpuMsPerCommand.toFixed(2)} ms per command; baseline ${b.cpuMsPerCommit.toFixed(3)} ms CPU per commit (x${(s.cpuMsPerCommand / b.cpuMsPerCommit).toFixed(1)})`,
    );
  }
  const all = Object.fromEntries(COMMANDS.map((c) => [c, perRound.flatMap((r) => r.service.latencies[c])])) as Record<Command, number[]>;
  const round2 = (n: number) => Math.round(n * 100) / 100;
  const result = {
    clients,
    rounds,
    seconds,
    runtime: values.runtime,
    cyclesPerSecond: round2(median(perRound.map((r) => r.service.cyclesPerSecond))),
    cyclesPerSecondRange: [round2(Math.min(...perRound.map((r) => r.service.cyclesPerSecond))), round2(Math.max(...perRound.map((r) => r.service.cyclesPerSecond)))],
    serverCpuMsPerCommand: round2(median(perRound.map((r) => r.service.cpuMsPerCommand))),
    baselineCpuMsPerCommit: Math.round(median(perRound.map((r) => r.baseline.cpuMsPerCommit)) * 1000) / 1000,
    baselineMsPerCommit: Math.round(median(perRound.map((r) => r.baseline.msPerCommit)) * 1000) / 1000,
    cpuRatioPerRound: perRound.map((r) => round2(r.service.cpuMsPerCommand / r.baseline.cpuMsPerCommit)),
    // The disk's own tail: a command's p99 can be no better than a durable commit's.
    baselineCommit: ((all: number[]) => ({ p50Ms: Math.round(median(all) * 1000) / 1000, p99Ms: Math.round(percentile(all, 99) * 1000) / 1000, maxMs: Math.round(percentile(all, 100) * 1000) / 1000 }))(perRound.flatMap((r) => r.baseline.commitMs)),
    commands: Object.fromEntries(COMMANDS.map((c) => [c, { count: all[c].length, p50Ms: round2(median(all[c])), p99Ms: round2(percentile(all[c], 99)), maxMs: round2(percentile(all[c], 100)) }])),
  };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } else {
    console.log(`\npublish cycles (create, save, submit, approve), ${clients} clients, ${rounds} × ${seconds} s, interleaved with bare SQLite commits (synchronous=FULL)`);
    console.log(`cycles per second: ${result.cyclesPerSecond} (rounds ${result.cyclesPerSecondRange.join(' to ')})`);
    console.log(`server CPU per command, all threads: ${result.serverCpuMsPerCommand} ms; baseline CPU per commit: ${result.baselineCpuMsPerCommit} ms (${result.baselineMsPerCommit} ms wall); ratio per round ${result.cpuRatioPerRound.join(', ')}`);
    console.log('command | count | p50 ms | p99 ms | max ms');
    for (const c of COMMANDS) {
      const figures = result.commands[c]!;
      console.log(`${c} | ${figures.count} | ${figures.p50Ms} | ${figures.p99Ms} | ${figures.maxMs}`);
    }
    console.log(`baseline durable commit | ${perRound.reduce((n, r) => n + r.baseline.commitMs.length, 0)} | ${result.baselineCommit.p50Ms} | ${result.baselineCommit.p99Ms} | ${result.baselineCommit.maxMs}`);
  }
} finally {
  baseline.kill('SIGTERM');
  if (service.exitCode === null) {
    const exited = new Promise((resolve) => service.once('exit', resolve));
    service.kill('SIGTERM');
    await exited;
  }
}
if (profileDir) {
  // Written by each thread as the service exits.
  const table = stagesOfProfiles(profileDir);
  say(`\nthe service's CPU by stage, from ${table.threads} thread profiles in ${profileDir} (${commandsAnswered} commands; idle ${(table.idleMs / 1000).toFixed(1)} s left out)`);
  for (const line of formatStageTable(table, commandsAnswered)) say(line);
}

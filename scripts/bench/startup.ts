/**
 * Start-up time and memory of the service, compiled (`npm start`: node on dist/) against the TypeScript
 * sources run through tsx (`npm run dev`, which `npm start` used to be), measured in turn in the same run.
 *
 *   npm run bench:startup -- [--runs 5] [--json]
 *
 * Each start gets an empty DATA_DIR and PORT=0; the time is from spawning node to the first 200 from
 * /healthz, the memory the process's resident set (VmRSS, /proc) right then and 3 s later. Builds dist/
 * first (npm run build), so that both run the same sources.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { median } from './support/percentile.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' }, json: { type: 'boolean', default: false } } });
const RUNS = Number(values.runs);
const root = path.resolve(import.meta.dirname, '../..');
const say = (line: string) => process.stderr.write(`${line}\n`);

interface Start {
  healthyMs: number;
  rssMiB: number;
  rssSettledMiB: number;
}

const variants = {
  'tsx (sources)': ['--import', 'tsx', 'src/main.ts'],
  'compiled (dist)': ['dist/src/main.js'],
} as const;

function rssMiB(pid: number): number {
  const line = fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'))!;
  return Math.round(Number(line.split(/\s+/)[1]) / 1024);
}

async function startOnce(args: readonly string[]): Promise<Start> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'annals-bench-startup-'));
  const began = performance.now();
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr!.resume();
  try {
    let output = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => {
        output += d.toString();
        const match = /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"annals listening"/.exec(output);
        if (match) resolve(match[1]!);
      });
      child.once('exit', () => reject(new Error(`exited before listening:\n${output}`)));
    });
    for (;;) {
      const ok = await fetch(`${url}/healthz`).then((r) => r.status === 200, () => false);
      if (ok) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const healthyMs = Math.round(performance.now() - began);
    const rss = rssMiB(child.pid!);
    await new Promise((r) => setTimeout(r, 3000));
    return { healthyMs, rssMiB: rss, rssSettledMiB: rssMiB(child.pid!) };
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

say('building dist/ (npm run build)…');
execFileSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
const results: Record<string, Start[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
for (let run = 0; run < RUNS; run++) {
  for (const [name, args] of Object.entries(variants)) {
    const start = await startOnce(args);
    results[name]!.push(start);
    say(`${name.padEnd(16)} run ${run + 1}: healthy after ${String(start.healthyMs).padStart(5)} ms, RSS ${start.rssMiB} MiB (${start.rssSettledMiB} MiB 3 s later)`);
  }
}
const summary = Object.fromEntries(
  Object.entries(results).map(([name, starts]) => {
    const ms = starts.map((s) => s.healthyMs);
    return [name, { healthyMs: { min: Math.min(...ms), median: median(ms), max: Math.max(...ms) }, rssMiB: median(starts.map((s) => s.rssMiB)), rssSettledMiB: median(starts.map((s) => s.rssSettledMiB)) }];
  }),
);
say('');
for (const [name, s] of Object.entries(summary)) say(`${name.padEnd(16)} healthy in ${s.healthyMs.min}–${s.healthyMs.max} ms (median ${s.healthyMs.median}), RSS ${s.rssMiB} MiB, ${s.rssSettledMiB} MiB settled (medians of ${RUNS})`);
if (values.json) process.stdout.write(`${JSON.stringify({ runs: RUNS, ...summary }, null, 2)}\n`);

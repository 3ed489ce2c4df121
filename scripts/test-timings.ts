/**
 * Where the suite's time goes: runs the tests as `npm test` does (mocha --parallel --jobs 2, or the files and
 * mocha flags given) with ANNALS_TEST_TIMINGS set, so that test/support/hooks.ts records each file's wall time
 * (its hooks included: the services it starts; not the import of its modules) and CPU time (its process's
 * threads and the child processes it waited for: what it costs the machine, whatever ran beside it), then
 * prints the slowest files and what the run took.
 *
 *   npm run test:timings                       # the whole suite, the 25 slowest files
 *   npm run test:timings -- --top 50 --json    # JSON on stdout: {wallMs, files: [{file, ms, cpuMs, tests}]}
 *   npm run test:timings -- --by cpu           # the costliest in CPU first
 *   npm run test:timings -- test/console        # one folder (or files)
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' }, json: { type: 'boolean', default: false }, jobs: { type: 'string', default: '2' }, by: { type: 'string', default: 'wall' } },
});
const targets = positionals.length > 0 ? positionals.map((p) => (fs.existsSync(p) && fs.statSync(p).isDirectory() ? `${p.replace(/\/$/, '')}/**/*.test.ts` : p)) : ['test/**/*.test.ts', 'clients/typescript/test/**/*.test.ts'];
const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'annals-test-timings-')), 'timings.jsonl');
const started = performance.now();
const run = spawnSync(process.execPath, ['node_modules/mocha/bin/mocha.js', '--parallel', '--jobs', values.jobs, '--reporter', 'dot', ...targets], {
  stdio: ['ignore', values.json ? 2 : 'inherit', 'inherit'],
  env: { ...process.env, ANNALS_TEST_TIMINGS: out },
});
const wallMs = Math.round(performance.now() - started);
const files = (fs.existsSync(out) ? fs.readFileSync(out, 'utf8').trim().split('\n').filter(Boolean) : [])
  .map((line) => JSON.parse(line) as { file: string; ms: number; cpuMs: number; tests: number })
  .sort((a, b) => (values.by === 'cpu' ? b.cpuMs - a.cpuMs : b.ms - a.ms));
const sumMs = files.reduce((sum, f) => sum + f.ms, 0);
const sumCpuMs = files.reduce((sum, f) => sum + f.cpuMs, 0);
if (values.json) {
  process.stdout.write(`${JSON.stringify({ exitCode: run.status, wallMs, sumMs, sumCpuMs, files }, null, 2)}\n`);
} else {
  const top = files.slice(0, Number(values.top));
  console.log(`\n${files.length} files in ${(wallMs / 1000).toFixed(0)} s wall (${values.jobs} jobs); their own times add up to ${(sumMs / 1000).toFixed(0)} s, their CPU to ${(sumCpuMs / 1000).toFixed(0)} s`);
  const key = values.by === 'cpu' ? 'cpuMs' : 'ms';
  console.log(`the ${top.length} ${values.by === 'cpu' ? 'costliest in CPU' : 'slowest'} (${((top.reduce((s, f) => s + f[key], 0) / (key === 'ms' ? sumMs : sumCpuMs)) * 100).toFixed(0)}% of the sum):`);
  console.log('   wall      CPU  tests  file');
  for (const f of top) console.log(`${(f.ms / 1000).toFixed(1).padStart(7)} s ${(f.cpuMs / 1000).toFixed(1).padStart(6)} s  ${String(f.tests).padStart(4)}  ${f.file}`);
}
process.exitCode = run.status ?? 1;

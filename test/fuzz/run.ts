/**
 * `npm run fuzz`: the seeded, bounded fuzz run of issue 12 against a started service (see fuzzer.ts).
 *
 *   npm run fuzz -- [--seed 12] [--per-operation 300] [--concurrency 4] [--json]
 *
 * Progress on stderr; the report (requests, statuses, findings) on stdout. Exit code 1 when anything was found:
 * a 5xx, a request left unanswered, or an error response of the application outside the envelope.
 */
import { parseArgs } from 'node:util';
import { fuzz } from './fuzzer.ts';
import { startFuzzTarget } from './fuzz-target.ts';
import { cleanupTempDirs } from '../support/temp-dir.ts';

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '12' },
    'per-operation': { type: 'string', default: '300' },
    concurrency: { type: 'string', default: '4' },
    json: { type: 'boolean', default: false },
  },
});
const say = (line: string) => process.stderr.write(`${line}\n`);

say('fuzz: seeding the demo project and starting the service');
const { target, stop } = await startFuzzTarget();
let failed = true;
try {
  const started = Date.now();
  const report = await fuzz(target, { seed: Number(values.seed), perOperation: Number(values['per-operation']), concurrency: Number(values.concurrency), progress: (line) => say(`fuzz: ${line}`) });
  const seconds = Math.round((Date.now() - started) / 100) / 10;
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ ...report, seconds })}\n`);
  } else {
    const share = (n: number) => `${n} (${((100 * n) / Math.max(1, report.requests)).toFixed(2)} %)`;
    process.stdout.write(`seed ${report.seed}: ${report.requests} requests over ${report.operations} operations in ${seconds} s; 5xx: ${report.serverErrors}; 429: ${share(report.rateLimited)}; undeclared statuses: ${report.undeclaredStatuses}; undeclared bodies: ${report.undeclaredBodies}; findings: ${report.findings.length}\n`);
    process.stdout.write(`statuses: ${JSON.stringify(report.byStatus)}\n`);
    for (const finding of report.findings.slice(0, 50)) process.stdout.write(`  ${JSON.stringify(finding)}\n`);
  }
  failed = report.findings.length > 0;
} finally {
  await stop();
  cleanupTempDirs();
}
process.exit(failed ? 1 : 0);

/**
 * The web console's first load on loopback: what the browser downloads and how long until the sign-in form
 * shows, beside a baseline measured in the same run, interleaved (opening /healthz the same way: a new
 * browser context, so nothing is cached, then one navigation).
 *
 *   npm run bench:console -- [--runs 9] [--json]
 *
 * Needs the built console (npm install builds it) and Debian's chromium (CHROMIUM_PATH names another).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { chromium } from 'playwright-core';
import { loadConfig } from '../../src/config/config.ts';
import { systemClock } from '../../src/clock.ts';
import { startService } from '../../src/service/service.ts';
import { AccessService } from '../../src/application/access-service.ts';
import { median } from './support/percentile.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '9' }, json: { type: 'boolean', default: false } } });
const RUNS = Number(values.runs);
const say = (line: string) => process.stderr.write(`${line}\n`);

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'annals-bench-console-'));
const service = await startService(loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' }), { logger: pino({ level: 'silent' }), clock: systemClock });
const browser = await chromium.launch({ executablePath: process.env['CHROMIUM_PATH'] || '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
try {
  const access = new AccessService({ log: service.log, clock: systemClock });
  const project = await access.bootstrap({ kind: 'operator', operatorId: 'bench' }, { projectName: 'Bench', plan: 'business', adminEmail: 'bench@example.com', adminPassword: 'correct horse battery staple' });
  await service.supervisor!.waitFor(project.position, 5000);
  const consoleUrl = `${service.url}/console/p/${project.projectId}/`;
  const times = { baseline: [] as number[], console: [] as number[] };
  let transferred = 0;
  let scriptBytes = 0;
  for (let run = 0; run < RUNS; run++) {
    for (const kind of run % 2 === 0 ? (['baseline', 'console'] as const) : (['console', 'baseline'] as const)) {
      const context = await browser.newContext();
      const page = await context.newPage();
      const began = performance.now();
      if (kind === 'baseline') {
        await page.goto(`${service.url}/healthz`);
      } else {
        await page.goto(consoleUrl);
        await page.getByRole('button', { name: 'Sign in' }).waitFor();
        // Bytes as sent (compressed), from the browser's resource timing.
        const sizes = (await page.evaluate(`[...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')].map((e) => [e.name, e.transferSize])`)) as Array<[string, number]>;
        transferred = sizes.reduce((sum, [, size]) => sum + size, 0);
        scriptBytes = sizes.filter(([name]) => name.endsWith('.js')).reduce((sum, [, size]) => sum + size, 0);
      }
      times[kind].push(performance.now() - began);
      await context.close();
    }
    say(`run ${run + 1}/${RUNS}`);
  }
  const result = {
    runs: RUNS,
    consoleMedianMs: Math.round(median(times.console)),
    baselineMedianMs: Math.round(median(times.baseline)),
    ratio: Number((median(times.console) / median(times.baseline)).toFixed(2)),
    firstLoadKiB: Math.round(transferred / 1024),
    scriptKiB: Math.round(scriptBytes / 1024),
  };
  if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else say(`console to sign-in form: median ${result.consoleMedianMs} ms; /healthz: ${result.baselineMedianMs} ms (x${result.ratio}); downloaded ${result.firstLoadKiB} KiB, of which script ${result.scriptKiB} KiB`);
} finally {
  await browser.close();
  await service.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

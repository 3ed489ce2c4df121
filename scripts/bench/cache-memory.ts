/**
 * The public response cache's memory under the attack of issue 12 item 2: what the service's resident set
 * does while unauthenticated clients send distinct long URLs, with the cache at its configured size.
 *
 *   npm run bench:cache-memory -- [--requests 80000] [--known 40000] [--concurrency 32] [--service-root DIR] [--json]
 *
 * Seeds the demo project and starts `src/main.ts` in a child process with the operator's environment
 * (PUBLIC_RESPONSE_CACHE_MB and the rest at their defaults unless set). After a warm-up of 500 requests, sends
 * `--requests` GETs of an entry list with a distinct query string of 7,000 made-up characters each
 * (`?limit=1&offset=100000&n=<i>&pad=...`, the issue's attack), then `--known` GETs of distinct URLs made only
 * of parameters the route knows (`limit`, `offset`, `locale`: each one a response the cache may keep, each
 * read twice, since the cache keeps a response from its URL's second read), and
 * prints the answers' statuses and the service's RSS before, at its peak (sampled every 50 ms) and 5 s after.
 * `--service-root` runs another checkout's service (for before/after figures).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { rssBytes, startDemoService, stopService } from './support/service-process.ts';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '80000' },
    known: { type: 'string', default: '40000' },
    concurrency: { type: 'string', default: '32' },
    'service-root': { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const serviceRoot = path.resolve(values['service-root'] ?? here);
const say = (line: string) => process.stderr.write(`${line}\n`);
const MB = 1024 * 1024;
const CONCURRENCY = Number(values.concurrency);

/** GETs `urlOf(0..count-1)` over `CONCURRENCY` clients; returns the statuses seen (errors as 'error'). */
async function flood(count: number, urlOf: (i: number) => string): Promise<Record<string, number>> {
  const statuses: Record<string, number> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const url = urlOf(next++);
        let status: string;
        try {
          const response = await fetch(url);
          await response.arrayBuffer();
          status = String(response.status);
        } catch {
          status = 'error';
        }
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  return statuses;
}

const service = await startDemoService(serviceRoot, {}, say);
const pid = service.child.pid!;
const base = `${service.url}${service.publicPath}/form-sets/blog/entries`;
await flood(500, (i) => `${base}?limit=1&offset=${i}`);
const before = rssBytes(pid);
let peak = before;
const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 50);
const pad = 'x'.repeat(7000);
const started = Date.now();
say(`made-up URLs: ${values.requests} distinct query strings of 7,000 characters`);
const madeUp = await flood(Number(values.requests), (i) => `${base}?limit=1&offset=100000&n=${i}&pad=${pad}`);
const afterMadeUp = rssBytes(pid);
say(`known parameters: ${values.known} distinct URLs, each read twice (the cache keeps a response from the second read of its URL)`);
const known = await flood(Number(values.known) * 2, (i) => `${base}?limit=${1 + (Math.floor(i / 2) % 100)}&offset=${Math.floor(i / 2)}&locale=en`);
const seconds = (Date.now() - started) / 1000;
await new Promise((r) => setTimeout(r, 5000));
clearInterval(sampler);
const after = rssBytes(pid);
await stopService(service);

const result = {
  serviceRoot,
  publicResponseCacheMb: Number(process.env['PUBLIC_RESPONSE_CACHE_MB'] ?? 64),
  madeUpUrls: { requests: Number(values.requests), statuses: madeUp },
  knownUrls: { requests: Number(values.known), statuses: known },
  seconds: Math.round(seconds),
  rssMb: { before: Math.round(before / MB), afterMadeUpUrls: Math.round(afterMadeUp / MB), peak: Math.round(peak / MB), fiveSecondsAfter: Math.round(after / MB) },
};
if (values.json) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else {
  say(`made-up URLs: ${JSON.stringify(madeUp)}; known-parameter URLs: ${JSON.stringify(known)}; ${result.seconds} s`);
  say(`service RSS (cache ${result.publicResponseCacheMb} MB): ${result.rssMb.before} MB before, ${result.rssMb.afterMadeUpUrls} MB after the made-up URLs, ${result.rssMb.peak} MB peak, ${result.rssMb.fiveSecondsAfter} MB 5 s after`);
}

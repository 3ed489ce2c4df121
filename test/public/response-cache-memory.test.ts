/**
 * Memory: the public response cache under the attack of issue 12 item 2. Unauthenticated GETs with distinct
 * long query strings (`?limit=1&offset=100000&n=<i>&pad=<7,000 chars>`), then distinct URLs made only of
 * parameters the route knows (every one a cacheable answer, each read twice: the cache keeps a response from
 * the second read of its URL). The service runs in a child process, as
 * `npm start` would; its resident set size (VmRSS in /proc/<pid>/status) may grow by at most the configured
 * cache size plus a fixed margin. Linux only, like the service's CI: without /proc the test fails.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { runEntry, startServiceProcess, type StartedService } from '../support/child-process.ts';
import { tempDir } from '../support/temp-dir.ts';

const MB = 1024 * 1024;
const CACHE_MB = 8;
/**
 * Garbage not yet collected, the heap's growth under load, allocator slack: what RSS may add beyond what is
 * kept. Measured at about 100 MB for this load on Node 20 with nothing cached at all; the code before the fix
 * grew by about 450 MB under the same requests.
 */
const MARGIN_MB = 128;
/**
 * How many URLs of each kind; the load is as small as lets the bound still catch what it guards (each request
 * also costs the check of its answer in this process, so the load is most of the file's CPU).
 * - 10,000 with unknown parameters and 7,000-character pads: the code before the fix (every URL an entry, only
 *   body bytes counted, the whole path logged) grew by 293 MB with 12,000 of them (commit d7b72c8), about 24 KB
 *   a URL, so about 240 MB with 10,000: still well past the bound of CACHE_MB + MARGIN_MB (136 MB).
 * - 4,000 made of known parameters, each read twice (kept from the second read): an entry counts
 *   ENTRY_OVERHEAD_BYTES (1.5 KB) plus its ~270-character key (2 bytes a character), body and three times its
 *   headers, about 4.4 KB in all, so the 8 MB cache holds about 1,900 of them (measured): 4,000 fill it about
 *   twice over, the older ones dropped for the newer. The test checks at the end that it was full.
 */
const UNKNOWN_URLS = 10_000;
const KNOWN_URLS = 4_000;

function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+)\s+kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for ${pid}`);
  return Number(match[1]) * 1024;
}

/** How many public GETs the response cache has answered (GET /metrics, answered_by="response-cache"). */
async function cacheHits(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('annals_http_request_duration_seconds_count{') && line.includes('answered_by="response-cache"'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/** GETs `urlOf(0..count-1)` with `concurrency` clients; returns the statuses seen. */
async function flood(count: number, concurrency: number, urlOf: (i: number) => string): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const response = await fetch(urlOf(next++));
        await response.arrayBuffer();
        statuses[response.status] = (statuses[response.status] ?? 0) + 1;
      }
    }),
  );
  return statuses;
}

describe('public response cache memory under distinct long URLs (issue 12 item 2)', function () {
  this.timeout(300_000);
  let service: StartedService | undefined;
  after(async () => {
    await service?.stop();
  });

  it(`keeps the RSS growth of the service within the cache size (${CACHE_MB} MB) plus ${MARGIN_MB} MB`, async () => {
    const dataDir = path.join(tempDir('annals-cache-memory-'), 'data');
    const bootstrap = await runEntry('src/cli/main.ts', ['bootstrap', '--project', 'Cache', '--plan', 'business', '--admin-email', 'cache@example.com', '--admin-password', 'correct horse battery staple'], { DATA_DIR: dataDir, ANNALS_ADMIN_PASSWORD: '' }, 120_000);
    expect(bootstrap.code, bootstrap.stderr).to.equal(0);
    const { projectId, agentKey } = JSON.parse(bootstrap.stdout.trim()) as { projectId: string; agentKey: string };
    // Every request must reach the cache, not be shed as the flood it is (the shedder has its own tests).
    service = await startServiceProcess({ DATA_DIR: dataDir, PUBLIC_RESPONSE_CACHE_MB: String(CACHE_MB), LOAD_SHED_LAG_MS: '0' }, 60_000, { keepRequestLogs: false });
    const created = await fetch(`${service.url}/admin/v1/form-sets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agentKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ slug: 'blog', name: 'Blog', fields: [{ key: 'title', type: 'text', label: 'Title', required: true }] }),
    });
    expect(created.status).to.equal(201);
    const base = `${service.url}/public/p/${projectId}/v1/form-sets/blog/entries`;
    // Warm up: code paths compiled, pools allocated.
    await flood(500, 16, (i) => `${base}?limit=1&offset=${i}`);
    const pid = service.child.pid!;
    const before = rssBytes(pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 50);
    const pad = 'x'.repeat(7000);
    const knownUrl = (url: number) => `${base}?limit=${1 + (url % 100)}&offset=${url}&q=${'w'.repeat(150)}${url}&locale=en`;
    let unknown: Record<number, number>;
    let known: Record<number, number>;
    try {
      unknown = await flood(UNKNOWN_URLS, 32, (i) => `${base}?limit=1&offset=100000&n=${i}&pad=${pad}`);
      // Each read twice: the cache keeps a response from the second read of its URL.
      known = await flood(2 * KNOWN_URLS, 32, (i) => knownUrl(Math.floor(i / 2)));
    } finally {
      clearInterval(sampler);
    }
    const after = rssBytes(pid);
    peak = Math.max(peak, after);
    console.log(`      RSS ${(before / MB).toFixed(0)} MB before, ${(peak / MB).toFixed(0)} MB peak, ${(after / MB).toFixed(0)} MB after ${UNKNOWN_URLS + KNOWN_URLS} distinct URLs (cache ${CACHE_MB} MB)`);
    expect(unknown).to.deep.equal({ 200: UNKNOWN_URLS });
    expect(known).to.deep.equal({ 200: 2 * KNOWN_URLS });
    expect((peak - before) / MB).to.be.at.most(CACHE_MB + MARGIN_MB);

    // The load filled the cache, so the bound was measured with it full: the newest known URLs are held (read a
    // third time, the cache answers them), the first one kept is not any more (dropped to make room).
    const hitsBefore = await cacheHits(service.url);
    for (let url = KNOWN_URLS - 1; url >= KNOWN_URLS - 50; url--) await (await fetch(knownUrl(url))).arrayBuffer();
    expect((await cacheHits(service.url)) - hitsBefore, 'the newest 50 known URLs answered from the cache').to.equal(50);
    await (await fetch(knownUrl(0))).arrayBuffer();
    expect((await cacheHits(service.url)) - hitsBefore, 'the first known URL, evicted once the cache was full').to.equal(50);
  });
});

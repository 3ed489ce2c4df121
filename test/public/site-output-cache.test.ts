import { gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import { MIN_BUILD_REST_MS, restAfter, SiteOutputCache, SLOW_BUILD_MS, SLOW_BUILD_REST_FACTOR } from '../../src/http/public/site-output-cache.ts';

/** A cache on a clock and scheduler the test moves by hand, and builds it counts. */
function harness() {
  let now = 0;
  const scheduled: Array<{ run: () => void; ms: number; cancelled: boolean }> = [];
  const failures: unknown[] = [];
  const cache = new SiteOutputCache({
    now: () => now,
    schedule: (run, ms) => {
      const job = { run, ms, cancelled: false };
      scheduled.push(job);
      return () => (job.cancelled = true);
    },
    onBuildFailed: (error) => failures.push(error),
  });
  const built: string[] = [];
  /** A build of `version` that takes `ms` on the clock. */
  const build = (version: string, ms = 1) => async () => {
    built.push(version);
    now += ms;
    return `<urlset>${version}</urlset>`;
  };
  return {
    cache,
    built,
    scheduled,
    failures,
    advance: (ms: number) => (now += ms),
    build,
    body: async (version: string, ms?: number) => (await cache.get('sitemap', version, build(version, ms)))?.body,
  };
}

describe('site output cache (sitemaps and llms.txt)', () => {
  it('builds each version once and, while builds are quick, answers every request with the version it asks for', async () => {
    const h = harness();
    expect(await h.body('v1')).to.equal('<urlset>v1</urlset>');
    expect(await h.body('v1')).to.equal('<urlset>v1</urlset>');
    expect(await h.body('v2')).to.equal('<urlset>v2</urlset>');
    expect(await h.body('v3')).to.equal('<urlset>v3</urlset>');
    expect(h.built).to.deep.equal(['v1', 'v2', 'v3']);
    // Concurrent requests for one version share its build.
    const [a, b] = await Promise.all([h.body('v4'), h.body('v4')]);
    expect([a, b]).to.deep.equal(['<urlset>v4</urlset>', '<urlset>v4</urlset>']);
    expect(h.built).to.deep.equal(['v1', 'v2', 'v3', 'v4']);
    expect(h.scheduled).to.have.length(0);
  });

  it('rests at least MIN_BUILD_REST_MS between background builds, and SLOW_BUILD_REST_FACTOR times a long build', () => {
    expect(restAfter(SLOW_BUILD_MS)).to.equal(MIN_BUILD_REST_MS);
    expect(restAfter(45)).to.equal(MIN_BUILD_REST_MS);
    expect(restAfter(500)).to.equal(500 * SLOW_BUILD_REST_FACTOR);
  });

  it('never lets an older build that finishes last replace a newer output', async () => {
    const h = harness();
    let finishOld!: (body: string) => void;
    const old = h.cache.get('sitemap', 'v1', () => new Promise<string>((resolve) => (finishOld = resolve)));
    expect(await h.body('v2')).to.equal('<urlset>v2</urlset>');
    finishOld('<urlset>v1</urlset>');
    expect((await old)?.body).to.equal('<urlset>v1</urlset>');
    expect(await h.body('v2')).to.equal('<urlset>v2</urlset>');
    expect(h.built).to.deep.equal(['v2']);
  });

  it('after a slow build, answers newer versions with the last output at once and builds the latest asked for once rested', async () => {
    const h = harness();
    const slowMs = SLOW_BUILD_MS * 4;
    // One slow build alone (a cold start's, say) changes nothing: the next version is built for its request.
    expect(await h.body('v1', slowMs)).to.equal('<urlset>v1</urlset>');
    expect(await h.body('v2', slowMs)).to.equal('<urlset>v2</urlset>');
    h.advance(10);
    // Two in a row, and publishes go on: requests for v3 and v4 get v2 without waiting, and nothing is built during the rest.
    expect(await h.body('v3', slowMs)).to.equal('<urlset>v2</urlset>');
    expect(await h.body('v4', slowMs)).to.equal('<urlset>v2</urlset>');
    expect(h.built).to.deep.equal(['v1', 'v2']);
    expect(h.scheduled).to.have.length(1);
    expect(h.scheduled[0]!.ms).to.equal(restAfter(slowMs) - 10);
    // The rest is over: the version asked for last is built (v3 never is).
    h.advance(h.scheduled[0]!.ms);
    h.scheduled[0]!.run();
    await new Promise((resolve) => setImmediate(resolve));
    expect(h.built).to.deep.equal(['v1', 'v2', 'v4']);
    expect(await h.body('v4', slowMs)).to.equal('<urlset>v4</urlset>');
    // A request long after the rest starts the build of its version at once, and gets the last output meanwhile.
    h.advance(restAfter(slowMs) * 10);
    expect(await h.body('v5', slowMs)).to.equal('<urlset>v4</urlset>');
    await new Promise((resolve) => setImmediate(resolve));
    expect(h.built).to.deep.equal(['v1', 'v2', 'v4', 'v5']);
    expect(await h.body('v5', slowMs)).to.equal('<urlset>v5</urlset>');
    // Quick builds again (a smaller sitemap): back to building each version for its request.
    h.advance(restAfter(slowMs));
    expect(await h.body('v6', 1)).to.equal('<urlset>v5</urlset>');
    await new Promise((resolve) => setImmediate(resolve));
    expect(await h.body('v7', 1)).to.equal('<urlset>v7</urlset>');
    expect(h.scheduled).to.have.length(1);
  });

  it('makes the compressed forms of a background build before serving its output, so no request waits for them', async () => {
    const h = harness();
    const slowMs = SLOW_BUILD_MS * 2;
    const large = (version: string) => async () => {
      h.built.push(version);
      h.advance(slowMs);
      return `<urlset>${version}${' '.repeat(4096)}</urlset>`;
    };
    const get = (version: string) => h.cache.get('sitemap', version, large(version), { encodings: ['gzip'] });
    await get('v1');
    const v2 = await get('v2');
    // Built for their requests: compressed on demand, not before.
    expect(v2?.encoded).to.equal(undefined);
    h.advance(restAfter(slowMs));
    expect((await get('v3'))?.body).to.equal(v2?.body);
    // The background build is served once its compressed form is made (real gzip, off the event loop).
    let v3 = await get('v3');
    for (let tries = 0; !v3?.body.includes('v3') && tries < 2000; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      v3 = await get('v3');
    }
    expect(v3?.body).to.contain('v3');
    expect(v3?.encoded?.gzip).to.be.instanceOf(Promise);
    expect(gunzipSync(await v3!.encoded!.gzip!).toString()).to.equal(v3!.body);
  });

  it('keeps serving the last output when a background build fails, tells about it, and tries again after the rest', async () => {
    const h = harness();
    const slowMs = SLOW_BUILD_MS * 2;
    await h.body('v0', slowMs);
    await h.body('v1', slowMs);
    h.advance(restAfter(slowMs));
    const failing = async () => {
      h.built.push('v2 (failed)');
      throw new Error('store unavailable');
    };
    expect((await h.cache.get('sitemap', 'v2', failing))?.body).to.equal('<urlset>v1</urlset>');
    await new Promise((resolve) => setImmediate(resolve));
    expect(h.failures.map((error) => (error as Error).message)).to.deep.equal(['store unavailable']);
    expect((await h.cache.get('sitemap', 'v2', h.build('v2', slowMs)))?.body).to.equal('<urlset>v1</urlset>');
    await new Promise((resolve) => setImmediate(resolve));
    expect(h.built).to.deep.equal(['v0', 'v1', 'v2 (failed)', 'v2']);
    expect(await h.body('v2', slowMs)).to.equal('<urlset>v2</urlset>');
  });

  it('survives a background build that fails while what it tells about the failure fails too (a logger closed by shutdown)', async () => {
    let now = 0;
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const cache = new SiteOutputCache({
        now: () => now,
        onBuildFailed: () => {
          throw new Error('SonicBoom destroyed');
        },
      });
      const slow = (body: string) => async () => {
        now += SLOW_BUILD_MS * 2;
        return body;
      };
      await cache.get('llms', 'v1', slow('one'));
      await cache.get('llms', 'v2', slow('two'));
      now += restAfter(SLOW_BUILD_MS * 2);
      const served = await cache.get('llms', 'v3', async () => {
        throw new Error('read models closed');
      });
      expect(served?.body).to.equal('two');
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).to.deep.equal([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

import http from 'node:http';
import path from 'node:path';
import { expect } from 'chai';
import { answeredBy, assetId, blogFormSet, getWithHost, startPublicFixture, type PublicFixture } from './support.ts';
import { captureLogger } from '../http/support.ts';
import { createLogger } from '../../src/logging/logger.ts';
import type { RunningService } from '../../src/service/service.ts';
import { startApiReplica } from '../admin/support.ts';
import { eventually } from '../support/engine-fixture.ts';
import { tempDir } from '../support/temp-dir.ts';

const fastAnswers = (f: PublicFixture) => answeredBy(f.service, 'read-model');

/** GET of a request target sent as it is (fetch and http.get of a URL drop a '#' and what follows). */
function rawGet(host: string, target: string): Promise<{ status: number; body: any }> {
  const [hostname, port] = host.split(':') as [string, string];
  return new Promise((resolve, reject) => {
    const request = http.get({ hostname, port: Number(port), path: target }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    request.on('error', reject);
  });
}

/** The response headers a client sees, less the ones of the connection and the moment. */
function lasting(headers: Headers): Record<string, string> {
  const kept: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (!['date', 'x-request-id', 'connection', 'keep-alive'].includes(name)) kept[name] = value;
  });
  return kept;
}

describe('public API: entries and list pages read from their serialised documents before Koa', function () {
  this.timeout(60_000);
  let f: PublicFixture;
  const cover = assetId();
  const log = captureLogger('info');

  before(async () => {
    // Without the response cache, every request below reaches the fast lane or Koa.
    f = await startPublicFixture({ env: { PUBLIC_RESPONSE_CACHE_MB: '0' }, logger: log.logger });
    const created = await f.call('POST', '/form-sets', { body: blogFormSet() });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const long = 'A summary long enough to make the response longer than a kilobyte. '.repeat(20);
    await f.publish(created.body.id, 'first-post', { title: { en: 'First post', ja: '最初の投稿' }, meta_description: { en: long }, published_date: '2026-03-01', og_image: cover, rating: 4 });
    const second = await f.publish(created.body.id, 'second-post', { title: { en: 'Second post' }, published_date: '2026-01-15', rating: 2 });
    const renamed = await f.call('PATCH', `/entries/${second.entryId}/slug`, { body: { slug: 'second-post-renamed' } });
    expect(renamed.status, JSON.stringify(renamed.body)).to.equal(200);
    await f.settle();
  });
  after(() => f.stop());

  it('answers an entry and list pages with the bytes and headers Koa gives the same URL', async () => {
    for (const path of [
      '/form-sets/blog/entries/first-post',
      '/form-sets/blog/entries/first-post?locale=ja',
      '/form-sets/blog/entries?limit=1&sort=published_date:desc',
      '/form-sets/blog/entries?page=2&limit=1&sort=rating:asc&locale=ja',
      '/form-sets/blog/entries?include_snapshot=true',
      // Koa's query is everything after the first '?': limit=1 is read, x is 'a?b'.
      '/form-sets/blog/entries?x=a?b&limit=1',
    ]) {
      const before = await fastAnswers(f);
      const fast = await fetch(`${f.pinnedBase}${path}`);
      expect(await fastAnswers(f), `${path} answered before Koa`).to.equal(before + 1);
      // HEAD is Koa's: the same headers as its GET.
      const koa = await fetch(`${f.pinnedBase}${path}`, { method: 'HEAD' });
      expect(await fastAnswers(f)).to.equal(before + 1);
      expect(fast.status, path).to.equal(200);
      expect(lasting(fast.headers), path).to.deep.equal(lasting(koa.headers));
      expect(fast.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
      const body = await fast.text();
      expect(Buffer.byteLength(body)).to.equal(Number(koa.headers.get('content-length')));
      if (path.includes('entries/first-post')) {
        const entry = JSON.parse(body);
        expect(entry.mediaUrls).to.deep.equal({ og_image: `${f.pinnedBase}/media/${cover}` });
        expect(entry.data.title).to.equal(path.includes('ja') ? '最初の投稿' : 'First post');
      }
    }
    const single = await fetch(`${f.pinnedBase}/form-sets/blog/entries/first-post`);
    expect(single.headers.get('vary')).to.equal('Accept-Encoding');
    expect(single.headers.get('access-control-allow-origin')).to.equal('*');
  });

  it('answers 304 to a matching If-None-Match, and the body again when the client asks for no-cache', async () => {
    const first = await fetch(`${f.pinnedBase}/form-sets/blog/entries/first-post`);
    const etag = first.headers.get('etag')!;
    const before = await fastAnswers(f);
    // node:http: fetch sends Cache-Control: no-cache with an If-None-Match of its own.
    const host = new URL(f.service.url).host;
    const again = await getWithHost(`${f.pinnedBase}/form-sets/blog/entries/first-post`, host, { 'if-none-match': `"other", W/${etag}` });
    expect(again.status).to.equal(304);
    expect(again.headers['etag']).to.equal(etag);
    expect(again.headers['content-type']).to.equal(undefined);
    const forced = await getWithHost(`${f.pinnedBase}/form-sets/blog/entries/first-post`, host, { 'if-none-match': etag, 'cache-control': 'no-cache' });
    expect(forced.status).to.equal(200);
    expect(await fastAnswers(f)).to.equal(before + 2);
  });

  it('writes the request log line the app writes, with the request id it sent back', async () => {
    const before = await fastAnswers(f);
    const response = await fetch(`${f.pinnedBase}/form-sets/blog/entries/first-post?locale=ja`, { headers: { 'X-Request-Id': 'fast-lane-1' } });
    expect(response.headers.get('x-request-id')).to.equal('fast-lane-1');
    expect(await fastAnswers(f)).to.equal(before + 1);
    const lines = log.lines().filter((line) => line['msg'] === 'request' && line['reqId'] === 'fast-lane-1');
    expect(lines).to.have.length(1);
    expect(lines[0]).to.include({ method: 'GET', path: `${new URL(f.pinnedBase).pathname}/form-sets/blog/entries/first-post?locale=ja`, status: 200 });
    expect(lines[0]!['durationMs']).to.be.a('number');
  });

  it('serves the host-resolved base with a public key, with mediaUrls on that base', async () => {
    const base = `${f.service.url}/public/v1`;
    const before = await fastAnswers(f);
    const response = await fetch(`${base}/form-sets/blog/entries/first-post`, { headers: { 'X-Service-Public-Api-Key': f.project.publicKey.key } });
    expect(response.status).to.equal(200);
    expect(((await response.json()) as { mediaUrls: Record<string, string> }).mediaUrls.og_image).to.equal(`${f.pinnedBase}/media/${cover}`);
    expect(await fastAnswers(f)).to.equal(before + 1);
  });

  it('reads the path and query of a URL with more than one ? or a # as Koa does', async () => {
    const before = await fastAnswers(f);
    // A '?' inside a value is part of it, as Koa reads it: locale 'ja?x' is refused, not read as 'ja'.
    const refused = await f.get('/form-sets/blog/entries/first-post?locale=ja?x');
    expect(refused.status).to.equal(400);
    expect(refused.body.error.message).to.match(/^locale:/);
    expect((await f.get('/form-sets/blog/entries/first-post?locale=ja')).status).to.equal(200);
    expect(await fastAnswers(f)).to.equal(before + 1);
    // Koa's query stops at a '#' (the fragment is not its to read): '?x=1#&limit=1' is the page of '?x=1'.
    const host = new URL(f.service.url).host;
    const path = `${new URL(f.pinnedBase).pathname}/form-sets/blog/entries`;
    const fragment = await rawGet(host, `${path}?x=1#&limit=1`);
    const plain = await f.get('/form-sets/blog/entries?x=1');
    expect(fragment.status).to.equal(200);
    expect(fragment.body).to.deep.equal(plain.body);
    expect(plain.body.items).to.have.length(2);
  });

  it('leaves redirects, errors and unknown projects to Koa, which answers them as always', async () => {
    const before = await fastAnswers(f);
    const moved = await f.get('/form-sets/blog/entries/second-post?locale=en');
    expect(moved.status).to.equal(301);
    expect(moved.headers.get('location')).to.equal(`${f.pinnedBase}/form-sets/blog/entries/second-post-renamed?locale=en`);
    const missing = await f.get('/form-sets/blog/entries/nope');
    expect(missing.status).to.equal(404);
    expect(missing.body.error.code).to.equal('NOT_FOUND');
    const bad = await f.get('/form-sets/blog/entries?limit=1000');
    expect(bad.status).to.equal(400);
    expect(bad.body.error.message).to.match(/^limit:/);
    const locale = await f.get('/form-sets/blog/entries/first-post?locale=xx');
    expect(locale.status).to.equal(400);
    const noFormSet = await f.get('/form-sets/none/entries');
    expect(noFormSet.status).to.equal(404);
    const noProject = await f.get('/form-sets/blog/entries', {}, `${f.service.url}/public/p/00000000-0000-4000-8000-000000000000/v1`);
    expect(noProject.status).to.equal(404);
    const refused = await f.get('/form-sets/blog/entries', { 'X-Service-Public-Api-Key': 'service_pub_nope' }, `${f.service.url}/public/v1`);
    expect(refused.status).to.equal(404);
    expect(await fastAnswers(f)).to.equal(before);
  });
});

/**
 * Publishes a, b (blog) and n (news), reads six URLs from `reader` until each is cached, publishes a again
 * and, once `reader` serves the new a (read again, and so cached again), returns the URLs it answers from its cache.
 */
async function keptAfterAPublish(f: PublicFixture, reader: { url: string }): Promise<{ kept: string[] }> {
  const blog = await f.call('POST', '/form-sets', { body: blogFormSet() });
  const news = await f.call('POST', '/form-sets', { body: blogFormSet('news') });
  const a = await f.publish(blog.body.id, 'a', { title: { en: 'A' } });
  await f.publish(blog.body.id, 'b', { title: { en: 'B' } });
  await f.publish(news.body.id, 'n', { title: { en: 'N' } });
  const base = `${reader.url}/public/p/${f.project.projectId}/v1`;
  const read = (path: string) => fetch(`${base}${path}`, { headers: { 'accept-encoding': 'identity' } });
  const paths = ['/form-sets/blog/entries/a', '/form-sets/blog/entries/b', '/form-sets/news/entries/n', '/form-sets/blog/entries', '/form-sets/news/entries', '/form-sets/news/sitemap.xml'];
  // An API-only replica learns of the publishes at its next poll of the read models.
  await eventually(async () => (await read('/form-sets/news/entries/n')).status, (status) => status === 200);
  const hitsOf = async () => {
    const answered: string[] = [];
    for (const path of paths) {
      const before = await answeredBy(reader, 'response-cache');
      const response = await read(path);
      await response.arrayBuffer();
      expect(response.status, path).to.equal(200);
      if ((await answeredBy(reader, 'response-cache')) > before) answered.push(path);
    }
    return answered;
  };
  // Kept from the second read of each URL (the first only notes it). An API-only replica may learn of the
  // publishes above after that (it polls every 250 ms) and drop them: they are all kept once a read after
  // a wait longer than its poll finds them still there.
  await hitsOf();
  await hitsOf();
  await eventually(async () => {
    await hitsOf();
    await new Promise((resolve) => setTimeout(resolve, 600));
    return hitsOf();
  }, (answered) => answered.length === paths.length, 15_000);
  const saved = await f.call('POST', `/entries/${a.entryId}/revisions`, { body: { fields: { title: { en: 'A, again' } } } });
  await f.call('POST', `/revisions/${saved.body.id}/submit`, { body: {} });
  await f.call('POST', `/revisions/${saved.body.id}/publish`, { body: { revision: saved.body.revision } });
  await f.settle();
  // Until its cached a is dropped (an API-only replica learns of the publish at its next poll); read again, a is kept again at once.
  await eventually(async () => ((await (await read('/form-sets/blog/entries/a')).json()) as { data: { title: string } }).data.title, (title) => title === 'A, again');
  return { kept: await hitsOf() };
}

describe('public API: a publish drops only the cached responses made of what it changed', function () {
  this.timeout(60_000);
  let f: PublicFixture;

  before(async () => {
    f = await startPublicFixture();
  });
  after(() => f.stop());

  const hits = () => answeredBy(f.service, 'response-cache');

  it('keeps the other entries of the form set and other form sets cached; re-reads the entry, its lists and sitemap', async () => {
    const { kept } = await keptAfterAPublish(f, f.service);
    expect(kept).to.deep.equal(['/form-sets/blog/entries/a', '/form-sets/blog/entries/b', '/form-sets/news/entries/n', '/form-sets/news/entries', '/form-sets/news/sitemap.xml']);
  });

  it('does not keep entries or list pages read before Koa for URLs with a parameter the route did not read', async () => {
    for (const path of ['/form-sets/blog/entries/b', '/form-sets/blog/entries']) {
      for (let n = 0; n < 3; n++) {
        expect((await f.get(`${path}?n=${n}`)).status, path).to.equal(200);
        const before = await hits();
        expect((await f.get(`${path}?n=${n}`)).status, path).to.equal(200);
        expect(await hits(), `${path}?n=${n} answered from the cache`).to.equal(before);
      }
      // A parameter the route reads is kept as before (from its second read).
      await f.get(`${path}?locale=en`);
      await f.get(`${path}?locale=en`);
      const before = await hits();
      await f.get(`${path}?locale=en`);
      expect(await hits(), `${path}?locale=en answered from the cache`).to.equal(before + 1);
    }
  });
});

describe('public API: an API-only replica (ROLES=api) drops only the cached responses made of what a publish changed', function () {
  this.timeout(60_000);
  let f: PublicFixture;
  let replica: RunningService;

  before(async () => {
    const dataDir = path.join(tempDir(), 'data');
    f = await startPublicFixture({ env: { DATA_DIR: dataDir } });
    // The agent key's first use is recorded (access changes, which drops every cached response): before the replica starts.
    await f.call('GET', '/form-sets');
    await f.settle();
    replica = await startApiReplica(dataDir);
  });
  after(async () => {
    await replica?.stop();
    await f?.stop();
  });

  it('reads what changed from the change feed of the projector beside it, as that process does', async () => {
    const { kept } = await keptAfterAPublish(f, replica);
    expect(kept).to.deep.equal(['/form-sets/blog/entries/a', '/form-sets/blog/entries/b', '/form-sets/news/entries/n', '/form-sets/news/entries', '/form-sets/news/sitemap.xml']);
  });
});

describe('public API: a read answered before Koa stays answered once when recording it fails', function () {
  this.timeout(60_000);
  let f: PublicFixture;
  let refused = 0;
  // A log destination that fails on the request line of one entry, as a full disk or a closed pipe would.
  const destination = {
    write(line: string) {
      if (line.includes('"msg":"request"') && line.includes('/entries/first-post')) {
        refused++;
        throw new Error('log destination failed');
      }
    },
  };

  before(async () => {
    f = await startPublicFixture({ env: { PUBLIC_RESPONSE_CACHE_MB: '0' }, logger: createLogger({ level: 'info', destination }) });
    const created = await f.call('POST', '/form-sets', { body: blogFormSet() });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    await f.publish(created.body.id, 'first-post', { title: { en: 'First post' }, published_date: '2026-03-01', rating: 4 });
    await f.settle();
  });
  after(() => f.stop());

  it('answers 200 once and counts the request once; Koa does not read it again', async () => {
    const counted = async () => {
      const text = await (await fetch(`${f.service.url}/metrics`)).text();
      return text.split('\n').filter((line) => line.startsWith('annals_http_request_duration_seconds_count{') && line.includes('/entries/:entrySlug"')).reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
    };
    const before = await counted();
    const response = await fetch(`${f.pinnedBase}/form-sets/blog/entries/first-post`);
    expect(response.status).to.equal(200);
    expect(((await response.json()) as { entry: { slug: string } }).entry.slug).to.equal('first-post');
    expect(refused).to.equal(1);
    expect(await counted()).to.equal(before + 1);
    // The server goes on answering.
    expect((await fetch(`${f.pinnedBase}/form-sets/blog/entries`)).status).to.equal(200);
  });
});

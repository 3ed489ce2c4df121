import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import Koa from 'koa';
import { pino } from 'pino';
import { startHttpServer, type RunningHttpServer } from '../../src/http/http-server.ts';
import { publicConditional } from '../../src/http/public/public-http-manners.ts';
import { MAX_KEY_LENGTH, PublicResponseCache } from '../../src/http/public/public-response-cache.ts';
import { QueryParams } from '../../src/http/public/query-params.ts';
import type { ReadModelChange } from '../../src/projection-engine/read-model-versions.ts';
import type { DocumentWrite } from '../../src/read-models/read-model-store.ts';
import { setCacheScopes } from '../../src/http/public/public-context.ts';
import { changedScopes } from '../../projections/public-content.ts';

/** GET with node:http (fetch would add Cache-Control: no-cache to conditional requests). */
function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      })
      .on('error', reject);
  });
}

describe('public response cache', () => {
  let server: RunningHttpServer;
  let version = 'v1';
  let handled = 0;
  let listener: (change: ReadModelChange) => void = () => {};
  const versions = {
    onChange: (l: (change: ReadModelChange) => void) => {
      listener = l;
      return () => {};
    },
  };
  const change = (projection: string, writes?: DocumentWrite[]) => listener({ projection, scopes: writes === undefined ? undefined : writes.length === 0 ? new Set() : changedScopes(writes) });
  const write = (collection: string, id: string, doc: Record<string, unknown> | null = {}): DocumentWrite => ({ collection, id, doc, position: 1n });
  const MAX_BYTES = 1024 * 1024;
  let cache: PublicResponseCache;

  before(async () => {
    cache = new PublicResponseCache({ versions, maxBytes: MAX_BYTES, trustProxy: false, logger: pino({ level: 'silent' }) });
    const app = new Koa();
    app.use(async (ctx, next) => {
      ctx.set('Access-Control-Allow-Origin', '*');
      await next();
    });
    app.use(cache.middleware());
    app.use(publicConditional({ maxAgeSeconds: 0 }));
    app.use(async (ctx) => {
      handled += 1;
      // The parameters this app's routes know: x, page and q (read as the public routes read theirs).
      const params = new QueryParams(ctx);
      for (const name of ['x', 'page', 'q']) params.string(name);
      const scoped = /^\/public\/(entry|form-set|project)\/(.+)$/.exec(ctx.path);
      if (scoped) setCacheScopes(ctx, [`${scoped[1]}:${scoped[2]}`]);
      if (ctx.path === '/public/private') ctx.set('Cache-Control', 'private, no-store');
      if (ctx.path === '/public/missing') {
        ctx.status = 404;
        ctx.body = { error: { code: 'NOT_FOUND', message: 'no' } };
        return;
      }
      ctx.body = { path: ctx.path, version, key: ctx.get('x-service-public-api-key') || null, ...(ctx.path === '/public/large' ? { filler: 'x'.repeat(5000) } : {}) };
    });
    server = await startHttpServer({ app, port: 0, host: '127.0.0.1', logger: pino({ level: 'silent' }), fastLane: (req, res) => cache.serveRaw(req, res) });
  });
  after(() => server.close(100));

  it('answers a repeated read from memory, with the same body, ETag and headers and a new request id', async () => {
    handled = 0;
    // Kept from the second read of a URL on (the first only notes it), answered from memory from the third.
    await get(`${server.url}/public/a?x=1`);
    const first = await get(`${server.url}/public/a?x=1`);
    expect(handled).to.equal(2);
    const second = await get(`${server.url}/public/a?x=1`);
    expect(handled).to.equal(2);
    expect(second.status).to.equal(200);
    expect(second.body).to.equal(first.body);
    expect(second.headers.etag).to.equal(first.headers.etag);
    expect(second.headers['content-type']).to.equal(first.headers['content-type']);
    expect(second.headers['access-control-allow-origin']).to.equal('*');
    expect(second.headers['cache-control']).to.equal('public, no-cache');
    expect(second.headers['x-request-id']).to.be.a('string').and.not.equal(first.headers['x-request-id']);
    const notModified = await get(`${server.url}/public/a?x=1`, { 'if-none-match': first.headers.etag! });
    expect(notModified.status).to.equal(304);
    expect(notModified.body).to.equal('');
    expect(handled).to.equal(2);
  });

  it('never keeps a response the first time its URL is read: a long tail of URLs read once costs the cache nothing', async () => {
    version = 'v-once';
    change('public-content');
    const before = { size: cache.size, bytes: cache.bytes };
    handled = 0;
    for (let i = 0; i < 200; i++) await get(`${server.url}/public/once-${i}`);
    expect(handled).to.equal(200);
    expect(cache.size).to.equal(before.size);
    expect(cache.bytes).to.equal(before.bytes);
    // Read again, each is kept; a third time, each is answered from memory.
    for (let i = 0; i < 200; i++) await get(`${server.url}/public/once-${i}`);
    expect(cache.size).to.equal(before.size + 200);
    for (let i = 0; i < 200; i++) await get(`${server.url}/public/once-${i}`);
    expect(handled).to.equal(400);
  });

  it('once full, keeps a newcomer only when its URL is asked for more often than the entry it would evict', async () => {
    version = 'v-full';
    change('public-content');
    // Fill it with URLs read three times each, well past its size.
    for (let i = 0; i < 900; i++) for (let read = 0; read < 3; read++) await get(`${server.url}/public/popular-${i}`);
    expect(cache.bytes).to.be.above(MAX_BYTES * 0.9).and.at.most(MAX_BYTES);
    const full = { size: cache.size, bytes: cache.bytes };
    // A long tail read twice each evicts nothing and is never kept.
    handled = 0;
    for (let i = 0; i < 200; i++) for (let read = 0; read < 2; read++) await get(`${server.url}/public/tail-${i}`);
    expect(handled).to.equal(400);
    expect({ size: cache.size, bytes: cache.bytes }).to.deep.equal(full);
    // One asked for more often than the oldest entry gets in, and is answered from memory from then on.
    handled = 0;
    for (let read = 0; read < 8; read++) await get(`${server.url}/public/rising`);
    expect(handled).to.be.at.least(4).and.below(8);
    const before = handled;
    await get(`${server.url}/public/rising`);
    expect(handled).to.equal(before);
  });

  it('reads again once the read models change, and keys by URL and by the headers that select the project', async () => {
    handled = 0;
    await get(`${server.url}/public/b`);
    version = 'v2';
    change('public-content');
    const after = await get(`${server.url}/public/b`);
    expect(JSON.parse(after.body).version).to.equal('v2');
    expect(handled).to.equal(2);
    const withKey = await get(`${server.url}/public/b`, { 'x-service-public-api-key': 'service_pub_other' });
    expect(JSON.parse(withKey.body).key).to.equal('service_pub_other');
    expect(handled).to.equal(3);
    await get(`${server.url}/public/b?page=2`);
    expect(handled).to.equal(4);
  });

  it('drops only the responses made of what a commit changed: the entry, its form set, its project, and the unscoped ones', async () => {
    const paths = ['/public/entry/e1', '/public/entry/e2', '/public/form-set/f1', '/public/form-set/f2', '/public/project/p1', '/public/project/p2', '/public/unscoped'];
    const reads = async () => {
      const before = handled;
      const read: string[] = [];
      for (const path of paths) {
        const count = handled;
        await get(`${server.url}${path}`);
        if (handled > count) read.push(path);
      }
      expect(handled - before).to.equal(read.length);
      return read;
    };
    await reads();
    await reads();
    expect(await reads()).to.deep.equal([]);
    // A publish of e1 in form set f1 of project p1, as public-content commits it.
    change('public-content', [write('entry_views', 'e1:en'), write('entry_views', 'e1:ja'), write('site_versions', 'p1', { scope: 'project' }), write('site_versions', 'f1', { scope: 'form-set' })]);
    expect(await reads()).to.deep.equal(['/public/entry/e1', '/public/form-set/f1', '/public/project/p1', '/public/unscoped']);
    expect(await reads()).to.deep.equal([]);
    // A form set deleted: its row of site_versions goes (no scope in the write), its project's is touched.
    change('public-content', [write('site_versions', 'f2', null), write('site_versions', 'p2', { scope: 'project' })]);
    expect(await reads()).to.deep.equal(['/public/form-set/f2', '/public/project/p2', '/public/unscoped']);
    // Writes unknown (a swapped-in generation), or another read model (access): everything is read again.
    change('access', []);
    change('public-content', []);
    expect(await reads(), 'checkpoints moved past events not folded').to.deep.equal([]);
    change('public-content');
    expect(await reads()).to.deep.equal(paths);
    change('access', [write('projects', 'p1')]);
    expect(await reads()).to.deep.equal(paths);
  });

  it('answers large text gzipped to clients that take it, as a representation with its own ETag', async () => {
    await get(`${server.url}/public/large`, { 'accept-encoding': 'gzip' });
    const identity = await get(`${server.url}/public/large`, { 'accept-encoding': 'gzip' });
    expect(identity.headers['vary']).to.match(/Accept-Encoding/i);
    expect(identity.headers['content-encoding']).to.equal(undefined); // the first answer comes from Koa
    const zipped = await new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      http.get(`${server.url}/public/large`, { headers: { 'accept-encoding': 'gzip' } }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.on('end', () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }));
      }).on('error', reject);
    });
    expect(zipped.headers['content-encoding']).to.equal('gzip');
    expect(zipped.headers['vary']).to.match(/Accept-Encoding/i);
    expect(zipped.headers.etag).to.not.equal(identity.headers.etag);
    expect(zipped.body.length).to.be.below(Buffer.byteLength(identity.body) / 4);
    expect(gunzipSync(zipped.body).toString('utf8')).to.equal(identity.body);
    const notModified = await get(`${server.url}/public/large`, { 'accept-encoding': 'gzip', 'if-none-match': zipped.headers.etag! });
    expect(notModified.status).to.equal(304);
    const plain = await get(`${server.url}/public/large`);
    expect(plain.headers['content-encoding']).to.equal(undefined);
    expect(plain.body).to.equal(identity.body);
  });

  it('never keeps private responses, errors or anything outside /public/', async () => {
    handled = 0;
    for (const path of ['/public/private', '/public/missing', '/elsewhere']) {
      await get(`${server.url}${path}`);
      await get(`${server.url}${path}`);
    }
    expect(handled).to.equal(6);
  });

  it('counts every byte an entry holds, keys and headers included, so many long URLs stay within maxBytes (issue 12 item 2)', async () => {
    version = 'v-bytes';
    change('public-content');
    const long = 'q'.repeat(4000);
    // Each read twice: kept on its second read.
    for (let i = 0; i < 600; i++) for (let read = 0; read < 2; read++) await get(`${server.url}/public/c?q=${long}${i}`);
    // Each entry's key alone is over 8 KB (two bytes a character): 600 of them would be 4.8 MB.
    expect(cache.bytes).to.be.at.most(MAX_BYTES);
    expect(cache.size).to.be.above(0).and.at.most(MAX_BYTES / 8000);
  });

  it('does not keep responses to URLs with a parameter the route did not read, or with an over-long key', async () => {
    version = 'v-unknown';
    change('public-content');
    const before = cache.size;
    handled = 0;
    for (let i = 0; i < 3; i++) {
      await get(`${server.url}/public/d?x=1&n=${i}&pad=${'p'.repeat(100)}`);
      await get(`${server.url}/public/d?x=1&n=${i}&pad=${'p'.repeat(100)}`);
    }
    expect(handled).to.equal(6);
    const overLong = `${server.url}/public/e?q=${'q'.repeat(MAX_KEY_LENGTH)}`;
    await get(overLong);
    await get(overLong);
    expect(handled).to.equal(8);
    expect(cache.size).to.equal(before);
    // A known parameter is kept as before.
    for (let read = 0; read < 3; read++) await get(`${server.url}/public/d?x=2`);
    expect(handled).to.equal(10);
  });
});

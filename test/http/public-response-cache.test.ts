import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import Koa from 'koa';
import { pino } from 'pino';
import { startHttpServer, type RunningHttpServer } from '../../src/http/http-server.ts';
import { publicConditional } from '../../src/http/public/public-http-manners.ts';
import { PublicResponseCache } from '../../src/http/public/public-response-cache.ts';
import type { ReadModelVersions } from '../../src/read-models/read-model-versions.ts';

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
  const versions = { current: () => version, of: () => version } as unknown as ReadModelVersions;

  before(async () => {
    const cache = new PublicResponseCache({ versions, maxBytes: 1024 * 1024, trustProxy: false, logger: pino({ level: 'silent' }) });
    const app = new Koa();
    app.use(async (ctx, next) => {
      ctx.set('Access-Control-Allow-Origin', '*');
      await next();
    });
    app.use(cache.middleware());
    app.use(publicConditional({ maxAgeSeconds: 0 }));
    app.use(async (ctx) => {
      handled += 1;
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
    const first = await get(`${server.url}/public/a?x=1`);
    const second = await get(`${server.url}/public/a?x=1`);
    expect(handled).to.equal(1);
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
    expect(handled).to.equal(1);
  });

  it('reads again once the read models change, and keys by URL and by the headers that select the project', async () => {
    handled = 0;
    await get(`${server.url}/public/b`);
    version = 'v2';
    const after = await get(`${server.url}/public/b`);
    expect(JSON.parse(after.body).version).to.equal('v2');
    expect(handled).to.equal(2);
    const withKey = await get(`${server.url}/public/b`, { 'x-service-public-api-key': 'service_pub_other' });
    expect(JSON.parse(withKey.body).key).to.equal('service_pub_other');
    expect(handled).to.equal(3);
    await get(`${server.url}/public/b?page=2`);
    expect(handled).to.equal(4);
  });

  it('answers large text gzipped to clients that take it, as a representation with its own ETag', async () => {
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
});

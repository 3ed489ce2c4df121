import { expect } from 'chai';
import { Router } from '@koa/router';
import { errorEnvelope } from '../../src/http/middleware/error-envelope.ts';
import { notFound } from '../../src/http/middleware/not-found.ts';
import type { RunningHttpServer } from '../../src/http/http-server.ts';
import { captureLogger, serve } from './support.ts';

describe('unknown routes', () => {
  let server: RunningHttpServer;

  before(async () => {
    const log = captureLogger();
    const router = new Router();
    router.get('/known', (ctx) => {
      ctx.body = { ok: true };
    });
    router.get('/empty', (ctx) => {
      ctx.status = 204;
    });
    server = await serve([errorEnvelope({ logger: log.logger }), notFound(), router.routes()], { logger: log.logger });
  });

  after(() => server.close(1000));

  it('answers an unknown path with 404 NOT_FOUND in the envelope', async () => {
    const response = await fetch(`${server.url}/nope?x=1`);
    expect(response.status).to.equal(404);
    expect(response.headers.get('content-type')).to.match(/^application\/json/);
    expect(await response.json()).to.deep.equal({
      error: { code: 'NOT_FOUND', message: 'No route for GET /nope.', retryable: false },
    });
  });

  it('answers a known path with an unrouted method with 404 in the envelope', async () => {
    const response = await fetch(`${server.url}/known`, { method: 'DELETE' });
    expect(response.status).to.equal(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).to.equal('NOT_FOUND');
  });

  it('leaves routed responses alone, bodiless ones included', async () => {
    const known = await fetch(`${server.url}/known`);
    expect(known.status).to.equal(200);
    expect(await known.json()).to.deep.equal({ ok: true });
    const empty = await fetch(`${server.url}/empty`);
    expect(empty.status).to.equal(204);
  });
});

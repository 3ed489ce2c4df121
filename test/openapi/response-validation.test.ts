import { Router } from '@koa/router';
import Koa from 'koa';
import { expect } from 'chai';
import { z } from 'zod';
import { ApiRegistry, openApiDocument } from '../../src/http/admin/api-registry.ts';
import { errorEnvelope } from '../../src/http/middleware/error-envelope.ts';
import { notFound } from '../../src/http/errors/error-factory.ts';
import { startHttpServer, type RunningHttpServer } from '../../src/http/http-server.ts';
import { captureLogger, serve } from '../http/support.ts';

/**
 * The check every end-to-end test runs on the answers it receives (test/support/response-validation.ts,
 * installed for the whole suite): here against a small admin API whose routes answer what their schema
 * does not say, to show that such an answer fails the request, and so the test.
 */
describe('OpenAPI: every answer the tests receive is checked against its operation', () => {
  let server: RunningHttpServer;
  before(async () => {
    const api = new ApiRegistry();
    const router = new Router({ prefix: '/admin/v1' });
    const thing = z.object({ id: z.string(), name: z.string() });
    const route = (path: string, answer: (ctx: { status: number; body: unknown }) => void) =>
      api.add(router, { method: 'get', path, operationId: path.slice(1), summary: `Answers ${path}`, tag: 'Project', auth: 'none', permission: 'none', responses: { 200: { description: 'A thing', schema: thing } }, errors: {} }, async (ctx) => answer(ctx));
    route('/declared', (ctx) => (ctx.body = { id: '1', name: 'declared' }));
    route('/extra-field', (ctx) => (ctx.body = { id: '1', name: 'extra', secret: 'not in the schema' }));
    route('/missing-field', (ctx) => (ctx.body = { id: '1' }));
    route('/undeclared-status', (ctx) => {
      ctx.status = 202;
      ctx.body = { id: '1', name: 'accepted' };
    });
    api.add(router, { method: 'get', path: '/gone', operationId: 'gone', summary: 'Answers 404', tag: 'Project', auth: 'none', permission: 'none', responses: { 200: { description: 'A thing', schema: thing } }, errors: { 404: ['NOT_FOUND'] } }, async () => {
      throw notFound('No such thing.');
    });
    const document = openApiDocument(api, { version: '1.0.0' });
    router.get('/openapi.json', (ctx) => (ctx.body = document));
    server = await serve([errorEnvelope({ logger: captureLogger().logger }), router.routes()]);
  });
  after(() => server.close());

  const get = (path: string) => fetch(`${server.url}/admin/v1${path}`);

  it('passes an answer its schema describes', async () => {
    const response = await get('/declared');
    expect(response.status).to.equal(200);
    expect(await response.json()).to.deep.equal({ id: '1', name: 'declared' });
  });

  it('fails a request answered with a field the schema does not declare', async () => {
    const error = await get('/extra-field').catch((e: unknown) => e);
    expect(error).to.be.instanceOf(Error);
    expect((error as Error).message).to.match(/extra-field.*answered 200 with a body its OpenAPI schema refuses: data must NOT have additional properties/s);
  });

  it('fails a request answered without a field the schema requires', async () => {
    expect(((await get('/missing-field').catch((e: unknown) => e)) as Error).message).to.match(/must have required property 'name'/);
  });

  it('fails a request answered with a status the operation does not declare', async () => {
    expect(((await get('/undeclared-status').catch((e: unknown) => e)) as Error).message).to.match(/answered 202, a status its OpenAPI operation does not declare/);
  });

  it('reads the document again when another server has taken the port of one it checked before (a long run reuses ports), whose answers it checks against the new one', async () => {
    /** A server on `port` whose one operation, GET /admin/v1/thing, answers `body` under `schema`. */
    const documentServer = async (port: number, schema: z.ZodType, body: unknown) => {
      const api = new ApiRegistry();
      const router = new Router({ prefix: '/admin/v1' });
      api.add(router, { method: 'get', path: '/thing', operationId: 'thing', summary: 'A thing', tag: 'Project', auth: 'none', permission: 'none', responses: { 200: { description: 'A thing', schema } }, errors: {} }, async (ctx) => {
        ctx.body = body;
      });
      const document = openApiDocument(api, { version: '1.0.0' });
      router.get('/openapi.json', (ctx) => (ctx.body = document));
      const app = new Koa();
      app.use(router.routes());
      return startHttpServer({ app, port, host: '127.0.0.1', logger: captureLogger().logger });
    };
    const first = await documentServer(0, z.object({ id: z.string() }), { id: '1' });
    const port = first.port;
    expect((await fetch(`${first.url}/admin/v1/thing`)).status).to.equal(200);
    await first.close();
    // Let fetch's pool see the old server's sockets closed, or it sends the next request on one of them.
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The same port, a document whose thing has a name: checked against the old document, it would fail.
    const second = await documentServer(port, z.object({ id: z.string(), name: z.string() }), { id: '2', name: 'second' });
    try {
      expect(await (await fetch(`${second.url}/admin/v1/thing`)).json()).to.deep.equal({ id: '2', name: 'second' });
    } finally {
      await second.close();
    }
  });

  it('passes the error envelope of a declared error status, and leaves paths no operation has alone', async () => {
    const gone = await get('/gone');
    expect(gone.status).to.equal(404);
    expect(((await gone.json()) as { error: { code: string } }).error.code).to.equal('NOT_FOUND');
    expect((await get('/declared/nothing-here')).status).to.equal(404);
  });
});

import { expect } from 'chai';
import { Router } from '@koa/router';
import { errorEnvelope } from '../../src/http/middleware/error-envelope.ts';
import { requestLogger } from '../../src/http/middleware/request-logger.ts';
import { requestIdOf, requestLoggerOf } from '../../src/http/request-context.ts';
import type { RunningHttpServer } from '../../src/http/http-server.ts';
import { captureLogger, serve } from './support.ts';
import type { CapturedLogger } from './support.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('request logger', () => {
  let server: RunningHttpServer;
  let log: CapturedLogger;

  before(async () => {
    log = captureLogger('info');
    const router = new Router();
    router.get('/hello', (ctx) => {
      requestLoggerOf(ctx, log.logger).info('inside the handler');
      ctx.body = { requestId: requestIdOf(ctx) };
    });
    router.get('/boom', () => {
      throw new Error('kaput');
    });
    server = await serve([requestLogger({ logger: log.logger }), errorEnvelope({ logger: log.logger }), router.routes()], {
      logger: log.logger,
    });
  });

  after(() => server.close(1000));

  /** The request line for a request id, once the response is over. */
  async function requestLine(requestId: string): Promise<Record<string, unknown>> {
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const line = log.lines().find((entry) => entry['msg'] === 'request' && entry['reqId'] === requestId);
      if (line) return line;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no request line for ${requestId}`);
  }

  it('echoes a valid X-Request-Id and makes it available to handlers', async () => {
    const response = await fetch(`${server.url}/hello`, { headers: { 'X-Request-Id': 'abc.DEF_123-x' } });
    expect(response.headers.get('x-request-id')).to.equal('abc.DEF_123-x');
    expect(await response.json()).to.deep.equal({ requestId: 'abc.DEF_123-x' });
  });

  it('generates a UUID when the client sends none', async () => {
    const response = await fetch(`${server.url}/hello`);
    const id = response.headers.get('x-request-id') ?? '';
    expect(id).to.match(UUID);
    expect(await response.json()).to.deep.equal({ requestId: id });
  });

  it('replaces an invalid X-Request-Id (bad characters, over 128 characters)', async () => {
    for (const offered of ['has space', 'semi;colon', '<script>', 'a'.repeat(129)]) {
      const response = await fetch(`${server.url}/hello`, { headers: { 'X-Request-Id': offered } });
      expect(response.headers.get('x-request-id'), offered).to.match(UUID);
    }
    const longest = 'b'.repeat(128);
    const response = await fetch(`${server.url}/hello`, { headers: { 'X-Request-Id': longest } });
    expect(response.headers.get('x-request-id')).to.equal(longest);
  });

  it('writes one structured line per request: method, path, status, duration, request id', async () => {
    await fetch(`${server.url}/hello?page=2`, { headers: { 'X-Request-Id': 'line-1' } });
    const line = await requestLine('line-1');
    expect(line).to.include({ level: 'info', method: 'GET', path: '/hello?page=2', status: 200, reqId: 'line-1' });
    expect(line['durationMs']).to.be.a('number').and.at.least(0);
    expect(log.lines().filter((entry) => entry['msg'] === 'request' && entry['reqId'] === 'line-1')).to.have.length(1);
  });

  it('binds the request id to the handler logger', async () => {
    await fetch(`${server.url}/hello`, { headers: { 'X-Request-Id': 'bound-1' } });
    await requestLine('bound-1');
    const inside = log.lines().find((entry) => entry['msg'] === 'inside the handler' && entry['reqId'] === 'bound-1');
    expect(inside).to.not.equal(undefined);
  });

  it('leaves credential query parameters out of the logged path', async () => {
    await fetch(`${server.url}/hello?api_key=service_pub_SECRET1&page=3&token=eyJSECRET2&Access_Token=SECRET3`, {
      headers: { 'X-Request-Id': 'query-1' },
    });
    const line = await requestLine('query-1');
    expect(line['path']).to.equal('/hello?page=3');
    expect(log.text()).not.to.match(/SECRET[123]/);
  });

  it('cuts a long path at 1,024 characters in the request line, saying how much was left out', async () => {
    await fetch(`${server.url}/hello?pad=${'x'.repeat(7000)}`, { headers: { 'X-Request-Id': 'long-1' } });
    const line = await requestLine('long-1');
    expect(String(line['path'])).to.have.length.below(1100);
    expect(line['path']).to.match(/^\/hello\?pad=x+…\[5987 more characters\]$/);
  });

  it('logs server errors at error level with their error code', async () => {
    await fetch(`${server.url}/boom`, { headers: { 'X-Request-Id': 'boom-1' } });
    const line = await requestLine('boom-1');
    expect(line).to.include({ level: 'error', status: 500, errorCode: 'INTERNAL_ERROR' });
  });
});

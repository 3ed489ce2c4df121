import { expect } from 'chai';
import { Router } from '@koa/router';
import type { Middleware } from 'koa';
import {
  conflict,
  forbidden,
  internal,
  notFound,
  payloadTooLarge,
  planRequired,
  rateLimited,
  revisionConflict,
  unauthorized,
  unavailable,
  validationError,
} from '../../src/http/errors/error-factory.ts';
import { HttpError } from '../../src/http/errors/http-error.ts';
import { errorEnvelope } from '../../src/http/middleware/error-envelope.ts';
import { requestLogger } from '../../src/http/middleware/request-logger.ts';
import type { RunningHttpServer } from '../../src/http/http-server.ts';
import { captureLogger, serve } from './support.ts';
import type { CapturedLogger } from './support.ts';

class DomainConflict extends Error {}

describe('error envelope', () => {
  let server: RunningHttpServer;
  let log: CapturedLogger;

  const thrown: Record<string, () => HttpError> = {
    validation: () => validationError('title is required', { hint: 'Send a title.' }),
    unauthorized: () => unauthorized(),
    forbidden: () => forbidden(),
    plan: () => planRequired(undefined, { requiredPlan: 'Business' }),
    'not-found': () => notFound('No form set "news".'),
    conflict: () => conflict('The slug "news" is taken.'),
    'revision-conflict': () => revisionConflict(),
    'too-large': () => payloadTooLarge(1024),
    'rate-limited': () => rateLimited(12.2),
    unavailable: () => unavailable('The event store is unreachable.', { retryAfterSeconds: 5 }),
    internal: () => internal({ cause: new Error('SQLITE_CORRUPT: database disk image is malformed') }),
  };

  before(async () => {
    log = captureLogger('debug');
    const router = new Router();
    for (const [name, make] of Object.entries(thrown)) {
      router.get(`/throw/${name}`, () => {
        throw make();
      });
    }
    router.get('/bug', () => {
      throw new TypeError("Cannot read properties of undefined (reading 'secretThing')");
    });
    router.get('/string', () => {
      throw 'a string, not an Error';
    });
    router.get('/koa-throw', (ctx) => {
      ctx.throw(410, 'That entry is gone for good.');
    });
    router.get('/koa-throw-500', (ctx) => {
      ctx.throw(500, 'pool exhausted at db:5432');
    });
    router.get('/cached-then-fails', (ctx) => {
      ctx.set('Cache-Control', 'public, max-age=31536000');
      ctx.set('ETag', '"abc"');
      throw notFound();
    });
    router.get('/unexposed', () => {
      throw new HttpError({
        status: 502,
        code: 'BAD_GATEWAY',
        message: 'renderer at 10.0.0.7:9000 refused',
        hint: 'internal hint',
        expose: false,
      });
    });
    router.get('/partial', (ctx) => {
      ctx.res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '100' });
      ctx.res.write('first part');
      throw new Error('failed half way');
    });
    router.get('/domain', () => {
      throw new DomainConflict('wrong expected revision');
    });
    const cors: Middleware = async (ctx, next) => {
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.set('Vary', 'Origin');
      await next();
    };
    server = await serve(
      [
        requestLogger({ logger: log.logger }),
        errorEnvelope({
          logger: log.logger,
          translate: (error) => (error instanceof DomainConflict ? revisionConflict() : undefined),
        }),
        cors,
        router.routes(),
      ],
      { logger: log.logger },
    );
  });

  after(() => server.close(1000));

  async function get(path: string): Promise<{ status: number; headers: Headers; text: string; body: any }> {
    const response = await fetch(`${server.url}${path}`);
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, body: JSON.parse(text) };
  }

  const expected: Array<[string, number, string, boolean | undefined]> = [
    ['validation', 400, 'VALIDATION_ERROR', false],
    ['unauthorized', 401, 'UNAUTHORIZED', false],
    ['forbidden', 403, 'FORBIDDEN', false],
    ['plan', 403, 'PLAN_REQUIRED', false],
    ['not-found', 404, 'NOT_FOUND', false],
    ['conflict', 409, 'CONFLICT', false],
    ['revision-conflict', 409, 'REVISION_CONFLICT', false],
    ['too-large', 413, 'PAYLOAD_TOO_LARGE', false],
    ['rate-limited', 429, 'RATE_LIMITED', true],
    ['unavailable', 503, 'SERVICE_UNAVAILABLE', true],
    ['internal', 500, 'INTERNAL_ERROR', undefined],
  ];
  for (const [name, status, code, retryable] of expected) {
    it(`answers ${name} with ${status} ${code} in the envelope`, async () => {
      const { status: actual, headers, body } = await get(`/throw/${name}`);
      expect(actual).to.equal(status);
      expect(headers.get('content-type')).to.match(/^application\/json/);
      expect(Object.keys(body)).to.deep.equal(['error']);
      expect(body.error.code).to.equal(code);
      expect(body.error.message).to.be.a('string').and.not.equal('');
      expect(body.error.retryable).to.equal(retryable);
      expect(Object.keys(body.error)).to.satisfy((keys: string[]) =>
        keys.every((key) => ['code', 'message', 'hint', 'retryable'].includes(key)),
      );
    });
  }

  it('sends the message and hint of exposed errors', async () => {
    const { body } = await get('/throw/validation');
    expect(body.error).to.deep.equal({
      code: 'VALIDATION_ERROR',
      message: 'title is required',
      hint: 'Send a title.',
      retryable: false,
    });
    expect((await get('/throw/plan')).body.error.hint).to.equal('Requires the Business plan or above.');
  });

  it('sets the error headers: Retry-After (rounded up), WWW-Authenticate', async () => {
    expect((await get('/throw/rate-limited')).headers.get('retry-after')).to.equal('13');
    expect((await get('/throw/unavailable')).headers.get('retry-after')).to.equal('5');
    expect((await get('/throw/unauthorized')).headers.get('www-authenticate')).to.equal('Bearer');
  });

  it('answers an unexpected error with 500 INTERNAL_ERROR, a generic message and no stack', async () => {
    const { status, body, text } = await get('/bug');
    expect(status).to.equal(500);
    expect(body).to.deep.equal({ error: { code: 'INTERNAL_ERROR', message: 'An unexpected error occurred.' } });
    expect(text).not.to.include('secretThing');
    expect(text).not.to.include('TypeError');
    expect(text).not.to.match(/\bat .*\.ts:\d+/);
  });

  it("never sends internal()'s cause", async () => {
    const { text } = await get('/throw/internal');
    expect(text).not.to.include('SQLITE_CORRUPT');
  });

  it('logs an unexpected error with its stack and the request id, once', async () => {
    const response = await fetch(`${server.url}/bug`, { headers: { 'X-Request-Id': 'bug-trace-1' } });
    expect(response.status).to.equal(500);
    const failures = log.lines().filter((line) => line['msg'] === 'request failed' && line['reqId'] === 'bug-trace-1');
    expect(failures).to.have.length(1);
    const err = failures[0]!['err'] as { message: string; stack: string };
    expect(err.message).to.include('secretThing');
    expect(err.stack).to.include('TypeError');
    expect(err.stack).to.match(/error-envelope\.test\.ts/);
  });

  it('never sends the message or hint of an error that is not to be exposed', async () => {
    const { status, body, text } = await get('/unexposed');
    expect(status).to.equal(502);
    expect(body).to.deep.equal({ error: { code: 'BAD_GATEWAY', message: 'An unexpected error occurred.' } });
    expect(text).not.to.include('10.0.0.7');
  });

  it('answers a thrown non-Error with 500 INTERNAL_ERROR', async () => {
    const { status, body, text } = await get('/string');
    expect(status).to.equal(500);
    expect(body.error.code).to.equal('INTERNAL_ERROR');
    expect(text).not.to.include('a string, not an Error');
  });

  it("maps Koa's ctx.throw: exposed 4xx keep their message, 5xx do not", async () => {
    const gone = await get('/koa-throw');
    expect(gone.status).to.equal(410);
    expect(gone.body.error).to.deep.equal({ code: 'GONE', message: 'That entry is gone for good.', retryable: false });
    const failed = await get('/koa-throw-500');
    expect(failed.status).to.equal(500);
    expect(failed.text).not.to.include('db:5432');
  });

  it('cuts the connection when the error comes after the response started', async () => {
    const response = await fetch(`${server.url}/partial`);
    expect(response.status).to.equal(200);
    let failure: unknown;
    try {
      await response.text();
    } catch (error) {
      failure = error;
    }
    expect(failure, 'the truncated body must not read as complete').to.be.instanceOf(Error);
    expect(log.lines().some((line) => line['msg'] === 'request failed' && (line['err'] as { message?: string })?.message === 'failed half way')).to.equal(true);
  });

  it('maps domain errors through the translate option', async () => {
    const { status, body } = await get('/domain');
    expect(status).to.equal(409);
    expect(body.error.code).to.equal('REVISION_CONFLICT');
  });

  it('keeps CORS and request-id headers set before the error, drops caching headers', async () => {
    const { headers } = await get('/cached-then-fails');
    expect(headers.get('access-control-allow-origin')).to.equal('*');
    expect(headers.get('vary')).to.equal('Origin');
    expect(headers.get('x-request-id')).to.be.a('string');
    expect(headers.get('etag')).to.equal(null);
    expect(headers.get('cache-control')).to.equal('no-store');
  });

  it('records the error code on the request log line', async () => {
    await fetch(`${server.url}/throw/conflict`, { headers: { 'X-Request-Id': 'conflict-1' } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const line = log.lines().find((entry) => entry['msg'] === 'request' && entry['reqId'] === 'conflict-1');
    expect(line).to.include({ status: 409, errorCode: 'CONFLICT', level: 'warn' });
  });
});

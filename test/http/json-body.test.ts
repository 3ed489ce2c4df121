import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { Router } from '@koa/router';
import { errorEnvelope } from '../../src/http/middleware/error-envelope.ts';
import { jsonBody } from '../../src/http/middleware/json-body.ts';
import type { RunningHttpServer } from '../../src/http/http-server.ts';
import { captureLogger, serve } from './support.ts';

describe('JSON body', () => {
  let server: RunningHttpServer;
  const log = captureLogger();

  before(async () => {
    const router = new Router();
    const echo = (ctx: { request: { body?: unknown }; body: unknown }): void => {
      ctx.body = { received: ctx.request.body === undefined ? 'nothing' : ctx.request.body };
    };
    router.post('/echo', jsonBody({ limitBytes: 1024 }), echo);
    router.put('/echo', jsonBody({ limitBytes: 1024 }), echo);
    router.get('/echo', jsonBody({ limitBytes: 1024 }), echo);
    router.post('/default-limit', jsonBody(), echo);
    server = await serve([errorEnvelope({ logger: log.logger }), router.routes()], { logger: log.logger });
  });

  after(() => server.close(1000));

  async function send(path: string, init: RequestInit): Promise<{ status: number; body: any }> {
    const response = await fetch(`${server.url}${path}`, init);
    expect(response.headers.get('content-type')).to.match(/^application\/json/);
    return { status: response.status, body: await response.json() };
  }
  const json = { 'Content-Type': 'application/json' };

  it('parses a JSON object into ctx.request.body', async () => {
    const { status, body } = await send('/echo', { method: 'POST', headers: json, body: '{"title":"Hello","n":[1,2]}' });
    expect(status).to.equal(200);
    expect(body).to.deep.equal({ received: { title: 'Hello', n: [1, 2] } });
  });

  it('accepts +json media types and a charset parameter', async () => {
    const { status, body } = await send('/echo', {
      method: 'PUT',
      headers: { 'Content-Type': 'application/merge-patch+json; charset=utf-8' },
      body: '{"a":1}',
    });
    expect(status).to.equal(200);
    expect(body).to.deep.equal({ received: { a: 1 } });
  });

  it('leaves the body undefined when there is none', async () => {
    const { status, body } = await send('/echo', { method: 'POST' });
    expect(status).to.equal(200);
    expect(body).to.deep.equal({ received: 'nothing' });
  });

  it('answers a body over the limit with 413 PAYLOAD_TOO_LARGE', async () => {
    const big = JSON.stringify({ text: 'x'.repeat(2000) });
    const { status, body } = await send('/echo', { method: 'POST', headers: json, body: big });
    expect(status).to.equal(413);
    expect(body.error).to.deep.equal({
      code: 'PAYLOAD_TOO_LARGE',
      message: 'The request body exceeds the limit of 1024 bytes.',
      retryable: false,
    });
  });

  it('counts the limit on the decompressed body', async () => {
    const zipped = gzipSync(JSON.stringify({ text: 'x'.repeat(5000) }));
    expect(zipped.length).to.be.below(1024);
    const { status, body } = await send('/echo', {
      method: 'POST',
      headers: { ...json, 'Content-Encoding': 'gzip' },
      body: zipped,
    });
    expect(status).to.equal(413);
    expect(body.error.code).to.equal('PAYLOAD_TOO_LARGE');
  });

  it('has a default limit of 1 MiB', async () => {
    const justUnder = JSON.stringify({ text: 'x'.repeat(1024 * 1024 - 20) });
    expect((await send('/default-limit', { method: 'POST', headers: json, body: justUnder })).status).to.equal(200);
    const over = JSON.stringify({ text: 'x'.repeat(1024 * 1024) });
    expect((await send('/default-limit', { method: 'POST', headers: json, body: over })).status).to.equal(413);
  });

  it('answers invalid JSON with 400 VALIDATION_ERROR', async () => {
    const { status, body } = await send('/echo', { method: 'POST', headers: json, body: '{"title": "unterminated' });
    expect(status).to.equal(400);
    expect(body.error.code).to.equal('VALIDATION_ERROR');
    expect(body.error.message).to.equal('The request body is not valid JSON.');
    expect(body.error.retryable).to.equal(false);
  });

  it('is strict: a bare JSON string or number is refused with 400', async () => {
    for (const payload of ['"just a string"', '42']) {
      const { status, body } = await send('/echo', { method: 'POST', headers: json, body: payload });
      expect(status, payload).to.equal(400);
      expect(body.error.code).to.equal('VALIDATION_ERROR');
    }
  });

  it('refuses __proto__ keys with 400', async () => {
    const { status } = await send('/echo', { method: 'POST', headers: json, body: '{"__proto__":{"admin":true}}' });
    expect(status).to.equal(400);
  });

  it('answers a non-JSON content type with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const { status, body } = await send('/echo', { method: 'POST', headers: { 'Content-Type': type }, body: 'a=1' });
      expect(status, type).to.equal(415);
      expect(body.error.code).to.equal('UNSUPPORTED_MEDIA_TYPE');
      expect(body.error.retryable).to.equal(false);
    }
  });

  it('answers a body without a content type with 415', async () => {
    const { status } = await send('/echo', { method: 'POST', body: new Uint8Array([123, 125]) });
    expect(status).to.equal(415);
  });

  it('answers an unknown Content-Encoding with 415', async () => {
    const { status, body } = await send('/echo', {
      method: 'POST',
      headers: { ...json, 'Content-Encoding': 'zstd-nonsense' },
      body: '{}',
    });
    expect(status).to.equal(415);
    expect(body.error.code).to.equal('UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers a body that does not decode as its Content-Encoding says with 400, logged below error level (issue 12 item 5)', async () => {
    const valid = JSON.stringify({ a: 1 });
    const bodies: Array<[string, Uint8Array]> = [
      ['gzip', Buffer.from(valid)], // not compressed at all
      ['gzip', gzipSync(valid).subarray(0, 12)], // truncated
      ['gzip', Buffer.concat([gzipSync(valid).subarray(0, 10), Buffer.from('garbage garbage garbage')])],
      ['deflate', Buffer.from('\x78\x9c not deflate')],
      ['br', Buffer.from('not brotli at all, not at all')],
      ['deflate', gzipSync(valid)], // gzip bytes labelled deflate are accepted by zlib's unzip; then valid
    ];
    const before = log.lines().length;
    for (const [encoding, bytes] of bodies.slice(0, 5)) {
      const { status, body } = await send('/echo', { method: 'POST', headers: { ...json, 'Content-Encoding': encoding }, body: bytes });
      expect(status, encoding).to.equal(400);
      expect(body.error.code).to.equal('VALIDATION_ERROR');
      expect(body.error.message).to.match(new RegExp(`Content-Encoding ${encoding}`));
      expect(body.error.retryable).to.equal(false);
    }
    const errors = log.lines().slice(before).filter((line) => Number(line['level']) >= 50);
    expect(errors, JSON.stringify(errors)).to.deep.equal([]);
  });

  it('decodes gzip, deflate and br bodies, whatever the case of the coding name', async () => {
    const valid = JSON.stringify({ a: 1 });
    for (const [encoding, bytes] of [['gzip', gzipSync(valid)], ['GZIP', gzipSync(valid)], ['deflate', deflateSync(valid)], ['br', brotliCompressSync(valid)], [' Br ', brotliCompressSync(valid)]] as const) {
      const { status, body } = await send('/echo', { method: 'POST', headers: { ...json, 'Content-Encoding': encoding }, body: bytes });
      expect(status, encoding).to.equal(200);
      expect(body).to.deep.equal({ received: { a: 1 } });
    }
  });

  it('refuses JSON nested deeper than 64 levels with 400 naming the limit (issue 12 item 8)', async () => {
    const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
    expect((await send('/echo', { method: 'POST', headers: json, body: nested(64) })).status).to.equal(200);
    for (const depth of [65, 5000]) {
      const body = depth === 5000 ? `{"a":${nested(depth)}}` : nested(depth);
      const response = await send('/default-limit', { method: 'POST', headers: json, body });
      expect(response.status, String(depth)).to.equal(400);
      expect(response.body.error.code).to.equal('VALIDATION_ERROR');
      expect(response.body.error.message).to.match(/nested more than 64 levels deep/);
    }
    const objects = `${'{"a":'.repeat(100)}1${'}'.repeat(100)}`;
    expect((await send('/default-limit', { method: 'POST', headers: json, body: objects })).status).to.equal(400);
  });

  it('ignores bodies of methods that take none', async () => {
    const { status, body } = await send('/echo', { method: 'GET' });
    expect(status).to.equal(200);
    expect(body).to.deep.equal({ received: 'nothing' });
  });

  it('refuses a non-positive limit at construction', () => {
    expect(() => jsonBody({ limitBytes: 0 })).to.throw(RangeError);
  });
});

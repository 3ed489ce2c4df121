import { Writable } from 'node:stream';
import { expect } from 'chai';
import { createLogger, REDACTION_CENSOR } from '../../src/logging/logger.ts';
import type { Logger } from '../../src/logging/logger.ts';

function capture(level: 'debug' | 'info' | 'warn' = 'info'): { logger: Logger; text: () => string; lines: () => any[] } {
  let text = '';
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      text += chunk.toString();
      callback();
    },
  });
  return {
    logger: createLogger({ level, destination }),
    text: () => text,
    lines: () => text.trim().split('\n').map((line) => JSON.parse(line)),
  };
}

const AGENT_KEY = 'sk-agent-3f9c2a7be1d04c55a9e8';
const PUBLIC_KEY = 'service_pub_7d1e0b9a44c2';

describe('logger', () => {
  it('writes one JSON object per line with level label, ISO time and message', () => {
    const { logger, lines } = capture();
    logger.info({ count: 3 }, 'hello');
    const [line] = lines();
    expect(line).to.include({ level: 'info', msg: 'hello', count: 3 });
    expect(line.time).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('respects the level', () => {
    const { logger, text } = capture('warn');
    logger.info('quiet');
    logger.warn('loud');
    expect(text()).not.to.include('quiet');
    expect(text()).to.include('loud');
  });

  it('never writes an Authorization header value or a secret field in clear', () => {
    const { logger, text, lines } = capture();
    logger.info(
      {
        req: {
          method: 'POST',
          headers: { authorization: `Bearer ${AGENT_KEY}`, 'x-service-public-api-key': PUBLIC_KEY, cookie: 'sid=c00kie' },
        },
        webhook: { url: 'https://example.com/hook', secret: 'whsec_topsecret' },
      },
      'incoming',
    );
    const out = text();
    expect(out).not.to.include(AGENT_KEY);
    expect(out).not.to.include(PUBLIC_KEY);
    expect(out).not.to.include('c00kie');
    expect(out).not.to.include('whsec_topsecret');
    const [line] = lines();
    expect(line.req.headers.authorization).to.equal(REDACTION_CENSOR);
    expect(line.webhook).to.deep.equal({ url: 'https://example.com/hook', secret: REDACTION_CENSOR });
    expect(line.req.method).to.equal('POST');
  });

  it('redacts at any depth, in arrays, whatever the case, without touching the logged object', () => {
    const { logger, text } = capture();
    const payload = {
      a: { b: { c: { d: { e: { password: 'deep-pass-1' } } } } },
      keys: [{ apiKey: 'array-key-2' }, { ApiKey: 'case-key-3' }],
      Authorization: 'Bearer capital-4',
      token: 'top-token-5',
    };
    logger.info(payload, 'nested');
    for (const secret of ['deep-pass-1', 'array-key-2', 'case-key-3', 'capital-4', 'top-token-5']) {
      expect(text()).not.to.include(secret);
    }
    expect(payload.a.b.c.d.e.password).to.equal('deep-pass-1');
    expect(payload.keys[0]!.apiKey).to.equal('array-key-2');
  });

  it('redacts child-logger bindings', () => {
    const { logger, text } = capture();
    logger.child({ apiKey: 'bound-key-6', 'x-service-public-api-key': 'bound-pub-7' }).info('child');
    expect(text()).not.to.include('bound-key-6');
    expect(text()).not.to.include('bound-pub-7');
  });

  it("redacts errors' own secret fields but keeps message and stack", () => {
    const { logger, lines, text } = capture();
    const error = Object.assign(new Error('upstream refused'), { token: 'err-token-8' });
    logger.error({ err: error }, 'failed');
    logger.error(error);
    expect(text()).not.to.include('err-token-8');
    for (const line of lines()) {
      expect(line.err.message).to.equal('upstream refused');
      expect(line.err.stack).to.include('logger.test.ts');
      expect(line.err.token).to.equal(REDACTION_CENSOR);
    }
  });

  it('removes credentials from URLs anywhere in the line', () => {
    const { logger, text, lines } = capture();
    logger.info({ eventStore: 'esdb://admin:changeit@localhost:2113?tls=false' }, 'connecting to %s', 'mongodb://app:m0ngoPass@db:27017/annals');
    logger.error(new Error('cannot reach smtp://mailer:sm7pPass@mail:587'));
    const out = text();
    for (const secret of ['changeit', 'm0ngoPass', 'sm7pPass']) expect(out).not.to.include(secret);
    const [first] = lines();
    expect(first.eventStore).to.equal('esdb://***@localhost:2113?tls=false');
    expect(first.msg).to.equal('connecting to mongodb://***@db:27017/annals');
  });

  it('survives circular objects', () => {
    const { logger, lines } = capture();
    const loop: Record<string, unknown> = { name: 'loop', password: 'circ-pass-9' };
    loop['self'] = loop;
    logger.info({ loop }, 'circular');
    const [line] = lines();
    expect(line.loop).to.deep.equal({ name: 'loop', password: REDACTION_CENSOR, self: '[Circular]' });
  });
});

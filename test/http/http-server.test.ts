import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import Koa from 'koa';
import { DrainState } from '../../src/http/drain-state.ts';
import { healthRoutes } from '../../src/http/health-routes.ts';
import { startHttpServer } from '../../src/http/http-server.ts';
import type { RunningHttpServer } from '../../src/http/http-server.ts';
import { captureLogger, deferred } from './support.ts';
import { eventually } from '../support/eventually.ts';

/** GET through node:http so the test controls the connection. Resolves status and body, rejects on socket errors. */
function get(url: string, agent: Agent | false = false): Promise<{ status: number; body: string; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Resolves with the error code of a TCP connection attempt ('connected' when it succeeds). */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

describe('HTTP server', () => {
  const servers: RunningHttpServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close(100)));
  });

  async function start(app: Koa, drain?: DrainState): Promise<RunningHttpServer> {
    const log = captureLogger();
    const server = await startHttpServer({ app, port: 0, host: '127.0.0.1', logger: log.logger, ...(drain ? { drain } : {}) });
    servers.push(server);
    return server;
  }

  it('listens on the port it reports and gives its URL', async () => {
    const app = new Koa();
    app.use((ctx) => {
      ctx.body = 'hi';
    });
    const server = await start(app);
    expect(server.port).to.be.above(0);
    expect(server.url).to.equal(`http://127.0.0.1:${server.port}`);
    expect(await get(`${server.url}/`)).to.include({ status: 200, body: 'hi' });
  });

  it('sets keep-alive, headers and request timeouts (defaults and overrides)', async () => {
    const server = await start(new Koa());
    expect(server.server.keepAliveTimeout).to.equal(65_000);
    // Node counts it from a request's first byte, so it need not outlast an idle keep-alive connection (issue 41).
    expect(server.server.headersTimeout).to.equal(20_000);
    expect(server.server.requestTimeout).to.equal(300_000);
    const log = captureLogger();
    const custom = await startHttpServer({
      app: new Koa(),
      port: 0,
      host: '127.0.0.1',
      logger: log.logger,
      timeouts: { keepAliveMs: 1000, headersMs: 2000, requestMs: 3000 },
    });
    servers.push(custom);
    expect([custom.server.keepAliveTimeout, custom.server.headersTimeout, custom.server.requestTimeout]).to.deep.equal([
      1000, 2000, 3000,
    ]);
  });

  it('rejects when the port is taken', async () => {
    const first = await start(new Koa());
    const log = captureLogger();
    let failure: unknown;
    try {
      servers.push(await startHttpServer({ app: new Koa(), port: first.port, host: '127.0.0.1', logger: log.logger }));
    } catch (error) {
      failure = error;
    }
    expect((failure as NodeJS.ErrnoException | undefined)?.code).to.equal('EADDRINUSE');
  });

  it('close(): an in-flight request completes with 200, new connections are refused, draining is flagged', async () => {
    const entered = deferred();
    const release = deferred();
    const drain = new DrainState();
    const app = new Koa();
    app.use(async (ctx) => {
      entered.resolve();
      await release.promise;
      ctx.body = { done: true, drainingSeen: drain.draining };
    });
    const server = await start(app, drain);

    const inFlight = get(`${server.url}/slow`);
    await entered.promise;
    const closed = server.close(10_000);
    let closedAt: number | undefined;
    void closed.then(() => (closedAt = Date.now()));

    expect(drain.draining).to.equal(true);
    expect(server.drain).to.equal(drain);
    expect(await tryConnect(server.port)).to.equal('ECONNREFUSED');
    expect(closedAt).to.equal(undefined);

    release.resolve();
    const response = await inFlight;
    expect(response.status).to.equal(200);
    expect(JSON.parse(response.body)).to.deep.equal({ done: true, drainingSeen: true });

    const started = Date.now();
    await closed;
    expect(Date.now() - started).to.be.below(2000); // did not wait for the grace period
  });

  it('close(): idle keep-alive connections are closed at once', async () => {
    const app = new Koa();
    app.use((ctx) => {
      ctx.body = 'ok';
    });
    const server = await start(app);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      await get(`${server.url}/`, agent);
      const idle = Object.values(agent.freeSockets).flat();
      expect(idle).to.have.length(1);
      const socketClosed = new Promise<void>((resolve) => idle[0]!.once('close', () => resolve()));
      const started = Date.now();
      await server.close(10_000);
      await socketClosed;
      expect(Date.now() - started).to.be.below(2000);
    } finally {
      agent.destroy();
    }
  });

  it('close(): a keep-alive connection is closed once its in-flight response is out', async () => {
    const entered = deferred();
    const release = deferred();
    const app = new Koa();
    app.use(async (ctx) => {
      entered.resolve();
      await release.promise;
      ctx.body = 'late';
    });
    const server = await start(app);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const inFlight = get(`${server.url}/`, agent);
      await entered.promise;
      const started = Date.now();
      const closed = server.close(10_000);
      release.resolve();
      expect((await inFlight).status).to.equal(200);
      await closed;
      expect(Date.now() - started).to.be.below(2000);
    } finally {
      agent.destroy();
    }
  });

  it('close(): requests still running after the grace period are cut off', async () => {
    const entered = deferred();
    const app = new Koa();
    app.use(async () => {
      entered.resolve();
      await new Promise(() => {}); // never answers
    });
    const server = await start(app);
    const stuck = get(`${server.url}/stuck`).then(
      () => 'answered',
      (error: NodeJS.ErrnoException) => error.code ?? error.message,
    );
    await entered.promise;
    const started = Date.now();
    await server.close(200);
    const elapsed = Date.now() - started;
    expect(elapsed).to.be.at.least(150);
    expect(elapsed).to.be.below(2000);
    expect(await stuck).to.equal('ECONNRESET');
  });

  it('logs errors Koa handles itself (a failing response stream) through the logger', async () => {
    const log = captureLogger();
    const app = new Koa();
    app.use((ctx) => {
      ctx.body = new Readable({
        read() {
          this.destroy(new Error('disk read failed mid-stream'));
        },
      });
    });
    const server = await startHttpServer({ app, port: 0, host: '127.0.0.1', logger: log.logger });
    servers.push(server);
    await get(`${server.url}/`).catch(() => undefined);
    await eventually(() => log.text().includes('disk read failed'), Boolean, 2000, 'the error logged', 10);
    const line = log.lines().find((entry) => entry['msg'] === 'unhandled request error');
    expect((line?.['err'] as { message?: string } | undefined)?.message).to.equal('disk read failed mid-stream');
  });

  it('close() is idempotent', async () => {
    const server = await start(new Koa());
    const first = server.close(100);
    expect(server.close(100)).to.equal(first);
    await first;
  });

  it('close(): /healthz answers 503 draining on a connection still open', async () => {
    const drain = new DrainState();
    const entered = deferred();
    const release = deferred();
    const app = new Koa();
    const health = healthRoutes({ drain, readiness: async () => ({ ready: true, checks: {} }) });
    app.use(health.routes());
    app.use(async (ctx) => {
      entered.resolve();
      await release.promise;
      ctx.body = 'slow done';
    });
    const server = await start(app, drain);

    // One raw keep-alive connection: a slow request, then (pipelined, once close() began) GET /healthz.
    const socket = connect(server.port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await entered.promise;
    const closed = server.close(5000);
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    release.resolve();
    await Promise.all([closed, ended]);

    const responses = received.split(/(?=HTTP\/1\.1 )/);
    expect(responses).to.have.length(2);
    expect(responses[0]).to.match(/^HTTP\/1\.1 200/);
    expect(responses[0]).to.include('slow done');
    expect(responses[1]).to.match(/^HTTP\/1\.1 503/);
    expect(responses[1]).to.include('{"status":"draining"}');
    expect(responses[1]).to.match(/\r\nConnection: close\r\n/i);
  });
});

import net from 'node:net';
import { expect } from 'chai';
import { LoadShedder } from '../../src/http/load-shedding.ts';
import type { RunningHttpServer } from '../../src/http/http-server.ts';
import { startAdminFixture } from '../admin/support.ts';
import { eventually } from '../support/engine-fixture.ts';
import { isErrorEnvelope, rawRequest } from '../support/raw-http.ts';
import { captureLogger, deferred, serve } from './support.ts';

/** Issue 12 item 7: refuse early under overload, and the server's limits from settings. */
describe('HTTP: load shedding and server limits', function () {
  this.timeout(60_000);

  describe('the shedder', () => {
    let server: RunningHttpServer;
    let lag = 0;
    let clock = 0;
    let release = deferred();
    let shedder: LoadShedder;
    before(async () => {
      shedder = new LoadShedder({ lagMs: () => lag, maxLagMs: 100, maxInFlight: 6, heavyClientMinRequests: 3, sustainMs: 500, holdMs: 2000, trustProxy: true, now: () => clock });
      server = await serve(
        [
          async (ctx) => {
            if (ctx.path === '/slow') await release.promise;
            ctx.body = { ok: true };
          },
        ],
        { shedder, logger: captureLogger().logger },
      );
    });
    after(() => server.close(100));

    const from = (address: string) => ({ 'x-forwarded-for': address });

    it('refuses requests beyond HTTP_MAX_IN_FLIGHT at once with 503, Retry-After and the error envelope', async () => {
      lag = 0;
      release = deferred();
      const slow = Array.from({ length: 6 }, (_, i) => rawRequest(server.url, 'GET', '/slow', { headers: from(`10.0.0.${i}`) }));
      await eventually(async () => shedder.inFlight, (n) => n === 6);
      const refused = await rawRequest(server.url, 'GET', '/fast', { headers: from('10.0.1.1') });
      expect(refused.status).to.equal(503);
      expect(refused.headers['retry-after']).to.equal('1');
      expect(isErrorEnvelope(refused.json)).to.equal(true);
      expect((refused.json as { error: { code: string; retryable: boolean } }).error).to.include({ code: 'SERVICE_UNAVAILABLE', retryable: true });
      // Health checks tell the truth rather than being shed.
      expect((await rawRequest(server.url, 'GET', '/healthz')).status).to.not.equal(503);
      release.resolve();
      expect((await Promise.all(slow)).map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200, 200]);
      expect((await rawRequest(server.url, 'GET', '/fast')).status).to.equal(200);
    });

    it('once the event loop has lagged for a while, refuses the clients sending most requests and serves the others; past 3x the bound, everyone', async () => {
      lag = 0;
      clock += 1000; // a new second: nobody has sent anything yet
      for (let i = 0; i < 10; i++) expect((await rawRequest(server.url, 'GET', '/fast', { headers: from('10.0.0.9') })).status).to.equal(200);
      lag = 150;
      // A single long turn is not overload: nothing is refused until the lag has lasted sustainMs.
      expect((await rawRequest(server.url, 'GET', '/fast', { headers: from('10.0.0.9') })).status).to.equal(200);
      clock += 499;
      expect((await rawRequest(server.url, 'GET', '/fast', { headers: from('10.0.0.9') })).status).to.equal(200);
      clock += 1;
      expect((await rawRequest(server.url, 'GET', '/fast', { headers: from('10.0.0.9') })).status).to.equal(503);
      expect((await rawRequest(server.url, 'GET', '/fast', { headers: from('10.0.0.10') })).status).to.equal(200);
      lag = 400;
      expect((await rawRequest(server.url, 'GET', '/fast', { headers: from('10.0.0.11') })).status).to.equal(503);
      // Shedding makes the lag fall at once: it goes on for holdMs all the same, then until the lag is below half
      // the bound (not merely below the bound).
      lag = 40;
      expect((await rawRequest(server.url, 'GET', '/fast', { headers: from('10.0.0.9') })).status).to.equal(503);
      clock += 1999;
      lag = 80;
      // A new second: the client's first requests in it pass, then it is heavy again and still refused.
      for (let i = 0; i < 3; i++) expect((await rawRequest(server.url, 'GET', '/fast', { headers: from('10.0.0.9') })).status).to.equal(200);
      expect((await rawRequest(server.url, 'GET', '/fast', { headers: from('10.0.0.9') })).status).to.equal(503);
      clock += 1; // the hold is over, and the lag fell below half the bound meanwhile: served again
      expect((await rawRequest(server.url, 'GET', '/fast', { headers: from('10.0.0.9') })).status).to.equal(200);
      // Lagging again starts the wait again; while the lag stays beyond the bound, shedding outlasts the hold.
      lag = 150;
      clock += 1000;
      for (let i = 0; i < 3; i++) expect((await rawRequest(server.url, 'GET', '/fast', { headers: from('10.0.0.9') })).status).to.equal(200);
      clock += 500;
      expect((await rawRequest(server.url, 'GET', '/fast', { headers: from('10.0.0.9') })).status).to.equal(503);
      clock += 3000;
      for (let i = 0; i < 3; i++) await rawRequest(server.url, 'GET', '/fast', { headers: from('10.0.0.9') });
      expect((await rawRequest(server.url, 'GET', '/fast', { headers: from('10.0.0.9') })).status).to.equal(503);
      lag = 0;
      expect((await rawRequest(server.url, 'GET', '/fast', { headers: from('10.0.0.9') })).status).to.equal(200);
    });

    it('does not read a refused keep-alive connection again for Retry-After seconds', async () => {
      lag = 0;
      clock += 1000;
      expect((await rawRequest(server.url, 'GET', '/fast', { headers: from('10.0.0.12') })).status).to.equal(200);
      lag = 400;
      expect((await rawRequest(server.url, 'GET', '/fast', { headers: from('10.0.0.12') })).status).to.equal(200);
      clock += 600;
      const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      let text = '';
      let secondAt = 0;
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
        if (!secondAt && (text.match(/HTTP\/1\.1 \d{3}/g) ?? []).length >= 2) secondAt = Date.now();
      });
      const started = Date.now();
      socket.write('GET /fast HTTP/1.1\r\nHost: x\r\n\r\n');
      await eventually(async () => text, (t) => /HTTP\/1\.1 \d{3}/.test(t)); // the first request answered while the loop lags
      lag = 0;
      clock += 2000; // past the hold: the second request is refused only by not being read yet
      socket.write('GET /fast HTTP/1.1\r\nHost: x\r\n\r\n');
      while (!secondAt && Date.now() - started < 5000) await new Promise((resolve) => setTimeout(resolve, 20));
      socket.destroy();
      const answers = (text.match(/HTTP\/1\.1 \d{3}/g) ?? []).map((line) => ({ line }));
      expect(answers.map((a) => a.line)).to.deep.equal(['HTTP/1.1 503', 'HTTP/1.1 200']);
      expect(secondAt - started).to.be.at.least(900);
    });
  });

  describe('a keep-alive connection refused again and again', () => {
    it('is held once per refusal, each hold leaving nothing behind on the connection (no listener leak)', async () => {
      // Always lagging: every request is refused; a short hold so that many refusals take little time.
      const shedder = new LoadShedder({ lagMs: () => 1000, maxLagMs: 100, maxInFlight: 100, heavyClientMinRequests: 1, sustainMs: 0, retryAfterSeconds: 0.02, trustProxy: false });
      const server = await serve([async (ctx) => void (ctx.body = { ok: true })], { shedder, logger: captureLogger().logger });
      const warnings: string[] = [];
      const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
      process.on('warning', onWarning);
      const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
      try {
        await new Promise((resolve) => socket.once('connect', resolve));
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
        const answers = () => (text.match(/HTTP\/1\.1 \d{3}/g) ?? []).length;
        for (let i = 1; i <= 15; i++) {
          socket.write('GET /fast HTTP/1.1\r\nHost: x\r\n\r\n');
          const started = Date.now();
          while (answers() < i && Date.now() - started < 2000) await new Promise((resolve) => setTimeout(resolve, 5));
        }
        await new Promise((resolve) => setImmediate(resolve));
        expect(text.match(/HTTP\/1\.1 \d{3}/g)).to.deep.equal(Array(15).fill('HTTP/1.1 503'));
        expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).to.deep.equal([]);
      } finally {
        process.off('warning', onWarning);
        socket.destroy();
        await server.close(100);
      }
    });
  });

  describe('on the running service', () => {
    it('while the event loop stays behind, answers the client flooding it with 503 at once instead of serving everything late', async () => {
      const f = await startAdminFixture({ env: { LOAD_SHED_LAG_MS: '100' } });
      try {
        // Distinct URLs (a parameter the route does not know), so none is answered from the response cache.
        let n = 0;
        const url = () => `${f.service.url}/public/p/${f.project.projectId}/v1/master-entities?locale=en&n=${n++}`;
        // Two seconds of a busy process: 150 ms of work, then a moment for I/O, again and again.
        let busy = true;
        const work = (async () => {
          const end = Date.now() + 2000;
          while (Date.now() < end) {
            const until = Date.now() + 150;
            while (Date.now() < until) {
              // busy
            }
            await new Promise((resolve) => setImmediate(resolve));
          }
          busy = false;
        })();
        const statuses: number[] = [];
        const retryAfter = new Set<string | null>();
        // A flood: 32 clients' worth of requests from one address.
        await Promise.all(
          Array.from({ length: 32 }, async () => {
            while (busy) {
              const response = await fetch(url());
              await response.arrayBuffer();
              statuses.push(response.status);
              if (response.status === 503) retryAfter.add(response.headers.get('retry-after'));
            }
          }),
        );
        await work;
        expect(statuses.filter((s) => s !== 200 && s !== 503), statuses.join(',')).to.deep.equal([]);
        expect(statuses.filter((s) => s === 503).length, statuses.join(',')).to.be.greaterThan(0);
        expect([...retryAfter]).to.deep.equal(['1']);
        // Operators see it: the refusals are counted, by reason. At least the ones this flood saw: the suite's
        // response-validation hook fetches the OpenAPI document from the same service, and that request may be
        // refused too.
        const metrics = await (await fetch(`${f.service.url}/metrics`)).text();
        const shed = /^annals_http_load_shed_total\{reason="lag"\} (\d+)$/m.exec(metrics);
        expect(Number(shed?.[1])).to.be.at.least(statuses.filter((s) => s === 503).length);
      } finally {
        await f.stop();
      }
    });

    it('cuts a client that is slow to send its headers after HTTP_HEADERS_TIMEOUT_MS', async () => {
      const f = await startAdminFixture({ env: { HTTP_KEEP_ALIVE_TIMEOUT_MS: '1000', HTTP_HEADERS_TIMEOUT_MS: '1500' } });
      try {
        const { port } = new URL(f.service.url);
        const started = Date.now();
        const socket = net.connect(Number(port), '127.0.0.1');
        await new Promise((resolve) => socket.once('connect', resolve));
        socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
        const drip = setInterval(() => socket.write('X-Slow: 1\r\n'), 200);
        const reply = await new Promise<string>((resolve) => {
          let text = '';
          socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
          socket.on('close', () => resolve(text));
          socket.on('error', () => undefined);
        });
        clearInterval(drip);
        const elapsed = Date.now() - started;
        expect(reply.startsWith('HTTP/1.1 408'), reply).to.equal(true);
        expect(elapsed).to.be.within(1400, 4000);
      } finally {
        await f.stop();
      }
    });

    it('closes connections beyond HTTP_MAX_CONNECTIONS_PER_CLIENT from one address', async () => {
      const f = await startAdminFixture({ env: { HTTP_MAX_CONNECTIONS_PER_CLIENT: '5' } });
      try {
        const { port } = new URL(f.service.url);
        const sockets: net.Socket[] = [];
        const outcomes = await Promise.all(
          Array.from({ length: 7 }, () => new Promise<string>((resolve) => {
            const socket = net.connect(Number(port), '127.0.0.1');
            sockets.push(socket);
            socket.once('connect', () => {
              socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
            });
            socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1').split('\r\n', 1)[0]!));
            socket.once('close', () => resolve('closed'));
            socket.once('error', () => resolve('closed'));
          })),
        );
        for (const socket of sockets) socket.destroy();
        expect(outcomes.filter((o) => o === 'HTTP/1.1 200 OK')).to.have.length(5);
        expect(outcomes.filter((o) => o === 'closed')).to.have.length(2);
      } finally {
        await f.stop();
      }
    });
  });
});

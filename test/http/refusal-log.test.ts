import net from 'node:net';
import { expect } from 'chai';
import { SampledRefusalLog } from '../../src/http/refusal-log.ts';
import { startAdminFixture } from '../admin/support.ts';
import { eventually } from '../support/engine-fixture.ts';
import { captureLogger } from './support.ts';

/** A request whose body never finishes arriving: it stays in progress, holding its slot. */
function halfSentLogin(port: number, forwardedFor?: string): net.Socket {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.write(`POST /admin/v1/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\n${forwardedFor ? `X-Forwarded-For: ${forwardedFor}\r\n` : ''}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"email":`);
  return socket;
}

/**
 * Issue 41 item 7: requests refused before any routing (load shedding's 503s, the per-client limit's 429s)
 * are in the request log, sampled: a flood of them cannot flood the log.
 */
describe('HTTP: refused requests in the request log, sampled', function () {
  this.timeout(60_000);

  it('writes the first refusals of each second one by one, then one line counting the rest', () => {
    const captured = captureLogger();
    let now = 10_000;
    const log = new SampledRefusalLog(captured.logger, { perSecond: 3, now: () => now });
    for (let i = 0; i < 10; i++) log.record({ method: 'GET', url: `/public/v1/llms.txt?api_key=service_pub_secret&n=${i}`, status: 503, reason: 'lag', client: '192.0.2.1' });
    log.record({ method: 'POST', url: '/admin/v1/auth/login', status: 429, reason: 'client-in-flight', client: '192.0.2.2' });
    now += 1000;
    log.record({ method: 'GET', url: '/healthz', status: 503, reason: 'in-flight', client: '192.0.2.3' });
    log.flush();
    const lines = captured.lines().map(({ level, msg, method, path, status, refused, client, count, byReason }) => ({ level, msg, method, path, status, refused, client, count, byReason }));
    const one = (n: number) => ({ level: 'warn', msg: 'request', method: 'GET', path: `/public/v1/llms.txt?n=${n}`, status: 503, refused: 'lag', client: '192.0.2.1', count: undefined, byReason: undefined });
    expect(lines).to.deep.equal([
      one(0),
      one(1),
      one(2),
      { level: 'warn', msg: 'requests refused, not logged one by one', method: undefined, path: undefined, status: undefined, refused: undefined, client: undefined, count: 8, byReason: { 'lag 503': 7, 'client-in-flight 429': 1 } },
      { level: 'warn', msg: 'request', method: 'GET', path: '/healthz', status: 503, refused: 'in-flight', client: '192.0.2.3', count: undefined, byReason: undefined },
    ]);
    // The credential in the query string is never written.
    expect(captured.text()).to.not.include('service_pub_secret');
  });

  it('logs a request shed with 503 (HTTP_MAX_IN_FLIGHT) and one refused with 429 (requests in progress of one forwarded client) on the running service', async () => {
    const captured = captureLogger('info');
    const f = await startAdminFixture({ logger: captured.logger, env: { HTTP_MAX_IN_FLIGHT: '3', HTTP_MAX_CONNECTIONS_PER_CLIENT: '2', TRUST_PROXY: 'true' } });
    const sockets: net.Socket[] = [];
    try {
      const port = Number(new URL(f.service.url).port);
      const refused = () => captured.lines().filter((l) => l['msg'] === 'request' && l['refused'] !== undefined);
      const masters = `/public/p/${f.project.projectId}/v1/master-entities`;
      const read = async (client: string) => {
        const response = await fetch(`${f.service.url}${masters}`, { headers: { 'x-forwarded-for': client } });
        await response.arrayBuffer();
        return response.status;
      };
      // Two in progress from 203.0.113.66: its third is refused 429 (read again until both have reached the server).
      sockets.push(halfSentLogin(port, '203.0.113.66'), halfSentLogin(port, '203.0.113.66'));
      await eventually(() => read('203.0.113.66'), (status) => status === 429, 10_000, 'a third request of 203.0.113.66 refused');
      await eventually(async () => refused(), (lines) => lines.length === 1, 10_000);
      expect(refused()[0]).to.deep.include({ level: 'warn', method: 'GET', path: masters, status: 429, refused: 'client-in-flight', client: '203.0.113.66' });
      // A third request in progress from another client fills HTTP_MAX_IN_FLIGHT: the next one is shed, 503.
      sockets.push(halfSentLogin(port, '198.51.100.7'));
      await eventually(() => read('198.51.100.8'), (status) => status === 503, 10_000, 'a request of 198.51.100.8 shed');
      // (The suite's response-validation hook fetches the OpenAPI document meanwhile: it may be shed too.)
      const shedLine = await eventually(async () => refused().find((l) => l['client'] === '198.51.100.8'), (line) => line !== undefined, 10_000);
      expect(shedLine).to.deep.include({ level: 'warn', method: 'GET', path: `/public/p/${f.project.projectId}/v1/master-entities`, status: 503, refused: 'in-flight', client: '198.51.100.8' });
    } finally {
      for (const socket of sockets) socket.destroy();
      await f.stop();
    }
  });
});

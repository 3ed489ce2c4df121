import { expect } from 'chai';
import { DrainState } from '../../src/http/drain-state.ts';
import { healthRoutes } from '../../src/http/health-routes.ts';
import { errorEnvelope } from '../../src/http/middleware/error-envelope.ts';
import { readinessFromChecks } from '../../src/http/readiness.ts';
import type { Readiness, ReadinessProbe } from '../../src/http/readiness.ts';
import type { RunningHttpServer } from '../../src/http/http-server.ts';
import { captureLogger, serve } from './support.ts';

describe('health routes', () => {
  let server: RunningHttpServer;
  let drain: DrainState;
  let probe: ReadinessProbe;
  const log = captureLogger();

  beforeEach(async () => {
    drain = new DrainState();
    probe = async () => ({ ready: true, checks: { eventStore: { ok: true } } });
    const router = healthRoutes({ drain, readiness: () => probe(), timeoutMs: 300, logger: log.logger });
    server = await serve([errorEnvelope({ logger: log.logger }), router.routes()], { logger: log.logger });
  });

  afterEach(() => server.close(1000));

  async function get(path: string): Promise<{ status: number; body: any; headers: Headers }> {
    const response = await fetch(`${server.url}${path}`);
    return { status: response.status, headers: response.headers, body: await response.json() };
  }

  describe('GET /healthz', () => {
    it('answers 200 {status: ok}, not cacheable', async () => {
      const { status, body, headers } = await get('/healthz');
      expect(status).to.equal(200);
      expect(body).to.deep.equal({ status: 'ok' });
      expect(headers.get('cache-control')).to.equal('no-store');
      expect(headers.get('content-type')).to.match(/^application\/json/);
    });

    it('answers 200 even when not ready', async () => {
      probe = async () => ({ ready: false, checks: { eventStore: { ok: false } } });
      expect((await get('/healthz')).status).to.equal(200);
    });

    it('answers 503 {status: draining} once draining', async () => {
      drain.begin();
      const { status, body, headers } = await get('/healthz');
      expect(status).to.equal(503);
      expect(body).to.deep.equal({ status: 'draining' });
      expect(headers.get('cache-control')).to.equal('no-store');
    });
  });

  describe('GET /readyz', () => {
    it('answers 200 with the checks when ready', async () => {
      probe = async () => ({ ready: true, checks: { eventStore: { ok: true }, projections: { ok: true, lagEvents: 3 } } });
      const { status, body, headers } = await get('/readyz');
      expect(status).to.equal(200);
      expect(body).to.deep.equal({ ready: true, checks: { eventStore: { ok: true }, projections: { ok: true, lagEvents: 3 } } });
      expect(headers.get('cache-control')).to.equal('no-store');
    });

    it('answers 503 with the checks when not ready', async () => {
      const report: Readiness = {
        ready: false,
        checks: { eventStore: { ok: true }, projections: { ok: false, detail: 'behind', lagEvents: 50_000 } },
      };
      probe = async () => report;
      const { status, body } = await get('/readyz');
      expect(status).to.equal(503);
      expect(body).to.deep.equal(report);
    });

    it('is not ready when a check failed, whatever the probe says', async () => {
      probe = async () => ({ ready: true, checks: { readModels: { ok: false } } });
      expect((await get('/readyz')).status).to.equal(503);
    });

    it('answers 503 (never 500) with a failed check when the probe throws, without URL credentials', async () => {
      probe = async () => {
        throw new Error('connect ECONNREFUSED for mongodb://annals:hunter2@db:27017/annals');
      };
      const { status, body } = await get('/readyz');
      expect(status).to.equal(503);
      expect(body.ready).to.equal(false);
      expect(body.checks.readiness.ok).to.equal(false);
      expect(body.checks.readiness.detail).to.include('ECONNREFUSED');
      expect(JSON.stringify(body)).not.to.include('hunter2');
    });

    it('answers 503 when the probe hangs past its timeout', async () => {
      probe = () => new Promise(() => {});
      const started = Date.now();
      const { status, body } = await get('/readyz');
      expect(status).to.equal(503);
      expect(body.checks.readiness.detail).to.include('timed out');
      expect(Date.now() - started).to.be.below(2000);
    });

    it('answers 503 when the probe returns something malformed', async () => {
      probe = async () => ({ ready: 'yes' }) as unknown as Readiness;
      const { status, body } = await get('/readyz');
      expect(status).to.equal(503);
      expect(body.checks.readiness.ok).to.equal(false);
    });

    it('answers 503 while draining, without asking the probe', async () => {
      let asked = false;
      probe = async () => {
        asked = true;
        return { ready: true, checks: {} };
      };
      drain.begin();
      const { status, body } = await get('/readyz');
      expect(status).to.equal(503);
      expect(body.checks.draining.ok).to.equal(false);
      expect(asked).to.equal(false);
    });
  });

  describe('readinessFromChecks', () => {
    it('marks a throwing check failed with a short message and keeps the others', async () => {
      const readiness = readinessFromChecks({
        eventStore: async () => ({ ok: true }),
        readModels: async () => {
          throw new Error(`disk I/O error ${'x'.repeat(500)}`);
        },
        projections: () => ({ ok: true, lagEvents: 0 }),
      });
      probe = readiness;
      const { status, body } = await get('/readyz');
      expect(status).to.equal(503);
      expect(body.ready).to.equal(false);
      expect(body.checks.eventStore).to.deep.equal({ ok: true });
      expect(body.checks.projections).to.deep.equal({ ok: true, lagEvents: 0 });
      expect(body.checks.readModels.ok).to.equal(false);
      expect(body.checks.readModels.detail).to.match(/^Error: disk I\/O error/);
      expect(body.checks.readModels.detail.length).to.be.at.most(200);
    });

    it('is ready when every check is ok', async () => {
      probe = readinessFromChecks({ a: async () => ({ ok: true }), b: () => ({ ok: true }) });
      const { status, body } = await get('/readyz');
      expect(status).to.equal(200);
      expect(body).to.deep.equal({ ready: true, checks: { a: { ok: true }, b: { ok: true } } });
    });

    it('fails a check that hangs past its own timeout', async () => {
      const readiness = readinessFromChecks(
        { slow: () => new Promise(() => {}), fast: async () => ({ ok: true }) },
        { timeoutMs: 50 },
      );
      const report = await readiness();
      expect(report.ready).to.equal(false);
      expect(report.checks['slow']?.ok).to.equal(false);
      expect(report.checks['slow']?.detail).to.include('timed out');
      expect(report.checks['fast']).to.deep.equal({ ok: true });
    });
  });
});

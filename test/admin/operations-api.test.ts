import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { expect } from 'chai';
import { collect } from '../../src/event-store/event-store.ts';
import { tempDir } from '../support/temp-dir.ts';
import { OPERATOR, startAdminFixture, startApiReplica, type AdminFixture } from './support.ts';
import { adminSession, PASSWORD, until } from '../webhooks/support.ts';
import type { RunningService } from '../../src/service/service.ts';

/** A poisoned projection over HTTP: shown with its failing event, retried, skipped with a reason; a rebuild with progress. */
describe('admin API: operations (projections, outboxes, version and adapters)', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let session: { token: string; headers: Record<string, string> };
  const call = (method: string, route: string, body?: unknown) => f.call(method, route, { token: session.token, headers: session.headers, ...(body === undefined ? {} : { body }) });
  const overview = async () => (await call('GET', '/operations')).body as { version: string; adapters: Record<string, string>; projections: any[]; outboxes: Array<{ name: string; pending: number }> };
  const projection = async (name: string) => (await overview()).projections.find((p) => p.name === name);

  before(async () => {
    f = await startAdminFixture({ plan: 'business' });
    session = await adminSession(f);
  });
  after(async () => {
    await f?.stop();
  });

  it('answers the version, the adapters, every projection live and the project\'s outbox backlogs', async () => {
    const response = await call('GET', '/operations');
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    expect(response.headers.get('cache-control')).to.equal('no-store');
    const body = response.body;
    // The service holds one tenant and OPERATOR_TENANT_IDS is unset: its tenant admin operates it.
    expect(body.operator).to.equal(true);
    expect(body.version).to.match(/^\d+\.\d+\.\d+/);
    expect(body.adapters).to.deep.equal({ eventStore: 'sqlite', readModels: 'sqlite', blobs: 'local-folder' });
    expect(body.projections.map((p: { name: string }) => p.name)).to.include.members(['audit-trail', 'access', 'content', 'webhooks', 'contact-forms']);
    for (const p of body.projections) expect(p.active?.failure ?? null, p.name).to.equal(null);
    expect(body.outboxes).to.deep.equal([{ name: 'webhooks', pending: 0 }, { name: 'contact-notices', pending: 0 }, { name: 'media-purge', pending: 0 }]);
  });

  it('is for tenant_admin sessions only: an agent key and an editor get 403', async () => {
    expect((await f.call('GET', '/operations')).status).to.equal(403);
    const email = `editor-${Math.random().toString(36).slice(2, 8)}@example.com`;
    expect((await call('POST', '/users', { email, password: PASSWORD, role: 'tenant_user' })).status).to.equal(201);
    const login = await f.call('POST', '/auth/login', { body: { email, password: PASSWORD } });
    const editor = await f.call('GET', '/operations', { token: login.body.token, headers: session.headers });
    expect([editor.status, editor.body.error.code]).to.deep.equal([403, 'FORBIDDEN']);
  });

  it('shows a poisoned projection with its failing event; retry tries it again; skip needs a reason, records it with the caller and resumes', async () => {
    // An event some other tool wrote, without the metadata every event of ours carries.
    const poisonId = randomUUID();
    await f.service.stores.events.append(`imported-${poisonId}`, [{ id: poisonId, type: 'legacy.imported', data: {}, metadata: {} as never }], 'no_stream');
    const paused = await until(() => projection('audit-trail'), (p) => p.state === 'paused', 10_000, 'audit-trail paused');
    expect(paused.active.failure).to.include({ eventId: poisonId, eventType: 'legacy.imported', streamId: `imported-${poisonId}` });
    expect(paused.active.failure.message).to.be.a('string').and.not.equal('');

    const retried = await call('POST', '/operations/projections/audit-trail/retry');
    expect(retried.status, JSON.stringify(retried.body)).to.equal(200);
    expect(retried.body.retrying).to.include({ eventId: poisonId });
    // The same event fails again: paused again.
    await until(() => projection('audit-trail'), (p) => p.state === 'paused', 10_000, 'paused again');

    const noReason = await call('POST', '/operations/projections/audit-trail/skip', { reason: '  ' });
    expect([noReason.status, noReason.body.error.code]).to.deep.equal([400, 'VALIDATION_ERROR']);
    const skipped = await call('POST', '/operations/projections/audit-trail/skip', { reason: 'legacy import without metadata' });
    expect(skipped.status, JSON.stringify(skipped.body)).to.equal(200);
    expect(skipped.body.skipped).to.include({ eventId: poisonId });
    const resumed = await until(() => projection('audit-trail'), (p) => p.state === 'live' || p.state === 'behind', 10_000, 'resumed');
    expect(resumed.skips).to.be.at.least(1);
    const audit = await collect(f.service.log.readStream('operations-projections'));
    const record = audit.find((e) => (e.data as { eventId: string }).eventId === poisonId)!;
    expect(record.data).to.deep.include({ projection: 'audit-trail', reason: 'legacy import without metadata' });
    expect(record.metadata.actor).to.deep.equal({ type: 'user', id: f.project.userId });

    const notPaused = await call('POST', '/operations/projections/audit-trail/retry');
    expect([notPaused.status, notPaused.body.error.code]).to.deep.equal([409, 'CONFLICT']);
    const unknown = await call('POST', '/operations/projections/nope/retry');
    expect([unknown.status, unknown.body.error.code]).to.deep.equal([404, 'NOT_FOUND']);
  });

  it('rebuilds a projection into a new generation in the background, with its progress shown until it is done', async () => {
    const before = await projection('audit-trail');
    const started = await call('POST', '/operations/projections/audit-trail/rebuild');
    expect(started.status, JSON.stringify(started.body)).to.equal(202);
    expect(started.body).to.include({ projection: 'audit-trail', state: 'running' });
    const done = await until(() => projection('audit-trail'), (p) => p.rebuild?.state === 'done', 20_000, 'rebuild done');
    expect(done.rebuild.fraction).to.equal(1);
    expect(done.rebuild.events).to.be.greaterThan(0);
    expect(done.active.generation).to.be.greaterThan(before.active.generation);
    expect(done.rebuild.generation).to.equal(done.active.generation);
  });
});

/**
 * Projections are shared by every tenant on the service: a tenant admin who is not an operator sees their state
 * and lag, but not the failing event's stream, id or message (another tenant's), and may not retry, skip or rebuild.
 */
describe('admin API: operations are for the service\'s operators when it holds more than one tenant', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let dataDir: string;
  const sessionOf = async (fixture: AdminFixture, email: string, projectId: string) => {
    const login = await fixture.call('POST', '/auth/login', { body: { email, password: PASSWORD } });
    expect(login.status, JSON.stringify(login.body)).to.equal(200);
    return (method: string, route: string, body?: unknown) => fixture.call(method, route, { token: login.body.token, headers: { 'X-Project-Id': projectId }, ...(body === undefined ? {} : { body }) });
  };

  after(async () => {
    await f?.stop();
  });

  it('a second tenant ends the single-tenant default; OPERATOR_TENANT_IDS names who operates', async () => {
    dataDir = path.join(tempDir(), 'data');
    f = await startAdminFixture({ plan: 'business', dataDir });
    const first = { email: f.project.adminEmail, projectId: f.project.projectId, tenantId: f.project.tenantId };
    const other = await f.access.bootstrap(OPERATOR, { projectName: 'Other tenant', plan: 'free', adminEmail: `other-${randomUUID().slice(0, 8)}@example.com`, adminPassword: PASSWORD });
    await f.service.supervisor!.waitFor(other.position, 5000);

    const poisonId = randomUUID();
    await f.service.stores.events.append(`imported-${poisonId}`, [{ id: poisonId, type: 'legacy.imported', data: {}, metadata: {} as never }], 'no_stream');
    let admin = await sessionOf(f, first.email, first.projectId);
    const seen = await until(async () => (await admin('GET', '/operations')).body, (b) => b.projections.find((p: { name: string }) => p.name === 'audit-trail')?.state === 'paused', 10_000, 'paused');
    expect(seen.operator).to.equal(false);
    const failure = seen.projections.find((p: { name: string }) => p.name === 'audit-trail').active.failure;
    expect(failure).to.include({ eventType: 'legacy.imported', eventId: null, streamId: null, message: null });
    expect(failure.position).to.be.a('string');
    for (const [action, body] of [['retry', undefined], ['skip', { reason: 'legacy import' }], ['rebuild', undefined]] as const) {
      const refused = await admin('POST', `/operations/projections/audit-trail/${action}`, body);
      expect([refused.status, refused.body.error.code], action).to.deep.equal([403, 'FORBIDDEN']);
      expect(refused.body.error.hint).to.include('OPERATOR_TENANT_IDS');
    }

    // The same log, restarted with the other tenant named: its admin operates, the first one still does not.
    await f.stop();
    f = await startAdminFixture({ plan: 'business', dataDir, env: { OPERATOR_TENANT_IDS: other.tenantId } });
    admin = await sessionOf(f, first.email, first.projectId);
    expect((await admin('GET', '/operations')).body.operator).to.equal(false);
    const operator = await sessionOf(f, other.adminEmail, other.projectId);
    const overview = await until(async () => (await operator('GET', '/operations')).body, (b) => b.projections.find((p: { name: string }) => p.name === 'audit-trail')?.state === 'paused', 10_000, 'paused after restart');
    expect(overview.operator).to.equal(true);
    expect(overview.projections.find((p: { name: string }) => p.name === 'audit-trail').active.failure).to.include({ eventId: poisonId, streamId: `imported-${poisonId}` });
    const skipped = await operator('POST', '/operations/projections/audit-trail/skip', { reason: 'legacy import without metadata' });
    expect(skipped.status, JSON.stringify(skipped.body)).to.equal(200);
    expect(skipped.body.skipped).to.include({ eventId: poisonId });
  });
});

/**
 * Production runs the console against API-only replicas (ROLES=api) and the projectors in a process of their
 * own: the replica shows the projections from the stores and operates them through the stores, which the
 * projector process follows.
 */
describe('admin API: operations through an API-only replica (ROLES=api)', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let replica: RunningService;

  before(async () => {
    const dataDir = path.join(tempDir(), 'data');
    f = await startAdminFixture({ plan: 'business', dataDir });
    replica = await startApiReplica(dataDir);
  });
  after(async () => {
    await replica?.stop();
    await f?.stop();
  });

  it('shows a projection the projector process paused, and a skip made through the replica resumes it there', async () => {
    const session = await adminSession(f);
    const call = async (method: string, route: string, body?: unknown) => {
      const response = await fetch(`${replica.url}/admin/v1${route}`, { method, headers: { authorization: `Bearer ${session.token}`, ...session.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: response.status, body: (await response.json()) as any };
    };
    const auditTrail = async () => ((await call('GET', '/operations')).body.projections as Array<{ name: string; state: string; skips: number; active: { failure: { eventId: string } | null } }>).find((p) => p.name === 'audit-trail')!;
    const overview = await call('GET', '/operations');
    expect(overview.status, JSON.stringify(overview.body)).to.equal(200);
    expect(overview.body.operator).to.equal(true);

    const poisonId = randomUUID();
    await f.service.stores.events.append(`imported-${poisonId}`, [{ id: poisonId, type: 'legacy.imported', data: {}, metadata: {} as never }], 'no_stream');
    const paused = await until(auditTrail, (p) => p.state === 'paused', 10_000, 'paused, as the replica sees it');
    expect(paused.active.failure).to.include({ eventId: poisonId });
    const skipped = await call('POST', '/operations/projections/audit-trail/skip', { reason: 'legacy import without metadata' });
    expect(skipped.status, JSON.stringify(skipped.body)).to.equal(200);
    // The projector runs in the other process: it finds the skip in the store and goes on.
    const head = (await f.service.stores.events.headPosition())!;
    // (A wait on a paused projector answers false at once: asked again until it has resumed.)
    await until(() => f.service.supervisor!.waitFor(head, 1_000, ['audit-trail']), (folded) => folded, 10_000, 'resumed in the projector process');
    expect((await auditTrail()).skips).to.be.at.least(1);
  });
});

import { expect } from 'chai';
import { pino } from 'pino';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ManualClock } from '../../src/clock.ts';
import { ScheduledPublisher } from '../../src/application/scheduled-publisher.ts';
import { ReadModelReader } from '../../src/read-models/read-model-reader.ts';
import { articleFormSet, startAdminFixture, type AdminFixture } from './support.ts';
import { adminSession, failure, PASSWORD } from '../mcp/support.ts';

type Caller = { token: string; headers?: Record<string, string> };

/**
 * Four eyes between people, against a started server: an agent key acts for the person who issued it, so a
 * tenant_admin who issues a key, writes and submits with it, then publishes with their own session is refused
 * (the bypass of issue 42), through the admin API, through MCP, and through the scheduled publishing job.
 */
describe('four eyes between people: a key acts for the person who issued it', function () {
  this.timeout(90_000);
  const clock = new ManualClock('2026-11-22T09:00:00.000Z');
  let f: AdminFixture;
  let admin: Caller;
  let adminId: string;
  let secondAdmin: Caller;
  let formSetId: string;
  let slugs = 0;
  const project = () => ({ 'X-Project-Id': f.project.projectId });

  const call = async (method: string, route: string, caller: Caller, body?: unknown, status?: number) => {
    const answer = await f.call(method, route, { token: caller.token, headers: caller.headers ?? {}, ...(body === undefined ? {} : { body }) });
    if (status !== undefined) expect(answer.status, `${method} ${route}: ${JSON.stringify(answer.body)}`).to.equal(status);
    return answer;
  };
  const policy = (body: { humanApproval?: boolean; fourEyes?: boolean }) => call('PUT', '/project/approval-policy', admin, body, 200);
  /** A key the caller issues through POST /keys, as a caller. */
  const issueKey = async (issuer: Caller, name: string): Promise<Caller & { id: string }> => {
    const issued = await call('POST', '/keys', issuer, { type: 'agent', scope: 'full', name }, 201);
    return { token: issued.body.key, id: issued.body.id };
  };
  /** A new entry saved and submitted by the caller: its revision. */
  const inReview = async (writer: Caller) => {
    const created = await call('POST', `/form-sets/${formSetId}/entries`, writer, { slug: `people-${++slugs}`, fields: { title: `Entry ${slugs}` } }, 201);
    await call('POST', `/revisions/${created.body.revision.id}/submit`, writer, {}, 200);
    return { entryId: created.body.entry.id as string, id: created.body.revision.id as string, revision: created.body.revision.revision as number };
  };

  before(async () => {
    f = await startAdminFixture({ clock, env: { SCHEDULED_PUBLISH_INTERVAL_MS: '86400000' } });
    const session = await adminSession(f);
    admin = { token: session, headers: project() };
    const created = await call('POST', '/users', admin, { email: 'second-admin@example.com', password: PASSWORD, role: 'tenant_admin' }, 201);
    expect(created.body.id).to.be.a('string');
    const login = await f.call('POST', '/auth/login', { body: { email: 'second-admin@example.com', password: PASSWORD }, token: '' });
    secondAdmin = { token: login.body.token, headers: project() };
    adminId = (await f.call('GET', '/users', { token: admin.token, headers: project() })).body.items.find((u: { email: string }) => u.email === f.project.adminEmail).id;
    formSetId = (await call('POST', '/form-sets', admin, articleFormSet, 201)).body.id;
  });
  after(async () => {
    await f?.stop();
  });
  afterEach(async () => {
    await policy({ humanApproval: false, fourEyes: false });
  });

  it('every agent key names who issued it: the admin who called POST /keys, the operator who ran bootstrap', async () => {
    const key = await issueKey(admin, 'Writer bot');
    const { items } = (await call('GET', '/keys', admin, undefined, 200)).body;
    expect(items.find((k: { id: string }) => k.id === key.id).issuedBy).to.deep.equal({ type: 'user', id: adminId });
    expect(items.find((k: { id: string }) => k.id === f.project.agentKey.keyId).issuedBy).to.deep.equal({ type: 'operator', id: 'test' });
    expect(items.find((k: { type: string }) => k.type === 'public').issuedBy).to.equal(null);
  });

  it("the bypass is refused: an admin's key writes and submits, the admin's session may not publish or approve it (403 FOUR_EYES_REQUIRED), nor another key of the admin's; another admin may", async () => {
    await policy({ fourEyes: true });
    const own = await issueKey(admin, 'My bot');
    const target = await inReview(own);

    const published = await call('POST', `/revisions/${target.id}/publish`, admin, { revision: target.revision }, 403);
    expect(published.body.error).to.include({ code: 'FOUR_EYES_REQUIRED', retryable: false });
    expect(published.body.error.message).to.contain('you are the last editor and the submitter of revision 1 (counting what was written or submitted with agent keys the same person issued');
    expect(published.body.error.hint).to.contain('approvalPolicy.fourEyes');
    expect((await call('POST', `/revisions/${target.id}/approve`, admin, {}, 403)).body.error.code).to.equal('FOUR_EYES_REQUIRED');
    const other = await issueKey(admin, 'My other bot');
    expect((await call('POST', `/revisions/${target.id}/publish`, other, { revision: target.revision }, 403)).body.error.message).to.match(/this agent key acts for user .*, who issued it/);
    // Scheduling in bulk is approving: refused the same way, revision by revision.
    const bulk = await call('POST', '/revisions/bulk-schedule', admin, { revisionIds: [target.id], publishAt: '2026-12-01T00:00:00Z' }, 403);
    expect(bulk.body.results[0].error.code).to.equal('FOUR_EYES_REQUIRED');

    const byOther = await call('POST', `/revisions/${target.id}/publish`, secondAdmin, { revision: target.revision }, 200);
    expect(byOther.body.status).to.equal('published');
  });

  it('through MCP: publish_revision with a key of the admin who wrote the revision is refused with the code and the setting', async () => {
    await policy({ fourEyes: true });
    const target = await inReview(admin);
    const key = await issueKey(admin, 'MCP bot');
    const mcp = new Client({ name: 'four-eyes-people', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${f.service.url}/admin/v1/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key.token}` } } }));
    try {
      const text = await failure(mcp, 'publish_revision', { id: target.id, revision: target.revision });
      expect(text).to.match(/^FOUR_EYES_REQUIRED \(HTTP 403\): .*acts for user/);
      expect(text).to.contain('Hint: approvalPolicy.fourEyes');
    } finally {
      await mcp.close();
    }
  });

  it("fourEyes off, one's own revision approved for later, fourEyes on again: the approval is flagged, and the job does not publish it (rejected, with the rule)", async () => {
    await policy({ fourEyes: true });
    await policy({ fourEyes: false });
    const target = await inReview(admin);
    const approved = await call('POST', `/revisions/${target.id}/approve`, admin, { publishAt: '2026-11-22T10:00:00Z' }, 200);
    expect(approved.body.status).to.equal('scheduled');
    await policy({ fourEyes: true });

    const publisher = new ScheduledPublisher({ log: f.service.log, reader: new ReadModelReader(f.service.stores.readModels, { cacheMs: 0 }), clock, logger: pino({ level: 'silent' }), intervalMs: 1000 });
    clock.set('2026-11-22T10:00:01.000Z');
    expect(await publisher.runOnce()).to.equal(0);
    await f.service.supervisor!.waitFor((await f.service.log.headPosition())!, 5000);
    const after = (await call('GET', `/revisions/${target.id}`, admin, undefined, 200)).body;
    expect(after.status).to.equal('rejected');
    const publicEntry = await fetch(`${f.service.url}/public/p/${f.project.projectId}/v1/form-sets/articles/entries/people-${slugs}`);
    expect(publicEntry.status).to.equal(404);

    const history = (await call('GET', `/entries/${target.entryId}/history`, admin, undefined, 200)).body.items;
    const approval = history.find((item: { type: string }) => item.type === 'entry.revision-approved');
    expect(approval.flag).to.deep.equal({ kind: 'approved-while-policy-off', rules: ['fourEyes'] });
    const rejection = history.find((item: { type: string }) => item.type === 'entry.revision-rejected');
    expect(rejection.actor).to.deep.equal({ type: 'system', id: 'scheduler' });
    expect(rejection.flag).to.deep.equal({ kind: 'publication-refused', rules: ['fourEyes'] });
    expect(after.rejectedReason).to.match(/^Not published at 2026-11-22T10:00:00.000Z: the approval policy in force requires four eyes .* the last editor and the submitter of revision 1/);
  });

  it("a scheduled approval by another person is published by the job; with the policy off, another person's approval is not flagged", async () => {
    await policy({ fourEyes: true });
    const target = await inReview(admin);
    await call('POST', `/revisions/${target.id}/approve`, secondAdmin, { publishAt: '2026-11-22T12:00:00Z' }, 200);
    const publisher = new ScheduledPublisher({ log: f.service.log, reader: new ReadModelReader(f.service.stores.readModels, { cacheMs: 0 }), clock, logger: pino({ level: 'silent' }), intervalMs: 1000 });
    clock.set('2026-11-22T12:00:01.000Z');
    expect(await publisher.runOnce()).to.equal(1);
    await f.service.supervisor!.waitFor((await f.service.log.headPosition())!, 5000);
    const history = (await call('GET', `/entries/${target.entryId}/history`, admin, undefined, 200)).body.items;
    const published = history.find((item: { type: string }) => item.type === 'entry.revision-published');
    expect(published.actor).to.deep.equal({ type: 'system', id: 'scheduler' });
    expect(published).not.to.have.property('flag');
  });
});

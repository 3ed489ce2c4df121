import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { articleFormSet, startAdminFixture, type AdminFixture } from './support.ts';
import { adminSession, failure, ok, PASSWORD } from '../mcp/support.ts';

/**
 * The project's approval policy (humanApproval, fourEyes): off by default (the spec's workflow), set by a
 * tenant_admin session only, enforced by the entry decider on every route and tool that approves or publishes,
 * each refusal a 403 with its own code and a hint naming the setting, recorded in the audit trail.
 */
describe('approval policy: human approval and four eyes', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let admin: string;
  let secondAdmin: string;
  let editor: string;
  let formSetId: string;
  let secondAdminId: string;
  let mcp: Client;
  const projectHeader = () => ({ 'X-Project-Id': f.project.projectId });
  const as = (token: string) => ({ token, headers: projectHeader() });
  const agent = () => ({ token: f.project.agentKey.key });
  let slugs = 0;

  const signIn = async (email: string): Promise<string> => {
    const login = await f.call('POST', '/auth/login', { body: { email, password: PASSWORD }, token: '' });
    expect(login.status, JSON.stringify(login.body)).to.equal(200);
    return login.body.token;
  };
  const policy = async (body: { humanApproval?: boolean; fourEyes?: boolean }) => {
    const answer = await f.call('PUT', '/project/approval-policy', { body, ...as(admin) });
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    return answer.body;
  };
  /** A new entry whose first revision was saved and submitted by the given callers; answers its revision. */
  const inReview = async (savedBy: { token: string; headers?: Record<string, string> }, submittedBy = savedBy) => {
    const created = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug: `entry-${++slugs}`, fields: { title: `Entry ${slugs}` } }, ...savedBy });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const revision = created.body.revision;
    const submitted = await f.call('POST', `/revisions/${revision.id}/submit`, { body: {}, ...submittedBy });
    expect(submitted.status, JSON.stringify(submitted.body)).to.equal(200);
    return { entryId: created.body.entry.id as string, id: revision.id as string, revision: revision.revision as number };
  };
  const publish = (target: { id: string; revision: number }, caller: { token: string; headers?: Record<string, string> }) =>
    f.call('POST', `/revisions/${target.id}/publish`, { body: { revision: target.revision }, ...caller });

  before(async () => {
    f = await startAdminFixture();
    admin = await adminSession(f);
    for (const [email, role] of [['second-admin@example.com', 'tenant_admin'], ['editor@example.com', 'tenant_user']] as const) {
      const created = await f.call('POST', '/users', { body: { email, password: PASSWORD, role }, ...as(admin) });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      if (role === 'tenant_admin') secondAdminId = created.body.id;
    }
    secondAdmin = await signIn('second-admin@example.com');
    editor = await signIn('editor@example.com');
    const formSet = await f.call('POST', '/form-sets', { body: articleFormSet });
    formSetId = formSet.body.id;
    mcp = new Client({ name: 'approval-policy-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${f.service.url}/admin/v1/mcp`), { requestInit: { headers: { Authorization: `Bearer ${f.project.agentKey.key}` } } }));
  });
  after(async () => {
    await mcp?.close();
    await f?.stop();
  });
  afterEach(async () => {
    await policy({ humanApproval: false, fourEyes: false });
  });

  it('is off by default: an agent key saves, submits and publishes its own revision, as the spec says', async () => {
    expect((await f.call('GET', '/project/approval-policy', agent())).body).to.deep.equal({ humanApproval: false, fourEyes: false });
    const target = await inReview(agent());
    const published = await publish(target, agent());
    expect(published.status).to.equal(200);
    expect(published.body.status).to.equal('published');
  });

  it('only a tenant_admin session changes it; every change is in the audit log with who made it', async () => {
    const byAgent = await f.call('PUT', '/project/approval-policy', { body: { humanApproval: false }, ...agent() });
    expect(byAgent.status).to.equal(403);
    expect(byAgent.body.error.code).to.equal('FORBIDDEN');
    const byEditor = await f.call('PUT', '/project/approval-policy', { body: { fourEyes: false }, ...as(editor) });
    expect(byEditor.status).to.equal(403);
    expect((await f.call('PUT', '/project/approval-policy', { body: {}, ...as(admin) })).status).to.equal(400);
    expect((await f.call('PUT', '/project/approval-policy', { body: { fourEyes: 'yes' }, ...as(admin) })).status).to.equal(400);

    expect(await policy({ humanApproval: true })).to.deep.equal({ humanApproval: true, fourEyes: false });
    expect((await f.call('GET', '/project', agent())).status).to.equal(200);
    const log = await f.call('GET', '/audit-log?limit=5', as(admin));
    const change = log.body.items.find((item: { type: string }) => item.type === 'project.approval-policy-changed');
    expect(change, JSON.stringify(log.body.items)).to.not.equal(undefined);
    expect(change.actor.type).to.equal('user');
  });

  it('humanApproval: agent keys still save and submit, but approving or publishing answers 403 HUMAN_APPROVAL_REQUIRED naming the setting, recorded in the audit trail; a person then publishes', async () => {
    await policy({ humanApproval: true });
    const target = await inReview(agent());
    const refused = await publish(target, agent());
    expect(refused.status).to.equal(403);
    expect(refused.body.error).to.include({ code: 'HUMAN_APPROVAL_REQUIRED', retryable: false });
    expect(refused.body.error.hint).to.contain('approvalPolicy.humanApproval');
    const scheduled = await f.call('POST', `/revisions/${target.id}/approve`, { body: { publishAt: '2099-01-01T00:00:00Z' }, ...agent() });
    expect(scheduled.status).to.equal(403);
    expect(scheduled.body.error.code).to.equal('HUMAN_APPROVAL_REQUIRED');
    // A bulk schedule by an agent key is refused as a whole, before any revision.
    const bulk = await f.call('POST', '/revisions/bulk-schedule', { body: { revisionIds: [target.id], publishAt: '2099-01-01T00:00:00Z' }, ...agent() });
    expect(bulk.status).to.equal(403);
    expect(bulk.body.error.code).to.equal('HUMAN_APPROVAL_REQUIRED');

    // The refusals about the revision are in the entry's history (the first of each operation: repeats are counted).
    const history = await f.call('GET', `/entries/${target.entryId}/history`, as(admin));
    const refusals = history.body.items.filter((item: { type: string }) => item.type === 'write.refused');
    expect(refusals.map((r: { refusal: { operation: string } }) => r.refusal.operation)).to.deep.equal(['publishRevision', 'approveRevision']);
    expect(refusals[0]).to.include({ kind: 'write refused', revisionId: target.id });
    expect(refusals[0].refusal).to.deep.include({ code: 'HUMAN_APPROVAL_REQUIRED', reason: 'policy', rule: 'humanApproval', count: 1 });
    expect(refusals[0].actor).to.deep.equal({ type: 'agent', id: f.project.agentKey.keyId });
    // The bulk refusal named no entry: it is in the project's audit log.
    const log = await f.call('GET', `/audit-log?actor=${f.project.agentKey.keyId}&limit=50`, as(admin));
    expect(log.body.items.find((item: { type: string; refusal?: { operation: string } }) => item.type === 'write.refused' && item.refusal?.operation === 'bulkScheduleRevisions')).to.not.equal(undefined);

    const byPerson = await publish(target, as(admin));
    expect(byPerson.status, JSON.stringify(byPerson.body)).to.equal(200);
    expect(byPerson.body.status).to.equal('published');
  });

  it('fourEyes: the last editor or the submitter may not approve or publish (403 FOUR_EYES_REQUIRED naming the setting); another tenant_admin may', async () => {
    await policy({ fourEyes: true });
    const own = await inReview(as(admin));
    const refused = await publish(own, as(admin));
    expect(refused.status).to.equal(403);
    expect(refused.body.error.code).to.equal('FOUR_EYES_REQUIRED');
    expect(refused.body.error.message).to.contain('last editor and the submitter');
    expect(refused.body.error.hint).to.contain('approvalPolicy.fourEyes');
    const approved = await f.call('POST', `/revisions/${own.id}/approve`, { body: {}, ...as(secondAdmin) });
    expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
    expect(approved.body.status).to.equal('published');

    // Saved by an editor, submitted by the admin: the admin is the submitter; the second admin may approve.
    const submittedByAdmin = await inReview(as(editor), as(admin));
    const asSubmitter = await f.call('POST', `/revisions/${submittedByAdmin.id}/approve`, { body: {}, ...as(admin) });
    expect(asSubmitter.status).to.equal(403);
    expect(asSubmitter.body.error.message).to.contain('the submitter').and.not.contain('last editor');
    expect((await f.call('POST', `/revisions/${submittedByAdmin.id}/approve`, { body: {}, ...as(secondAdmin) })).status).to.equal(200);

    // An agent key is an identity too: it may not publish what it saved and submitted.
    const byAgent = await inReview(agent());
    expect((await publish(byAgent, agent())).body.error.code).to.equal('FOUR_EYES_REQUIRED');
    expect((await publish(byAgent, as(admin))).status).to.equal(200);

    const log = await f.call('GET', `/audit-log?actor=${secondAdminId}&limit=20`, as(admin));
    expect(log.body.items.some((item: { type: string }) => item.type === 'entry.revision-published')).to.equal(true);
  });

  it('through MCP: get_approval_policy says what agents may do; publish_revision explains the refusal with the code and the setting; set_approval_policy needs a session', async () => {
    expect((await ok(mcp, 'get_approval_policy')).whatAgentsMayDo[0]).to.match(/Neither rule is on/);
    await policy({ humanApproval: true });
    const policyNow = await ok(mcp, 'get_approval_policy');
    expect(policyNow).to.include({ humanApproval: true, fourEyes: false });
    expect(policyNow.whatAgentsMayDo[0]).to.match(/submit revisions for review and stop there/);

    const created = await ok(mcp, 'create_entry', { formSetId, slug: 'via-mcp', fields: { title: 'Via MCP' } });
    const { id, revision } = created.revision;
    await ok(mcp, 'submit_entry_for_review', { id, revision });
    const text = await failure(mcp, 'publish_revision', { id, revision });
    expect(text).to.match(/^HUMAN_APPROVAL_REQUIRED \(HTTP 403\): /);
    expect(text).to.contain('Hint: approvalPolicy.humanApproval');
    expect(await failure(mcp, 'set_approval_policy', { humanApproval: false })).to.match(/^FORBIDDEN: set_approval_policy needs a tenant_admin console session/);

    await policy({ humanApproval: false });
    expect((await ok(mcp, 'publish_revision', { id, revision })).status).to.equal('published');
  });
});

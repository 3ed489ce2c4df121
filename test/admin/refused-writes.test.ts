import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ManualClock } from '../../src/clock.ts';
import { StreamNotFoundError } from '../../src/event-store/errors.ts';
import type { RecordedEvent } from '../../src/event-store/event-store.ts';
import { projectRefusalsStream, type WriteRefused } from '../../src/domain/refusal-events.ts';
import { REFUSAL_WINDOW_MS } from '../../src/application/refusal-recorder.ts';
import { articleFormSet, startAdminFixture, type AdminFixture } from './support.ts';
import { adminSession, failure, issueAgentKey, PASSWORD } from '../mcp/support.ts';
import { runEntry, runProgram } from '../support/child-process.ts';
import { tempDir } from '../support/temp-dir.ts';

type Caller = { token: string; headers?: Record<string, string> };
type Refused = RecordedEvent & { data: WriteRefused };

/**
 * Every refused write is recorded (by role, by key scope, by the approval policy), aggregated per actor, operation
 * and code so that a flood cannot bloat the log: the first refusal of a window at once, the further ones counted
 * into one event when the window ends (or the service stops). Shown in the entry's history, the project's audit
 * log, and the signed audit export with its flag.
 */
describe('refused writes: recorded, aggregated, in the audit log and the export', function () {
  this.timeout(180_000);
  const clock = new ManualClock('2026-11-22T09:00:00.000Z');
  const dataDir = path.join(tempDir(), 'data');
  let f: AdminFixture;
  let admin: Caller;
  let editor: Caller;
  let editorId: string;
  let formSetId: string;
  const project = () => ({ 'X-Project-Id': f.project.projectId });

  const call = async (method: string, route: string, caller: Caller, body?: unknown, status?: number) => {
    const answer = await f.call(method, route, { token: caller.token, headers: caller.headers ?? {}, ...(body === undefined ? {} : { body }) });
    if (status !== undefined) expect(answer.status, `${method} ${route}: ${JSON.stringify(answer.body)}`).to.equal(status);
    return answer;
  };
  const streamEvents = async (streamId: string): Promise<RecordedEvent[]> => {
    const events: RecordedEvent[] = [];
    try {
      for await (const event of f.service.log.readStream(streamId)) events.push(event);
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
    }
    return events;
  };
  /** The write.refused events of the project's refusal stream by this actor and operation. */
  const refusalsBy = async (actorId: string, operation: string): Promise<Refused[]> =>
    (await streamEvents(projectRefusalsStream(f.project.projectId))).filter((e): e is Refused => e.metadata.actor.id === actorId && (e.data as WriteRefused).operation === operation);
  const auditLog = async (query = '') => (await call('GET', `/audit-log?limit=100${query}`, admin, undefined, 200)).body.items as Array<{ type: string; actor: { type: string; id: string }; refusal?: Record<string, unknown>; flag?: Record<string, unknown>; revisionId: string | null; entryId: string | null }>;

  before(async () => {
    f = await startAdminFixture({ clock, dataDir });
    admin = { token: await adminSession(f), headers: project() };
    const created = await call('POST', '/users', admin, { email: 'editor@example.com', password: PASSWORD, role: 'tenant_user' }, 201);
    editorId = created.body.id;
    const login = await f.call('POST', '/auth/login', { body: { email: 'editor@example.com', password: PASSWORD }, token: '' });
    editor = { token: login.body.token, headers: project() };
    formSetId = (await call('POST', '/form-sets', admin, articleFormSet, 201)).body.id;
  });
  after(async () => {
    await f?.stop();
  });

  it("by role: a tenant_user approving gets 403, recorded in the entry's history and the audit log, naming the operation and the revision", async () => {
    const created = await call('POST', `/form-sets/${formSetId}/entries`, editor, { slug: 'by-role', fields: { title: 'By role' } }, 201);
    const revision = created.body.revision;
    await call('POST', `/revisions/${revision.id}/submit`, editor, {}, 200);
    expect((await call('POST', `/revisions/${revision.id}/approve`, editor, {}, 403)).body.error.code).to.equal('FORBIDDEN');

    const history = (await call('GET', `/entries/${created.body.entry.id}/history`, admin, undefined, 200)).body.items;
    const refusal = history.find((item: { type: string }) => item.type === 'write.refused');
    expect(refusal, JSON.stringify(history)).to.deep.include({ kind: 'write refused', revisionId: revision.id, revision: 1, actor: { type: 'user', id: editorId } });
    expect(refusal.refusal).to.deep.include({ operation: 'approveRevision', code: 'FORBIDDEN', reason: 'role', count: 1, repeated: false });
    expect(refusal.flag).to.deep.equal({ kind: 'write-refused', rules: [] });
    const log = await auditLog(`&actor=${editorId}`);
    expect(log.find((item) => item.type === 'write.refused' && item.refusal?.['operation'] === 'approveRevision')).to.deep.include({ entryId: created.body.entry.id });
  });

  it('a refused policy change is recorded, by a tenant_user (role), by an agent key (scope) and through MCP', async () => {
    await call('PUT', '/project/approval-policy', editor, { fourEyes: false }, 403);
    await call('PUT', '/project/approval-policy', { token: f.project.agentKey.key }, { fourEyes: false }, 403);
    const mcpKey = await issueAgentKey(f, admin.token, 'full');
    const mcp = new Client({ name: 'refused-writes', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${f.service.url}/admin/v1/mcp`), { requestInit: { headers: { Authorization: `Bearer ${mcpKey}` } } }));
    try {
      expect(await failure(mcp, 'set_approval_policy', { fourEyes: false })).to.match(/^FORBIDDEN: set_approval_policy needs a tenant_admin console session/);
    } finally {
      await mcp.close();
    }
    const keys = (await call('GET', '/keys', admin, undefined, 200)).body.items as Array<{ id: string; prefix: string }>;
    const mcpKeyId = keys.find((k) => mcpKey.startsWith(k.prefix) && k.id !== f.project.agentKey.keyId)!.id;

    const refusals = (await auditLog()).filter((item) => item.type === 'write.refused' && item.refusal?.['operation'] === 'setApprovalPolicy');
    expect(refusals.map((r) => [r.actor.type, r.actor.id, r.refusal!['reason']])).to.have.deep.members([
      ['user', editorId, 'role'],
      ['agent', f.project.agentKey.keyId, 'scope'],
      ['agent', mcpKeyId, 'scope'],
    ]);
  });

  it("by key scope: a content key deleting an entry gets 403 FORBIDDEN, recorded with reason scope", async () => {
    const content = await issueAgentKey(f, admin.token, 'content');
    const created = await call('POST', `/form-sets/${formSetId}/entries`, { token: content }, { slug: 'by-scope', fields: { title: 'By scope' } }, 201);
    await call('DELETE', `/entries/${created.body.entry.id}`, { token: content }, undefined, 403);
    const refusal = (await auditLog()).find((item) => item.type === 'write.refused' && item.refusal?.['operation'] === 'deleteEntry');
    expect(refusal?.refusal).to.deep.include({ code: 'FORBIDDEN', reason: 'scope', count: 1 });
  });

  it('a flood of 1,000 refused requests leaves three events: the first at once, the other 999 counted into one when the window ends, the next window’s first', async () => {
    const before = (await f.service.log.headPosition())!;
    const flood = async (n: number) => {
      // 25 at a time: fetch's pool may open up to twice as many sockets as requests in flight across rounds,
      // and the service takes at most 100 connections from one address (HTTP_MAX_CONNECTIONS_PER_CLIENT).
      for (let sent = 0; sent < n; sent += 25) {
        const answers = await Promise.all(Array.from({ length: Math.min(25, n - sent) }, () => f.call('POST', `/revisions/bulk-schedule`, { token: editor.token, headers: project(), body: { revisionIds: ['00000000-0000-4000-8000-000000000001'], publishAt: '2099-01-01T00:00:00Z' } })));
        for (const answer of answers) expect(answer.status).to.equal(403);
      }
    };
    await flood(1000);
    const during = await refusalsBy(editorId, 'bulkScheduleRevisions');
    expect(during.map((e) => [e.data.count, e.data.repeated])).to.deep.equal([[1, false]]);
    // Nothing else reached the log for them: one event for 1,000 refusals so far (outboxes may append meanwhile).
    const refusedSince: RecordedEvent[] = [];
    for await (const event of f.service.log.readAll({ after: before })) if (event.type === 'write.refused') refusedSince.push(event);
    expect(refusedSince).to.have.length(1);

    clock.advance(REFUSAL_WINDOW_MS);
    await flood(1);
    const after = await refusalsBy(editorId, 'bulkScheduleRevisions');
    expect(after.map((e) => [e.data.count, e.data.repeated])).to.deep.equal([
      [1, false],
      [999, true],
      [1, false],
    ]);
    expect(after[1]!.data).to.deep.include({ code: 'FORBIDDEN', reason: 'role', firstAt: '2026-11-22T09:00:00.000Z', lastAt: '2026-11-22T09:00:00.000Z' });
    expect(after[2]!.data.firstAt).to.equal('2026-11-22T09:01:00.000Z');
    const shown = (await auditLog(`&actor=${editorId}`)).filter((item) => item.refusal?.['operation'] === 'bulkScheduleRevisions');
    expect(shown.map((item) => item.refusal!['count']).sort((a, b) => Number(a) - Number(b))).to.deep.equal([1, 1, 999]);
  });

  it('a clean stop records the count of an open window; the export carries every refusal and flags it, and verifies without the service', async () => {
    for (let i = 0; i < 5; i++) await call('POST', '/revisions/bulk-schedule', editor, { revisionIds: ['00000000-0000-4000-8000-000000000002'], publishAt: '2099-01-01T00:00:00Z' }, 403);
    // An approval made while fourEyes was off, which fourEyes would have refused: flagged.
    await call('PUT', '/project/approval-policy', admin, { fourEyes: true }, 200);
    await call('PUT', '/project/approval-policy', admin, { fourEyes: false }, 200);
    const own = await call('POST', `/form-sets/${formSetId}/entries`, admin, { slug: 'own', fields: { title: 'Own' } }, 201);
    await call('POST', `/revisions/${own.body.revision.id}/submit`, admin, {}, 200);
    await call('POST', `/revisions/${own.body.revision.id}/publish`, admin, { revision: 1 }, 200);
    const flagged = (await auditLog()).find((item) => item.type === 'entry.revision-published' && item.entryId === own.body.entry.id);
    expect(flagged?.flag).to.deep.equal({ kind: 'approved-while-policy-off', rules: ['fourEyes'] });
    await f.stop();

    const env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
    const out = path.join(tempDir(), 'export.ndjson');
    const exported = await runEntry('src/cli/main.ts', ['audit', 'export', '--project', f.project.projectId, '--from', '2026-01-01T00:00:00Z', '--to', '2027-01-01T00:00:00Z', '--out', out, '--json'], env);
    expect(exported.code, exported.stderr).to.equal(0);
    const verified = await runProgram(process.execPath, ['scripts/audit/verify-audit-export.mjs', out], env);
    expect(verified.code, verified.stdout + verified.stderr).to.equal(0);
    const lines = fs.readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    const refused = lines.filter((line) => line.kind === 'event' && line.type === 'write.refused');
    // The stop appended the count of the open window: the four refusals after the first.
    const second = refused.filter((line) => line.metadata.actor.id === editorId && line.data.operation === 'bulkScheduleRevisions' && line.data.firstAt >= '2026-11-22T09:01:00.000Z');
    expect(second.map((line) => [line.data.count, line.data.repeated])).to.deep.equal([
      [1, false],
      [5, true],
    ]);
    expect(refused.every((line) => line.flag?.kind === 'write-refused')).to.equal(true);
    const approvals = lines.filter((line) => line.kind === 'event' && line.flag?.kind === 'approved-while-policy-off');
    expect(approvals.map((line) => [line.type, line.data.entryId, line.flag.rules])).to.deep.equal([['entry.revision-published', own.body.entry.id, ['fourEyes']]]);
  });
});

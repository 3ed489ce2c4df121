import { expect } from 'chai';
import { pino } from 'pino';
import { startAdminFixture, articleFormSet, type AdminFixture } from './support.ts';
import { startRebuild } from '../../src/projection-engine/rebuild.ts';
import { auditTrail } from '../../projections/audit-trail.ts';
import { content } from '../../projections/content.ts';
import { eventually } from '../support/engine-fixture.ts';
import { documentedResponses } from '../support/openapi-responses.ts';

const PASSWORD = 'correct horse battery staple';

async function login(f: AdminFixture, email: string, password: string): Promise<string> {
  const response = await fetch(`${f.service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
  expect(response.status).to.equal(200);
  return ((await response.json()) as { token: string }).token;
}

const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();

describe('admin API: entry lifecycle, bulk scheduling and history over HTTP', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let formSetId: string;
  let adminToken: string;
  let session: { token: string; headers: Record<string, string> };
  before(async () => {
    f = await startAdminFixture();
    const created = await f.call('POST', '/form-sets', { body: articleFormSet });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    formSetId = created.body.id;
    adminToken = await login(f, f.project.adminEmail, PASSWORD);
    session = { token: adminToken, headers: { 'X-Project-Id': f.project.projectId } };
  });
  after(async () => {
    await f.stop();
  });

  async function createEntry(slug: string, fields: Record<string, unknown> = { title: { en: `Title ${slug}` } }) {
    const created = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug, fields } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    return created.body as { entry: { id: string; slug: string }; revision: { id: string; revision: number } };
  }

  describe('POST /entries/:entryId/duplicate', () => {
    it('makes a new draft entry {slug}-copy with all values; later copies get {slug}-copy-2, -copy-3 (issue 12)', async () => {
      const source = await createEntry('original', { title: { en: 'Original', ja: 'オリジナル' }, rating: 3, body: { en: 'Text' } });
      const copy = await f.call('POST', `/entries/${source.entry.id}/duplicate`, { body: {} });
      expect(copy.status, JSON.stringify(copy.body)).to.equal(201);
      expect(copy.body.entry.slug).to.equal('original-copy');
      expect(copy.body.entry.id).to.not.equal(source.entry.id);
      expect(copy.body.revision).to.include({ revision: 1, status: 'draft' });
      const revision = await f.call('GET', `/revisions/${copy.body.revision.id}`);
      expect(revision.body.snapshot).to.deep.equal({ title: { en: 'Original', ja: 'オリジナル' }, rating: 3, body: { en: 'Text' } });
      const listed = await f.call('GET', `/form-sets/${formSetId}/entries?limit=100`);
      expect(listed.body.items.map((i: { slug: string }) => i.slug)).to.include('original-copy');

      const second = await f.call('POST', `/entries/${source.entry.id}/duplicate`, { body: {} });
      expect(second.status, JSON.stringify(second.body)).to.equal(201);
      expect(second.body.entry.slug).to.equal('original-copy-2');
      const third = await f.call('POST', `/entries/${source.entry.id}/duplicate`, { body: {} });
      expect(third.body.entry.slug).to.equal('original-copy-3');
      // A copy of a copy, and a source whose slug is already as long as a slug may be.
      const copyOfCopy = await f.call('POST', `/entries/${copy.body.entry.id}/duplicate`, { body: {} });
      expect(copyOfCopy.body.entry.slug).to.equal('original-copy-copy');
      const long = await createEntry('a'.repeat(200), { title: { en: 'Long' } });
      const longCopies = [];
      for (let i = 0; i < 2; i++) longCopies.push((await f.call('POST', `/entries/${long.entry.id}/duplicate`, { body: {} })).body.entry.slug as string);
      expect(longCopies).to.deep.equal([`${'a'.repeat(195)}-copy`, `${'a'.repeat(193)}-copy-2`]);
    });

    it('is idempotent by key, and answers 404 for an unknown entry', async () => {
      const source = await createEntry('idem-source');
      const first = await f.call('POST', `/entries/${source.entry.id}/duplicate`, { body: {}, headers: { 'Idempotency-Key': 'dup-1' } });
      const second = await f.call('POST', `/entries/${source.entry.id}/duplicate`, { body: {}, headers: { 'Idempotency-Key': 'dup-1' } });
      expect(first.status, JSON.stringify(first.body)).to.equal(201);
      expect(second.status).to.equal(201);
      expect(second.body.entry.id).to.equal(first.body.entry.id);
      expect((await f.call('POST', '/entries/00000000-0000-4000-8000-000000000000/duplicate', { body: {} })).status).to.equal(404);
    });
  });

  describe('DELETE /entries/:entryId', () => {
    it('deletes: GET answers 404, the list no longer has it, and the slug is free again', async () => {
      const entry = await createEntry('to-delete');
      const deleted = await f.call('DELETE', `/entries/${entry.entry.id}`);
      expect(deleted.status, JSON.stringify(deleted.body)).to.equal(204);
      expect((await f.call('GET', `/entries/${entry.entry.id}`)).status).to.equal(404);
      expect((await f.call('GET', `/revisions/${entry.revision.id}`)).status).to.equal(404);
      const listed = await f.call('GET', `/form-sets/${formSetId}/entries?limit=100`);
      expect(listed.body.items.map((i: { id: string }) => i.id)).to.not.include(entry.entry.id);
      expect((await f.call('DELETE', `/entries/${entry.entry.id}`)).status).to.equal(404);
      // The slug was released: a new entry may take it.
      await createEntry('to-delete');
    });

    it('refuses a tenant_user session and a content-scope agent key with 403', async () => {
      const entry = await createEntry('keep-me');
      const editor = await f.access.createUser({ kind: 'operator', operatorId: 'test' }, { tenantId: f.project.tenantId, email: 'entry-editor@example.com', password: 'editor password 1', role: 'editor' });
      await f.service.supervisor!.waitFor(editor.position, 5000);
      const editorToken = await login(f, 'entry-editor@example.com', 'editor password 1');
      const byEditor = await f.call('DELETE', `/entries/${entry.entry.id}`, { token: editorToken, headers: session.headers });
      expect(byEditor.status).to.equal(403);
      expect(byEditor.body.error.code).to.equal('FORBIDDEN');
      const key = await f.access.issueAgentKey({ kind: 'operator', operatorId: 'test' }, f.project.projectId, 'content', 'content key');
      await f.service.supervisor!.waitFor(key.position, 5000);
      const byContentKey = await f.call('DELETE', `/entries/${entry.entry.id}`, { token: key.key });
      expect(byContentKey.status).to.equal(403);
      expect((await f.call('GET', `/entries/${entry.entry.id}`)).status).to.equal(200);
    });
  });

  describe('PATCH /entries/:entryId/slug', () => {
    it('renames; GET shows previousSlugs; the old slug stays reserved (409 for another entry) and a taken slug is 409', async () => {
      const entry = await createEntry('old-name');
      const other = await createEntry('taken-name');
      const renamed = await f.call('PATCH', `/entries/${entry.entry.id}/slug`, { body: { slug: 'new-name' } });
      expect(renamed.status, JSON.stringify(renamed.body)).to.equal(200);
      expect(renamed.body).to.include({ slug: 'new-name' });
      const read = await f.call('GET', `/entries/${entry.entry.id}`);
      expect(read.body.slug).to.equal('new-name');
      expect(read.body.previousSlugs).to.deep.equal(['old-name']);

      const clash = await f.call('PATCH', `/entries/${entry.entry.id}/slug`, { body: { slug: 'taken-name' } });
      expect(clash.status).to.equal(409);
      const oldTaken = await f.call('PATCH', `/entries/${other.entry.id}/slug`, { body: { slug: 'old-name' } });
      expect(oldTaken.status).to.equal(409);
      const createOld = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug: 'old-name', fields: { title: 'x' } } });
      expect(createOld.status).to.equal(409);
      // The entry may take its own former slug back.
      const back = await f.call('PATCH', `/entries/${entry.entry.id}/slug`, { body: { slug: 'old-name' } });
      expect(back.status, JSON.stringify(back.body)).to.equal(200);
      expect(back.body.slug).to.equal('old-name');
      expect(back.body.previousSlugs).to.deep.equal(['new-name']);
    });

    it('answers 400 naming the slug rule for a bad slug, and for a missing one', async () => {
      const entry = await createEntry('bad-rename');
      const bad = await f.call('PATCH', `/entries/${entry.entry.id}/slug`, { body: { slug: 'Not A Slug' } });
      expect(bad.status).to.equal(400);
      expect(bad.body.error.message).to.match(/slug/i);
      const missing = await f.call('PATCH', `/entries/${entry.entry.id}/slug`, { body: {} });
      expect(missing.status).to.equal(400);
      expect(missing.body.error.message).to.match(/slug/);
    });
  });

  describe('PUT /entries/:entryId/import-metadata', () => {
    it('sets and clears import metadata; over-long values are 400 naming the parameter', async () => {
      const entry = await createEntry('imported');
      const set = await f.call('PUT', `/entries/${entry.entry.id}/import-metadata`, { body: { importPath: '/old/site/page.html', external: { sourceType: 'wordpress', entityType: 'post', externalId: '42' } } });
      expect(set.status, JSON.stringify(set.body)).to.equal(200);
      expect(set.body.importPath).to.equal('/old/site/page.html');
      expect(set.body.external).to.deep.equal({ sourceType: 'wordpress', entityType: 'post', externalId: '42' });
      const read = await f.call('GET', `/entries/${entry.entry.id}`);
      expect(read.body.external.externalId).to.equal('42');

      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ external: { sourceType: 'x'.repeat(51), externalId: '1' } }, /external\.sourceType/],
        [{ external: { entityType: 'x'.repeat(201), externalId: '1' } }, /external\.entityType/],
        [{ external: { externalId: 'x'.repeat(2001) } }, /external\.externalId/],
        [{ importPath: 'x'.repeat(2001) }, /importPath/],
      ];
      for (const [body, field] of cases) {
        const refused = await f.call('PUT', `/entries/${entry.entry.id}/import-metadata`, { body });
        expect(refused.status, JSON.stringify(body)).to.equal(400);
        expect(refused.body.error.code).to.equal('VALIDATION_ERROR');
        expect(refused.body.error.message).to.match(field);
      }
      const cleared = await f.call('PUT', `/entries/${entry.entry.id}/import-metadata`, { body: { external: null } });
      expect(cleared.body.external).to.equal(null);
      expect(cleared.body.importPath).to.equal('/old/site/page.html');
    });
  });

  describe('PUT /entries/:entryId/assignee', () => {
    it('assigns to a tenant user and clears; an unknown user is 400', async () => {
      const entry = await createEntry('assigned');
      const assigned = await f.call('PUT', `/entries/${entry.entry.id}/assignee`, { body: { userId: f.project.userId } });
      expect(assigned.status, JSON.stringify(assigned.body)).to.equal(200);
      expect(assigned.body.assignee).to.equal(f.project.userId);
      expect((await f.call('GET', `/entries/${entry.entry.id}`)).body.assignee).to.equal(f.project.userId);
      const unknown = await f.call('PUT', `/entries/${entry.entry.id}/assignee`, { body: { userId: '00000000-0000-4000-8000-000000000000' } });
      expect(unknown.status).to.equal(400);
      expect(unknown.body.error.message).to.match(/userId/);
      const cleared = await f.call('PUT', `/entries/${entry.entry.id}/assignee`, { body: { userId: null } });
      expect(cleared.body.assignee).to.equal(null);
    });

    it('answers 403 PLAN_REQUIRED on a standard project', async () => {
      const standard = await startAdminFixture({ plan: 'standard' });
      try {
        const formSet = await standard.call('POST', '/form-sets', { body: articleFormSet });
        const entry = await standard.call('POST', `/form-sets/${formSet.body.id}/entries`, { body: { slug: 'plan', fields: { title: 'x' } } });
        const refused = await standard.call('PUT', `/entries/${entry.body.entry.id}/assignee`, { body: { userId: standard.project.userId } });
        expect(refused.status, JSON.stringify(refused.body)).to.equal(403);
        expect(refused.body.error.code).to.equal('PLAN_REQUIRED');
      } finally {
        await standard.stop();
      }
    });
  });

  describe('POST /revisions/bulk-schedule', () => {
    it('schedules every revision in review at one time and reports each failure on its own, as a 207 multi-status (issue 12)', async () => {
      const a = await createEntry('bulk-a');
      const b = await createEntry('bulk-b');
      const draft = await createEntry('bulk-draft');
      for (const entry of [a, b]) expect((await f.call('POST', `/revisions/${entry.revision.id}/submit`, { body: {} })).status).to.equal(200);
      const at = inAnHour();
      const missing = '00000000-0000-4000-8000-000000000000';
      const result = await f.call('POST', '/revisions/bulk-schedule', { body: { revisionIds: [a.revision.id, draft.revision.id, b.revision.id, missing], publishAt: at } });
      expect(result.status, JSON.stringify(result.body)).to.equal(207);
      expect(result.body).to.include({ publishAt: at, succeeded: 2, failed: 2 });
      const byId = new Map(result.body.results.map((r: { revisionId: string }) => [r.revisionId, r]));
      expect(byId.get(a.revision.id)).to.include({ ok: true, status: 'scheduled', publishAt: at });
      expect(byId.get(b.revision.id)).to.include({ ok: true, status: 'scheduled', publishAt: at });
      expect((byId.get(draft.revision.id) as { ok: boolean; error: { code: string } }).error.code).to.equal('CONFLICT');
      expect((byId.get(missing) as { ok: boolean; error: { code: string } }).error.code).to.equal('NOT_FOUND');
      expect(result.body.results.map((r: { revisionId: string }) => r.revisionId)).to.deep.equal([a.revision.id, draft.revision.id, b.revision.id, missing]);
      expect((await f.call('GET', `/revisions/${a.revision.id}`)).body).to.include({ status: 'scheduled', publishAt: at });
    });

    it('answers an error status in the envelope, with each result beside it, when no revision was scheduled (issue 12)', async () => {
      const draft = await createEntry('bulk-none-draft');
      const missing = '00000000-0000-4000-8000-000000000001';
      const allMissing = await f.call('POST', '/revisions/bulk-schedule', { body: { revisionIds: [missing, '00000000-0000-4000-8000-000000000002'], publishAt: inAnHour() } });
      expect(allMissing.status).to.equal(404);
      expect(allMissing.body.error).to.include({ code: 'NOT_FOUND', retryable: false });
      expect(allMissing.body.error.message).to.match(/^None of the 2 revisions was scheduled/);
      expect(allMissing.body).to.include({ succeeded: 0, failed: 2 });
      expect(allMissing.body.results.map((r: { ok: boolean }) => r.ok)).to.deep.equal([false, false]);
      const mixed = await f.call('POST', '/revisions/bulk-schedule', { body: { revisionIds: [missing, draft.revision.id], publishAt: inAnHour() } });
      expect(mixed.status).to.equal(409);
      expect(mixed.body.error.code).to.equal('CONFLICT');
      expect(mixed.body.results.map((r: { error: { code: string } }) => r.error.code)).to.deep.equal(['NOT_FOUND', 'CONFLICT']);
      // Every revision scheduled: 200.
      await f.call('POST', `/revisions/${draft.revision.id}/submit`, { body: {} });
      expect((await f.call('POST', '/revisions/bulk-schedule', { body: { revisionIds: [draft.revision.id], publishAt: inAnHour() } })).status).to.equal(200);
    });

    it('accepts local time with a time zone; refuses a past time, an empty list and more than 100 ids with 400', async () => {
      const entry = await createEntry('bulk-local');
      await f.call('POST', `/revisions/${entry.revision.id}/submit`, { body: {} });
      const local = await f.call('POST', '/revisions/bulk-schedule', { body: { revisionIds: [entry.revision.id], publishAt: { local: '2099-01-01T09:00', timeZone: 'Asia/Tokyo' } } });
      expect(local.status, JSON.stringify(local.body)).to.equal(200);
      expect(local.body.results[0]).to.include({ ok: true, publishAt: '2099-01-01T00:00:00.000Z' });
      const past = await f.call('POST', '/revisions/bulk-schedule', { body: { revisionIds: [entry.revision.id], publishAt: '2000-01-01T00:00:00Z' } });
      expect(past.status).to.equal(400);
      expect(past.body.error.message).to.match(/publishAt/);
      const empty = await f.call('POST', '/revisions/bulk-schedule', { body: { revisionIds: [], publishAt: inAnHour() } });
      expect(empty.status).to.equal(400);
      expect(empty.body.error.message).to.match(/revisionIds/);
      const many = await f.call('POST', '/revisions/bulk-schedule', { body: { revisionIds: Array.from({ length: 101 }, () => entry.revision.id), publishAt: inAnHour() } });
      expect(many.status).to.equal(400);
    });
  });

  describe('history, diff and restore', () => {
    it('GET /entries/:entryId/history lists created, saved and submitted with actors, oldest first', async () => {
      const entry = await createEntry('historic', { title: { en: 'v1' } });
      const saved = await f.call('POST', `/entries/${entry.entry.id}/revisions`, { body: { fields: { title: { en: 'v2' } } } });
      await f.call('POST', `/revisions/${saved.body.id}/submit`, { token: session.token, headers: session.headers, body: {} });
      const history = await f.call('GET', `/entries/${entry.entry.id}/history`);
      expect(history.status, JSON.stringify(history.body)).to.equal(200);
      const items = history.body.items as Array<{ type: string; kind: string; actor: { type: string; id: string }; occurredAt: string; revision: number | null }>;
      expect(items.map((i) => i.kind)).to.deep.equal(['created', 'revision saved', 'revision saved', 'submitted for review']);
      expect(items.map((i) => i.type)).to.deep.equal(['entry.created', 'entry.revision-saved', 'entry.revision-saved', 'entry.revision-submitted']);
      expect(items[0]!.actor).to.deep.equal({ type: 'agent', id: f.project.agentKey.keyId });
      expect(items[3]!.actor).to.deep.equal({ type: 'user', id: f.project.userId });
      expect(items[3]!.revision).to.equal(2);
      for (const item of items) expect(Number.isNaN(Date.parse(item.occurredAt))).to.equal(false);
      expect((await f.call('GET', '/entries/00000000-0000-4000-8000-000000000000/history')).status).to.equal(404);
    });

    it('GET /entries/:entryId/diff shows the changed fields; a revision of another entry is 404, a missing parameter 400', async () => {
      const entry = await createEntry('diffed', { title: { en: 'Before', ja: '前' }, rating: 2 });
      const saved = await f.call('POST', `/entries/${entry.entry.id}/revisions`, { body: { fields: { title: { en: 'After', ja: '前' }, body: { en: 'New body' } } } });
      const diff = await f.call('GET', `/entries/${entry.entry.id}/diff?from=${entry.revision.id}&to=${saved.body.id}`);
      expect(diff.status, JSON.stringify(diff.body)).to.equal(200);
      expect(diff.body.from).to.include({ revisionId: entry.revision.id, revision: 1 });
      expect(diff.body.to).to.include({ revisionId: saved.body.id, revision: 2 });
      expect(diff.body.changes).to.deep.equal([
        { field: 'title', locale: 'en', kind: 'changed', before: 'Before', after: 'After' },
        { field: 'rating', kind: 'removed', before: 2 },
        { field: 'body', locale: 'en', kind: 'added', after: 'New body' },
      ]);
      const other = await createEntry('diff-other');
      expect((await f.call('GET', `/entries/${entry.entry.id}/diff?from=${entry.revision.id}&to=${other.revision.id}`)).status).to.equal(404);
      const missing = await f.call('GET', `/entries/${entry.entry.id}/diff?from=${entry.revision.id}`);
      expect(missing.status).to.equal(400);
      expect(missing.body.error.message).to.match(/^to/);
    });

    it('POST /revisions/:revisionId/restore makes a new draft with the old values and leaves the live revision alone', async () => {
      const entry = await createEntry('restored', { title: { en: 'First' }, rating: 1 });
      const second = await f.call('POST', `/entries/${entry.entry.id}/revisions`, { body: { fields: { title: { en: 'Second' }, rating: 5 } } });
      await f.call('POST', `/revisions/${second.body.id}/submit`, { body: {} });
      await f.call('POST', `/revisions/${second.body.id}/publish`, { body: { revision: 2 } });
      const restored = await f.call('POST', `/revisions/${entry.revision.id}/restore`, { body: {} });
      expect(restored.status, JSON.stringify(restored.body)).to.equal(201);
      expect(restored.body).to.include({ revision: 3, status: 'draft' });
      expect(restored.body.restoredFrom).to.deep.equal({ revisionId: entry.revision.id, revision: 1 });
      const read = await f.call('GET', `/revisions/${restored.body.id}`);
      expect(read.body.snapshot).to.deep.equal({ title: { en: 'First' }, rating: 1 });
      const after = await f.call('GET', `/entries/${entry.entry.id}`);
      expect(after.body.liveRevision.revisionId).to.equal(second.body.id);
      expect(after.body.latestRevision).to.include({ revisionId: restored.body.id, status: 'draft' });
      // Resent with the same key: the same revision.
      const keyed = await f.call('POST', `/revisions/${entry.revision.id}/restore`, { body: { idempotencyKey: 'restore-1' } });
      const again = await f.call('POST', `/revisions/${entry.revision.id}/restore`, { body: { idempotencyKey: 'restore-1' } });
      expect(again.body.id).to.equal(keyed.body.id);
      expect(keyed.body.revision).to.equal(4);
      const stale = await f.call('POST', `/revisions/${entry.revision.id}/restore`, { body: { expectedRevision: 2 } });
      expect(stale.status).to.equal(409);
      expect(stale.body.error.code).to.equal('REVISION_CONFLICT');
    });
    it('a restore names the revision it restored in the revision, the revision list and the history; an ordinary save names none; a rebuild gives the same (issue 44)', async () => {
      const documented = await documentedResponses(f.service.url);
      const entry = await createEntry('restore-labelled', { title: { en: 'One' } });
      const saved = await f.call('POST', `/entries/${entry.entry.id}/revisions`, { body: { fields: { title: { en: 'Two' } } } });
      expect(saved.status, JSON.stringify(saved.body)).to.equal(201);
      const restored = await f.call('POST', `/revisions/${entry.revision.id}/restore`, { body: {} });
      expect(restored.status, JSON.stringify(restored.body)).to.equal(201);
      documented('restoreRevision', 201, restored.body);
      const source = { revisionId: entry.revision.id, revision: 1 };

      const read = async () => {
        const one = await f.call('GET', `/revisions/${restored.body.id}`);
        const plain = await f.call('GET', `/revisions/${saved.body.id}`);
        const list = await f.call('GET', `/entries/${entry.entry.id}/revisions?order=asc`);
        const history = await f.call('GET', `/entries/${entry.entry.id}/history`);
        documented('getRevision', 200, one.body);
        documented('listRevisions', 200, list.body);
        documented('getEntryHistory', 200, history.body);
        return {
          restored: one.body.restoredFrom,
          plain: plain.body.restoredFrom,
          list: list.body.items.map((r: { revision: number; restoredFrom: unknown }) => [r.revision, r.restoredFrom]),
          history: history.body.items.map((i: { type: string; revision: number | null; restoredFrom: unknown }) => [i.type, i.revision, i.restoredFrom]),
        };
      };
      const expected = {
        restored: source,
        plain: null,
        list: [
          [1, null],
          [2, null],
          [3, source],
        ],
        history: [
          ['entry.created', null, null],
          ['entry.revision-saved', 1, null],
          ['entry.revision-saved', 2, null],
          ['entry.revision-saved', 3, source],
        ],
      };
      // The history is the audit trail's, which may follow the write by a moment.
      await eventually(read, (answer) => answer.history.length === 4);
      expect(await read()).to.deep.equal(expected);

      // Rebuilt from the log, the revisions and the audit trail say the same.
      const store = f.service.stores.readModels;
      for (const projection of [auditTrail, content]) {
        const rebuild = startRebuild({ projection, log: f.service.log, store, clock: { now: () => new Date() }, logger: pino({ level: 'silent' }), dropGraceMs: 1000 });
        const result = await rebuild.result;
        await eventually(async () => f.service.supervisor!.liveGeneration(projection.name), (generation) => generation === result.generation, 10_000);
        await rebuild.dropped;
      }
      expect(await read()).to.deep.equal(expected);
    });
  });

  describe('GET /audit-log', () => {
    it('lists the project\'s events newest first, filtered by actor, entry and time', async () => {
      const since = new Date().toISOString();
      const entry = await createEntry('audited');
      const renamed = await f.call('PATCH', `/entries/${entry.entry.id}/slug`, { body: { slug: 'audited-renamed' } });
      expect(renamed.status).to.equal(200);
      const submitted = await f.call('POST', `/revisions/${entry.revision.id}/submit`, { token: session.token, headers: session.headers, body: {} });
      expect(submitted.status).to.equal(200);

      const all = await f.call('GET', `/audit-log?entryId=${entry.entry.id}`, session);
      expect(all.status, JSON.stringify(all.body)).to.equal(200);
      expect(all.body.items.map((i: { type: string }) => i.type)).to.deep.equal(['entry.revision-submitted', 'entry.slug-changed', 'entry.revision-saved', 'entry.created']);
      expect(all.body.nextCursor).to.equal(null);
      expect(all.body.items[0]).to.include({ entryId: entry.entry.id, kind: 'submitted for review' });

      const byUser = await f.call('GET', `/audit-log?actor=${f.project.userId}&from=${encodeURIComponent(since)}`, session);
      expect(byUser.body.items.map((i: { type: string }) => i.type)).to.deep.equal(['entry.revision-submitted']);
      const byAgent = await f.call('GET', `/audit-log?actor=${f.project.agentKey.keyId}&entryId=${entry.entry.id}`, session);
      expect(byAgent.body.items.map((i: { type: string }) => i.type)).to.deep.equal(['entry.slug-changed', 'entry.revision-saved', 'entry.created']);
      expect(byAgent.body.items.every((i: { actor: { id: string } }) => i.actor.id === f.project.agentKey.keyId)).to.equal(true);

      const before = await f.call('GET', `/audit-log?entryId=${entry.entry.id}&to=${encodeURIComponent(since)}`, session);
      expect(before.body.items).to.deep.equal([]);
      const window = await f.call('GET', `/audit-log?from=${encodeURIComponent(since)}&to=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}&limit=2`, session);
      expect(window.body.items).to.have.length(2);
      expect(window.body.nextCursor).to.be.a('string');
      const unknown = await f.call('GET', '/audit-log?page=1', session);
      expect(unknown.status).to.equal(400);
      expect(unknown.body.error.message).to.match(/unknown parameter "page"/);

      const badTime = await f.call('GET', '/audit-log?from=yesterday', session);
      expect(badTime.status).to.equal(400);
      expect(badTime.body.error.message).to.match(/^from/);
    });

    it('keeps other projects out, and refuses agent keys and tenant_user sessions with 403', async () => {
      const other = await f.access.bootstrap({ kind: 'operator', operatorId: 'test' }, { projectName: 'Audit other', plan: 'business', adminEmail: 'audit-other@example.com', adminPassword: 'another long password' });
      await f.service.supervisor!.waitFor(other.position, 5000);
      const otherToken = await login(f, 'audit-other@example.com', 'another long password');
      const otherLog = await f.call('GET', '/audit-log', { token: otherToken, headers: { 'X-Project-Id': other.projectId } });
      expect(otherLog.status).to.equal(200);
      expect(otherLog.body.items.every((i: { entryId: string | null; streamId: string }) => !i.streamId.startsWith('entry-'))).to.equal(true);

      const byAgent = await f.call('GET', '/audit-log');
      expect(byAgent.status).to.equal(403);
      expect(byAgent.body.error.code).to.equal('FORBIDDEN');
      const editorToken = await login(f, 'entry-editor@example.com', 'editor password 1').catch(async () => {
        const editor = await f.access.createUser({ kind: 'operator', operatorId: 'test' }, { tenantId: f.project.tenantId, email: 'entry-editor@example.com', password: 'editor password 1', role: 'editor' });
        await f.service.supervisor!.waitFor(editor.position, 5000);
        return login(f, 'entry-editor@example.com', 'editor password 1');
      });
      const byEditor = await f.call('GET', '/audit-log', { token: editorToken, headers: session.headers });
      expect(byEditor.status).to.equal(403);
    });
  });
});

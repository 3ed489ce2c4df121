import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { pino } from 'pino';
import { startAdminFixture, articleFormSet, PASSWORD, OPERATOR, type AdminFixture } from './support.ts';
import { SqliteWorkingCopyStore } from '../../src/working-copies/sqlite-working-copy-store.ts';
import { WorkingCopyRetention } from '../../src/application/working-copies.ts';
import { tempDir } from '../support/temp-dir.ts';

async function login(f: AdminFixture, email: string, password: string): Promise<{ token: string; headers: Record<string, string> }> {
  const response = await fetch(`${f.service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
  expect(response.status).to.equal(200);
  return { token: ((await response.json()) as { token: string }).token, headers: { 'X-Project-Id': f.project.projectId } };
}

describe('admin API: working copies keep unsaved typing on the server, without a revision', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let dataDir: string;
  let formSetId: string;
  let admin: { token: string; headers: Record<string, string> };
  let editor: { token: string; headers: Record<string, string> };
  let editorId: string;

  before(async () => {
    dataDir = path.join(tempDir(), 'data');
    f = await startAdminFixture({ dataDir });
    formSetId = (await f.call('POST', '/form-sets', { body: articleFormSet })).body.id;
    const created = await f.access.createUser(OPERATOR, { tenantId: f.project.tenantId, email: 'wc-editor@example.com', password: 'editor password 1', role: 'editor' });
    await f.service.supervisor!.waitFor(created.position, 5000);
    editorId = created.userId;
    admin = await login(f, f.project.adminEmail, PASSWORD);
    editor = await login(f, 'wc-editor@example.com', 'editor password 1');
  });
  after(async () => {
    await f.stop();
  });

  const as = (who: { token: string; headers: Record<string, string> }) => ({ token: who.token, headers: who.headers });
  async function createEntry(slug: string) {
    const created = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug, fields: { title: { en: `Title ${slug}` } } } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    return created.body.entry.id as string;
  }
  const rowsOf = (entryId: string) => {
    const db = new Database(path.join(dataDir, 'working-copies.sqlite'), { readonly: true });
    try {
      return (db.prepare('SELECT count(*) AS n FROM working_copies WHERE entry_id = ?').get(entryId) as { n: number }).n;
    } finally {
      db.close();
    }
  };

  it('keeps what was typed and gives it back to its owner; the entry gets no revision and no event', async () => {
    const entryId = await createEntry('typed');
    const historyBefore = (await f.call('GET', `/entries/${entryId}/history`, as(editor))).body.items.length;
    const typed = { title: { en: 'Half a tit', ja: '途中' }, body: { en: 'x'.repeat(5000) } };
    const kept = await f.call('PUT', `/entries/${entryId}/working-copy`, { ...as(editor), body: { fields: typed, baseRevision: 1 } });
    expect(kept.status, JSON.stringify(kept.body)).to.equal(200);
    expect(kept.body).to.include({ entryId, baseRevision: 1, latestRevision: 1 });
    const again = await f.call('PUT', `/entries/${entryId}/working-copy`, { ...as(editor), body: { fields: { ...typed, title: { en: 'Half a title' } }, baseRevision: 1 } });
    expect(again.status).to.equal(200);

    const read = await f.call('GET', `/entries/${entryId}/working-copy`, as(editor));
    expect(read.status).to.equal(200);
    expect(read.body).to.deep.include({ entryId, owner: { type: 'user', id: editorId }, baseRevision: 1, fields: { ...typed, title: { en: 'Half a title' } } });
    expect(read.body.startedAt <= read.body.savedAt).to.equal(true);
    expect(read.body.startedAt).to.equal(kept.body.savedAt);

    const entry = (await f.call('GET', `/entries/${entryId}`, as(editor))).body;
    expect(entry.latestRevision.revision).to.equal(1);
    expect((await f.call('GET', `/entries/${entryId}/history`, as(editor))).body.items).to.have.length(historyBefore);
  });

  it('shows others who has unsaved typing in the entry, never what they typed', async () => {
    const entryId = await createEntry('shared');
    await f.call('PUT', `/entries/${entryId}/working-copy`, { ...as(editor), body: { fields: { title: { en: 'Mine' } }, baseRevision: 1 } });
    const listed = await f.call('GET', `/entries/${entryId}/working-copies`, as(admin));
    expect(listed.status).to.equal(200);
    expect(listed.body.items).to.have.length(1);
    expect(listed.body.items[0]).to.include({ entryId, baseRevision: 1 }).and.to.not.have.property('fields');
    expect(listed.body.items[0].owner).to.deep.equal({ type: 'user', id: editorId });
    // The admin has none of their own: the editor's is not theirs to read.
    const other = await f.call('GET', `/entries/${entryId}/working-copy`, as(admin));
    expect(other.status).to.equal(404);
    expect(other.body.error.code).to.equal('NOT_FOUND');
  });

  it('saving a revision ends the saver\'s working copy, and only theirs', async () => {
    const entryId = await createEntry('saved');
    await f.call('PUT', `/entries/${entryId}/working-copy`, { ...as(editor), body: { fields: { title: { en: 'Editor typing' } }, baseRevision: 1 } });
    await f.call('PUT', `/entries/${entryId}/working-copy`, { ...as(admin), body: { fields: { title: { en: 'Admin typing' } }, baseRevision: 1 } });
    const saved = await f.call('POST', `/entries/${entryId}/revisions`, { ...as(editor), body: { fields: { title: { en: 'Editor typing' } }, expectedRevision: 1 } });
    expect(saved.status, JSON.stringify(saved.body)).to.equal(201);
    expect((await f.call('GET', `/entries/${entryId}/working-copy`, as(editor))).status).to.equal(404);
    expect((await f.call('GET', `/entries/${entryId}/working-copy`, as(admin))).status).to.equal(200);
    // The admin's next keep says someone saved meanwhile: their typing is on revision 1, the entry at 2.
    const stale = await f.call('PUT', `/entries/${entryId}/working-copy`, { ...as(admin), body: { fields: { title: { en: 'Admin typing on' } }, baseRevision: 1 } });
    expect(stale.body).to.include({ baseRevision: 1, latestRevision: 2 });
    expect((await f.call('GET', `/entries/${entryId}/working-copies`, as(editor))).body.items.map((c: { owner: { id: string } }) => c.owner.id)).to.not.include(editorId);
  });

  it('discards on request (204, also when there is none), and deleting the entry ends every copy in the store', async () => {
    const entryId = await createEntry('gone');
    await f.call('PUT', `/entries/${entryId}/working-copy`, { ...as(editor), body: { fields: { title: { en: 'a' } }, baseRevision: 1 } });
    expect((await f.call('DELETE', `/entries/${entryId}/working-copy`, as(editor))).status).to.equal(204);
    expect((await f.call('DELETE', `/entries/${entryId}/working-copy`, as(editor))).status).to.equal(204);
    expect(rowsOf(entryId)).to.equal(0);
    await f.call('PUT', `/entries/${entryId}/working-copy`, { ...as(editor), body: { fields: { title: { en: 'b' } }, baseRevision: 1 } });
    await f.call('PUT', `/entries/${entryId}/working-copy`, { ...as(admin), body: { fields: { title: { en: 'c' } }, baseRevision: 1 } });
    expect(rowsOf(entryId)).to.equal(2);
    expect((await f.call('DELETE', `/entries/${entryId}`, as(admin))).status).to.equal(204);
    expect(rowsOf(entryId)).to.equal(0);
    expect((await f.call('GET', `/entries/${entryId}/working-copy`, as(editor))).status).to.equal(404);
  });

  it('refuses bad input with 400, agent keys with 403, another project\'s or an unknown entry with 404, and stores nothing', async () => {
    const entryId = await createEntry('refused');
    const cases: Array<[unknown, string]> = [
      [{ fields: { title: { en: 'x' } }, baseRevision: 2 }, 'baseRevision'],
      [{ fields: 'text', baseRevision: 1 }, 'fields'],
      [{ fields: [], baseRevision: 1 }, 'fields'],
      [{ fields: {} }, 'baseRevision'],
      [{ fields: {}, baseRevision: -1 }, 'baseRevision'],
    ];
    for (const [body, named] of cases) {
      const answer = await f.call('PUT', `/entries/${entryId}/working-copy`, { ...as(editor), body });
      expect(answer.status, JSON.stringify(body)).to.equal(400);
      expect(answer.body.error.code).to.equal('VALIDATION_ERROR');
      expect(answer.body.error.message).to.contain(named);
    }
    const byKey = await f.call('PUT', `/entries/${entryId}/working-copy`, { body: { fields: {}, baseRevision: 1 } });
    expect(byKey.status).to.equal(403);
    expect(byKey.body.error.code).to.equal('FORBIDDEN');
    expect((await f.call('PUT', `/entries/00000000-0000-4000-8000-000000000000/working-copy`, { ...as(editor), body: { fields: {}, baseRevision: 0 } })).status).to.equal(404);
    expect((await f.call('GET', `/entries/not-a-uuid/working-copies`, as(editor))).status).to.equal(404);
    const huge = await f.call('PUT', `/entries/${entryId}/working-copy`, { ...as(editor), body: { fields: { body: { en: 'x'.repeat(2 * 1024 * 1024) } }, baseRevision: 1 } });
    expect(huge.status).to.equal(413);
    expect(rowsOf(entryId)).to.equal(0);

    const other = await f.access.bootstrap(OPERATOR, { projectName: 'Other', plan: 'business', adminEmail: 'other-admin@example.com', adminPassword: PASSWORD, contentLocales: { locales: ['en'], defaultLocale: 'en' } });
    await f.service.supervisor!.waitFor(other.position, 5000);
    const stranger = await login(f, 'other-admin@example.com', PASSWORD);
    const across = await f.call('GET', `/entries/${entryId}/working-copies`, { token: stranger.token, headers: { 'X-Project-Id': other.projectId } });
    expect(across.status).to.equal(404);
  });

  it('survives a restart of the service', async () => {
    const entryId = await createEntry('kept-over-restart');
    const projectId = f.project.projectId;
    await f.call('PUT', `/entries/${entryId}/working-copy`, { ...as(editor), body: { fields: { title: { en: 'Typed before the restart' } }, baseRevision: 1 } });
    await f.stop();
    // The fixture bootstraps a project of its own in the same folder; the editor acts in the first one.
    f = await startAdminFixture({ dataDir });
    editor = { ...(await login(f, 'wc-editor@example.com', 'editor password 1')), headers: { 'X-Project-Id': projectId } };
    const read = await f.call('GET', `/entries/${entryId}/working-copy`, as(editor));
    expect(read.status, JSON.stringify(read.body)).to.equal(200);
    expect(read.body.fields).to.deep.equal({ title: { en: 'Typed before the restart' } });
  });
});

describe('working copies: the retention sweep', () => {
  it('ends copies untouched for WORKING_COPY_RETENTION_DAYS and keeps younger ones', async () => {
    const store = SqliteWorkingCopyStore.open(path.join(tempDir(), 'working-copies.sqlite'));
    const copy = (entryId: string, savedAt: string) => ({ projectId: 'p', entryId, owner: { type: 'user' as const, id: 'u' }, baseRevision: 1, startedAt: savedAt, savedAt, fields: {} });
    await store.put(copy('old', '2026-11-01T00:00:00.000Z'));
    await store.put(copy('young', '2026-11-20T00:00:00.000Z'));
    const now = new Date('2026-12-06T00:00:00.000Z');
    const retention = new WorkingCopyRetention({ store, clock: { now: () => now }, logger: pino({ level: 'silent' }), retentionDays: 30 });
    expect(await retention.sweep()).to.equal(1);
    expect(await store.get('old', { type: 'user', id: 'u' })).to.equal(null);
    expect(await store.get('young', { type: 'user', id: 'u' })).to.not.equal(null);
    await store.close();
  });
});

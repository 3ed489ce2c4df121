import { expect } from 'chai';
import { startAdminFixture, articleFormSet, type AdminFixture } from './support.ts';

describe('admin API: form sets, entries and the revision workflow over HTTP', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  before(async () => {
    f = await startAdminFixture();
  });
  after(async () => {
    await f.stop();
  });

  let formSetId: string;
  it('creates a form set with an agent key and lists it; a second one with the same slug is 409', async () => {
    const created = await f.call('POST', '/form-sets', { body: articleFormSet });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    formSetId = created.body.id;
    expect(created.body).to.include({ slug: 'articles', name: 'Articles', version: 1 });
    const listed = await f.call('GET', '/form-sets');
    expect(listed.body.items.map((i: { slug: string }) => i.slug)).to.deep.equal(['articles']);
    const clash = await f.call('POST', '/form-sets', { body: { ...articleFormSet, name: 'Other' } });
    expect(clash.status).to.equal(409);
    expect(clash.body.error.code).to.equal('CONFLICT');
  });

  it('creates an entry, reads it back at once, and answers 409 for a slug clash and 400 naming a bad field', async () => {
    const created = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug: 'hello-world', fields: { title: { en: 'Hello', ja: 'こんにちは' }, rating: 4 } } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body.entry.slug).to.equal('hello-world');
    expect(created.body.revision).to.include({ revision: 1, status: 'draft' });
    const read = await f.call('GET', `/entries/${created.body.entry.id}`);
    expect(read.status).to.equal(200);
    // The entry carries its latest and live revisions and the count, with a link to the paged list.
    expect(read.body).to.include({ revisionCount: 1, title: 'Hello' });
    expect(read.body.revisions).to.equal(undefined);
    expect(read.body.links.revisions).to.equal(`/admin/v1/entries/${created.body.entry.id}/revisions`);

    const clash = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug: 'hello-world', fields: { title: 'Again' } } });
    expect(clash.status).to.equal(409);
    const badField = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug: 'bad-one', fields: { title: 'x'.repeat(121) } } });
    expect(badField.status).to.equal(400);
    expect(badField.body.error.code).to.equal('VALIDATION_ERROR');
    expect(badField.body.error.message).to.match(/title/);
    const badSlug = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug: 'Not A Slug', fields: { title: 'x' } } });
    expect(badSlug.status).to.equal(400);
    expect(badSlug.body.error.message).to.match(/slug/i);
    const unknownField = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug: 'unknown-field', fields: { title: 'x', colour: 'red' } } });
    expect(unknownField.status).to.equal(400);
    expect(unknownField.body.error.message).to.match(/colour/);
  });

  it('runs save, submit and publish as an agent; publishing again says already_published; a stale revision is REVISION_CONFLICT', async () => {
    const created = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug: 'workflow', fields: { title: 'v1' } } });
    const entryId = created.body.entry.id;
    const saved = await f.call('POST', `/entries/${entryId}/revisions`, { body: { fields: { title: 'v2' } } });
    expect(saved.status, JSON.stringify(saved.body)).to.equal(201);
    expect(saved.body).to.include({ revision: 2, status: 'draft' });
    const submitted = await f.call('POST', `/revisions/${saved.body.id}/submit`, { body: {} });
    expect(submitted.body.status, JSON.stringify(submitted.body)).to.equal('pending_review');
    const published = await f.call('POST', `/revisions/${saved.body.id}/publish`, { body: { revision: saved.body.revision } });
    expect(published.status, JSON.stringify(published.body)).to.equal(200);
    expect(published.body).to.include({ status: 'published', already_published: false });
    const again = await f.call('POST', `/revisions/${saved.body.id}/publish`, { body: { revision: 2 } });
    expect(again.body).to.include({ status: 'published', already_published: true });

    // Editing the published entry makes a new draft; the live revision stays.
    const edit = await f.call('POST', `/entries/${entryId}/revisions`, { body: { fields: { title: 'v3' } } });
    const entry = await f.call('GET', `/entries/${entryId}`);
    expect(entry.body.liveRevision.revisionId).to.equal(saved.body.id);
    expect(entry.body.latestRevision).to.include({ revisionId: edit.body.id, status: 'draft' });
    const stale = await f.call('POST', `/revisions/${edit.body.id}/submit`, { body: { revision: 2 } });
    expect(stale.status).to.equal(409);
    expect(stale.body.error.code).to.equal('REVISION_CONFLICT');
    const staleSave = await f.call('POST', `/entries/${entryId}/revisions`, { body: { fields: { title: 'v4' }, expectedRevision: 2 } });
    expect(staleSave.status).to.equal(409);
    expect(staleSave.body.error.code).to.equal('REVISION_CONFLICT');
  });

  it('the same idempotency key gives the same entry, and a save resent with its key the same revision', async () => {
    const body = { slug: 'idempotent', fields: { title: 'once' } };
    const first = await f.call('POST', `/form-sets/${formSetId}/entries`, { body, headers: { 'Idempotency-Key': 'create-1' } });
    const second = await f.call('POST', `/form-sets/${formSetId}/entries`, { body, headers: { 'Idempotency-Key': 'create-1' } });
    expect(first.status).to.equal(201);
    expect(second.status).to.equal(201);
    expect(second.body.entry.id).to.equal(first.body.entry.id);
    const save = { fields: { title: 'twice' }, idempotencyKey: 'save-1' };
    const s1 = await f.call('POST', `/entries/${first.body.entry.id}/revisions`, { body: save });
    const s2 = await f.call('POST', `/entries/${first.body.entry.id}/revisions`, { body: save });
    expect(s2.body.id).to.equal(s1.body.id);
    const entry = await f.call('GET', `/entries/${first.body.entry.id}`);
    expect(entry.body.revisionCount).to.equal(2);
  });

  it('answers 401 without or with a bad key, 404 for unknown or malformed ids, 400 for malformed JSON', async () => {
    expect((await f.call('GET', '/form-sets', { token: 'sk-agent-not-a-real-key-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' })).status).to.equal(401);
    const none = await fetch(`${f.service.url}/admin/v1/form-sets`);
    expect(none.status).to.equal(401);
    expect(((await none.json()) as { error: { code: string } }).error.code).to.equal('UNAUTHORIZED');
    expect((await f.call('GET', '/form-sets/00000000-0000-4000-8000-000000000000')).status).to.equal(404);
    expect((await f.call('GET', '/form-sets/not-a-uuid')).status).to.equal(404);
    const malformed = await f.call('POST', '/form-sets', { body: '{"slug": ' });
    expect(malformed.status).to.equal(400);
    expect(malformed.body.error.code).to.equal('VALIDATION_ERROR');
  });

  it('a console user signs in, acts with X-Project-Id, and a tenant_user may not publish', async () => {
    const login = await fetch(`${f.service.url}/admin/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: f.project.adminEmail, password: 'correct horse battery staple' }),
    });
    expect(login.status).to.equal(200);
    const { token } = (await login.json()) as { token: string };
    const listed = await f.call('GET', '/form-sets', { token, headers: { 'X-Project-Id': f.project.projectId } });
    expect(listed.status).to.equal(200);
    const noProject = await f.call('GET', '/form-sets', { token });
    expect(noProject.status).to.equal(400);
    const wrong = await fetch(`${f.service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: f.project.adminEmail, password: 'wrong password!' }) });
    expect(wrong.status).to.equal(401);

    const editor = await f.access.createUser({ kind: 'operator', operatorId: 'test' }, { tenantId: f.project.tenantId, email: 'editor@example.com', password: 'editor password 1', role: 'editor' });
    await f.service.supervisor!.waitFor(editor.position, 5000);
    const editorLogin = await fetch(`${f.service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'editor@example.com', password: 'editor password 1' }) });
    const editorToken = ((await editorLogin.json()) as { token: string }).token;
    const headers = { 'X-Project-Id': f.project.projectId };
    const entry = await f.call('POST', `/form-sets/${formSetId}/entries`, { token: editorToken, headers, body: { slug: 'by-editor', fields: { title: 'Editor' } } });
    expect(entry.status, JSON.stringify(entry.body)).to.equal(201);
    const revisionId = entry.body.revision.id;
    expect((await f.call('POST', `/revisions/${revisionId}/submit`, { token: editorToken, headers, body: {} })).body.status).to.equal('pending_review');
    const publish = await f.call('POST', `/revisions/${revisionId}/publish`, { token: editorToken, headers, body: { revision: 1 } });
    expect(publish.status).to.equal(403);
    expect(publish.body.error.code).to.equal('FORBIDDEN');
    const adminPublish = await f.call('POST', `/revisions/${revisionId}/publish`, { token, headers, body: { revision: 1 } });
    expect(adminPublish.body.status).to.equal('published');
  });

  it('keeps projects apart: a key of another project gets 404 for this project\'s resources', async () => {
    const other = await f.access.bootstrap({ kind: 'operator', operatorId: 'test' }, { projectName: 'Other project', plan: 'business', adminEmail: 'other-admin@example.com', adminPassword: 'another long password' });
    await f.service.supervisor!.waitFor(other.position, 5000);
    const token = other.agentKey.key;
    expect((await f.call('GET', `/form-sets/${formSetId}`, { token })).status).to.equal(404);
    expect((await f.call('POST', `/form-sets/${formSetId}/entries`, { token, body: { slug: 'intruder', fields: { title: 'x' } } })).status).to.equal(404);
    expect((await f.call('GET', '/form-sets', { token })).body.items).to.deep.equal([]);
  });
});

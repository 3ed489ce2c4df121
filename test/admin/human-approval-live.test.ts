import { expect } from 'chai';
import { articleFormSet, startAdminFixture, type AdminFixture } from './support.ts';
import { adminSession, PNG_BASE64 } from '../mcp/support.ts';

type Caller = { token: string; headers?: Record<string, string> };

/**
 * humanApproval over everything that changes what the public site serves, against a started server: with the
 * rule on, an agent key may prepare (create, save, submit) but is refused 403 HUMAN_APPROVAL_REQUIRED, naming the
 * setting, when it would rename, delete, re-path, withdraw from schedule or schedule in bulk live content, change a
 * form set with live entries, publish or change a published master, delete media or change a contact form. The
 * public API answers as before each refusal; a person does the same through their session.
 */
describe('humanApproval covers every change to what the public site serves', function () {
  this.timeout(90_000);
  let f: AdminFixture;
  let admin: Caller;
  let formSetId: string;
  let slugs = 0;
  const agent = (): Caller => ({ token: f.project.agentKey.key });

  const call = async (method: string, route: string, caller: Caller, body?: unknown, status?: number) => {
    const answer = await f.call(method, route, { token: caller.token, headers: caller.headers ?? {}, ...(body === undefined ? {} : { body }) });
    if (status !== undefined) expect(answer.status, `${method} ${route}: ${JSON.stringify(answer.body)}`).to.equal(status);
    return answer;
  };
  const refused = async (method: string, route: string, body?: unknown) => {
    const answer = await call(method, route, agent(), body, 403);
    expect(answer.body.error.code, JSON.stringify(answer.body)).to.equal('HUMAN_APPROVAL_REQUIRED');
    expect(answer.body.error.message).to.contain('humanApproval is on');
    expect(answer.body.error.hint).to.contain('approvalPolicy.humanApproval');
    return answer;
  };
  const publicEntry = (slug: string) => fetch(`${f.service.url}/public/p/${f.project.projectId}/v1/form-sets/articles/entries/${slug}`, { redirect: 'manual' });
  /** A live entry: written by the agent key, published by the admin. */
  const liveEntry = async () => {
    const slug = `live-${++slugs}`;
    const created = await call('POST', `/form-sets/${formSetId}/entries`, agent(), { slug, fields: { title: slug } }, 201);
    await call('POST', `/revisions/${created.body.revision.id}/submit`, agent(), {}, 200);
    await call('POST', `/revisions/${created.body.revision.id}/publish`, admin, { revision: 1 }, 200);
    return { id: created.body.entry.id as string, slug, revisionId: created.body.revision.id as string };
  };

  before(async () => {
    f = await startAdminFixture({ plan: 'business' });
    admin = { token: await adminSession(f), headers: { 'X-Project-Id': f.project.projectId } };
    formSetId = (await call('POST', '/form-sets', admin, articleFormSet, 201)).body.id;
    await call('PUT', '/project/approval-policy', admin, { humanApproval: true }, 200);
  });
  after(async () => {
    await f?.stop();
  });

  it('renaming a live entry: refused to the agent key, the public URL unchanged (200, no redirect); a person renames it (301 from then on)', async () => {
    const entry = await liveEntry();
    await refused('PATCH', `/entries/${entry.id}/slug`, { slug: `${entry.slug}-moved` });
    expect((await publicEntry(entry.slug)).status).to.equal(200);
    await call('PATCH', `/entries/${entry.id}/slug`, admin, { slug: `${entry.slug}-moved` }, 200);
    expect((await publicEntry(entry.slug)).status).to.equal(301);
  });

  it('deleting a live entry: refused to the agent key, still served; a person deletes it (404)', async () => {
    const entry = await liveEntry();
    await refused('DELETE', `/entries/${entry.id}`);
    expect((await publicEntry(entry.slug)).status).to.equal(200);
    await call('DELETE', `/entries/${entry.id}`, admin, undefined, 204);
    expect((await publicEntry(entry.slug)).status).to.equal(404);
  });

  it('changing the import path or external id a live entry is found by: refused to the agent key', async () => {
    const entry = await liveEntry();
    await refused('PUT', `/entries/${entry.id}/import-metadata`, { importPath: '/news/elsewhere' });
    await call('PUT', `/entries/${entry.id}/import-metadata`, admin, { importPath: '/news/elsewhere' }, 200);
  });

  it('withdrawing a scheduled revision (a person approved it): refused to the agent key; withdrawing its own submission is not', async () => {
    const entry = await liveEntry();
    const saved = await call('POST', `/entries/${entry.id}/revisions`, agent(), { fields: { title: 'Second' } }, 201);
    await call('POST', `/revisions/${saved.body.id}/submit`, agent(), {}, 200);
    await call('POST', `/revisions/${saved.body.id}/withdraw`, agent(), {}, 200);
    await call('POST', `/revisions/${saved.body.id}/submit`, agent(), {}, 200);
    await call('POST', `/revisions/${saved.body.id}/approve`, admin, { publishAt: '2099-01-01T00:00:00Z' }, 200);
    await refused('POST', `/revisions/${saved.body.id}/withdraw`, {});
    expect((await call('GET', `/revisions/${saved.body.id}`, admin, undefined, 200)).body.status).to.equal('scheduled');
  });

  it('scheduling in bulk: refused to the agent key as a whole, before any revision', async () => {
    const saved = await call('POST', `/form-sets/${formSetId}/entries`, agent(), { slug: `bulk-${++slugs}`, fields: { title: 'Bulk' } }, 201);
    await call('POST', `/revisions/${saved.body.revision.id}/submit`, agent(), {}, 200);
    const answer = await refused('POST', '/revisions/bulk-schedule', { revisionIds: [saved.body.revision.id], publishAt: '2099-01-01T00:00:00Z' });
    expect(answer.body).not.to.have.property('results');
    expect((await call('GET', `/revisions/${saved.body.revision.id}`, admin, undefined, 200)).body.status).to.equal('pending_review');
  });

  it('an entry never published stays the agent key’s to rename and delete', async () => {
    const draft = await call('POST', `/form-sets/${formSetId}/entries`, agent(), { slug: `draft-${++slugs}`, fields: { title: 'Draft' } }, 201);
    await call('PATCH', `/entries/${draft.body.entry.id}/slug`, agent(), { slug: `draft-${slugs}-renamed` }, 200);
    await call('DELETE', `/entries/${draft.body.entry.id}`, agent(), undefined, 204);
  });

  it('changing a form set with live entries: refused to the agent key; one without live entries it may change', async () => {
    await liveEntry();
    await refused('PUT', `/form-sets/${formSetId}`, { ...articleFormSet, slug: 'stories' });
    const empty = await call('POST', '/form-sets', agent(), { ...articleFormSet, slug: 'empty-set', name: 'Empty' }, 201);
    await call('PUT', `/form-sets/${empty.body.id}`, agent(), { ...articleFormSet, slug: 'empty-set', name: 'Still empty' }, 200);
  });

  it('masters: publishing, and adding records to a published one, are refused to the agent key; a person publishes', async () => {
    const master = await call('POST', '/master-entities', agent(), { key: 'topic', name: 'Topic', records: [{ value: 'news', labels: { en: 'News' } }] }, 201);
    await call('POST', `/master-entities/${master.body.id}/records`, agent(), { value: 'sport', labels: { en: 'Sport' } }, 201);
    await refused('POST', `/master-entities/${master.body.id}/publish`);
    await call('POST', `/master-entities/${master.body.id}/publish`, admin, undefined, 200);
    await refused('POST', `/master-entities/${master.body.id}/records`, { value: 'weather', labels: { en: 'Weather' } });
    const records = await fetch(`${f.service.url}/public/p/${f.project.projectId}/v1/master-entities/topic/records`);
    expect(records.status).to.equal(200);
    const served = JSON.stringify(await records.json());
    expect(served).to.contain('sport');
    expect(served).not.to.contain('weather');
  });

  it('deleting media (every asset is served by its URL): refused to the agent key, still served', async () => {
    const uploaded = await call('POST', '/media', agent(), { base64: PNG_BASE64, fileName: 'pixel.png' }, 201);
    await refused('DELETE', `/media/${uploaded.body.id}`);
    expect((await fetch(uploaded.body.url)).status).to.equal(200);
  });

  it('creating or changing a contact form (live at once: it takes submissions, its autoreply goes to the public): refused to the agent key', async () => {
    const body = { name: 'Contact', slug: 'contact', fields: [{ key: 'email', type: 'email', label: 'E-mail' }], autoreply_subject: 'Thanks' };
    await refused('POST', '/contact-forms', body);
    expect((await fetch(`${f.service.url}/public/p/${f.project.projectId}/v1/contact-forms/contact/submit`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email":"a@example.com"}' })).status).to.equal(404);
    const form = await call('POST', '/contact-forms', admin, body, 201);
    await refused('PATCH', `/contact-forms/${form.body.id}`, { name: 'Contact us' });
    await call('PATCH', `/contact-forms/${form.body.id}`, admin, { name: 'Contact us' }, 200);
  });
});

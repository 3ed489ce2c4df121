import { expect } from 'chai';
import { ManualClock } from '../../src/clock.ts';
import { OPERATOR } from '../admin/support.ts';
import { blogFormSet, PASSWORD, startPublicFixture, type PublicFixture } from './support.ts';

describe('public API: preview tokens', function () {
  this.timeout(60_000);
  const clock = new ManualClock(new Date());
  let f: PublicFixture;
  let formSetId: string;
  let draft: { entryId: string; revisionId: string };
  let session: { token: string; headers: Record<string, string> };

  before(async () => {
    f = await startPublicFixture({ clock });
    const created = await f.call('POST', '/form-sets', { body: blogFormSet() });
    formSetId = created.body.id;
    const entry = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug: 'unreleased', fields: { title: { en: 'Secret draft', ja: '下書き' } } } });
    expect(entry.status, JSON.stringify(entry.body)).to.equal(201);
    draft = { entryId: entry.body.entry.id, revisionId: entry.body.revision.id };
    session = { token: await f.sessionToken(), headers: { 'X-Project-Id': f.project.projectId } };
    await f.settle();
  });
  after(() => f.stop());

  async function issue(revisionId = draft.revisionId) {
    const response = await f.call('POST', `/revisions/${revisionId}/preview-token`, { token: session.token, headers: session.headers });
    expect(response.status, JSON.stringify(response.body)).to.equal(201);
    return response.body as { token: string; expiresAt: string; previewUrl: string };
  }

  it('returns a draft revision in the single-entry shape with its status, and is never cached', async () => {
    const { token, expiresAt, previewUrl } = await issue();
    // JWT times are whole seconds.
    expect(new Date(expiresAt).getTime() - clock.now().getTime()).to.be.within(15 * 60 * 1000 - 1000, 15 * 60 * 1000);
    expect(previewUrl).to.equal(`${f.pinnedBase}/preview/revisions?token=${encodeURIComponent(token)}`);
    const response = await f.get(`/preview/revisions?token=${encodeURIComponent(token)}&locale=ja`);
    expect(response.status, response.text).to.equal(200);
    expect(response.body.entry).to.deep.equal({ id: draft.entryId, slug: 'unreleased' });
    expect(response.body.revision).to.include({ id: draft.revisionId, revision: 1, status: 'draft' });
    expect(response.body.data.title).to.equal('下書き');
    expect(response.body).to.include.keys(['formSet', 'mediaUrls', 'widgetRoles']);
    expect(response.headers.get('cache-control')).to.equal('private, no-store');
    // The public API itself still does not know the entry.
    expect((await f.get('/form-sets/blog/entries/unreleased')).status).to.equal(404);
  });

  it('refuses a tampered, expired or foreign token with 401 UNAUTHORIZED, and a missing one with 400', async () => {
    const { token } = await issue();
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const flipped = `${header}.${payload}.${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const bad of [flipped, 'not-a-jwt', `${header}.${payload}.`]) {
      const response = await f.get(`/preview/revisions?token=${encodeURIComponent(bad)}`);
      expect(response.status, bad).to.equal(401);
      expect(response.body.error.code).to.equal('UNAUTHORIZED');
      expect(response.headers.get('access-control-allow-origin')).to.equal('*');
    }
    const missing = await f.get('/preview/revisions');
    expect(missing.status).to.equal(400);
    expect(missing.body.error.message).to.match(/^token: /);

    // Another project of the same service: its base refuses the token.
    const other = await f.access.bootstrap(OPERATOR, { projectName: 'Other', plan: 'business', adminEmail: 'other-admin@example.com', adminPassword: PASSWORD });
    await f.service.supervisor!.waitFor(other.position, 5000);
    const foreign = await f.get(`/preview/revisions?token=${encodeURIComponent(token)}`, {}, `${f.service.url}/public/p/${other.projectId}/v1`);
    expect(foreign.status).to.equal(401);

    clock.advance(15 * 60 * 1000 + 1000);
    const expired = await f.get(`/preview/revisions?token=${encodeURIComponent(token)}`);
    expect(expired.status).to.equal(401);
    expect(expired.body.error.message).to.match(/expired/);
  });

  it('is issued to console users only, for revisions of the project', async () => {
    const byAgent = await f.call('POST', `/revisions/${draft.revisionId}/preview-token`);
    expect(byAgent.status).to.equal(403);
    expect(byAgent.body.error.code).to.equal('FORBIDDEN');
    const unknown = await f.call('POST', '/revisions/00000000-0000-4000-8000-000000000000/preview-token', { token: session.token, headers: session.headers });
    expect(unknown.status).to.equal(404);
  });
});

describe('public API: full-text search (q)', function () {
  this.timeout(60_000);
  let f: PublicFixture;
  let free: PublicFixture;

  before(async () => {
    f = await startPublicFixture({ plan: 'business' });
    const formSet = await f.call('POST', '/form-sets', { body: blogFormSet() });
    const id = formSet.body.id as string;
    await f.publish(id, 'tokyo', { title: { en: 'Night views', ja: '東京タワーの夜景' }, meta_description: { ja: '東京都庁の展望室から見る夜景です。' } });
    await f.publish(id, 'beijing', { title: { en: 'Campus history', ja: '北京大学的历史' } });
    await f.publish(id, 'towers', { title: { en: 'Tower, tower, tower' }, meta_description: { en: 'All about the tower.' } });
    await f.publish(id, 'bridges', { title: { en: 'Bridges of the world' }, meta_description: { en: 'One tower appears here too, among many bridges and rivers and roads.' } });
    await f.publish(id, 'rich', { title: { en: 'Formatted' }, body: { en: { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Lighthouses at dusk' }] }] } } });
    free = await startPublicFixture({ plan: 'free', env: { TRUST_PROXY: 'true' } });
    const freeSet = await free.call('POST', '/form-sets', { body: blogFormSet() });
    await free.publish(freeSet.body.id, 'post', { title: { en: 'Anything' } });
  });
  after(async () => {
    await f.stop();
    await free.stop();
  });

  const slugs = async (query: string) => {
    const response = await f.get(`/form-sets/blog/entries?${query}`);
    expect(response.status, `${query}: ${response.text}`).to.equal(200);
    return { slugs: response.body.items.map((i: any) => i.entry.slug) as string[], total: response.body.total as number };
  };

  it('finds Japanese and Chinese words in text without spaces, in the requested locale', async () => {
    expect((await slugs(`q=${encodeURIComponent('東京')}&locale=ja`)).slugs).to.deep.equal(['tokyo']);
    expect((await slugs(`q=${encodeURIComponent('夜景')}&locale=ja`)).slugs).to.deep.equal(['tokyo']);
    expect((await slugs(`q=${encodeURIComponent('京都')}&locale=ja`)).slugs).to.deep.equal(['tokyo']);
    expect((await slugs(`q=${encodeURIComponent('大学')}&locale=ja`)).slugs).to.deep.equal(['beijing']);
    expect((await slugs(`q=${encodeURIComponent('東京')}&locale=en`)).slugs).to.deep.equal([]);
  });

  it('ranks English matches by relevance, searches rich text, and combines with paging', async () => {
    const tower = await slugs('q=tower');
    expect(tower.slugs).to.deep.equal(['towers', 'bridges']);
    expect(tower.total).to.equal(2);
    expect((await slugs('q=TOWER&limit=1&page=2')).slugs).to.deep.equal(['bridges']);
    expect((await slugs('q=lighthouses')).slugs).to.deep.equal(['rich']);
    expect((await slugs('q=tower%20rivers')).slugs).to.deep.equal(['bridges']);
    expect((await slugs('q=tower&sort=created_at:desc')).slugs).to.deep.equal(['bridges', 'towers']);
    expect((await slugs('q=zebra')).total).to.equal(0);
  });

  it('behind a trusted proxy (TRUST_PROXY=true), resolves the project and builds URLs from X-Forwarded-Host and -Proto', async () => {
    const session = await free.sessionToken();
    const domains = await free.call('PUT', '/project/custom-domains', { token: session, headers: { 'X-Project-Id': free.project.projectId }, body: { domains: ['news.example.test'] } });
    expect(domains.status, JSON.stringify(domains.body)).to.equal(200);
    await free.settle();
    const { getWithHost } = await import('./support.ts');
    const url = `${free.service.url}/public/v1/form-sets/blog/entries/post`;
    const forwarded = await getWithHost(url, '127.0.0.1', { 'x-forwarded-host': 'news.example.test', 'x-forwarded-proto': 'https' });
    expect(forwarded.status).to.equal(200);
    const sitemap = await getWithHost(`${free.service.url}/public/v1/sitemap.xml`, '127.0.0.1', { 'x-forwarded-host': 'news.example.test', 'x-forwarded-proto': 'https' });
    expect(sitemap.body).to.include('<loc>https://news.example.test/blog/post</loc>');
    expect((await getWithHost(url, '127.0.0.1')).status).to.equal(404);
  });

  it('answers 403 PLAN_REQUIRED below the Business plan, and 400 for an over-long query', async () => {
    const response = await free.get('/form-sets/blog/entries?q=anything');
    expect(response.status).to.equal(403);
    expect(response.body.error.code).to.equal('PLAN_REQUIRED');
    expect(response.body.error.message).to.match(/Business/);
    expect((await free.get('/form-sets/blog/entries')).status).to.equal(200);
    const long = await f.get(`/form-sets/blog/entries?q=${'a'.repeat(201)}`);
    expect(long.status).to.equal(400);
    expect(long.body.error.message).to.match(/^q: /);
  });
});

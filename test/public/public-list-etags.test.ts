import { hash } from 'node:crypto';
import path from 'node:path';
import { expect } from 'chai';
import { answeredBy, blogFormSet, getWithHost, startPublicFixture, type PublicFixture } from './support.ts';
import { startApiReplica } from '../admin/support.ts';
import type { RunningService } from '../../src/service/service.ts';
import { eventually } from '../support/engine-fixture.ts';
import { tempDir } from '../support/temp-dir.ts';
import { listEtag, type EntryListRequest } from '../../src/http/public/entry-reads.ts';
import type { PublicFormSetDoc } from '../../projections/public-content.ts';

/** Requests the service answered before Koa from its read models so far. */
const fastAnswers = (f: PublicFixture) => answeredBy(f.service, 'read-model');

describe('public API: a list page\'s ETag names the list\'s last change, not a hash of the page', function () {
  this.timeout(60_000);
  const dataDir = path.join(tempDir(), 'data');
  let f: PublicFixture;
  let replica: RunningService | undefined;
  let blogId: string;
  let newsId: string;
  let first: { entryId: string };
  const page = '/form-sets/blog/entries?limit=1&sort=published_date:desc';
  const etagOf = async (base: string, target: string) => {
    const response = await fetch(`${base}${target}`);
    expect(response.status, target).to.equal(200);
    const etag = response.headers.get('etag')!;
    // Not a digest of the bytes sent (the ETag of responses whose content version is not known).
    expect(etag, target).to.not.equal(`"${hash('sha1', Buffer.from(await response.arrayBuffer()), 'base64url')}"`);
    return etag;
  };
  const host = () => new URL(f.service.url).host;

  before(async () => {
    f = await startPublicFixture({ env: { DATA_DIR: dataDir, PUBLIC_RESPONSE_CACHE_MB: '0' } });
    blogId = (await f.call('POST', '/form-sets', { body: blogFormSet() })).body.id;
    newsId = (await f.call('POST', '/form-sets', { body: blogFormSet('news') })).body.id;
    first = await f.publish(blogId, 'first-post', { title: { en: 'First post', ja: '最初' }, published_date: '2026-03-01' });
    await f.publish(blogId, 'second-post', { title: { en: 'Second post' }, published_date: '2026-01-15' });
    await f.publish(newsId, 'headline', { title: { en: 'Headline' } });
    // The agent key's first use is recorded before the replica starts (an access change drops its caches).
    await f.call('GET', '/form-sets');
    await f.settle();
  });
  after(async () => {
    await replica?.stop();
    await f?.stop();
  });

  it('is the same on every read and in every process, and differs with every parameter of the page', async () => {
    const etag = await etagOf(f.pinnedBase, page);
    expect(etag).to.match(/^"[A-Za-z0-9_-]{27}"$/);
    expect(await etagOf(f.pinnedBase, page)).to.equal(etag);
    // HEAD is answered by Koa's route: the same ETag.
    expect((await fetch(`${f.pinnedBase}${page}`, { method: 'HEAD' })).headers.get('etag')).to.equal(etag);
    // An API-only process on the same data folder, asked for the same URL (replicas behind one host name), names the page the same way.
    replica = await startApiReplica(dataDir, { PUBLIC_RESPONSE_CACHE_MB: '0' });
    const replicaBase = `${replica.url}/public/p/${f.project.projectId}/v1`;
    const fromReplica = await getWithHost(`${replicaBase}${page}`, host());
    expect(fromReplica.status).to.equal(200);
    expect(fromReplica.headers['etag']).to.equal(etag);
    const variants = [
      page,
      '/form-sets/blog/entries?limit=2&sort=published_date:desc',
      '/form-sets/blog/entries?limit=1&page=2&sort=published_date:desc',
      '/form-sets/blog/entries?limit=1&sort=published_date:asc',
      '/form-sets/blog/entries?limit=1&sort=published_date:desc&locale=ja',
      '/form-sets/blog/entries?limit=1&sort=published_date:desc&include_snapshot=true',
      '/form-sets/blog/entries?limit=1&sort=published_date:desc&q=first',
      '/form-sets/news/entries?limit=1&sort=published_date:desc',
    ];
    const etags = await Promise.all(variants.map((target) => etagOf(f.pinnedBase, target)));
    expect(new Set(etags).size, etags.join(' ')).to.equal(variants.length);
    // On another host the media URLs of include_snapshot differ: so does the ETag.
    const snapshot = '/form-sets/blog/entries?limit=1&sort=published_date:desc&include_snapshot=true';
    expect(await etagOf(replicaBase, snapshot)).to.not.equal(await etagOf(f.pinnedBase, snapshot));
  });

  it('answers a conditional request for the page the client holds with 304 and the headers of the 200', async () => {
    const etag = await etagOf(f.pinnedBase, page);
    const before = await fastAnswers(f);
    const again = await getWithHost(`${f.pinnedBase}${page}`, host(), { 'if-none-match': `"other", ${etag}` });
    expect(again.status).to.equal(304);
    expect(again.headers['etag']).to.equal(etag);
    expect(again.headers['content-type']).to.equal(undefined);
    expect(again.headers['cache-control']).to.equal('public, no-cache');
    expect(again.headers['access-control-allow-origin']).to.equal('*');
    expect(again.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/);
    expect(await fastAnswers(f)).to.equal(before + 1);
    // Asked for no-cache: the page again.
    const forced = await getWithHost(`${f.pinnedBase}${page}`, host(), { 'if-none-match': etag, 'cache-control': 'no-cache' });
    expect(forced.status).to.equal(200);
    expect(forced.body.items).to.have.length(1);
  });

  it('keeps it while other form sets change, and changes it with the list: a publish, the form set\'s name, a deletion', async () => {
    const etag = await etagOf(f.pinnedBase, page);
    const saveAndPublish = async (entryId: string, fields: Record<string, unknown>) => {
      const saved = await f.call('POST', `/entries/${entryId}/revisions`, { body: { fields } });
      expect(saved.status, JSON.stringify(saved.body)).to.equal(201);
      await f.call('POST', `/revisions/${saved.body.id}/submit`, { body: {} });
      const published = await f.call('POST', `/revisions/${saved.body.id}/publish`, { body: { revision: saved.body.revision } });
      expect(published.status, JSON.stringify(published.body)).to.equal(200);
      await f.settle();
    };

    // Another form set's publish: this list is the same, so is its ETag (a revalidating cache gets 304).
    await f.publish(newsId, 'another-headline', { title: { en: 'Another headline' } });
    expect(await etagOf(f.pinnedBase, page)).to.equal(etag);
    expect((await getWithHost(`${f.pinnedBase}${page}`, host(), { 'if-none-match': etag })).status).to.equal(304);

    // A new revision of an entry of the list.
    await saveAndPublish(first.entryId, { title: { en: 'First post, revised' }, published_date: '2026-03-01' });
    const afterPublish = await etagOf(f.pinnedBase, page);
    expect(afterPublish).to.not.equal(etag);
    const stale = await getWithHost(`${f.pinnedBase}${page}`, host(), { 'if-none-match': etag });
    expect(stale.status).to.equal(200);
    expect(stale.body.items[0].published.revision).to.equal(2);

    // The form set's name, which heads every page.
    const definition = (await f.call('GET', `/form-sets/${blogId}`)).body;
    const renamed = await f.call('PUT', `/form-sets/${blogId}`, { body: { ...blogFormSet(), name: 'Blog, renamed' } });
    expect(renamed.status, JSON.stringify(renamed.body)).to.equal(200);
    expect(definition.name).to.equal('Blog');
    await f.settle();
    const afterRename = await etagOf(f.pinnedBase, page);
    expect(afterRename).to.not.equal(afterPublish);
    expect((await getWithHost(`${f.pinnedBase}${page}`, host(), { 'if-none-match': afterPublish })).body.formSet.name).to.equal('Blog, renamed');

    // A deletion: the total changes.
    const deleted = await f.call('DELETE', `/entries/${first.entryId}`);
    expect(deleted.status, JSON.stringify(deleted.body)).to.be.oneOf([200, 204]);
    await f.settle();
    expect(await etagOf(f.pinnedBase, page)).to.not.equal(afterRename);
    expect((await getWithHost(`${f.pinnedBase}${page}`, host(), { 'if-none-match': afterRename })).body.total).to.equal(1);

    // The replica follows (it learns of the changes at its next poll) and names the page as the projector's process does.
    const replicaBase = `${replica!.url}/public/p/${f.project.projectId}/v1`;
    const now = await etagOf(f.pinnedBase, page);
    await eventually(async () => (await getWithHost(`${replicaBase}${page}`, host())).headers['etag'], (tag) => tag === now);
  });

  it('digests everything a page is made of, the form set as the page shows it too (read apart, maybe a moment older)', () => {
    const formSet = { formSetId: 'fs-1', slug: 'blog', name: 'Blog', description: null } as unknown as PublicFormSetDoc;
    const request: EntryListRequest = { formSet, locale: 'en', limit: 20, offset: 0, sort: { field: 'publishedAt', direction: 'desc' }, text: undefined, includeSnapshot: false };
    const summary = '{"id":"fs-1","slug":"blog","name":"Blog","description":null}';
    const base = 'https://cms.example.com/public/v1';
    const etag = listEtag('event-1', summary, request, base);
    const others = [
      listEtag('event-2', summary, request, base),
      listEtag('event-1', summary.replace('"Blog"', '"Blog, renamed"'), request, base),
      listEtag('event-1', summary, { ...request, locale: 'ja' }, base),
      listEtag('event-1', summary, { ...request, limit: 21 }, base),
      listEtag('event-1', summary, { ...request, offset: 20 }, base),
      listEtag('event-1', summary, { ...request, sort: { field: 'publishedAt', direction: 'asc' } }, base),
      listEtag('event-1', summary, { ...request, sort: undefined }, base),
      listEtag('event-1', summary, { ...request, text: ['first'] }, base),
      listEtag('event-1', summary, { ...request, includeSnapshot: true }, base),
      listEtag('event-1', summary, request, 'https://other.example.com/public/v1'),
    ];
    expect(listEtag('event-1', summary, { ...request }, base)).to.equal(etag);
    expect(new Set([etag, ...others]).size).to.equal(others.length + 1);
  });
});

import { expect } from 'chai';
import { assetId, blogFormSet, getWithHost, startPublicFixture, type PublicFixture } from './support.ts';

describe('public API: entries, lists, lookups and masters over HTTP', function () {
  this.timeout(60_000);
  let f: PublicFixture;
  let formSetId: string;
  const cover = assetId();
  const file = assetId();
  let first: { entryId: string; revisionId: string };

  before(async () => {
    f = await startPublicFixture();
    const created = await f.call('POST', '/form-sets', { body: blogFormSet() });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    formSetId = created.body.id;
    first = await f.publish(formSetId, 'first-post', {
      title: { en: 'First post', ja: '最初の投稿' },
      meta_description: { en: 'An English summary' },
      body: { en: { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Hello world' }] }] } },
      published_date: '2026-03-01',
      og_image: cover,
      attachment: file,
      rating: 4,
    });
    await f.publish(formSetId, 'second-post', { title: { en: 'Second post' }, published_date: '2026-01-15', rating: 2 });
    await f.publish(formSetId, 'third-post', { title: { en: 'Third post' }, published_date: '2026-06-30', rating: 5 });
  });
  after(() => f.stop());

  describe('GET /form-sets/{formSetSlug}/entries/{entrySlug}', () => {
    it('answers the single-entry shape with data, mediaUrls on the request base and widgetRoles by field', async () => {
      const response = await f.get('/form-sets/blog/entries/first-post');
      expect(response.status, response.text).to.equal(200);
      expect(response.headers.get('content-type')).to.match(/^application\/json/);
      const body = response.body;
      expect(body.formSet).to.deep.equal({ id: formSetId, slug: 'blog', name: 'Blog' });
      expect(body.entry).to.deep.equal({ id: first.entryId, slug: 'first-post' });
      expect(body.revision).to.include({ id: first.revisionId, revision: 1 });
      expect(body.revision.updatedAt).to.match(/^\d{4}-\d\d-\d\dT/);
      expect(body.data).to.include({ title: 'First post', meta_description: 'An English summary', published_date: '2026-03-01', rating: 4, og_image: cover });
      expect(body.mediaUrls).to.deep.equal({ og_image: `${f.pinnedBase}/media/${cover}`, attachment: `${f.pinnedBase}/media/${file}` });
      expect(body.widgetRoles).to.deep.equal({ title: 'title', published_date: 'date', og_image: 'thumbnail' });
    });

    it('answers values in the requested locale, falling back to the default locale where it has none', async () => {
      const ja = await f.get('/form-sets/blog/entries/first-post?locale=ja');
      expect(ja.status).to.equal(200);
      expect(ja.body.data.title).to.equal('最初の投稿');
      expect(ja.body.data.meta_description).to.equal('An English summary');
      const unknown = await f.get('/form-sets/blog/entries/first-post?locale=fr');
      expect(unknown.status).to.equal(400);
      expect(unknown.body.error.code).to.equal('VALIDATION_ERROR');
      expect(unknown.body.error.message).to.match(/^locale: /);
    });

    it('answers 404 NOT_FOUND in the envelope for an unknown entry, form set or project', async () => {
      for (const path of ['/form-sets/blog/entries/nope', '/form-sets/nope/entries/first-post']) {
        const response = await f.get(path);
        expect(response.status).to.equal(404);
        expect(response.body.error.code).to.equal('NOT_FOUND');
      }
      const foreign = await f.get('/form-sets/blog/entries/first-post', {}, `${f.service.url}/public/p/00000000-0000-4000-8000-000000000000/v1`);
      expect(foreign.status).to.equal(404);
      const malformed = await f.get('/form-sets/blog/entries/first-post', {}, `${f.service.url}/public/p/not-a-uuid/v1`);
      expect(malformed.status).to.equal(404);
    });

    it('answers 301 from every former slug straight to the current one, after two renames', async () => {
      const entry = await f.publish(formSetId, 'old-name', { title: { en: 'Renamed' } });
      for (const slug of ['middle-name', 'new-name']) {
        const renamed = await f.call('PATCH', `/entries/${entry.entryId}/slug`, { body: { slug } });
        expect(renamed.status, JSON.stringify(renamed.body)).to.equal(200);
      }
      await f.settle();
      for (const former of ['old-name', 'middle-name']) {
        const moved = await f.get(`/form-sets/blog/entries/${former}?locale=ja`);
        expect(moved.status).to.equal(301);
        expect(moved.headers.get('location')).to.equal(`${f.pinnedBase}/form-sets/blog/entries/new-name?locale=ja`);
        const seo = await f.get(`/form-sets/blog/entries/${former}/ogp.json`);
        expect(seo.status).to.equal(301);
        expect(seo.headers.get('location')).to.equal(`${f.pinnedBase}/form-sets/blog/entries/new-name/ogp.json`);
      }
      const followed = await fetch(`${f.pinnedBase}/form-sets/blog/entries/old-name`);
      expect(followed.status).to.equal(200);
      expect(((await followed.json()) as { entry: { slug: string } }).entry.slug).to.equal('new-name');
      const bySlug = await f.get('/content/by-slug?formSetSlug=blog&slug=old-name');
      expect(bySlug.status).to.equal(301);
      expect(bySlug.headers.get('location')).to.equal(`${f.pinnedBase}/content/by-slug?formSetSlug=blog&slug=new-name`);
    });

    it('does not serve an entry that was never published, and serves only the published revision', async () => {
      const created = await f.call('POST', `/form-sets/${formSetId}/entries`, { body: { slug: 'draft-only', fields: { title: { en: 'Draft' } } } });
      expect(created.status).to.equal(201);
      const saved = await f.call('POST', `/entries/${first.entryId}/revisions`, { body: { fields: { title: { en: 'Edited, not published' } } } });
      expect(saved.status, JSON.stringify(saved.body)).to.equal(201);
      await f.settle();
      expect((await f.get('/form-sets/blog/entries/draft-only')).status).to.equal(404);
      expect((await f.get('/form-sets/blog/entries/first-post')).body.data.title).to.equal('First post');
    });
  });

  describe('GET /form-sets/{formSetSlug}/entries', () => {
    it('lists published entries with total, limit, offset and items; include_snapshot adds snapshot and mediaUrls', async () => {
      const plain = await f.get('/form-sets/blog/entries?sort=published_date:desc&limit=2&offset=1');
      expect(plain.status, plain.text).to.equal(200);
      expect(plain.body.formSet).to.deep.equal({ id: formSetId, slug: 'blog', name: 'Blog', description: 'Articles' });
      expect(plain.body).to.include({ limit: 2, offset: 1 });
      expect(plain.body.total).to.be.at.least(3);
      expect(plain.body.items.map((i: any) => i.entry.slug)).to.deep.equal(['first-post', 'second-post']);
      const item = plain.body.items[0];
      expect(item.published).to.have.keys(['revisionId', 'revision', 'updatedAt']);
      const withSnapshot = await f.get('/form-sets/blog/entries?sort=published_date:desc&limit=2&offset=1&include_snapshot=true&locale=ja');
      expect(withSnapshot.body.items[0].published.snapshot.title).to.equal('最初の投稿');
      expect(withSnapshot.body.items[0].published.mediaUrls.og_image).to.equal(`${f.pinnedBase}/media/${cover}`);
    });

    it('sorts by built-in keys and scalar fields, and pages by page or offset (offset wins)', async () => {
      const byRating = await f.get('/form-sets/blog/entries?sort=rating:desc&limit=3');
      expect(byRating.body.items.map((i: any) => i.entry.slug)).to.deep.equal(['third-post', 'first-post', 'second-post']);
      const page2 = await f.get('/form-sets/blog/entries?sort=published_date:desc&limit=1&page=2');
      expect(page2.body.offset).to.equal(1);
      expect(page2.body.items.map((i: any) => i.entry.slug)).to.deep.equal(['first-post']);
      const both = await f.get('/form-sets/blog/entries?sort=published_date:desc&limit=1&page=3&offset=0');
      expect(both.body.offset).to.equal(0);
      expect(both.body.items.map((i: any) => i.entry.slug)).to.deep.equal(['third-post']);
      for (const key of ['created_at', 'updated_at', 'published_at']) {
        const response = await f.get(`/form-sets/blog/entries?sort=${key}:asc`);
        expect(response.status, key).to.equal(200);
        expect(response.body.items[0].entry.slug, key).to.equal('first-post');
      }
    });

    it('sorts by a field with a sort slot (an index) and by one without (a scan) alike: values in order, nulls first ascending, ties by entry', async () => {
      // The three posts of before(), among what the tests above published.
      const posts = new Set(['first-post', 'second-post', 'third-post']);
      const slugs = async (sort: string) => (await f.get(`/form-sets/blog/entries?sort=${sort}&limit=100`)).body.items.map((i: any) => i.entry.slug).filter((slug: string) => posts.has(slug));
      // title, published_date and rating have slots (short scalar types); meta_description (a textarea) does not.
      expect(await slugs('title:asc')).to.deep.equal(['first-post', 'second-post', 'third-post']);
      expect(await slugs('title:desc')).to.deep.equal(['third-post', 'second-post', 'first-post']);
      expect(await slugs('rating:asc')).to.deep.equal(['second-post', 'first-post', 'third-post']);
      const withoutMeta = (await slugs('meta_description:asc')).slice(0, 2);
      expect(withoutMeta).to.have.members(['second-post', 'third-post']);
      expect(await slugs('meta_description:asc')).to.deep.equal([...withoutMeta, 'first-post']);
      expect(await slugs('meta_description:desc')).to.deep.equal(['first-post', ...[...withoutMeta].reverse()]);
    });

    it('refuses bad parameters with 400 VALIDATION_ERROR naming the parameter', async () => {
      const cases: Array<[string, string]> = [
        ['limit=101', 'limit'],
        ['limit=0', 'limit'],
        ['page=0', 'page'],
        ['page=abc', 'page'],
        ['offset=-1', 'offset'],
        ['sort=published_date', 'sort'],
        ['sort=title:up', 'sort'],
        ['sort=unknown_field:asc', 'sort'],
        ['sort=body:asc', 'sort'],
        ['include_snapshot=maybe', 'include_snapshot'],
        ['locale=xx', 'locale'],
        ['limit=5&limit=6', 'limit'],
      ];
      for (const [query, parameter] of cases) {
        const response = await f.get(`/form-sets/blog/entries?${query}`);
        expect(response.status, query).to.equal(400);
        expect(response.body.error.code, query).to.equal('VALIDATION_ERROR');
        expect(response.body.error.message, query).to.match(new RegExp(`^${parameter}: `));
      }
    });
  });

  describe('GET /form-sets/{slug}', () => {
    it('answers the primary entry: slug main, else _legacy, else the oldest entry', async () => {
      const other = await f.call('POST', '/form-sets', { body: { ...blogFormSet('pages'), name: 'Pages', sitemap: { urlPattern: '/{slug}' } } });
      expect(other.status, JSON.stringify(other.body)).to.equal(201);
      expect((await f.get('/form-sets/pages')).status).to.equal(404);
      await f.publish(other.body.id, 'about', { title: { en: 'About' } });
      await f.publish(other.body.id, 'contact', { title: { en: 'Contact' } });
      const oldest = await f.get('/form-sets/pages');
      expect(oldest.status).to.equal(200);
      expect(oldest.body.entry.slug).to.equal('about');
      expect(oldest.body.formSet).to.deep.equal({ id: other.body.id, slug: 'pages', name: 'Pages', description: 'Articles' });
      expect(oldest.body).to.have.keys(['formSet', 'entry', 'revision', 'data', 'mediaUrls']);
      await f.publish(other.body.id, 'main', { title: { en: 'Home', ja: 'ホーム' } });
      const main = await f.get('/form-sets/pages?locale=ja');
      expect(main.body.entry.slug).to.equal('main');
      expect(main.body.data.title).to.equal('ホーム');
    });
  });

  describe('content lookups', () => {
    before(async () => {
      const set = await f.call('PUT', `/entries/${first.entryId}/import-metadata`, {
        body: { importPath: '/legacy/first.html', external: { sourceType: 'wordpress', entityType: 'post', externalId: 'wp-42' } },
      });
      expect(set.status, JSON.stringify(set.body)).to.equal(200);
      await f.settle();
    });

    it('finds an entry by import path, by slug and by external id', async () => {
      const byPath = await f.get(`/content/by-path?path=${encodeURIComponent('/legacy/first.html')}&locale=ja`);
      expect(byPath.status, byPath.text).to.equal(200);
      expect(byPath.body.entry.slug).to.equal('first-post');
      expect(byPath.body.data.title).to.equal('最初の投稿');
      expect(byPath.body).to.have.keys(['formSet', 'entry', 'revision', 'data', 'mediaUrls', 'widgetRoles']);
      const bySlug = await f.get('/content/by-slug?formSetSlug=blog&slug=first-post');
      expect(bySlug.body.entry.id).to.equal(first.entryId);
      for (const query of ['externalId=wp-42', 'externalId=wp-42&sourceType=wordpress', 'externalId=wp-42&sourceType=wordpress&entityType=post']) {
        const response = await f.get(`/content/by-external-id?${query}`);
        expect(response.status, query).to.equal(200);
        expect(response.body.entry.id, query).to.equal(first.entryId);
      }
      expect((await f.get('/content/by-external-id?externalId=wp-42&sourceType=drupal')).status).to.equal(404);
      expect((await f.get('/content/by-path?path=/nope')).status).to.equal(404);
    });

    it('answers 400 naming a missing required parameter or a value over its length limit', async () => {
      const cases: Array<[string, string]> = [
        ['/content/by-path', 'path'],
        ['/content/by-slug?slug=x', 'formSetSlug'],
        ['/content/by-slug?formSetSlug=blog', 'slug'],
        ['/content/by-external-id?sourceType=x', 'externalId'],
        [`/content/by-external-id?externalId=x&sourceType=${'s'.repeat(51)}`, 'sourceType'],
        [`/content/by-external-id?externalId=x&entityType=${'e'.repeat(201)}`, 'entityType'],
        [`/content/by-external-id?externalId=${'i'.repeat(2001)}`, 'externalId'],
      ];
      for (const [path, parameter] of cases) {
        const response = await f.get(path);
        expect(response.status, path).to.equal(400);
        expect(response.body.error.code).to.equal('VALIDATION_ERROR');
        expect(response.body.error.message, path).to.match(new RegExp(`^${parameter}: `));
      }
      expect((await f.get(`/content/by-external-id?externalId=x&sourceType=${'s'.repeat(50)}`)).status).to.equal(404);
    });
  });

  describe('masters', () => {
    it('lists only published masters, answers 404 for an unpublished one, and resolves labels by locale', async () => {
      const created = await f.call('POST', '/master-entities', {
        body: { key: 'categories', name: 'Categories', records: [{ value: 'news', labels: { en: 'News', ja: 'ニュース' } }, { value: 'tips', labels: { en: 'Tips' } }] },
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      await f.settle();
      expect((await f.get('/master-entities')).body.items).to.deep.equal([]);
      const hidden = await f.get('/master-entities/categories/records');
      expect(hidden.status).to.equal(404);
      expect(hidden.body.error.code).to.equal('NOT_FOUND');

      const published = await f.call('POST', `/master-entities/${created.body.id}/publish`, { body: {} });
      expect(published.status, JSON.stringify(published.body)).to.be.oneOf([200, 201]);
      await f.settle();
      const list = await f.get('/master-entities');
      expect(list.body.items.map((m: any) => m.key)).to.deep.equal(['categories']);
      expect(list.body.items[0]).to.include({ id: created.body.id, key: 'categories', name: 'Categories', recordCount: 2 });
      const ja = await f.get('/master-entities/categories/records?locale=ja');
      expect(ja.status).to.equal(200);
      expect(ja.body.items.map((r: any) => [r.value, r.label])).to.deep.equal([
        ['news', 'ニュース'],
        ['tips', 'Tips'],
      ]);
      expect(Object.keys(ja.body.items[0]).sort()).to.deep.equal(['label', 'parent', 'value']);
    });
  });

  describe('bases, CORS and conditional requests', () => {
    it('resolves the project from a public key in the header, as a bearer token or as api_key', async () => {
      const key = f.project.publicKey.key;
      const base = `${f.service.url}/public/v1`;
      for (const [headers, query] of [
        [{ 'X-Service-Public-Api-Key': key }, ''],
        [{ Authorization: `Bearer ${key}` }, ''],
        [{}, `&api_key=${encodeURIComponent(key)}`],
      ] as Array<[Record<string, string>, string]>) {
        const response = await f.get(`/form-sets/blog/entries/first-post?locale=en${query}`, headers, base);
        expect(response.status, JSON.stringify(headers) + query).to.equal(200);
        // Media URLs must load in a browser, which sends no key: they are on the project-pinned base.
        expect(response.body.mediaUrls.og_image).to.equal(`${f.pinnedBase}/media/${cover}`);
      }
      const none = await f.get('/form-sets/blog/entries/first-post', {}, base);
      expect(none.status).to.equal(404);
      expect(none.body.error.code).to.equal('NOT_FOUND');
      const wrong = await f.get('/form-sets/blog/entries/first-post', { 'X-Service-Public-Api-Key': 'service_pub_nope' }, base);
      expect(wrong.status).to.equal(404);
    });

    it('resolves the project from a custom domain in Host, and ignores X-Forwarded-Host unless TRUST_PROXY is on', async () => {
      const session = await f.sessionToken();
      const domains = await f.call('PUT', '/project/custom-domains', { token: session, headers: { 'X-Project-Id': f.project.projectId }, body: { domains: ['www.example.test'] } });
      expect(domains.status, JSON.stringify(domains.body)).to.equal(200);
      await f.settle();
      const url = `${f.service.url}/public/v1/form-sets/blog/entries/first-post`;
      const byHost = await getWithHost(url, 'www.example.test');
      expect(byHost.status).to.equal(200);
      expect(byHost.body.mediaUrls.og_image).to.equal(`http://www.example.test/public/v1/media/${cover}`);
      const forwarded = await getWithHost(url, '127.0.0.1', { 'x-forwarded-host': 'www.example.test', 'x-forwarded-proto': 'https' });
      expect(forwarded.status).to.equal(404);
    });

    it('sends Access-Control-Allow-Origin: * on successes, errors, unknown paths and preflight', async () => {
      for (const path of ['/form-sets/blog/entries/first-post', '/form-sets/blog/entries/nope', '/form-sets/blog/entries?limit=500', '/no-such-route']) {
        const response = await f.get(path);
        expect(response.headers.get('access-control-allow-origin'), path).to.equal('*');
      }
      const unresolved = await f.get('/form-sets/blog', {}, `${f.service.url}/public/v1`);
      expect(unresolved.status).to.equal(404);
      expect(unresolved.headers.get('access-control-allow-origin')).to.equal('*');
      const preflight = await fetch(`${f.pinnedBase}/form-sets/blog/entries`, {
        method: 'OPTIONS',
        headers: { origin: 'https://site.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-service-public-api-key' },
      });
      expect(preflight.status).to.equal(204);
      expect(preflight.headers.get('access-control-allow-origin')).to.equal('*');
      expect(preflight.headers.get('access-control-allow-headers')).to.match(/X-Service-Public-Api-Key/i);
    });

    it('answers 304 to a matching If-None-Match and a new ETag once content changes', async () => {
      const response = await f.get('/form-sets/blog/entries/second-post');
      const etag = response.headers.get('etag');
      expect(etag).to.match(/^"[A-Za-z0-9_-]+"$/);
      expect(response.headers.get('cache-control')).to.equal('public, no-cache');
      // node:http rather than fetch: fetch adds Cache-Control: no-cache to conditional requests, which rightly defeats 304.
      const host = new URL(f.service.url).host;
      const again = await getWithHost(`${f.pinnedBase}/form-sets/blog/entries/second-post`, host, { 'if-none-match': etag! });
      expect(again.status).to.equal(304);
      expect(again.body).to.equal('');
      const list = await f.get('/form-sets/blog/entries');
      const listEtag = list.headers.get('etag')!;
      expect((await getWithHost(`${f.pinnedBase}/form-sets/blog/entries`, host, { 'if-none-match': listEtag })).status).to.equal(304);
      await f.publish(formSetId, 'fourth-post', { title: { en: 'Fourth' } });
      expect((await getWithHost(`${f.pinnedBase}/form-sets/blog/entries`, host, { 'if-none-match': listEtag })).status).to.equal(200);
    });
  });
});

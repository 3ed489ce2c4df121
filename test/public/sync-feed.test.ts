import { expect } from 'chai';
import { articleFormSet } from '../admin/support.ts';
import { startPublicFixture, type PublicFixture } from './support.ts';

type Item =
  | { type: 'entry'; id: string; formSet: string; slug: string; previousSlugs: string[]; entry: { entry: { id: string; slug: string }; revision: { id: string }; data: Record<string, unknown> } }
  | { type: 'entry.removed'; id: string; formSet: string | null; slug: string | null; previousSlugs: string[] }
  | { type: 'master'; key: string; master: { items: Array<{ value: string }> } }
  | { type: 'master.removed'; key: string };
interface Page {
  items: Item[];
  cursor: string | null;
  hasMore: boolean;
}

/** A site's copy of the public content, kept by applying the feed. */
class Site {
  readonly entries = new Map<string, { formSet: string; slug: string; title: unknown; revisionId: string }>();
  readonly masters = new Map<string, string[]>();
  cursor: string | null = null;
  /** Each change applied, as `${id}@${revision or 'removed'}`: a change delivered twice in a row for an id shows here. */
  readonly applied: string[] = [];

  apply(item: Item): void {
    switch (item.type) {
      case 'entry':
        this.applied.push(`${item.id}@${item.entry.revision.id}:${item.slug}`);
        this.entries.set(item.id, { formSet: item.formSet, slug: item.slug, title: item.entry.data['title'], revisionId: item.entry.revision.id });
        break;
      case 'entry.removed':
        this.applied.push(`${item.id}@removed`);
        this.entries.delete(item.id);
        break;
      case 'master':
        this.masters.set(item.key, item.master.items.map((r) => r.value));
        break;
      case 'master.removed':
        this.masters.delete(item.key);
        break;
    }
  }
}

/**
 * The sync feed (GET /sync, issue 48) over HTTP against a started service: the initial sync pages through
 * everything published, then deltas since a cursor say what changed (published, renamed with the former slug,
 * removed; masters), filtered by form set and locale, on both bases; a cursor this feed did not make is 400.
 * Then many writers and readers at once: every reader that applies the feed ends with exactly what the public API
 * serves, and no change is delivered to it twice.
 */
describe('the sync feed: what a site applies to stay up to date, since its cursor', function () {
  this.timeout(120_000);
  let f: PublicFixture;
  let articles: string;
  let press: string;
  let slugs = 0;

  const page = async (query: string, base?: string, headers: Record<string, string> = {}): Promise<Page> => {
    const answer = await f.get(`/sync${query}`, headers, base);
    expect(answer.status, answer.text).to.equal(200);
    expect(answer.headers.get('cache-control')).to.equal('no-cache');
    return answer.body as Page;
  };
  /** Reads the feed from the site's cursor until it has nothing more, applying each item. */
  const catchUp = async (site: Site, query = '', limit = 7) => {
    for (;;) {
      const next = await page(`?limit=${limit}${site.cursor ? `&cursor=${site.cursor}` : ''}${query}`);
      for (const item of next.items) site.apply(item);
      if (next.cursor !== null) site.cursor = next.cursor;
      if (!next.hasMore) return;
    }
  };
  const newRevision = async (entryId: string, title: string) => {
    const saved = await f.call('POST', `/entries/${entryId}/revisions`, { body: { fields: { title } } });
    expect(saved.status, JSON.stringify(saved.body)).to.equal(201);
    const revisionId = (saved.body.id ?? saved.body.revision.id) as string;
    expect((await f.call('POST', `/revisions/${revisionId}/submit`, { body: {} })).status).to.equal(200);
    expect((await f.call('POST', `/revisions/${revisionId}/publish`, { body: {} })).status).to.equal(200);
    return revisionId;
  };

  before(async () => {
    f = await startPublicFixture({ plan: 'business' });
    articles = (await f.call('POST', '/form-sets', { body: articleFormSet })).body.id;
    press = (await f.call('POST', '/form-sets', { body: { ...articleFormSet, slug: 'press', name: 'Press' } })).body.id;
  });
  after(async () => {
    await f?.stop();
  });

  it('pages through everything published from the beginning, then says what changed since the cursor, in log order', async () => {
    const empty = await page('');
    expect(empty).to.deep.equal({ items: [], cursor: null, hasMore: false });
    const one = await f.publish(articles, 'one', { title: 'One' });
    const two = await f.publish(articles, 'two', { title: 'Two' });
    const three = await f.publish(press, 'three', { title: 'Three' });
    await f.call('POST', '/form-sets', { body: { ...articleFormSet, slug: 'unpublished', name: 'Nothing live' } });

    const site = new Site();
    const first = await page('?limit=2');
    expect(first.items.map((i) => i.type === 'entry' && i.slug)).to.deep.equal(['one', 'two']);
    expect(first.hasMore).to.equal(true);
    const item = first.items[0] as Extract<Item, { type: 'entry' }>;
    expect(item).to.deep.include({ id: one.entryId, formSet: 'articles', slug: 'one', previousSlugs: [] });
    // The entry as the public API serves it.
    expect(item.entry).to.deep.equal((await f.get('/form-sets/articles/entries/one')).body);
    for (const i of first.items) site.apply(i);
    site.cursor = first.cursor;
    await catchUp(site);
    expect([...site.entries.keys()]).to.have.members([one.entryId, two.entryId, three.entryId]);

    // Changes: a new revision, a rename, a removal; in the order they happened.
    await newRevision(one.entryId, 'One, again');
    expect((await f.call('PATCH', `/entries/${two.entryId}/slug`, { body: { slug: 'two-renamed' } })).status).to.equal(200);
    expect((await f.call('DELETE', `/entries/${three.entryId}`)).status).to.equal(204);
    await f.settle();
    const delta = await page(`?cursor=${site.cursor}`);
    expect(delta.items.map((i) => `${i.type}:${'slug' in i ? i.slug : ''}`)).to.deep.equal(['entry:one', 'entry:two-renamed', 'entry.removed:three']);
    expect(delta.items[1]).to.deep.include({ previousSlugs: ['two'] });
    expect(delta.items[2]).to.deep.equal({ type: 'entry.removed', id: three.entryId, formSet: 'press', slug: 'three', previousSlugs: [] });
    for (const i of delta.items) site.apply(i);
    site.cursor = delta.cursor;
    expect(site.entries.get(one.entryId)!.title).to.equal('One, again');
    // Nothing new: the same cursor back, nothing to apply.
    expect(await page(`?cursor=${site.cursor}`)).to.deep.equal({ items: [], cursor: site.cursor, hasMore: false });
  });

  it('filters by form set and shows the locale asked for; masters when published and when unpublished; both bases', async () => {
    const onlyPress = await page('?form_set=press');
    expect(onlyPress.items.every((i) => 'formSet' in i && i.formSet === 'press')).to.equal(true);
    const ja = await f.publish(articles, `ja-${++slugs}`, { title: { en: 'English', ja: '日本語' } });
    const inJapanese = await page('?locale=ja&form_set=articles');
    const jaItem = inJapanese.items.find((i) => i.type === 'entry' && i.id === ja.entryId) as Extract<Item, { type: 'entry' }>;
    expect(jaItem.entry.data['title']).to.equal('日本語');

    const master = await f.call('POST', '/master-entities', { body: { key: 'topics', name: 'Topics', records: [{ value: 'news', labels: { en: 'News' } }] } });
    expect(master.status, JSON.stringify(master.body)).to.equal(201);
    const site = new Site();
    await catchUp(site);
    expect(site.masters.has('topics'), 'an unpublished master is not in the feed').to.equal(false);
    expect((await f.call('POST', `/master-entities/${master.body.id}/publish`, { body: {} })).status).to.equal(200);
    await f.settle();
    await catchUp(site);
    expect(site.masters.get('topics')).to.deep.equal(['news']);
    // A change of a published master is delivered again.
    expect((await f.call('POST', `/master-entities/${master.body.id}/records`, { body: { value: 'events', labels: { en: 'Events' } } })).status).to.equal(201);
    await f.settle();
    await catchUp(site);
    expect(site.masters.get('topics')).to.have.members(['news', 'events']);

    // The key-resolved base answers the same feed.
    const key = f.project.publicKey.key;
    const viaKey = await page('?limit=100', `${f.service.url}/public/v1`, { 'X-Service-Public-Api-Key': key });
    expect(viaKey).to.deep.equal(await page('?limit=100'));
  });

  it('refuses a cursor it did not make, a limit out of range, an unknown locale and form set', async () => {
    for (const [query, status] of [
      ['?cursor=not-a-cursor', 400],
      [`?cursor=${Buffer.from('v1:1234').toString('base64url')}`, 400],
      ['?limit=0', 400],
      ['?limit=101', 400],
      ['?locale=xx', 400],
      ['?form_set=nope', 404],
    ] as const) {
      const answer = await f.get(`/sync${query}`);
      expect(answer.status, query).to.equal(status);
      expect(answer.body.error.code, query).to.be.a('string');
    }
  });

  it('under many writers and readers at once, every reader that applies the feed ends with what the public API serves, and no change twice', async () => {
    const writers = 4;
    const rounds = 12;
    const live = new Map<string, string>();
    const writer = async (w: number) => {
      for (let r = 0; r < rounds; r++) {
        const slug = `w${w}-${r}`;
        const formSet = r % 2 === 0 ? articles : press;
        const created = await f.call('POST', `/form-sets/${formSet}/entries`, { body: { slug, fields: { title: `${slug} v1` } } });
        const revisionId = created.body.revision.id as string;
        await f.call('POST', `/revisions/${revisionId}/submit`, { body: {} });
        await f.call('POST', `/revisions/${revisionId}/publish`, { body: {} });
        const entryId = created.body.entry.id as string;
        live.set(entryId, slug);
        if (r % 3 === 1) await newRevision(entryId, `${slug} v2`);
        if (r % 4 === 2) await f.call('PATCH', `/entries/${entryId}/slug`, { body: { slug: `${slug}-moved` } });
        if (r % 5 === 3) {
          await f.call('DELETE', `/entries/${entryId}`);
          live.delete(entryId);
        }
      }
    };
    const readers = [new Site(), new Site(), new Site()];
    let writing = true;
    const reader = async (site: Site, i: number) => {
      while (writing) await catchUp(site, '', 3 + i * 4);
    };
    const reading = readers.map(reader);
    await Promise.all(Array.from({ length: writers }, (_, w) => writer(w)));
    writing = false;
    await Promise.all(reading);
    await f.settle();
    // The truth: what the public API serves now, every entry of both form sets.
    const truth = new Map<string, string>();
    for (const formSet of ['articles', 'press']) {
      const list = await f.get(`/form-sets/${formSet}/entries?limit=100`);
      for (const item of list.body.items as Array<{ entry: { id: string; slug: string } }>) truth.set(item.entry.id, item.entry.slug);
    }
    for (const site of readers) {
      await catchUp(site);
      expect(new Map([...site.entries].map(([id, e]) => [id, e.slug]))).to.deep.equal(truth);
      // Never the same change twice in a row for an entry.
      const lastById = new Map<string, string>();
      for (const change of site.applied) {
        const id = change.slice(0, change.indexOf('@'));
        expect(lastById.get(id), `${change} delivered twice`).to.not.equal(change);
        lastById.set(id, change);
      }
    }
    // A site starting now gets the same, from the beginning.
    const fresh = new Site();
    await catchUp(fresh, '', 50);
    expect(new Map([...fresh.entries].map(([id, e]) => [id, e.slug]))).to.deep.equal(truth);
  });
});

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
    f = await startPublicFixture({ plan: 'business', env: { SYNC_HEARTBEAT_MS: '1000', SYNC_STREAMS_PER_CLIENT: '3' } });
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

  describe('as Server-Sent Events (GET /sync/events)', () => {
    /** An open event stream: the events as they arrive (comments counted apart), and how to close it. */
    const connect = async (headers: Record<string, string> = {}, query = '') => {
      const controller = new AbortController();
      const response = await fetch(`${f.pinnedBase}/sync/events${query}`, { headers, signal: controller.signal });
      const events: Array<{ id?: string; event?: string; data?: string }> = [];
      let comments = 0;
      let retry: number | undefined;
      const reading = (async () => {
        if (response.status !== 200 || !response.body) return;
        const decoder = new TextDecoder();
        let buffered = '';
        try {
          for await (const chunk of response.body) {
            buffered += decoder.decode(chunk as Uint8Array, { stream: true });
            let end: number;
            while ((end = buffered.indexOf('\n\n')) >= 0) {
              const block = buffered.slice(0, end);
              buffered = buffered.slice(end + 2);
              const event: { id?: string; event?: string; data?: string } = {};
              for (const line of block.split('\n')) {
                if (line.startsWith(':')) comments++;
                else if (line.startsWith('retry: ')) retry = Number(line.slice(7));
                else if (line.startsWith('id: ')) event.id = line.slice(4);
                else if (line.startsWith('event: ')) event.event = line.slice(7);
                else if (line.startsWith('data: ')) event.data = line.slice(6);
              }
              if (event.event) events.push(event);
            }
          }
        } catch {
          // Aborted.
        }
      })();
      return { response, events, comments: () => comments, retry: () => retry, close: () => controller.abort(), ended: reading };
    };
    const until = async (check: () => boolean, ms = 5000) => {
      const deadline = Date.now() + ms;
      while (!check()) {
        if (Date.now() > deadline) throw new Error('timed out');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };

    it('sends what is there, then each change as it is published; a reconnect with Last-Event-ID resumes after the last event', async () => {
      const stream = await connect();
      expect(stream.response.status).to.equal(200);
      expect(stream.response.headers.get('content-type')).to.match(/^text\/event-stream/);
      expect(stream.response.headers.get('cache-control')).to.equal('no-cache');
      // Everything so far, then quiet.
      const everything = await page('?limit=100');
      await until(() => stream.events.length >= everything.items.length);
      expect(stream.retry()).to.equal(3000);
      const slug = `live-${++slugs}`;
      const started = Date.now();
      await f.publish(articles, slug, { title: 'Live' });
      await until(() => stream.events.some((e) => e.data?.includes(`"slug":"${slug}"`)), 2000);
      expect(Date.now() - started).to.be.below(2000);
      const last = stream.events.at(-1)!;
      expect(last.event).to.equal('entry');
      expect(JSON.parse(last.data!)).to.deep.include({ type: 'entry', slug, formSet: 'articles' });
      stream.close();
      await stream.ended;

      // While it is away, another change; it comes back with the id of the last event it had.
      const missed = `missed-${++slugs}`;
      await f.publish(press, missed, { title: 'Missed' });
      const again = await connect({ 'Last-Event-ID': last.id! });
      // Nothing before the missed change comes again: the next event after it is a change made later.
      const later = `later-${++slugs}`;
      await f.publish(press, later, { title: 'Later' });
      await until(() => again.events.length >= 2);
      expect(again.events.map((e) => JSON.parse(e.data!).slug)).to.deep.equal([missed, later]);
      // The cursor of an event is the feed's: GET /sync from it has nothing more.
      expect((await page(`?cursor=${again.events.at(-1)!.id}`)).items).to.deep.equal([]);
      // A quiet stream gets heartbeats (SYNC_HEARTBEAT_MS, here 1 s).
      await until(() => again.comments() >= 1, 3000);
      again.close();
      await again.ended;
    });

    it('keeps to SYNC_STREAMS_PER_CLIENT streams per client address (429 beyond), and frees one when it closes', async () => {
      const open = [await connect(), await connect(), await connect()];
      for (const stream of open) expect(stream.response.status).to.equal(200);
      const refused = await fetch(`${f.pinnedBase}/sync/events`);
      expect(refused.status).to.equal(429);
      expect(((await refused.json()) as { error: { code: string } }).error.code).to.equal('RATE_LIMITED');
      expect(refused.headers.get('retry-after')).to.be.a('string');
      open[0]!.close();
      await open[0]!.ended;
      let admitted: Response | undefined;
      for (let attempt = 0; attempt < 50 && admitted?.status !== 200; attempt++) {
        const controller = new AbortController();
        admitted = await fetch(`${f.pinnedBase}/sync/events`, { signal: controller.signal });
        controller.abort();
        if (admitted.status !== 200) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(admitted!.status).to.equal(200);
      for (const stream of open.slice(1)) stream.close();
    });

    it('ends its streams when the service stops, so that it can', async () => {
      const other = await startPublicFixture({ env: { SYNC_HEARTBEAT_MS: '60000' } });
      try {
        const response = await fetch(`${other.pinnedBase}/sync/events`);
        expect(response.status).to.equal(200);
        const reading = (async () => {
          for await (const _chunk of response.body!) {
            // Read until the server ends it.
          }
        })();
        const started = Date.now();
        await other.stop();
        await reading;
        expect(Date.now() - started, 'the stop did not wait for the stream').to.be.below(5000);
      } finally {
        await other.stop().catch(() => undefined);
      }
    });
  });
});

import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { expect } from 'chai';
import { blogFormSet, startPublicFixture, type PublicFixture } from './support.ts';
import { startApiReplica } from '../admin/support.ts';
import type { RunningService } from '../../src/service/service.ts';
import { tempDir } from '../support/temp-dir.ts';
import { entryStream } from '../../src/domain/content/entry/entry-events.ts';
import { compareCodePoints } from '../../src/read-models/document-values.ts';

/**
 * List pages deep into a form set's entries (offsets of 256 and more are found through counts of the sorted
 * list on the embedded default): each page is the slice of the list that the entries' own values give, read
 * through the public API while entries are published and deleted between reads: from the service that folds
 * them, and from an API-only process beside it (ROLES=api), whose counts follow the other process's commits.
 */
describe('public API: deep list pages', function () {
  this.timeout(120_000);
  let f: PublicFixture;
  let replica: RunningService;
  let formSetId: string;
  /** Live entries by id: what their order is made of. */
  const live = new Map<string, { slug: string; publishedAt: string; date: string | null }>();
  const operator = { actor: { type: 'operator' as const, id: 'deep-pages-test' } };
  let made = 0;

  /** Publishes an entry by appending its workflow to the log, as an import does (fast enough for hundreds). */
  async function publish(publishedAt: string, date: string | null): Promise<void> {
    const n = made++;
    const scope = { projectId: f.project.projectId, formSetId, entryId: randomUUID() };
    const revisionId = randomUUID();
    const slug = `entry-${n}`;
    const fields = { title: { en: `Entry ${n}`, ja: `記事 ${n}` }, ...(date === null ? {} : { published_date: date }) };
    await f.service.log.append(
      entryStream(scope.entryId),
      [
        { type: 'entry.created', data: { ...scope, slug } },
        { type: 'entry.revision-saved', data: { ...scope, revisionId, revision: 1, snapshot: fields, savedAt: publishedAt } },
        { type: 'entry.revision-submitted', data: { ...scope, revisionId, revision: 1 } },
        { type: 'entry.revision-published', data: { ...scope, revisionId, revision: 1, publishedAt, trigger: 'publish' } },
      ],
      'no_stream',
      operator,
    );
    live.set(scope.entryId, { slug, publishedAt, date });
  }

  async function remove(entryId: string): Promise<void> {
    const { slug } = live.get(entryId)!;
    await f.service.log.append(entryStream(entryId), [{ type: 'entry.deleted', data: { projectId: f.project.projectId, formSetId, entryId, slug, previousSlugs: [] } }], 'any', operator);
    live.delete(entryId);
  }

  /** The list's order from the entries' values: the sort key, then the entry id in the same direction. */
  function expectedOrder(sort: 'published_at:desc' | 'published_date:asc'): string[] {
    const ids = [...live.keys()];
    if (sort === 'published_at:desc') {
      return ids.sort((a, b) => compareCodePoints(live.get(b)!.publishedAt, live.get(a)!.publishedAt) || compareCodePoints(b, a));
    }
    // Ascending: entries without a date first (NULL sorts first), then by date.
    const rank = (id: string) => live.get(id)!.date;
    return ids.sort((a, b) => {
      const [x, y] = [rank(a), rank(b)];
      if (x !== y) return x === null ? -1 : y === null ? 1 : compareCodePoints(x, y);
      return compareCodePoints(a, b);
    });
  }

  async function expectPagesFollowTheOrder(label: string): Promise<void> {
    await f.settle();
    // The replica reads the file the projectors commit to: what they have folded, it sees.
    const bases = { service: f.pinnedBase, replica: `${replica.url}/public/p/${f.project.projectId}/v1` };
    for (const sort of ['published_at:desc', 'published_date:asc'] as const) {
      const order = expectedOrder(sort);
      for (const locale of ['en', 'ja']) {
        for (const offset of [250, 256, 300, 400, 512, order.length - 7]) {
          for (const [name, base] of Object.entries(bases)) {
            const page = await f.get(`/form-sets/blog/entries?sort=${sort}&locale=${locale}&offset=${offset}&limit=20`, {}, base);
            expect(page.status, page.text).to.equal(200);
            const body = page.body as { total: number; items: Array<{ entry: { id: string } }> };
            expect(body.total).to.equal(order.length);
            expect(body.items.map((item) => item.entry.id), `${label}, ${name}: ${sort} ${locale} at ${offset}`).to.deep.equal(order.slice(offset, offset + 20));
          }
        }
      }
    }
  }

  before(async () => {
    const dataDir = path.join(tempDir(), 'data');
    f = await startPublicFixture({ env: { DATA_DIR: dataDir, PUBLIC_RESPONSE_CACHE_MB: '0' } });
    replica = await startApiReplica(dataDir, { PUBLIC_RESPONSE_CACHE_MB: '0' });
    const created = await f.call('POST', '/form-sets', { body: blogFormSet() });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    formSetId = created.body.id;
    // 600 entries: publication times in threes (ties broken by entry id), every seventh without a date.
    for (let i = 0; i < 600; i++) await publish(new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 3) * 1000).toISOString(), i % 7 === 0 ? null : `2026-02-${String(1 + (i % 28)).padStart(2, '0')}`);
  });
  after(async () => {
    await replica?.stop();
    await f?.stop();
  });

  it('are the slices of the list in its order, sorted both ways, in both locales, through publishes and deletions, most found through counts in both processes', async () => {
    await expectPagesFollowTheOrder('as published');
    // Read again: the lists are counted by now in both processes (a first deep read asks the file to record
    // the list's changes, and is answered from the index meanwhile).
    await expectPagesFollowTheOrder('read again');
    // 300 more among the first ones (one narrow range of both sorts), then 200 of all of them deleted.
    for (let i = 0; i < 300; i++) await publish(new Date(Date.UTC(2026, 0, 1) + 100_000 + (i % 5)).toISOString(), i % 9 === 0 ? null : '2026-02-14');
    await expectPagesFollowTheOrder('after 300 more');
    const ids = [...live.keys()];
    for (let i = 0; i < ids.length; i += 4) if (i / 4 < 200) await remove(ids[i]!);
    await expectPagesFollowTheOrder('after 200 deletions');
    // /metrics counts them by how each process found them: most through its counts, in the API-only one too.
    for (const [name, url] of [['service', f.service.url], ['replica', replica.url]]) {
      const text = await (await fetch(`${url}/metrics`)).text();
      const reads = (foundBy: string) => Number(new RegExp(`^annals_deep_page_reads_total\\{found_by="${foundBy}"\\} (\\d+)$`, 'm').exec(text)?.[1]);
      // Four rounds of 24 deep pages each (the first round's first reads of each list walk with OFFSET).
      expect(reads('counts') + reads('offset'), name).to.equal(96);
      expect(reads('counts'), `${name}: ${reads('counts')} found through counts, ${reads('offset')} with OFFSET`).to.be.above(80);
    }
  });
});

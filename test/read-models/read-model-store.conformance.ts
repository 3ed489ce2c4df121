/**
 * The read-model port's contract. Every adapter runs this suite (see the *.test.ts files beside it).
 */
import { expect } from 'chai';
import {
  GenerationConflictError,
  type DocumentWrite,
  type ModelTarget,
  type ReadModelSchema,
  type ReadModelStore,
} from '../../src/read-models/read-model-store.ts';
import { conformanceSuite, type HarnessOrPending } from '../support/conformance.ts';

const NOW = '2026-11-22T10:00:00.000Z';
const LATER = '2026-11-22T11:00:00.000Z';

export const articlesSchema: ReadModelSchema = {
  projection: 'test-articles',
  collections: {
    articles: {
      indexes: [
        { name: 'by_slug', fields: [['slug', 1]], unique: true },
        { name: 'by_status_date', fields: [['status', 1], ['meta.publishedAt', -1]] },
      ],
    },
    tags: {},
  },
};

export function readModelStoreConformance(title: string, harness: HarnessOrPending<ReadModelStore>): void {
  conformanceSuite(title, harness, ({ test, harness }) => {
    let store: ReadModelStore;
    const gen1: ModelTarget = { projection: 'test-articles', generation: 1 };
    const gen2: ModelTarget = { projection: 'test-articles', generation: 2 };

    beforeEach(async () => {
      store = await harness().create();
      await store.createGeneration(articlesSchema, 1, 3, NOW);
    });
    afterEach(async () => {
      await store.close();
    });

    test('creates a generation as "building", with no checkpoint, idempotently', async () => {
      await store.createGeneration(articlesSchema, 1, 3, LATER);
      const record = await store.getGeneration('test-articles', 1);
      expect(record).to.include({ projection: 'test-articles', generation: 1, version: 3, state: 'building', checkpoint: null, failure: null });
      expect(await store.activeGeneration('test-articles')).to.equal(null);
      expect(await store.getGeneration('test-articles', 9)).to.equal(null);
    });

    test('commits document writes together with the checkpoint', async () => {
      await store.commit(gen1, [put('articles', 'a1', 5n, { slug: 'hello', title: 'Hello', n: 1 }), put('tags', 't1', 5n, { name: 'news' })], 5n, NOW);
      expect(await store.get(gen1, 'articles', 'a1')).to.deep.equal({ slug: 'hello', title: 'Hello', n: 1 });
      expect(await store.get(gen1, 'tags', 't1')).to.deep.equal({ name: 'news' });
      expect((await store.getGeneration('test-articles', 1))?.checkpoint).to.equal(5n);
      await store.commit(gen1, [put('articles', 'a1', 9n, { slug: 'hello', title: 'Hello again', n: 2 }), del('tags', 't1', 9n)], 9n, LATER);
      expect(await store.get(gen1, 'articles', 'a1')).to.deep.equal({ slug: 'hello', title: 'Hello again', n: 2 });
      expect(await store.get(gen1, 'tags', 't1')).to.equal(null);
      const record = await store.getGeneration('test-articles', 1);
      expect(record?.checkpoint).to.equal(9n);
      expect(record?.updatedAt).to.equal(LATER);
    });

    test('replaying older writes changes nothing and never moves the checkpoint back', async () => {
      await store.commit(gen1, [put('articles', 'a1', 10n, { slug: 'a', v: 'new' })], 10n, NOW);
      await store.commit(gen1, [put('articles', 'a1', 7n, { slug: 'a', v: 'old' }), put('articles', 'a2', 8n, { slug: 'b', v: 'first' })], 8n, NOW);
      expect(await store.get(gen1, 'articles', 'a1')).to.deep.equal({ slug: 'a', v: 'new' });
      expect(await store.get(gen1, 'articles', 'a2')).to.deep.equal({ slug: 'b', v: 'first' });
      expect((await store.getGeneration('test-articles', 1))?.checkpoint).to.equal(10n);
      await store.commit(gen1, [del('articles', 'a1', 9n)], 10n, NOW);
      expect(await store.get(gen1, 'articles', 'a1')).to.deep.equal({ slug: 'a', v: 'new' });
    });

    test('keeps positions beyond 2^53 exact', async () => {
      const big = (1n << 62n) + 3n;
      await store.commit(gen1, [put('articles', 'a1', big, { slug: 'a' })], big, NOW);
      await store.commit(gen1, [put('articles', 'a1', big - 1n, { slug: 'stale' })], big - 1n, NOW);
      expect(await store.get(gen1, 'articles', 'a1')).to.deep.equal({ slug: 'a' });
      expect((await store.getGeneration('test-articles', 1))?.checkpoint).to.equal(big);
    });

    test('finds by equality, $in, $ne, ranges, null, booleans and nested paths, sorted and paged', async () => {
      const docs = [
        { id: 'a', slug: 'a', status: 'published', featured: true, rank: 3, meta: { publishedAt: '2026-01-03' }, note: null },
        { id: 'b', slug: 'b', status: 'published', featured: false, rank: 1, meta: { publishedAt: '2026-01-01' }, note: 'x' },
        { id: 'c', slug: 'c', status: 'draft', featured: true, rank: 2, meta: { publishedAt: '2026-01-02' }, note: null },
        { id: 'd', slug: 'd', status: 'published', featured: true, rank: 5, meta: { publishedAt: '2026-01-05' } },
      ];
      await store.commit(gen1, docs.map(({ id, ...doc }, i) => put('articles', id, BigInt(i + 1), doc)), 4n, NOW);
      const slugs = async (query: Parameters<ReadModelStore['find']>[2]) => (await store.find(gen1, 'articles', query)).map((d) => d['slug']);
      expect(await slugs({ filter: { status: 'published' }, sort: [['rank', 'asc']] })).to.deep.equal(['b', 'a', 'd']);
      expect(await slugs({ filter: { featured: true }, sort: [['meta.publishedAt', 'desc']] })).to.deep.equal(['d', 'a', 'c']);
      expect(await slugs({ filter: { slug: { $in: ['a', 'c', 'z'] } }, sort: [['slug', 'asc']] })).to.deep.equal(['a', 'c']);
      expect(await slugs({ filter: { status: { $ne: 'published' } } })).to.deep.equal(['c']);
      expect(await slugs({ filter: { rank: { $gte: 2 } }, sort: [['rank', 'desc']] })).to.deep.equal(['d', 'a', 'c']);
      expect(await slugs({ filter: { rank: { $lt: 3 } }, sort: [['rank', 'asc']] })).to.deep.equal(['b', 'c']);
      expect(await slugs({ filter: { 'meta.publishedAt': { $gt: '2026-01-02' } }, sort: [['slug', 'asc']] })).to.deep.equal(['a', 'd']);
      expect(await slugs({ filter: { note: null }, sort: [['slug', 'asc']] })).to.deep.equal(['a', 'c', 'd']);
      expect(await slugs({ filter: { note: { $in: [null, 'x'] } }, sort: [['slug', 'asc']] })).to.deep.equal(['a', 'b', 'c', 'd']);
      expect(await slugs({ filter: { note: { $in: ['x'] } } })).to.deep.equal(['b']);
      expect(await slugs({ sort: [['status', 'desc'], ['rank', 'desc']], limit: 2, offset: 1 })).to.deep.equal(['a', 'b']);
      expect(await slugs({ sort: [['slug', 'asc']], offset: 3 })).to.deep.equal(['d']);
      expect(await store.count(gen1, 'articles', { status: 'published' })).to.equal(3);
      expect(await store.count(gen1, 'articles')).to.equal(4);
      expect(await store.find(gen1, 'tags')).to.deep.equal([]);
    });

    test('a write that breaks a unique index fails the commit', async () => {
      await store.commit(gen1, [put('articles', 'a1', 1n, { slug: 'same' })], 1n, NOW);
      const error = await store.commit(gen1, [put('articles', 'a2', 2n, { slug: 'same' })], 2n, NOW).then(() => null, (e: unknown) => e);
      expect(error).to.be.instanceOf(Error);
      expect((await store.getGeneration('test-articles', 1))?.checkpoint).to.equal(1n);
    });

    test('with deferred indexes, loads first and enforces unique indexes once they are created', async () => {
      const deferred = { ...articlesSchema, projection: 'test-deferred' };
      const target = { projection: 'test-deferred', generation: 1 };
      await store.createGeneration(deferred, 1, 1, NOW, { deferIndexes: true });
      await store.commit(target, [put('articles', 'a1', 1n, { slug: 'same' }), put('articles', 'a2', 2n, { slug: 'other' })], 2n, NOW);
      await store.createIndexes(deferred, 1);
      await store.createIndexes(deferred, 1);
      const error = await store.commit(target, [put('articles', 'a3', 3n, { slug: 'same' })], 3n, NOW).then(() => null, (e: unknown) => e);
      expect(error).to.be.instanceOf(Error);
      expect(await store.find(target, 'articles', { filter: { slug: 'other' } })).to.deep.equal([{ slug: 'other' }]);

      const broken = { ...articlesSchema, projection: 'test-broken' };
      await store.createGeneration(broken, 1, 1, NOW, { deferIndexes: true });
      await store.commit({ projection: 'test-broken', generation: 1 }, [put('articles', 'a1', 1n, { slug: 'dup' }), put('articles', 'a2', 2n, { slug: 'dup' })], 2n, NOW);
      const refused = await store.createIndexes(broken, 1).then(() => null, (e: unknown) => e);
      expect(refused).to.be.instanceOf(Error);
    });

    test('keeps generations apart; activating one retires the previous, checked against the expected active one', async () => {
      await store.commit(gen1, [put('articles', 'a1', 1n, { slug: 'one' })], 1n, NOW);
      await store.activateGeneration('test-articles', 1, null, NOW);
      expect(await store.activeGeneration('test-articles')).to.equal(1);
      await store.createGeneration(articlesSchema, 2, 4, NOW);
      expect(await store.get(gen2, 'articles', 'a1')).to.equal(null);
      await store.commit(gen2, [put('articles', 'a1', 1n, { slug: 'two' })], 1n, NOW);
      expect(await store.get(gen1, 'articles', 'a1')).to.deep.equal({ slug: 'one' });
      const conflict = await store.activateGeneration('test-articles', 2, null, LATER).then(() => null, (e: unknown) => e);
      expect(conflict).to.be.instanceOf(GenerationConflictError);
      expect(await store.activeGeneration('test-articles')).to.equal(1);
      await store.activateGeneration('test-articles', 2, 1, LATER);
      expect(await store.activeGeneration('test-articles')).to.equal(2);
      const states = (await store.listGenerations('test-articles')).map((g) => `${g.generation}:${g.state}:${g.version}`).sort();
      expect(states).to.deep.equal(['1:retired:3', '2:active:4']);
      await store.dropGeneration(articlesSchema, 1);
      expect(await store.getGeneration('test-articles', 1)).to.equal(null);
      expect(await store.get(gen1, 'articles', 'a1')).to.equal(null);
      expect(await store.get(gen2, 'articles', 'a1')).to.deep.equal({ slug: 'two' });
    });

    test('records and clears the failure that paused a generation', async () => {
      const failure = { eventId: '6f1c2b7e-1d2a-4c3b-9e8f-0a1b2c3d4e5f', eventType: 'thing.broke', streamId: 's-1', position: 42n, message: 'cannot fold', failedAt: NOW };
      await store.setFailure(gen1, failure, NOW);
      expect((await store.getGeneration('test-articles', 1))?.failure).to.deep.equal(failure);
      await store.setFailure(gen1, null, LATER);
      expect((await store.getGeneration('test-articles', 1))?.failure).to.equal(null);
    });

    test('records skips once per event and lists them in position order', async () => {
      const skip = { projection: 'test-articles', eventId: '6f1c2b7e-1d2a-4c3b-9e8f-0a1b2c3d4e5f', position: 42n, reason: 'bad data', actor: 'operator:alice', skippedAt: NOW };
      await store.addSkip({ ...skip, position: 50n, eventId: '7f1c2b7e-1d2a-4c3b-9e8f-0a1b2c3d4e5f' });
      await store.addSkip(skip);
      await store.addSkip({ ...skip, reason: 'again' });
      const skips = await store.listSkips('test-articles');
      expect(skips.map((s) => [s.position, s.reason])).to.deep.equal([[42n, 'bad data'], [50n, 'bad data']]);
      expect(await store.listSkips('other')).to.deep.equal([]);
    });

    test('lists generations of every projection', async () => {
      await store.createGeneration({ projection: 'test-other', collections: { things: {} } }, 1, 1, NOW);
      const names = (await store.listGenerations()).map((g) => g.projection).sort();
      expect(names).to.deep.equal(['test-articles', 'test-other']);
    });

    test('ping answers while open', async () => {
      await store.ping();
    });
  });
}

function put(collection: string, id: string, position: bigint, doc: Record<string, unknown>): DocumentWrite {
  return { collection, id, doc, position };
}

function del(collection: string, id: string, position: bigint): DocumentWrite {
  return { collection, id, doc: null, position };
}

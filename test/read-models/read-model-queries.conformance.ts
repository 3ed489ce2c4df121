/**
 * The read-model port's query half: what readers ask of a generation (get, getMany, find with filters,
 * sorts, fields, keyset and deep pages, full-text search, count) and ping. Every adapter runs it
 * (read-model-store.conformance.ts).
 */
import { expect } from 'chai';
import {
  MAX_GET_MANY_IDS,
  MAX_QUERY_LIMIT,
  ReadModelError,
  type DocumentWrite,
  type FieldCondition,
  type ModelTarget,
  type Query,
  type ReadModelSchema,
  type ReadModelStore,
} from '../../src/read-models/read-model-store.ts';
import { ReadModelReader } from '../../src/read-models/read-model-reader.ts';
import { indexText, queryTokens } from '../../src/search/search-tokens.ts';
import { conformanceSuite, needsFeature, type HarnessOrPending } from '../support/conformance.ts';
import { articlesSchema, BULK_WRITES, coveredSchema, del, NOW, put, searchSchema, sparseSchema } from './read-model-store.fixtures.ts';

export function readModelQueriesConformance(title: string, harness: HarnessOrPending<ReadModelStore>): void {
  conformanceSuite(`${title}, queries`, harness, ({ test, harness }) => {
    let store: ReadModelStore;
    const gen1: ModelTarget = { projection: 'test-articles', generation: 1 };

    beforeEach(async () => {
      store = await harness().create();
      await store.createGeneration(articlesSchema, 1, 3, NOW);
    });
    afterEach(async () => {
      await store.close();
    });


    test('an index that includes fields answers finds as any index: the values as stored, after updates and deletes, for documents without them too', async () => {
      await store.createGeneration(coveredSchema, 1, 1, NOW);
      const target = { projection: 'test-covered', generation: 1 };
      const item = (rank: number) => JSON.stringify({ rank, note: `"quoted" \\ ${'é東'.repeat(rank)}` });
      await store.commit(target, [
        ...[1, 2, 3, 4, 5].map((rank) => put('items', `i${rank}`, BigInt(rank), { list: 'a', rank, item: item(rank), n: rank * 10, body: 'not read' })),
        put('items', 'i6', 6n, { list: 'a', rank: 6, n: 60 }),
        put('items', 'i7', 7n, { list: 'a', rank: 7, item: { nested: [1, 'two'] }, n: null }),
        put('items', 'b1', 8n, { list: 'b', rank: 1, item: 'other list', n: 1 }),
      ], 8n, NOW);
      const page = (query: { offset?: number; limit?: number } = {}) => store.find(target, 'items', { filter: { list: 'a' }, sort: [['rank', 'desc']], fields: ['item', 'n'], ...query });
      expect(await page()).to.deep.equal([
        { item: { nested: [1, 'two'] }, n: null },
        { n: 60 },
        ...[5, 4, 3, 2, 1].map((rank) => ({ item: item(rank), n: rank * 10 })),
      ]);
      expect(await page({ offset: 2, limit: 2 })).to.deep.equal([{ item: item(5), n: 50 }, { item: item(4), n: 40 }]);
      // findStrings: the strings as stored (quotes, backslashes, non-ASCII), null for a missing field or one that holds anything else.
      const strings = (query: Omit<Query, 'fields'> = {}, field = 'item') => store.findStrings(target, 'items', { filter: { list: 'a' }, sort: [['rank', 'desc']], ...query }, field);
      expect(await strings()).to.deep.equal([null, null, item(5), item(4), item(3), item(2), item(1)]);
      expect(await strings({ offset: 2, limit: 2 })).to.deep.equal([item(5), item(4)]);
      expect(await strings({ sort: [['rank', 'asc']], after: { values: [2], id: 'i2' }, limit: 2 })).to.deep.equal([item(3), item(4)]);
      expect(await strings({ limit: 3 }, 'n')).to.deep.equal([null, null, null]);
      expect(await strings({ limit: 1, sort: [['rank', 'asc']] }, 'body')).to.deep.equal(['not read']);
      expect(await store.findStrings(target, 'items', { filter: { list: 'none' } }, 'item')).to.deep.equal([]);
      for (const field of ['meta.note', '', 'a b']) {
        const refused = await store.findStrings(target, 'items', {}, field).then(() => null, (e: unknown) => e);
        expect(refused, field).to.be.instanceOf(ReadModelError);
      }
      // A field the index does not hold is read from the documents.
      expect(await store.find(target, 'items', { filter: { list: 'a' }, sort: [['rank', 'asc']], fields: ['item', 'body'], limit: 1 })).to.deep.equal([{ item: item(1), body: 'not read' }]);
      await store.commit(target, [put('items', 'i5', 9n, { list: 'a', rank: 5, item: 'changed', n: 55 }), del('items', 'i7', 10n), put('items', 'i4', 11n, { list: 'b', rank: 4, item: 'moved', n: 44 })], 11n, NOW);
      expect(await page({ limit: 3 })).to.deep.equal([{ n: 60 }, { item: 'changed', n: 55 }, { item: item(3), n: 30 }]);
      expect(await store.find(target, 'items', { filter: { list: 'b' }, sort: [['rank', 'desc']], fields: ['item'] })).to.deep.equal([{ item: 'moved' }, { item: 'other list' }]);
      expect(await strings({ limit: 3 })).to.deep.equal([null, 'changed', item(3)]);
      expect(await strings({ filter: { list: 'b' } })).to.deep.equal(['moved', 'other list']);
    });

    test('a sparse index answers lookups by a value as any index, before and after updates, beside documents without one', async () => {
      await store.createGeneration(sparseSchema, 1, 1, NOW);
      const target = { projection: 'test-sparse', generation: 1 };
      await store.commit(target, [
        ...Array.from({ length: 30 }, (_, i) => put('items', `n${i}`, BigInt(i + 1), { site: 'a', ...(i % 2 === 0 ? { path: null } : {}), n: i })),
        put('items', 'p1', 31n, { site: 'a', path: '/one', n: 1 }),
        put('items', 'p2', 32n, { site: 'a', path: '/two', n: 2 }),
        put('items', 'p3', 33n, { site: 'b', path: '/one', n: 3 }),
      ], 33n, NOW);
      const ids = async (filter: Record<string, FieldCondition>) => (await store.findWithIds(target, 'items', { filter, sort: [['n', 'asc']] })).map((d) => d.id);
      expect(await ids({ site: 'a', path: '/one' })).to.deep.equal(['p1']);
      expect(await ids({ site: 'a', path: { $in: ['/one', '/two'] } })).to.deep.equal(['p1', 'p2']);
      expect(await ids({ site: 'a', path: { $gte: '/t' } })).to.deep.equal(['p2']);
      // A query that could match null reads the documents without a value too.
      expect(await store.count(target, 'items', { site: 'a', path: null })).to.equal(30);
      await store.commit(target, [put('items', 'p1', 34n, { site: 'a', path: null, n: 1 }), put('items', 'n0', 35n, { site: 'a', path: '/one', n: 0 }), del('items', 'p2', 36n)], 36n, NOW);
      expect(await ids({ site: 'a', path: '/one' })).to.deep.equal(['n0']);
      expect(await ids({ site: 'a', path: '/two' })).to.deep.equal([]);
      expect(await store.count(target, 'items', { site: 'a', path: null })).to.equal(30);
      const refused = await store.createGeneration({ projection: 'test-sparse-unique', collections: { items: { indexes: [{ name: 'by_path', fields: [['path', 1]], sparse: true, unique: true }] } } }, 1, 1, NOW).then(() => null, (e: unknown) => e);
      expect(refused).to.be.instanceOf(ReadModelError);
    });

    test('getMany answers the documents of the ids that exist, each with its id, and refuses more than MAX_GET_MANY_IDS ids', async () => {
      await store.commit(gen1, [put('articles', 'a1', 1n, { slug: 'one', n: 1 }), put('articles', 'a2', 2n, { slug: 'two', n: 2 }), put('articles', 'a3', 3n, { slug: 'three', n: 3 })], 3n, NOW);
      const found = await store.getMany(gen1, 'articles', ['a3', 'missing', 'a1']);
      expect(found.sort((a, b) => a.id.localeCompare(b.id))).to.deep.equal([
        { id: 'a1', doc: { slug: 'one', n: 1 } },
        { id: 'a3', doc: { slug: 'three', n: 3 } },
      ]);
      expect(await store.getMany(gen1, 'articles', [])).to.deep.equal([]);
      expect(await store.getMany(gen1, 'tags', ['a1'])).to.deep.equal([]);
      const many = Array.from({ length: MAX_GET_MANY_IDS }, (_, i) => `id-${i}`);
      expect(await store.getMany(gen1, 'articles', [...many.slice(1), 'a2'])).to.deep.equal([{ id: 'a2', doc: { slug: 'two', n: 2 } }]);
      let refused: unknown;
      await store.getMany(gen1, 'articles', [...many, 'a2']).catch((error: unknown) => (refused = error));
      expect(refused).to.be.instanceOf(ReadModelError);
    });

    test('ReadModelReader.findAll reads every match past MAX_QUERY_LIMIT, in order, each once, with the fields asked for', async function () {
      needsFeature(this, harness(), BULK_WRITES);
      // More than two pages, with equal sort values across a page boundary (the id breaks the tie).
      const total = MAX_QUERY_LIMIT * 2 + 7;
      const writes = Array.from({ length: total }, (_, i) => put('articles', `a${String(i).padStart(6, '0')}`, BigInt(i + 1), { slug: `s${i}`, status: i % 3 === 0 ? 'draft' : 'live', meta: { publishedAt: String(Math.floor(i / 3)).padStart(6, '0') }, body: 'x' }));
      await store.commit(gen1, writes, BigInt(total), NOW);
      await store.activateGeneration('test-articles', 1, null, NOW);
      const reader = new ReadModelReader(store);
      expect(await reader.find('test-articles', 'articles', { filter: { status: 'live' } })).to.have.length(MAX_QUERY_LIMIT);
      const query = { filter: { status: 'live' }, sort: [['meta.publishedAt', 'desc']] as Array<[string, 'desc']>, fields: ['slug'] };
      const live = await reader.findAll<{ slug: string; meta: { publishedAt: string }; body?: string }>('test-articles', 'articles', query, { pageSize: MAX_QUERY_LIMIT });
      // Pages of the default size (1,000) and of a size that does not divide the total: the same documents.
      expect(await reader.findAll('test-articles', 'articles', query)).to.deep.equal(live);
      expect(await reader.findAll('test-articles', 'articles', query, { pageSize: 777 })).to.deep.equal(live);
      const expected = writes.filter((w) => (w.doc as { status: string }).status === 'live');
      expect(live).to.have.length(expected.length);
      expect(new Set(live.map((doc) => doc.slug)).size).to.equal(expected.length);
      // Newest publishedAt first; ties by id, descending too.
      const publishedAt = (write: DocumentWrite) => (write.doc as { meta: { publishedAt: string } }).meta.publishedAt;
      const order = [...expected].sort((a, b) => publishedAt(b).localeCompare(publishedAt(a)) || b.id.localeCompare(a.id));
      expect(live.map((doc) => doc.slug)).to.deep.equal(order.map((w) => (w.doc as { slug: string }).slug));
      // Only the fields asked for and the sort's.
      expect(Object.keys(live[0]!).sort()).to.deep.equal(['meta', 'slug']);
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
      // A lower and an upper bound on one field, each side either way.
      expect(await slugs({ filter: { rank: { $gte: 2, $lt: 5 } }, sort: [['rank', 'asc']] })).to.deep.equal(['c', 'a']);
      expect(await slugs({ filter: { rank: { $gt: 1, $lte: 5 } }, sort: [['rank', 'desc']] })).to.deep.equal(['d', 'a', 'c']);
      expect(await slugs({ filter: { 'meta.publishedAt': { $gte: '2026-01-02', $lte: '2026-01-03' } }, sort: [['slug', 'asc']] })).to.deep.equal(['a', 'c']);
      expect(await slugs({ filter: { status: 'published', rank: { $gt: 5, $lt: 1 } } })).to.deep.equal([]);
      for (const condition of [{ $gt: 1, $gte: 2 }, { $lt: 1, $lte: 2 }, { $gte: 1, $lt: 3, $ne: 2 }, {}, { $gte: 1, $below: 3 }, { $gte: Number.NaN, $lt: 3 }]) {
        const error = await store.find(gen1, 'articles', { filter: { rank: condition as never } }).then(() => null, (e: unknown) => e);
        expect(error, JSON.stringify(condition)).to.be.instanceOf(ReadModelError);
      }
      expect(await slugs({ filter: { note: null }, sort: [['slug', 'asc']] })).to.deep.equal(['a', 'c', 'd']);
      expect(await slugs({ filter: { note: { $in: [null, 'x'] } }, sort: [['slug', 'asc']] })).to.deep.equal(['a', 'b', 'c', 'd']);
      expect(await slugs({ filter: { note: { $in: ['x'] } } })).to.deep.equal(['b']);
      expect(await slugs({ sort: [['status', 'desc'], ['rank', 'desc']], limit: 2, offset: 1 })).to.deep.equal(['a', 'b']);
      expect(await slugs({ sort: [['slug', 'asc']], offset: 3 })).to.deep.equal(['d']);
      expect(await store.count(gen1, 'articles', { status: 'published' })).to.equal(3);
      expect(await store.count(gen1, 'articles')).to.equal(4);
      expect(await store.find(gen1, 'tags')).to.deep.equal([]);
    });

    test('reads only the fields asked for (Query.fields), on plain, offset and keyset pages; a missing field is left out', async () => {
      const docs = [
        { id: 'a', slug: 'a', status: 'published', rank: 1, body: '{"pre":"serialised"}', meta: { publishedAt: '2026-01-01' }, note: null },
        { id: 'b', slug: 'b', status: 'published', rank: 2, meta: { publishedAt: '2026-01-02' } },
        { id: 'c', slug: 'c', status: 'published', rank: 3, body: 'three', meta: { publishedAt: '2026-01-03' }, note: 'x' },
      ];
      await store.commit(gen1, docs.map(({ id, ...doc }, i) => put('articles', id, BigInt(i + 1), doc)), 3n, NOW);
      const query = { filter: { status: 'published' }, sort: [['rank', 'asc']] as Array<[string, 'asc']>, fields: ['body', 'meta', 'note'] };
      expect(await store.find(gen1, 'articles', query)).to.deep.equal([
        { body: '{"pre":"serialised"}', meta: { publishedAt: '2026-01-01' }, note: null },
        { meta: { publishedAt: '2026-01-02' } },
        { body: 'three', meta: { publishedAt: '2026-01-03' }, note: 'x' },
      ]);
      expect(await store.findWithIds(gen1, 'articles', { ...query, fields: ['slug'], offset: 1 })).to.deep.equal([{ id: 'b', doc: { slug: 'b' } }, { id: 'c', doc: { slug: 'c' } }]);
      expect(await store.findWithIds(gen1, 'articles', { ...query, fields: ['rank'], after: { values: [1], id: 'a' }, limit: 1 })).to.deep.equal([{ id: 'b', doc: { rank: 2 } }]);
      expect(await store.find(gen1, 'articles', { filter: { slug: 'a' }, fields: ['absent'] })).to.deep.equal([{}]);
      for (const fields of [[], ['meta.publishedAt'], ['a b'], Array.from({ length: 17 }, (_, i) => `f${i}`)]) {
        const error = await store.find(gen1, 'articles', { fields }).then(() => null, (e: unknown) => e);
        expect(error, JSON.stringify(fields)).to.be.instanceOf(ReadModelError);
      }
    });

    test('breaks sort ties by id in the direction of the last sort key, ascending without a sort', async () => {
      const docs = ['t1', 't2', 't3'].map((id, i) => put('articles', id, BigInt(i + 1), { slug: id, status: 'published', rank: 1 }));
      await store.commit(gen1, [...docs, put('articles', 't0', 4n, { slug: 't0', status: 'published', rank: 2 })], 4n, NOW);
      const slugs = async (query: Parameters<ReadModelStore['find']>[2]) => (await store.find(gen1, 'articles', query)).map((d) => d['slug']);
      expect(await slugs({ filter: { status: 'published' }, sort: [['rank', 'asc']] })).to.deep.equal(['t1', 't2', 't3', 't0']);
      expect(await slugs({ filter: { status: 'published' }, sort: [['rank', 'desc']] })).to.deep.equal(['t0', 't3', 't2', 't1']);
      expect(await slugs({ filter: { status: 'published' }, sort: [['rank', 'desc']], limit: 2, offset: 1 })).to.deep.equal(['t3', 't2']);
      expect(await slugs({ filter: { rank: 1 } })).to.deep.equal(['t1', 't2', 't3']);
    });

    describe('keyset paging (Query.after)', () => {
      /** Walks every page of `query` by keyset, `size` at a time, calling `between` after each page. */
      async function walk(query: Parameters<ReadModelStore['find']>[2], size: number, between?: (page: number) => Promise<void>): Promise<string[]> {
        const seen: string[] = [];
        let after: { values: Array<string | number | null>; id: string } | undefined;
        for (let page = 0; page < 100; page++) {
          const entries = await store.findWithIds(gen1, 'articles', { ...query, limit: size, ...(after ? { after } : {}) });
          seen.push(...entries.map((e) => e.id));
          if (entries.length < size) return seen;
          const last = entries.at(-1)!;
          after = { values: (query?.sort ?? []).map(([field]) => (field.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], last.doc) ?? null) as string | number | null), id: last.id };
          await between?.(page);
        }
        throw new Error('no end');
      }
      const docs = (): DocumentWrite[] =>
        ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((id, i) =>
          put('articles', id, BigInt(i + 1), { slug: id, status: i % 2 ? 'draft' : 'published', rank: [3, 1, 2, 2, 5, 1, 2][i]!, ...(i === 2 || i === 5 ? {} : { meta: { publishedAt: `2026-01-0${7 - i}` } }) }),
        );

      test('pages through every document once, in the query order, for one sort key either way, with nulls and ties', async () => {
        await store.commit(gen1, docs(), 7n, NOW);
        for (const [field, direction] of [['rank', 'asc'], ['rank', 'desc'], ['meta.publishedAt', 'asc'], ['meta.publishedAt', 'desc'], ['slug', 'desc']] as const) {
          const query = { sort: [[field, direction]] as Array<[string, 'asc' | 'desc']> };
          const expected = (await store.findWithIds(gen1, 'articles', query)).map((e) => e.id);
          for (const size of [1, 2, 3]) expect(await walk(query, size), `${field} ${direction} by ${size}`).to.deep.equal(expected);
        }
        // Nulls first ascending, last descending; without a sort, by id.
        expect(await walk({ sort: [['meta.publishedAt', 'asc']] }, 2)).to.deep.equal(['c', 'f', 'g', 'e', 'd', 'b', 'a']);
        expect(await walk({ sort: [['meta.publishedAt', 'desc']] }, 2)).to.deep.equal(['a', 'b', 'd', 'e', 'g', 'f', 'c']);
        expect(await walk({}, 3)).to.deep.equal(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
      });

      test('with several sort keys, with a filter, and stable while documents are added and removed between pages', async () => {
        await store.commit(gen1, docs(), 7n, NOW);
        const query = { filter: { status: 'published' }, sort: [['rank', 'desc'], ['meta.publishedAt', 'asc']] as Array<[string, 'asc' | 'desc']> };
        const expected = (await store.findWithIds(gen1, 'articles', query)).map((e) => e.id);
        expect(expected).to.deep.equal(['e', 'a', 'c', 'g']);
        expect(await walk(query, 1)).to.deep.equal(expected);
        expect(await walk({ sort: [['status', 'asc'], ['rank', 'desc']] }, 2)).to.deep.equal((await store.findWithIds(gen1, 'articles', { sort: [['status', 'asc'], ['rank', 'desc']] })).map((e) => e.id));
        // Between pages: a new first document and the removal of a seen one shift nothing.
        let position = 8n;
        const walked = await walk({ sort: [['rank', 'asc']] }, 2, async () => {
          position++;
          await store.commit(gen1, [put('articles', `new${position}`, position, { slug: `new${position}`, rank: 0 }), del('articles', 'b', position)], position, NOW);
        });
        expect(walked).to.deep.equal(['b', 'f', 'c', 'd', 'g', 'a', 'e']);
      });

      test('refuses after with an offset, with the wrong number of values, or with a value that is not a string, number or null', async () => {
        for (const query of [
          { sort: [['rank', 'asc']], after: { values: [1], id: 'a' }, offset: 1 },
          { sort: [['rank', 'asc']], after: { values: [], id: 'a' } },
          { sort: [['rank', 'asc']], after: { values: [true], id: 'a' } },
        ]) {
          const error = await store.find(gen1, 'articles', query as never).then(() => null, (e: unknown) => e);
          expect(error, JSON.stringify(query)).to.be.instanceOf(ReadModelError);
        }
      });
    });

    describe('deep pages (Query.offset far into a sorted list)', () => {
      type Sort = Array<[string, 'asc' | 'desc']>;
      const sorts: Sort[] = [
        [['meta.publishedAt', 'desc']],
        [['meta.publishedAt', 'asc']],
        [['rank', 'desc'], ['slug', 'asc']],
        [['title', 'asc']],
        // NULLs in a later sort key (the SQLite adapter leaves such a list to OFFSET).
        [['status', 'asc'], ['meta.publishedAt', 'desc']],
      ];
      // Titles that JavaScript's UTF-16 order and SQL's code point order rank differently: U+FF5E and U+1F600.
      const titles = ['plain', 'Ünïcode', '\uFF5Ewide', '\u{1F600}smile', 'zeta', ''];
      const doc = (i: number, overrides: Record<string, unknown> = {}) => ({
        slug: `s${String(i).padStart(5, '0')}`,
        status: i % 3 === 0 ? 'draft' : 'published',
        rank: i % 7,
        title: `${titles[i % titles.length]}${i % 11}`,
        ...(i % 10 === 0 ? {} : { meta: { publishedAt: `2026-01-${String(1 + (i % 28)).padStart(2, '0')}T${String(i % 24).padStart(2, '0')}:00` } }),
        ...overrides,
      });
      let position = 0n;
      const commitAll = async (writes: Array<(p: bigint) => DocumentWrite>) => {
        for (let i = 0; i < writes.length; i += 500) {
          position++;
          await store.commit(gen1, writes.slice(i, i + 500).map((w) => w(position)), position, NOW);
        }
      };
      /** Every page of every list, read at its offset, is the slice of the whole list read from its start. */
      async function expectPagesAreSlices(label: string): Promise<void> {
        for (const sort of sorts) {
          for (const filter of [{ status: 'published' }, undefined]) {
            const whole = (await store.findWithIds(gen1, 'articles', { sort, ...(filter ? { filter } : {}), limit: MAX_QUERY_LIMIT })).map((e) => e.id);
            for (const offset of [255, 256, 300, 511, 512, 700, 1000, whole.length - 5, whole.length, whole.length + 10]) {
              if (offset < 0) continue;
              const page = await store.findWithIds(gen1, 'articles', { sort, ...(filter ? { filter } : {}), limit: 37, offset, fields: ['slug'] });
              expect(page.map((e) => e.id), `${label}: ${JSON.stringify(sort)} ${JSON.stringify(filter)} at ${offset}`).to.deep.equal(whole.slice(offset, offset + 37));
              expect(page.every((e) => e.doc.slug === e.id.replace('d', 's'))).to.equal(true);
              const slugs = await store.findStrings(gen1, 'articles', { sort, ...(filter ? { filter } : {}), limit: 37, offset }, 'slug');
              expect(slugs, `findStrings ${JSON.stringify(sort)} ${JSON.stringify(filter)} at ${offset}`).to.deep.equal(page.map((e) => e.doc.slug));
            }
          }
        }
      }

      test('are the slices of the whole list, for sorts with NULLs, ties and non-ASCII text, through inserts, moves and deletes', async function () {
        needsFeature(this, harness(), BULK_WRITES);
        await commitAll(Array.from({ length: 1_500 }, (_, i) => (p: bigint) => put('articles', `d${String(i).padStart(5, '0')}`, p, doc(i))));
        await expectPagesAreSlices('as loaded');
        // 700 more into one narrow range of every sort (blocks there must be cut), among the existing ones.
        await commitAll(Array.from({ length: 700 }, (_, k) => (p: bigint) => put('articles', `d${String(1_500 + k).padStart(5, '0')}`, p, doc(1_500 + k, { rank: 3, title: 'm', meta: { publishedAt: '2026-01-15T12:00' } }))));
        await expectPagesAreSlices('after inserts into one range');
        // Moves: to the other status (another filtered list), to a NULL first key and back, to another rank.
        await commitAll(Array.from({ length: 400 }, (_, k) => (p: bigint) => put('articles', `d${String(k * 3).padStart(5, '0')}`, p, doc(k * 3, k % 2 ? { status: 'published', meta: null } : { status: 'published', rank: 9 }))));
        await expectPagesAreSlices('after moves');
        // Deletes: most of one range (its blocks empty out) and every fifth elsewhere.
        await commitAll(Array.from({ length: 2_200 }, (_, i) => i).filter((i) => (i >= 1_550 && i < 2_150) || i % 5 === 0).map((i) => (p: bigint) => del('articles', `d${String(i).padStart(5, '0')}`, p)));
        await expectPagesAreSlices('after deletes');
        // Writes older than the stored document change nothing (a replayed batch).
        await store.commit(gen1, [put('articles', 'd00001', 1n, doc(1, { rank: 0, meta: null }))], position, NOW);
        await expectPagesAreSlices('after a stale write');
      });
    });

    test('ping answers while open', async () => {
      await store.ping();
    });

    describe('full-text search', () => {
      before(function () {
        needsFeature(this, harness(), 'text indexes ($text)', 'describe');
      });
      const search: ModelTarget = { projection: 'test-search', generation: 1 };
      /** Ids of the documents found, in the order found. */
      const ids = async (query: Parameters<ReadModelStore['find']>[2], target: ModelTarget = search) =>
        (await store.findWithIds(target, 'pages', query)).map((e) => e.id);
      const page = (id: string, position: bigint, site: string, title: string, body = '', extra: Record<string, unknown> = {}) =>
        put('pages', id, position, { site, title, rank: Number(id.replace(/\D/g, '') || 0), search: indexText(title, body), ...extra });

      beforeEach(async () => {
        await store.createGeneration(searchSchema, 1, 1, NOW);
      });

      test('finds the documents holding every query token, as whole tokens', async () => {
        await store.commit(search, [
          page('p1', 1n, 'a', 'Getting started with Node.js', 'Install Node.js, then run the server.'),
          page('p2', 2n, 'a', 'JSON in depth', 'Parsing JSON documents and JSON schemas.'),
          page('p3', 3n, 'b', 'Node internals', 'Streams, buffers and the event loop.'),
          page('p4', 4n, 'b', 'C++ addons for Node.js', 'Native code, foo_bar and a1b2 identifiers.'),
        ], 4n, NOW);
        const sorted = async (q: string) => (await ids({ text: queryTokens(q), sort: [['rank', 'asc']] }));
        expect(await sorted('node.js')).to.deep.equal(['p1', 'p4']);
        expect(await sorted('NODE.JS server')).to.deep.equal(['p1']);
        expect(await sorted('node')).to.deep.equal(['p3']);
        expect(await sorted('json')).to.deep.equal(['p2']);
        expect(await sorted('js')).to.deep.equal([]);
        expect(await sorted('c++ foo_bar a1b2')).to.deep.equal(['p4']);
        expect(await sorted('node.js missing')).to.deep.equal([]);
        expect(await store.find(search, 'pages', { text: queryTokens('schemas') })).to.have.length(1);
        expect((await store.find(search, 'pages', { text: queryTokens('schemas') }))[0]).to.include({ title: 'JSON in depth' });
      });

      test('ranks more occurrences, and the same in a shorter text, first', async () => {
        await store.commit(search, [
          page('p1', 1n, 'a', 'apple banana cherry date elder fig grape kiwi lemon mango', 'nectarine orange'),
          page('p2', 2n, 'a', 'apple apple apple banana'),
          page('p3', 3n, 'a', 'apple banana cherry date'),
          page('p4', 4n, 'a', 'banana cherry'),
          page('p5', 5n, 'a', 'cherry date'),
          page('p6', 6n, 'a', 'elder fig'),
          page('p7', 7n, 'a', 'grape kiwi'),
        ], 7n, NOW);
        expect(await ids({ text: ['apple'] })).to.deep.equal(['p2', 'p3', 'p1']);
      });

      test('combines with a filter, limit and offset, and an explicit sort replaces relevance', async () => {
        // Texts of one length, so relevance is the number of occurrences; p2 and p4 tie (then by id).
        await store.commit(search, [
          page('p1', 1n, 'a', 'tea tea tea green'),
          page('p2', 2n, 'b', 'tea tea green moss'),
          page('p3', 3n, 'a', 'tea green moss rock'),
          page('p4', 4n, 'a', 'tea tea green moss'),
          page('p5', 5n, 'a', 'coffee green moss rock'),
          ...['juice', 'water', 'milk', 'soda', 'wine', 'beer', 'sake'].map((drink, i) => page(`p${i + 6}`, BigInt(i + 6), 'a', `${drink} moss rock stone`)),
        ], 12n, NOW);
        const text = queryTokens('green tea');
        expect(await ids({ text })).to.deep.equal(['p1', 'p2', 'p4', 'p3']);
        expect(await ids({ text, filter: { site: 'a' } })).to.deep.equal(['p1', 'p4', 'p3']);
        expect(await ids({ text, filter: { site: 'a' }, limit: 2 })).to.deep.equal(['p1', 'p4']);
        expect(await ids({ text, filter: { site: 'a' }, limit: 2, offset: 1 })).to.deep.equal(['p4', 'p3']);
        expect(await ids({ text, sort: [['rank', 'desc']] })).to.deep.equal(['p4', 'p3', 'p2', 'p1']);
        expect(await ids({ text, filter: { site: 'a' }, sort: [['rank', 'asc']], offset: 1 })).to.deep.equal(['p3', 'p4']);
        expect(await store.count(search, 'pages', undefined, text)).to.equal(4);
        expect(await store.count(search, 'pages', { site: 'a' }, text)).to.equal(3);
        expect(await store.count(search, 'pages', { site: 'a' })).to.equal(11);
        expect(await store.count(search, 'pages', { site: 'b' }, queryTokens('coffee'))).to.equal(0);
      });

      test('sees updates and deletes, and ignores a text field that is not a string', async () => {
        await store.commit(search, [page('p1', 1n, 'a', 'red apple'), page('p2', 2n, 'a', 'green apple'), page('p3', 3n, 'a', 'red car')], 3n, NOW);
        expect(await ids({ text: ['red'], sort: [['rank', 'asc']] })).to.deep.equal(['p1', 'p3']);
        await store.commit(search, [page('p1', 4n, 'a', 'yellow banana'), del('pages', 'p3', 4n), page('p2', 4n, 'a', 'red apple')], 4n, NOW);
        expect(await ids({ text: ['red'] })).to.deep.equal(['p2']);
        expect(await ids({ text: ['yellow'] })).to.deep.equal(['p1']);
        expect(await ids({ text: ['car'] })).to.deep.equal([]);
        expect(await store.count(search, 'pages', undefined, ['apple'])).to.equal(1);
        // A stale replay changes neither the document nor the search index.
        await store.commit(search, [page('p1', 2n, 'a', 'red apple')], 4n, NOW);
        expect(await ids({ text: ['red'] })).to.deep.equal(['p2']);
        await store.commit(search, [put('pages', 'p2', 5n, { site: 'a', search: ['red'] }), put('pages', 'p4', 5n, { site: 'a' })], 5n, NOW);
        expect(await ids({ text: ['red'] })).to.deep.equal([]);
        expect(await store.count(search, 'pages', undefined, ['red'])).to.equal(0);
        // A document put back after its delete is found again.
        await store.commit(search, [page('p3', 6n, 'a', 'red car')], 6n, NOW);
        expect(await ids({ text: ['red', 'car'] })).to.deep.equal(['p3']);
      });

      test('finds Japanese, Chinese and Korean text by the tokens of a query', async () => {
        await store.commit(search, [
          page('p1', 1n, 'ja', '東京都庁の展望室', '東京タワーと京都の寺'),
          page('p2', 2n, 'ja', 'Node.jsの使い方', 'ひらがなとカタカナ'),
          page('p3', 3n, 'zh', '北京大学', '中文信息处理'),
          page('p4', 4n, 'ko', '한국어 형태소 분석', '서울특별시'),
          page('p5', 5n, 'ja', '京都観光', '清水寺'),
        ], 5n, NOW);
        const found = async (q: string) => (await ids({ text: queryTokens(q), sort: [['rank', 'asc']] }));
        expect(await found('京都')).to.deep.equal(['p1', 'p5']);
        expect(await found('東京')).to.deep.equal(['p1']);
        expect(await found('東京タワー')).to.deep.equal(['p1']);
        expect(await found('使い方')).to.deep.equal(['p2']);
        expect(await found('node.js カタカナ')).to.deep.equal(['p2']);
        expect(await found('ひらがな')).to.deep.equal(['p2']);
        expect(await found('大学')).to.deep.equal(['p3']);
        expect(await found('北京')).to.deep.equal(['p3']);
        expect(await found('信息')).to.deep.equal(['p3']);
        expect(await found('서울')).to.deep.equal(['p4']);
        expect(await found('寺')).to.deep.equal(['p1', 'p5']);
        expect(await found('大阪')).to.deep.equal([]);
      });

      test('searches a generation rebuilt with deferred indexes once they are created', async () => {
        const rebuilt: ModelTarget = { projection: 'test-search', generation: 2 };
        await store.createGeneration(searchSchema, 2, 2, NOW, { deferIndexes: true });
        await store.commit(rebuilt, [page('p1', 1n, 'a', 'alpha beta'), page('p2', 2n, 'a', 'beta gamma'), page('p3', 3n, 'a', 'gamma')], 3n, NOW);
        await store.commit(rebuilt, [page('p3', 4n, 'a', 'delta'), del('pages', 'p1', 4n)], 4n, NOW);
        await store.createIndexes(searchSchema, 2);
        await store.createIndexes(searchSchema, 2);
        expect(await ids({ text: ['beta'] }, rebuilt)).to.deep.equal(['p2']);
        expect(await ids({ text: ['gamma'] }, rebuilt)).to.deep.equal(['p2']);
        expect(await ids({ text: ['delta'] }, rebuilt)).to.deep.equal(['p3']);
        expect(await store.count(rebuilt, 'pages', undefined, ['beta'])).to.equal(1);
        await store.commit(rebuilt, [page('p4', 5n, 'a', 'beta')], 5n, NOW);
        expect(await ids({ text: ['beta'], sort: [['rank', 'asc']] }, rebuilt)).to.deep.equal(['p2', 'p4']);
        expect(await ids({ text: ['beta'] })).to.deep.equal([]);
      });

      test('dropping a generation drops its search index with it', async () => {
        await store.commit(search, [page('p1', 1n, 'a', 'ghost words'), page('p2', 2n, 'a', 'other words')], 2n, NOW);
        await store.dropGeneration(searchSchema, 1);
        expect(await ids({ text: ['ghost'] })).to.deep.equal([]);
        expect(await store.count(search, 'pages', undefined, ['ghost'])).to.equal(0);
        await store.createGeneration(searchSchema, 1, 1, NOW);
        await store.commit(search, [page('p9', 1n, 'a', 'fresh words')], 1n, NOW);
        expect(await ids({ text: ['ghost'] })).to.deep.equal([]);
        expect(await ids({ text: ['words'] })).to.deep.equal(['p9']);
      });

      test('refuses to search a collection without a textField, and bad tokens; no tokens find nothing', async () => {
        await store.commit(search, [put('plain', 'x', 1n, { search: 'word' }), page('p1', 1n, 'a', 'word')], 1n, NOW);
        const refusal = (promise: Promise<unknown>) => promise.then(() => null, (e: unknown) => e);
        expect(await refusal(store.find(search, 'plain', { text: ['word'] }))).to.be.instanceOf(ReadModelError);
        expect(await refusal(store.count(search, 'plain', undefined, ['word']))).to.be.instanceOf(ReadModelError);
        expect(await refusal(store.find(search, 'plain', { text: [] }))).to.be.instanceOf(ReadModelError);
        for (const bad of [['two words'], ['"quoted'], [''], ['x'.repeat(65)], Array.from({ length: 33 }, (_, i) => `t${i}`)]) {
          expect(await refusal(store.find(search, 'pages', { text: bad })), JSON.stringify(bad)).to.be.instanceOf(ReadModelError);
        }
        expect(await store.find(search, 'pages', { text: [] })).to.deep.equal([]);
        expect(await store.count(search, 'pages', undefined, [])).to.equal(0);
        expect(await store.find(search, 'pages', { text: ['word'] })).to.have.length(1);
        expect(await store.find({ projection: 'test-search', generation: 7 }, 'pages', { text: ['word'] })).to.deep.equal([]);
      });

      test('a textField declared on an existing generation indexes the documents stored before', async () => {
        const later: ModelTarget = { projection: 'test-search', generation: 3 };
        const withoutText: ReadModelSchema = { ...searchSchema, collections: { ...searchSchema.collections, pages: { indexes: searchSchema.collections['pages']!.indexes! } } };
        await store.createGeneration(withoutText, 3, 1, NOW);
        await store.commit(later, [page('p1', 1n, 'a', 'before the change')], 1n, NOW);
        await store.createGeneration(searchSchema, 3, 1, NOW);
        await store.commit(later, [page('p2', 2n, 'a', 'after the change')], 2n, NOW);
        expect(await ids({ text: ['change'], sort: [['rank', 'asc']] }, later)).to.deep.equal(['p1', 'p2']);
      });

      test('returns ids with the documents', async () => {
        await store.commit(search, [page('b', 1n, 'a', 'same'), page('a', 2n, 'a', 'same')], 2n, NOW);
        const entries = await store.findWithIds(search, 'pages', { text: ['same'] });
        expect(entries.map((e) => e.id)).to.deep.equal(['a', 'b']);
        expect(entries[0]!.doc).to.include({ title: 'same', site: 'a' });
        expect((await store.findWithIds(search, 'pages', { filter: { site: 'a' } })).map((e) => e.id)).to.deep.equal(['a', 'b']);
      });
    });
  });
}

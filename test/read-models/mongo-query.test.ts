import { expect } from 'chai';
import {
  docPath,
  physicalCollectionName,
  toMongoCondition,
  toMongoFilter,
  planCollectionWrites,
  textIndexPrefix,
  assertTextPrefix,
  toMongoIndexes,
  toMongoPaging,
  toMongoSort,
  toMongoText,
  toMongoTextIndex,
  TEXT_INDEX_NAME,
  TEXT_LANGUAGE_OVERRIDE,
} from '../../src/read-models/mongo-query.ts';
import { MAX_QUERY_LIMIT, ReadModelError, type FieldCondition, type Query } from '../../src/read-models/read-model-store.ts';

describe('mongo-query: the port\'s queries in MongoDB terms', () => {
  describe('field paths', () => {
    it('prefixes document fields with doc., dotted paths included', () => {
      expect(docPath('title')).to.equal('doc.title');
      expect(docPath('seo.meta_title')).to.equal('doc.seo.meta_title');
      expect(docPath('_id')).to.equal('doc._id');
    });

    for (const bad of ['', '$where', 'a..b', '.a', 'a.', 'a.$gt', 'a b', 'a-b', '1a', 'a.0', 'a[0]']) {
      it(`rejects the field path ${JSON.stringify(bad)}`, () => {
        expect(() => docPath(bad)).to.throw(ReadModelError, /invalid field path/);
        expect(() => toMongoFilter({ [bad]: 1 })).to.throw(ReadModelError, /invalid field path/);
        expect(() => toMongoSort([[bad, 'asc']])).to.throw(ReadModelError, /invalid field path/);
      });
    }
  });

  describe('filters', () => {
    it('is empty without a filter', () => {
      expect(toMongoFilter()).to.deep.equal({});
      expect(toMongoFilter({})).to.deep.equal({});
    });

    it('writes equality with $eq, so a value is never read as an operator', () => {
      expect(toMongoFilter({ slug: 'home', rank: 3, draft: false })).to.deep.equal({
        'doc.slug': { $eq: 'home' },
        'doc.rank': { $eq: 3 },
        'doc.draft': { $eq: false },
      });
    });

    it('passes null through (MongoDB: null or missing)', () => {
      expect(toMongoFilter({ deletedAt: null })).to.deep.equal({ 'doc.deletedAt': { $eq: null } });
      expect(toMongoFilter({ deletedAt: { $ne: null } })).to.deep.equal({ 'doc.deletedAt': { $ne: null } });
    });

    it('translates $in, $ne and the range operators on dotted paths', () => {
      const filter: Query['filter'] = {
        state: { $in: ['published', 'scheduled', null] },
        locale: { $ne: 'de' },
        'stats.views': { $gt: 10 },
        'stats.likes': { $gte: 1 },
        publishedAt: { $lt: '2026-01-01T00:00:00.000Z' },
        title: { $lte: 'm' },
      };
      expect(toMongoFilter(filter)).to.deep.equal({
        'doc.state': { $in: ['published', 'scheduled', null] },
        'doc.locale': { $ne: 'de' },
        'doc.stats.views': { $gt: 10 },
        'doc.stats.likes': { $gte: 1 },
        'doc.publishedAt': { $lt: '2026-01-01T00:00:00.000Z' },
        'doc.title': { $lte: 'm' },
      });
    });

    it('copies the $in array', () => {
      const values = ['a', 'b'] as const;
      const translated = toMongoCondition('x', { $in: values }) as { $in: unknown[] };
      expect(translated.$in).to.deep.equal(['a', 'b']);
      expect(translated.$in).to.not.equal(values);
    });

    it('takes a lower and an upper bound on one field as one range', () => {
      expect(toMongoFilter({ at: { $gte: 10, $lt: 20 } })).to.deep.equal({ 'doc.at': { $gte: 10, $lt: 20 } });
    });

    const invalid: Array<[string, unknown, RegExp]> = [
      ['an unknown operator', { $regex: 'a' }, /unknown operator \$regex/],
      ['two lower bounds', { $gt: 1, $gte: 5 }, /two lower bounds/],
      ['a bound beside $ne', { $ne: 1, $lt: 5 }, /unknown operator \$ne/],
      ['three operators', { $gt: 1, $lt: 5, $ne: 3 }, /a lower and an upper bound/],
      ['no operator', {}, /one operator, or a lower and an upper bound/],
      ['an array value', ['a'], /expected a string/],
      ['$in without an array', { $in: 'a' }, /\$in takes an array/],
      ['$in with an object', { $in: [{ a: 1 }] }, /\$in takes an array/],
      ['$gt with a boolean', { $gt: true }, /\$gt takes a string or a finite number/],
      ['$lte with null', { $lte: null }, /\$lte takes a string or a finite number/],
      ['$ne with an object', { $ne: { a: 1 } }, /\$ne takes/],
      ['NaN', Number.NaN, /expected a string/],
      ['Infinity in a range', { $gte: Number.POSITIVE_INFINITY }, /finite number/],
      ['a bigint', 1n, /expected a string/],
      ['undefined', undefined, /expected a string/],
    ];
    for (const [what, condition, message] of invalid) {
      it(`rejects ${what}`, () => {
        expect(() => toMongoFilter({ field: condition as FieldCondition })).to.throw(ReadModelError, message);
      });
    }
  });

  describe('sort', () => {
    it('always ends with the document id as a tie-breaker', () => {
      expect(toMongoSort()).to.deep.equal([['_id', 1]]);
      expect(toMongoSort([])).to.deep.equal([['_id', 1]]);
    });

    it('keeps the order of the keys and maps asc/desc to 1/-1; the id tie-break follows the last key', () => {
      expect(
        toMongoSort([
          ['publishedAt', 'desc'],
          ['title', 'asc'],
          ['seo.rank', 'desc'],
        ]),
      ).to.deep.equal([
        ['doc.publishedAt', -1],
        ['doc.title', 1],
        ['doc.seo.rank', -1],
        ['_id', -1],
      ]);
    });

    it('counts a field named twice where it is first named', () => {
      expect(
        toMongoSort([
          ['a', 'desc'],
          ['b', 'asc'],
          ['a', 'asc'],
        ]),
      ).to.deep.equal([
        ['doc.a', -1],
        ['doc.b', 1],
        ['_id', 1],
      ]);
    });

    it('rejects a direction other than asc or desc', () => {
      expect(() => toMongoSort([['a', 'up' as 'asc']])).to.throw(ReadModelError, /invalid sort direction/);
      expect(() => toMongoSort([['a', 1 as unknown as 'asc']])).to.throw(ReadModelError, /invalid sort direction/);
    });
  });

  describe('paging', () => {
    it('defaults to MAX_QUERY_LIMIT from offset 0', () => {
      expect(toMongoPaging()).to.deep.equal({ skip: 0, limit: MAX_QUERY_LIMIT });
      expect(toMongoPaging({})).to.deep.equal({ skip: 0, limit: MAX_QUERY_LIMIT });
    });

    it('caps the limit at MAX_QUERY_LIMIT', () => {
      expect(toMongoPaging({ limit: MAX_QUERY_LIMIT + 1 }).limit).to.equal(MAX_QUERY_LIMIT);
      expect(toMongoPaging({ limit: Number.MAX_SAFE_INTEGER }).limit).to.equal(MAX_QUERY_LIMIT);
      expect(toMongoPaging({ limit: MAX_QUERY_LIMIT }).limit).to.equal(MAX_QUERY_LIMIT);
    });

    it('passes smaller limits and offsets through, 0 included', () => {
      expect(toMongoPaging({ limit: 25, offset: 50 })).to.deep.equal({ skip: 50, limit: 25 });
      expect(toMongoPaging({ limit: 0 })).to.deep.equal({ skip: 0, limit: 0 });
    });

    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      it(`rejects ${bad} as a limit or an offset`, () => {
        expect(() => toMongoPaging({ limit: bad })).to.throw(ReadModelError, /invalid limit/);
        expect(() => toMongoPaging({ offset: bad })).to.throw(ReadModelError, /invalid offset/);
      });
    }
  });

  describe('indexes', () => {
    it('indexes doc.<field> under the schema\'s name, in the declared order, ending with the id like sorts do', () => {
      const [index] = toMongoIndexes({
        name: 'by_state_date',
        fields: [
          ['state', 1],
          ['meta.publishedAt', -1],
        ],
      });
      expect(index).to.deep.equal({ name: 'by_state_date', key: { 'doc.state': 1, 'doc.meta.publishedAt': -1, _id: -1 } });
      expect(Object.keys(index!.key)).to.deep.equal(['doc.state', 'doc.meta.publishedAt', '_id']);
    });

    it('enforces a unique index with a second index, unique and sparse over the document\'s key in it (no partial index); lookups keep a full index', () => {
      expect(
        toMongoIndexes({
          name: 'slug',
          fields: [
            ['locale', 1],
            ['slug', 1],
          ],
          unique: true,
        }),
      ).to.deep.equal([
        { name: 'slug', key: { 'doc.locale': 1, 'doc.slug': 1, _id: 1 } },
        { name: 'slug__unique', key: { '_unique.slug': 1 }, unique: true, sparse: true },
      ]);
    });

    it('plans a batch\'s writes to a collection as deletes first, then puts in position order', () => {
      const w = (id: string, position: bigint, doc: object | null) => ({ id, position, doc });
      const plan = planCollectionWrites([w('b', 6n, { slug: 'x' }), w('a', 5n, null), w('c', 2n, { slug: 'y' }), w('d', 9n, null)]);
      expect(plan.deletes.map((x) => x.id)).to.deep.equal(['a', 'd']);
      expect(plan.puts.map((x) => x.id)).to.deep.equal(['c', 'b']);
    });

    it('leaves the fields an index includes out of its keys (a MongoDB index holds only keys), and checks them as SQLite does', () => {
      const plain = { name: 'by_list', fields: [['list', 1], ['rank', -1]] as Array<[string, 1 | -1]> };
      expect(toMongoIndexes({ ...plain, include: ['item', 'n'] })).to.deep.equal(toMongoIndexes(plain));
      expect(() => toMongoIndexes({ ...plain, include: ['meta.note'] })).to.throw(ReadModelError, /top-level/);
      expect(() => toMongoIndexes({ ...plain, include: ['item'], unique: true })).to.throw(ReadModelError, /unique/);
    });

    it('rejects bad names, no fields, repeated fields and bad directions', () => {
      expect(() => toMongoIndexes({ name: 'Bad-Name', fields: [['a', 1]] })).to.throw(ReadModelError, /invalid index name/);
      expect(() => toMongoIndexes({ name: 'empty', fields: [] })).to.throw(ReadModelError, /names no field/);
      expect(() =>
        toMongoIndexes({
          name: 'twice',
          fields: [
            ['a', 1],
            ['a', -1],
          ],
        }),
      ).to.throw(ReadModelError, /twice/);
      expect(() => toMongoIndexes({ name: 'dir', fields: [['a', 2 as 1]] })).to.throw(ReadModelError, /invalid direction/);
      expect(() => toMongoIndexes({ name: 'path', fields: [['$a', 1]] })).to.throw(ReadModelError, /invalid field path/);
    });
  });

  describe('text search', () => {
    it('makes the text index compound with the textPrefix fields, and requires equality on them in text queries', () => {
      expect(toMongoTextIndex('search', ['formSetId', 'locale']).key).to.deep.equal({ 'doc.formSetId': 1, 'doc.locale': 1, 'doc.search': 'text' });
      expect(Object.keys(toMongoTextIndex('search', ['formSetId', 'locale']).key)).to.deep.equal(['doc.formSetId', 'doc.locale', 'doc.search']);
      // as listIndexes describes a compound text index
      expect(textIndexPrefix({ 'doc.formSetId': 1, 'doc.locale': 1, _fts: 'text', _ftsx: 1 })).to.deep.equal(['doc.formSetId', 'doc.locale']);
      expect(textIndexPrefix({ _fts: 'text', _ftsx: 1 })).to.deep.equal([]);
      const prefix = ['doc.formSetId', 'doc.locale'];
      assertTextPrefix(toMongoFilter({ formSetId: 'f1', locale: 'en', status: 'x' }), prefix, 'entry_views');
      expect(() => assertTextPrefix(toMongoFilter({ formSetId: 'f1' }), prefix, 'entry_views')).to.throw(ReadModelError, /must filter locale by equality/);
      expect(() => assertTextPrefix(toMongoFilter({ formSetId: { $in: ['f1'] }, locale: 'en' }), prefix, 'entry_views')).to.throw(ReadModelError, /formSetId/);
    });

    it('indexes the textField under doc. with no language, and a name no IndexSpec can take', () => {
      expect(toMongoTextIndex('search')).to.deep.equal({
        name: TEXT_INDEX_NAME,
        key: { 'doc.search': 'text' },
        default_language: 'none',
        language_override: TEXT_LANGUAGE_OVERRIDE,
      });
      expect(() => toMongoIndexes({ name: TEXT_INDEX_NAME, fields: [['a', 1]] })).to.throw(ReadModelError, /invalid index name/);
      expect(() => toMongoTextIndex('$where')).to.throw(ReadModelError, /invalid field path/);
    });

    it('searches every token as a phrase, and requires each as a whole space-delimited token', () => {
      const filter = toMongoText('doc.search', ['node.js', 'c++', '東京']);
      expect(filter['$text']).to.deep.equal({ $search: '"node.js" "c++" "東京"', $language: 'none', $caseSensitive: false, $diacriticSensitive: true });
      const conditions = (filter['$and'] as Array<Record<string, { $regex: string; $options: string }>>).map((c) => c['doc.search']!);
      expect(conditions.every((c) => c.$options === 'i')).to.equal(true);
      const patterns = conditions.map((c) => new RegExp(c.$regex, c.$options));
      const matchesAll = (text: string) => patterns.every((p) => p.test(text));
      expect(matchesAll('c++ 東京 node.js')).to.equal(true);
      expect(matchesAll('node.js 東京 c++ tail')).to.equal(true);
      expect(matchesAll('nodexjs c++ 東京')).to.equal(false);
      expect(matchesAll('node.json c++ 東京')).to.equal(false);
      expect(matchesAll('node.js c 東京')).to.equal(false);
      expect(matchesAll('node.js c++ 東京都')).to.equal(false);
      expect(matchesAll('NODE.JS C++ 東京')).to.equal(true);
      const special = toMongoText('doc.search', ['a|b', '(x)', '[y]', '$z^', 'q?', 'w*', '{1}', 'back\\slash', '#-']);
      for (const [i, condition] of (special['$and'] as Array<Record<string, { $regex: string }>>).entries()) {
        const token = ['a|b', '(x)', '[y]', '$z^', 'q?', 'w*', '{1}', 'back\\slash', '#-'][i]!;
        const pattern = new RegExp(condition['doc.search']!.$regex);
        expect(pattern.test(`pre ${token} post`), token).to.equal(true);
        expect(pattern.test(`pre ${token.slice(1)} post`), token).to.equal(false);
      }
    });
  });

  describe('physical collection names', () => {
    it('is rm.<projection>.<collection>.g<generation>', () => {
      expect(physicalCollectionName('public-entries', 'entries', 0)).to.equal('rm.public-entries.entries.g0');
      expect(physicalCollectionName('sitemap', 'url_sets', 12)).to.equal('rm.sitemap.url_sets.g12');
    });

    it('rejects bad projection, collection and generation', () => {
      expect(() => physicalCollectionName('Public', 'entries', 1)).to.throw(ReadModelError, /projection name/);
      expect(() => physicalCollectionName('p', 'a.b', 1)).to.throw(ReadModelError, /collection name/);
      expect(() => physicalCollectionName('p', 'c', -1)).to.throw(ReadModelError, /invalid generation/);
      expect(() => physicalCollectionName('p', 'c', 1.5)).to.throw(ReadModelError, /invalid generation/);
    });
  });
});

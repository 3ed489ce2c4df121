import { expect } from 'chai';
import { findUniqueViolation, uniqueKeyOf, uniqueKeysOf, uniqueKeySpecsOf } from '../../src/read-models/mongo-unique-keys.ts';

describe('read models: MongoDB unique keys (no partial indexes)', () => {
  const slug = { name: 'by_slug', fields: ['slug'] };
  const pair = { name: 'by_project_slug', fields: ['projectId', 'meta.slug'] };

  it('keys a document by the JSON of its values; a missing or null value keys it nowhere, as SQL does', () => {
    expect(uniqueKeyOf({ slug: 'a' }, ['slug'])).to.equal('["a"]');
    expect(uniqueKeyOf({ projectId: 'p', meta: { slug: 's' } }, pair.fields)).to.equal('["p","s"]');
    expect(uniqueKeyOf({ projectId: 'p', meta: { slug: null } }, pair.fields)).to.equal(null);
    expect(uniqueKeyOf({ projectId: 'p' }, pair.fields)).to.equal(null);
    // Types stay apart: the string "1" and the number 1 are other keys.
    expect(uniqueKeyOf({ slug: 1 }, ['slug'])).to.not.equal(uniqueKeyOf({ slug: '1' }, ['slug']));
    expect(uniqueKeysOf({ slug: 'a', projectId: 'p' }, [slug, pair])).to.deep.equal({ by_slug: '["a"]' });
    expect(uniqueKeysOf({ title: 'none' }, [slug, pair])).to.equal(undefined);
  });

  it('takes the unique indexes a schema declares, by collection', () => {
    const schema = {
      projection: 'p',
      collections: {
        a: { indexes: [{ name: 'by_slug', fields: [['slug', 1]] as Array<[string, 1]>, unique: true }, { name: 'by_date', fields: [['date', -1]] as Array<[string, -1]> }] },
        b: {},
      },
    };
    expect(uniqueKeySpecsOf(schema)).to.deep.equal({ a: [{ name: 'by_slug', fields: ['slug'] }] });
  });

  describe('findUniqueViolation: the writes applied in order (deletes, then puts by position)', () => {
    const stored = (entries: Record<string, Record<string, unknown>>) => new Map(Object.entries(entries));

    it('refuses a put that takes a key another stored document holds', () => {
      const violation = findUniqueViolation([slug], [], [{ id: 'b', doc: { slug: 'x' } }], stored({}), [{ id: 'a', doc: { slug: 'x' } }]);
      expect(violation).to.deep.equal({ index: 'by_slug', id: 'b', holder: 'a' });
    });

    it('lets a put take a key that a delete or an earlier put of the batch freed', () => {
      expect(findUniqueViolation([slug], [{ id: 'a' }], [{ id: 'b', doc: { slug: 'x' } }], stored({ a: { slug: 'x' } }), [])).to.equal(null);
      expect(findUniqueViolation([slug], [], [{ id: 'a', doc: { slug: 'y' } }, { id: 'b', doc: { slug: 'x' } }], stored({ a: { slug: 'x' } }), [])).to.equal(null);
    });

    it('refuses a swap within one batch, as applying the puts one by one would', () => {
      const violation = findUniqueViolation([slug], [], [{ id: 'a', doc: { slug: 'y' } }, { id: 'b', doc: { slug: 'x' } }], stored({ a: { slug: 'x' }, b: { slug: 'y' } }), []);
      expect(violation).to.deep.equal({ index: 'by_slug', id: 'a', holder: 'b' });
    });

    it('refuses two puts of the batch with one key; a document keeping its own key is fine; nulls never collide', () => {
      expect(findUniqueViolation([slug], [], [{ id: 'a', doc: { slug: 'x' } }, { id: 'b', doc: { slug: 'x' } }], stored({}), [])).to.deep.equal({ index: 'by_slug', id: 'b', holder: 'a' });
      expect(findUniqueViolation([slug], [], [{ id: 'a', doc: { slug: 'x', v: 2 } }], stored({ a: { slug: 'x' } }), [{ id: 'a', doc: { slug: 'x' } }])).to.equal(null);
      expect(findUniqueViolation([pair], [], [{ id: 'a', doc: { projectId: 'p', meta: { slug: null } } }, { id: 'b', doc: { projectId: 'p' } }], stored({ c: { projectId: 'p' } }), [])).to.equal(null);
    });
  });
});

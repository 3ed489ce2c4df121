import { expect } from 'chai';
import { diffRevisions, diffSnapshots } from '../../../../src/domain/content/entry/entry-history.ts';
import { DomainError } from '../../../../src/domain/domain-error.ts';
import { R1, R2, ev, id, stateOf } from './support.ts';

describe('entry history: field-level diff between snapshots', () => {
  it('identical snapshots: no changes (object key order does not matter)', () => {
    expect(diffSnapshots({ a: 1, b: { x: 1, y: [1, 2] } }, { b: { y: [1, 2], x: 1 }, a: 1 })).to.deep.equal([]);
  });

  it('added, removed and changed fields, in first-seen order', () => {
    expect(diffSnapshots({ title: 'A', views: 1, draft: true }, { title: 'B', draft: true, tags: ['x'] })).to.deep.equal([
      { field: 'title', kind: 'changed', before: 'A', after: 'B' },
      { field: 'views', kind: 'removed', before: 1 },
      { field: 'tags', kind: 'added', after: ['x'] },
    ]);
  });

  it('array order matters; a null value is a value', () => {
    expect(diffSnapshots({ tags: ['a', 'b'], x: null }, { tags: ['b', 'a'], x: 0 })).to.deep.equal([
      { field: 'tags', kind: 'changed', before: ['a', 'b'], after: ['b', 'a'] },
      { field: 'x', kind: 'changed', before: null, after: 0 },
    ]);
  });

  it('per-locale fields change per locale', () => {
    const before = { title: { en: 'Hello', ja: 'こんにちは' }, body: { en: 'x' } };
    const after = { title: { en: 'Hello!', ja: 'こんにちは' }, body: { en: 'x', 'zh-Hant-TW': '你好' } };
    expect(diffSnapshots(before, after)).to.deep.equal([
      { field: 'title', locale: 'en', kind: 'changed', before: 'Hello', after: 'Hello!' },
      { field: 'body', locale: 'zh-Hant-TW', kind: 'added', after: '你好' },
    ]);
  });

  it('a removed locale, and a per-locale field added or removed as a whole, per locale', () => {
    expect(diffSnapshots({ t: { en: 'a', ja: 'b' }, old: { en: 'o' } }, { t: { en: 'a' }, new: { en: 'n', 'pt-BR': 'm' } })).to.deep.equal([
      { field: 't', locale: 'ja', kind: 'removed', before: 'b' },
      { field: 'old', locale: 'en', kind: 'removed', before: 'o' },
      { field: 'new', locale: 'en', kind: 'added', after: 'n' },
      { field: 'new', locale: 'pt-BR', kind: 'added', after: 'm' },
    ]);
  });

  it('objects that are not locale maps (rich text, date ranges) are whole values', () => {
    const doc = (text: string) => ({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text }] }] });
    expect(diffSnapshots({ body: doc('a'), when: { from: '2026-01-01', to: '2026-01-02' } }, { body: doc('b'), when: { from: '2026-01-01', to: '2026-01-03' } })).to.deep.equal([
      { field: 'body', kind: 'changed', before: doc('a'), after: doc('b') },
      { field: 'when', kind: 'changed', before: { from: '2026-01-01', to: '2026-01-02' }, after: { from: '2026-01-01', to: '2026-01-03' } },
    ]);
  });

  it('a field that switched between one value and per-locale values is one whole change', () => {
    expect(diffSnapshots({ title: 'Hello' }, { title: { en: 'Hello' } })).to.deep.equal([{ field: 'title', kind: 'changed', before: 'Hello', after: { en: 'Hello' } }]);
  });

  it('per-locale rich text compares each locale document', () => {
    const before = { body: { en: { type: 'doc', content: [] }, ja: { type: 'doc', content: [] } } };
    const after = { body: { en: { type: 'doc', content: [] }, ja: { type: 'doc', content: [{ type: 'paragraph' }] } } };
    expect(diffSnapshots(before, after)).to.deep.equal([{ field: 'body', locale: 'ja', kind: 'changed', before: { type: 'doc', content: [] }, after: { type: 'doc', content: [{ type: 'paragraph' }] } }]);
  });

  it('localizedFields overrides the guess', () => {
    // "to" is a locale tag (Tongan); told which fields are localized, the date range stays whole.
    expect(diffSnapshots({ when: { to: 'a' }, title: { en: 'x' } }, { when: { to: 'b' }, title: { en: 'y' } }, { localizedFields: ['title'] })).to.deep.equal([
      { field: 'when', kind: 'changed', before: { to: 'a' }, after: { to: 'b' } },
      { field: 'title', locale: 'en', kind: 'changed', before: 'x', after: 'y' },
    ]);
  });

  it('diffRevisions reads two revisions of an entry; NOT_FOUND for a revision of another entry', () => {
    const state = stateOf([ev.created(), ev.saved(R1, 1, { title: 'a' }), ev.saved(R2, 2, { title: 'b' })]);
    expect(diffRevisions(state, R1, R2)).to.deep.equal([{ field: 'title', kind: 'changed', before: 'a', after: 'b' }]);
    expect(diffRevisions(state, R2, R1)).to.deep.equal([{ field: 'title', kind: 'changed', before: 'b', after: 'a' }]);
    expect(() => diffRevisions(state, R1, id(777))).to.throw(DomainError, /does not belong/);
  });
});

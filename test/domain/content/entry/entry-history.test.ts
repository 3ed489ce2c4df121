import { expect } from 'chai';
import { diffSnapshots } from '../../../../src/domain/content/entry/entry-history.ts';

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

  it('objects that are not locale maps (rich text, date ranges) are not split per locale', () => {
    const doc = (text: string) => ({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text }] }] });
    expect(diffSnapshots({ body: doc('a'), when: { from: '2026-01-01', to: '2026-01-02' } }, { body: doc('b'), when: { from: '2026-01-01', to: '2026-01-03' } })).to.deep.equal([
      {
        field: 'body',
        kind: 'changed',
        blocks: [
          {
            kind: 'changed',
            beforeIndex: 0,
            afterIndex: 0,
            before: { type: 'paragraph', text: 'a' },
            after: { type: 'paragraph', text: 'b' },
            differences: ['text'],
            words: [
              { op: '-', text: 'a' },
              { op: '+', text: 'b' },
            ],
          },
        ],
      },
      { field: 'when', kind: 'changed', before: { from: '2026-01-01', to: '2026-01-02' }, after: { from: '2026-01-01', to: '2026-01-03' } },
    ]);
  });

  it('a field that switched between one value and per-locale values is one whole change', () => {
    expect(diffSnapshots({ title: 'Hello' }, { title: { en: 'Hello' } })).to.deep.equal([{ field: 'title', kind: 'changed', before: 'Hello', after: { en: 'Hello' } }]);
  });

  it('per-locale rich text compares each locale document', () => {
    const before = { body: { en: { type: 'doc', content: [] }, ja: { type: 'doc', content: [] } } };
    const after = { body: { en: { type: 'doc', content: [] }, ja: { type: 'doc', content: [{ type: 'paragraph' }] } } };
    expect(diffSnapshots(before, after)).to.deep.equal([{ field: 'body', locale: 'ja', kind: 'changed', blocks: [{ kind: 'added', afterIndex: 0, after: { type: 'paragraph', text: '' } }] }]);
  });

  it('localizedFields overrides the guess', () => {
    // "to" is a locale tag (Tongan); told which fields are localized, the date range stays whole.
    expect(diffSnapshots({ when: { to: 'a' }, title: { en: 'x' } }, { when: { to: 'b' }, title: { en: 'y' } }, { localizedFields: ['title'] })).to.deep.equal([
      { field: 'when', kind: 'changed', before: { to: 'a' }, after: { to: 'b' } },
      { field: 'title', locale: 'en', kind: 'changed', before: 'x', after: 'y' },
    ]);
  });

  describe('rich text (tiptap documents): block by block, by text and structure', () => {
    const p = (text: string, marks?: unknown[]) => ({ type: 'paragraph', content: [{ type: 'text', text, ...(marks ? { marks } : {}) }] });
    const h = (level: number, text: string) => ({ type: 'heading', attrs: { level }, content: [{ type: 'text', text }] });
    const doc = (...content: unknown[]) => ({ type: 'doc', content });

    it('an inserted paragraph is one added block, not every later block changed', () => {
      const before = { body: doc(h(1, 'Title'), p('First'), p('Last')) };
      const after = { body: doc(h(1, 'Title'), p('First'), p('Inserted'), p('Last')) };
      expect(diffSnapshots(before, after, { richTextFields: ['body'] })).to.deep.equal([
        { field: 'body', kind: 'changed', blocks: [{ kind: 'added', afterIndex: 2, after: { type: 'paragraph', text: 'Inserted' } }] },
      ]);
    });

    it('a changed block says what changed: text (with a word diff), type or format', () => {
      const before = { body: { en: doc(p('The quick fox'), p('Plain'), p('Become a heading')) } };
      const after = { body: { en: doc(p('The slow fox'), p('Plain', [{ type: 'bold' }]), h(2, 'Become a heading')) } };
      const [change] = diffSnapshots(before, after, { richTextFields: ['body'], localizedFields: ['body'] });
      expect(change).to.include({ field: 'body', locale: 'en', kind: 'changed' });
      expect(change!.before).to.equal(undefined);
      const blocks = change!.blocks!;
      expect(blocks.map((b) => [b.kind, b.beforeIndex, b.afterIndex, b.differences])).to.deep.equal([
        ['changed', 0, 0, ['text']],
        ['changed', 1, 1, ['format']],
        ['changed', 2, 2, ['type']],
      ]);
      expect(blocks[0]!.words).to.deep.equal([
        { op: '=', text: 'The ' },
        { op: '-', text: 'quick' },
        { op: '+', text: 'slow' },
        { op: '=', text: ' fox' },
      ]);
      expect(blocks[2]).to.deep.include({ before: { type: 'paragraph', text: 'Become a heading' }, after: { type: 'heading:2', text: 'Become a heading' } });
    });

    it('a removed block, an added document, and equal documents whatever their key order', () => {
      expect(diffSnapshots({ body: doc(p('a'), p('b')) }, { body: doc(p('b')) })).to.deep.equal([
        { field: 'body', kind: 'changed', blocks: [{ kind: 'removed', beforeIndex: 0, before: { type: 'paragraph', text: 'a' } }] },
      ]);
      expect(diffSnapshots({}, { body: doc(p('new')) }, { richTextFields: ['body'] })).to.deep.equal([
        { field: 'body', kind: 'added', blocks: [{ kind: 'added', afterIndex: 0, after: { type: 'paragraph', text: 'new' } }] },
      ]);
      const reordered = { content: [{ content: [{ text: 'x', type: 'text' }], type: 'paragraph' }], type: 'doc' };
      expect(diffSnapshots({ body: doc(p('x')) }, { body: reordered }, { richTextFields: ['body'] })).to.deep.equal([]);
    });

    it('HTML strings in a tiptap field are compared as strings', () => {
      expect(diffSnapshots({ body: '<p>a</p>' }, { body: '<p>b</p>' }, { richTextFields: ['body'] })).to.deep.equal([
        { field: 'body', kind: 'changed', before: '<p>a</p>', after: '<p>b</p>' },
      ]);
    });
  });
});

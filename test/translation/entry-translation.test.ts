import { expect } from 'chai';
import { DomainError } from '../../src/domain/domain-error.ts';
import { applyEntryTranslation, planEntryTranslation, planSize, textNodes } from '../../src/translation/entry-translation.ts';
import { batches, MAX_TEXTS_PER_REQUEST, sourceLanguage, targetLanguage } from '../../src/translation/deepl-compatible-provider.ts';

const locales = { locales: ['en', 'ja', 'fr'], defaultLocale: 'en' };
const fields = [
  { key: 'title', type: 'text' as const },
  { key: 'summary', type: 'textarea' as const },
  { key: 'body', type: 'tiptap' as const },
  { key: 'code', type: 'text' as const, locale_shared: true },
  { key: 'rating', type: 'number' as const },
];
const doc = {
  type: 'doc',
  content: [
    { type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'Intro' }] },
    {
      type: 'paragraph',
      content: [
        { type: 'text', text: 'Hello ' },
        { type: 'text', text: 'world', marks: [{ type: 'bold' }] },
        { type: 'text', text: ' npm start', marks: [{ type: 'code' }] },
        { type: 'text', text: '   ' },
      ],
    },
    { type: 'codeBlock', content: [{ type: 'text', text: 'const x = 1;' }] },
  ],
};

function translateAll(segments: string[][], prefix: string): string[][] {
  return segments.map((list) => list.map((s) => `${prefix}${s}`));
}

describe('entry translation plan', () => {
  it('fills only missing values of localized fields, from the source locale, into every other locale by default', () => {
    const snapshot = { title: { en: 'Hello', ja: 'こんにちは' }, summary: { en: 'A summary', fr: '' }, body: { en: doc }, code: 'X-1', rating: 4 };
    const plan = planEntryTranslation({ fields, snapshot, locales });
    expect(plan.sourceLocale).to.equal('en');
    expect(plan.targetLocales).to.deep.equal(['ja', 'fr']);
    expect(plan.units.map((u) => `${u.field}.${u.targetLocale}:${u.kind}`)).to.deep.equal([
      'title.fr:plain',
      'summary.ja:plain',
      'summary.fr:plain',
      'body.ja:plain',
      'body.fr:plain',
    ]);
    expect(plan.skipped).to.deep.equal([{ field: 'title', targetLocale: 'ja', reason: 'has-value' }]);
    // The rich-text document is cut into its text nodes: code marks, code blocks and blank nodes stay out.
    expect(plan.units[3]!.segments).to.deep.equal(['Intro', 'Hello', 'world']);
    expect(planSize(plan)).to.deep.equal({ segments: 9, characters: 5 + 9 * 2 + (5 + 5 + 5) * 2 });
  });

  it('puts translations back, keeping other values, the document structure, marks and surrounding spaces', () => {
    const snapshot = { title: { en: '  Hello ' }, body: { en: doc }, code: 'X-1', rating: 4 };
    const plan = planEntryTranslation({ fields, snapshot, locales, targetLocales: ['ja'] });
    const result = applyEntryTranslation(snapshot, plan, translateAll(plan.units.map((u) => u.segments), 'JA:'));
    expect(result['title']).to.deep.equal({ en: '  Hello ', ja: '  JA:Hello ' });
    expect(result['code']).to.equal('X-1');
    expect(result['rating']).to.equal(4);
    const ja = (result['body'] as Record<string, typeof doc>)['ja']!;
    expect(ja.content[0]).to.deep.equal({ type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'JA:Intro' }] });
    expect(ja.content[1]!.content).to.deep.equal([
      { type: 'text', text: 'JA:Hello ' },
      { type: 'text', text: 'JA:world', marks: [{ type: 'bold' }] },
      { type: 'text', text: ' npm start', marks: [{ type: 'code' }] },
      { type: 'text', text: '   ' },
    ]);
    expect(ja.content[2]).to.deep.equal(doc.content[2]);
    // The source is untouched.
    expect((snapshot.body.en.content[1]!.content![0] as { text: string }).text).to.equal('Hello ');
  });

  it('translates an HTML rich-text value as HTML, and skips values without a source', () => {
    const plan = planEntryTranslation({ fields, snapshot: { body: { en: '<p>Hi <b>there</b></p>' } }, locales, targetLocales: ['ja'] });
    expect(plan.units).to.have.length(1);
    expect(plan.units[0]).to.include({ field: 'body', kind: 'html' });
    expect(plan.units[0]!.segments).to.deep.equal(['<p>Hi <b>there</b></p>']);
    expect(plan.skipped).to.deep.equal([
      { field: 'title', targetLocale: 'ja', reason: 'no-source-value' },
      { field: 'summary', targetLocale: 'ja', reason: 'no-source-value' },
    ]);
  });

  it('treats an empty document and a blank string as missing', () => {
    const emptyDoc = { type: 'doc', content: [{ type: 'paragraph' }] };
    const plan = planEntryTranslation({ fields, snapshot: { title: { en: 'Hi', ja: '  ' }, body: { en: doc, ja: emptyDoc } }, locales, targetLocales: ['ja'] });
    expect(plan.units.map((u) => u.field)).to.deep.equal(['title', 'body']);
    expect(textNodes(emptyDoc)).to.deep.equal([]);
  });

  it('refuses locales that are not content locales, the source as a target, and single-locale projects', () => {
    const attempt = (input: Partial<Parameters<typeof planEntryTranslation>[0]>) => () => planEntryTranslation({ fields, snapshot: {}, locales, ...input });
    expect(attempt({ sourceLocale: 'de' })).to.throw(DomainError, /sourceLocale: "de" is not a content locale/);
    expect(attempt({ targetLocales: ['de'] })).to.throw(DomainError, /targetLocales: "de" is not a content locale/);
    expect(attempt({ targetLocales: ['en'] })).to.throw(DomainError, /en is the source locale/);
    expect(attempt({ targetLocales: [] })).to.throw(DomainError, /at least one locale/);
    expect(attempt({ locales: { locales: ['en'], defaultLocale: 'en' } })).to.throw(DomainError, /one content locale/);
    try {
      attempt({ targetLocales: ['de'] })();
    } catch (error) {
      expect((error as DomainError).code).to.equal('VALIDATION_ERROR');
    }
  });
});

describe('DeepL-compatible request shape', () => {
  it('cuts texts into batches of at most 50 texts and about 100 kB', () => {
    const many = Array.from({ length: 120 }, (_, i) => `text ${i}`);
    expect(batches(many).map((b) => b.length)).to.deep.equal([MAX_TEXTS_PER_REQUEST, MAX_TEXTS_PER_REQUEST, 20]);
    expect(batches(many).flat()).to.deep.equal(many);
    const big = 'x'.repeat(60_000);
    expect(batches([big, big, 'a']).map((b) => b.length)).to.deep.equal([1, 2]);
    expect(batches([])).to.deep.equal([]);
  });

  it('sends the language of the source and the whole code of the target, in upper case', () => {
    expect(sourceLanguage('pt-BR')).to.equal('PT');
    expect(targetLanguage('pt-BR')).to.equal('PT-BR');
    expect(sourceLanguage('en')).to.equal('EN');
    expect(targetLanguage('ja')).to.equal('JA');
  });
});

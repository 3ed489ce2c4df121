import { expect } from 'chai';
import { createAjv } from '../../../../src/domain/content/form-set/ajv.ts';
import {
  EntryFieldsValidatorCache,
  assertValidEntryFields,
  entryFieldsValidator,
  sampleValues,
  toJsonSchema,
  validateEntryFields,
  type MasterValuesLookup,
} from '../../../../src/domain/content/form-set/field-validation.ts';
import { validateFormSetDefinition, type VersionedFormSetDefinition } from '../../../../src/domain/content/form-set/form-set-definition.ts';
import { ASSET_ID, ENTRY_ID, FORM_SET_ID, expectDomainError } from './fixtures.ts';

const ASSET_2 = '2b3c4d5e-6f70-4a81-9b2c-3d4e5f607182';
const locales = { locales: ['en', 'ja'], defaultLocale: 'en' };
const doc = { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Hello' }] }] };

const definition: VersionedFormSetDefinition = {
  ...validateFormSetDefinition({
    id: FORM_SET_ID,
    slug: 'everything',
    name: 'Every field type',
    fields: [
      { key: 'title', type: 'text', label: 'Title', required: true, limits: { maxLength: 12 } },
      { key: 'subtitle', type: 'text', label: 'Subtitle', locale_shared: true, limits: { minLength: 3, pattern: '^[A-Za-z ]+$' } },
      { key: 'link', type: 'url', label: 'Link' },
      { key: 'summary', type: 'textarea', label: 'Summary', limits: { maxLength: 20 } },
      { key: 'body', type: 'tiptap', label: 'Body' },
      { key: 'price', type: 'number', label: 'Price', limits: { min: 0, max: 1000 } },
      { key: 'qty', type: 'number', label: 'Quantity', limits: { integer: true } },
      { key: 'visible', type: 'boolean', label: 'Visible' },
      { key: 'day', type: 'date', label: 'Day' },
      { key: 'category', type: 'select', label: 'Category', masterEntityKey: 'blog_category' },
      { key: 'color', type: 'radio', label: 'Color', masterEntityKey: 'colors' },
      { key: 'tags', type: 'multiselect', label: 'Tags', masterEntityKey: 'tags', limits: { maxItems: 3 } },
      { key: 'cover', type: 'image', label: 'Cover' },
      { key: 'attachment', type: 'file', label: 'Attachment' },
      { key: 'gallery', type: 'image_gallery', label: 'Gallery', limits: { maxItems: 3 } },
      { key: 'video', type: 'video_embed', label: 'Video' },
      { key: 'related', type: 'entry_ref', label: 'Related entry' },
    ],
  }),
  version: 1,
};

const masters: Record<string, Set<string>> = {
  blog_category: new Set(['news', 'tips']),
  colors: new Set(['red', 'blue']),
  tags: new Set(['a', 'b', 'c', 'd']),
};
const masterValues: MasterValuesLookup = (key) => masters[key];

function check(fields: unknown, options: { masterValues?: MasterValuesLookup } = { masterValues }) {
  return validateEntryFields(definition, locales, fields, options);
}
function messages(fields: unknown): string[] {
  const result = check(fields);
  return result.ok ? [] : result.problems.map((p) => p.message);
}
function expectValid(fields: Record<string, unknown>) {
  const result = check(fields);
  expect(result.ok, result.ok ? '' : result.message).to.equal(true);
  return result.ok ? result.fields : {};
}
function expectProblem(fields: Record<string, unknown>, expected: string) {
  const found = messages(fields);
  expect(found, `expected "${expected}"`).to.include(expected);
}

describe('entry field validation', () => {
  describe('a full, valid entry', () => {
    it('passes and comes back normalized (localized fields as {locale: value})', () => {
      const fields = expectValid({
        title: 'Hello',
        subtitle: 'Shared text',
        link: 'https://example.com/a?b=c',
        summary: { en: 'Short', ja: '短い' },
        body: doc,
        price: 9.5,
        qty: 3,
        visible: false,
        day: '2026-05-01',
        category: 'news',
        color: 'red',
        tags: ['a', 'b'],
        cover: ASSET_ID,
        attachment: ASSET_2,
        gallery: [ASSET_ID, { assetId: ASSET_2, caption: 'Second' }],
        video: 'https://www.youtube.com/watch?v=abc',
        related: ENTRY_ID,
      });
      expect(fields.title).to.deep.equal({ en: 'Hello' });
      expect(fields.subtitle).to.equal('Shared text');
      expect(fields.summary).to.deep.equal({ en: 'Short', ja: '短い' });
      expect(fields.body).to.deep.equal({ en: doc });
      expect(fields.visible).to.equal(false);
    });

    it('drops null values of optional fields, null locale values and empty locale maps', () => {
      const fields = expectValid({ title: { en: 'Hi', ja: null }, summary: {}, link: null, body: undefined });
      expect(fields).to.deep.equal({ title: { en: 'Hi' } });
    });
  });

  describe('every field type', () => {
    const table: Array<[string, unknown[], Array<[unknown, string]>]> = [
      ['text', ['Hello', { en: 'Hello', ja: 'こんにちは' }], [[5, 'fields.title: must be a string, or an object with one value per content locale'], [{ en: 5 }, 'fields.title.en: must be a string']]],
      ['url', ['https://example.com', 'http://example.com/x', 'mailto:a@example.com', 'tel:+81-3-0000', '/about/team'], [['example.com', 'fields.link: must be a URL (http or https, mailto:, tel:, or a path beginning with /)'], ['//evil.example', 'fields.link: must be a URL (http or https, mailto:, tel:, or a path beginning with /)'], ['javascript:alert(1)', 'fields.link: must be a URL (http or https, mailto:, tel:, or a path beginning with /)'], [`https://e.com/${'a'.repeat(2048)}`, 'fields.link: must be at most 2048 characters']]],
      ['textarea', ['Line 1\nLine 2', { ja: 'テキスト' }], [[['a'], 'fields.summary: must be a string, or an object with one value per content locale']]],
      ['tiptap', [doc, '<p>Hello</p>', { en: doc, ja: '<p>こんにちは</p>' }, { type: 'doc' }], [[{ type: 'paragraph' }, 'fields.body: must be a rich-text document ({"type": "doc", "content": [...]}) or an HTML string'], [{ en: 5 }, 'fields.body.en: must be a rich-text document ({"type": "doc", "content": [...]}) or an HTML string'], [{ type: 'doc', content: 'x' }, 'fields.body: must be a rich-text document ({"type": "doc", "content": [...]}) or an HTML string']]],
      ['number', [0, 12.5, 1000], [['12', 'fields.price: must be a number'], [-1, 'fields.price: must be at least 0'], [1000.5, 'fields.price: must be at most 1000']]],
      ['boolean', [true, false], [['true', 'fields.visible: must be true or false'], [1, 'fields.visible: must be true or false']]],
      ['date', ['2026-05-01', '2026-05-01T09:30:00Z', '2026-05-01T09:30:00+09:00', { from: '2026-05-01', to: '2026-05-03' }, { from: '2026-05-01T09:00:00Z', to: '2026-05-01T18:00:00Z' }], [['2026-13-01', 'fields.day: must be a date (YYYY-MM-DD) or a date-time (RFC 3339, e.g. 2026-05-01T09:00:00Z)'], ['May 1st', 'fields.day: must be a date (YYYY-MM-DD) or a date-time (RFC 3339, e.g. 2026-05-01T09:00:00Z)'], [20260501, 'fields.day: must be a date (YYYY-MM-DD), a date-time (RFC 3339, e.g. 2026-05-01T09:00:00Z) or an object {from, to} of them'], [{ from: '2026-05-01' }, 'fields.day.to: is required'], [{ from: 'x', to: '2026-05-01' }, 'fields.day.from: must be a date (YYYY-MM-DD) or a date-time (RFC 3339, e.g. 2026-05-01T09:00:00Z)'], [{ from: '2026-05-01', to: '2026-05-02', at: 'x' }, 'fields.day.at: is not allowed'], [{ from: '2026-05-03', to: '2026-05-01' }, 'fields.day: must not end before it starts (from is later than to)']]],
      ['select', ['news', 'tips'], [[['news'], 'fields.category: must be a string (a record value of master "blog_category")'], ['', 'fields.category: must not be empty'], ['sports', 'fields.category: "sports" is not a record value of master "blog_category" (values include news, tips)']]],
      ['radio', ['red', 'blue'], [[true, 'fields.color: must be a string (a record value of master "colors")'], ['green', 'fields.color: "green" is not a record value of master "colors" (values include red, blue)']]],
      ['multiselect', [[], ['a'], ['a', 'b', 'c']], [['a', 'fields.tags: must be an array of distinct strings (record values of master "tags")'], [['a', 'a'], 'fields.tags: must not contain the same value twice (items 0 and 1 are equal)'], [['a', 'b', 'c', 'd'], 'fields.tags: must have at most 3 items'], [['a', 'z'], 'fields.tags[1]: "z" is not a record value of master "tags" (values include a, b, c, d)'], [[1], 'fields.tags[0]: must be a string']]],
      ['image', [ASSET_ID], [['not-a-uuid', 'fields.cover: must be an asset id (UUID)'], [{ assetId: ASSET_ID }, 'fields.cover: must be an asset id (UUID)']]],
      ['file', [ASSET_2], [['file.pdf', 'fields.attachment: must be an asset id (UUID)']]],
      ['image_gallery', [[], [ASSET_ID, ASSET_2], [{ assetId: ASSET_ID }, { assetId: ASSET_2, caption: 'Two' }], [ASSET_ID, { assetId: ASSET_2 }]], [[ASSET_ID, 'fields.gallery: must be an array of asset ids (UUIDs) or of objects {assetId, caption?}'], [['x'], 'fields.gallery[0]: must be an asset id (UUID)'], [[{ caption: 'no id' }], 'fields.gallery[0].assetId: is required'], [[{ assetId: ASSET_ID, alt: 'x' }], 'fields.gallery[0].alt: is not allowed'], [[{ assetId: ASSET_ID, caption: 'x'.repeat(1001) }], 'fields.gallery[0].caption: must be at most 1000 characters'], [[5], 'fields.gallery[0]: must be an asset id (UUID) or an object {assetId, caption?}'], [[ASSET_ID, ASSET_ID, ASSET_ID, ASSET_ID], 'fields.gallery: must have at most 3 items']]],
      ['video_embed', ['https://www.youtube.com/watch?v=abc', 'https://vimeo.com/123'], [['youtube.com/watch', 'fields.video: must be a video URL (http or https)'], ['/videos/1', 'fields.video: must be a video URL (http or https)']]],
      ['entry_ref', [ENTRY_ID], [['blog/hello', 'fields.related: must be an entry id (UUID)'], [42, 'fields.related: must be an entry id (UUID)']]],
    ];
    const keyOf: Record<string, string> = { text: 'title', url: 'link', textarea: 'summary', tiptap: 'body', number: 'price', boolean: 'visible', date: 'day', select: 'category', radio: 'color', multiselect: 'tags', image: 'cover', file: 'attachment', image_gallery: 'gallery', video_embed: 'video', entry_ref: 'related' };

    for (const [type, valid, invalid] of table) {
      const key = keyOf[type]!;
      it(`${type}: accepts valid values`, () => {
        for (const value of valid) expectValid({ title: 'T', [key]: value });
      });
      it(`${type}: refuses invalid values, naming the field and the problem`, () => {
        for (const [value, expected] of invalid) expectProblem({ title: 'T', [key]: value }, expected);
      });
    }

    it('number with the integer limit refuses fractions', () => {
      expectValid({ title: 'T', qty: 3 });
      expectProblem({ title: 'T', qty: 2.5 }, 'fields.qty: must be an integer');
    });
  });

  describe('localization', () => {
    it('accepts a value per configured locale and refuses other locales', () => {
      expectValid({ title: { en: 'Hello', ja: 'こんにちは' } });
      expectProblem({ title: { en: 'Hello', fr: 'Bonjour' } }, 'fields.title.fr: is not a content locale of this project (en, ja)');
    });

    it('takes a plain value as the default locale value', () => {
      const fields = expectValid({ title: 'Hello', body: '<p>x</p>' });
      expect(fields).to.deep.equal({ title: { en: 'Hello' }, body: { en: '<p>x</p>' } });
    });

    it('keeps locale_shared fields as one plain value and refuses a locale map for them', () => {
      expect(expectValid({ title: 'T', subtitle: 'Same for all' }).subtitle).to.equal('Same for all');
      expectProblem({ title: 'T', subtitle: { en: 'Hello' } }, 'fields.subtitle: must be a string');
    });

    it('applies limits in every locale and names the locale', () => {
      expectProblem({ title: { en: 'Short', ja: 'これはとても長いタイトルですね' } }, 'fields.title.ja: must be at most 12 characters');
      const result = check({ title: { en: 'x'.repeat(13), ja: 'y'.repeat(13) } });
      expect(result.ok).to.equal(false);
      if (!result.ok) {
        expect(result.problems.map((p) => [p.field, p.locale, p.problem])).to.deep.equal([
          ['title', 'en', 'must be at most 12 characters'],
          ['title', 'ja', 'must be at most 12 characters'],
        ]);
      }
    });

    it('treats values for a single-locale project the same way', () => {
      const single = { locales: ['ja'], defaultLocale: 'ja' };
      const result = validateEntryFields(definition, single, { title: 'タイトル' });
      expect(result).to.deep.equal({ ok: true, fields: { title: { ja: 'タイトル' } } });
      const refused = validateEntryFields(definition, single, { title: { en: 'Title' } });
      expect(refused.ok).to.equal(false);
      if (!refused.ok) expect(refused.message).to.contain('fields.title.en: is not a content locale of this project (ja)');
    });
  });

  describe('required fields', () => {
    it('needs a value for the default locale', () => {
      expectProblem({}, 'fields.title: is required');
      expectProblem({ title: null }, 'fields.title: is required');
      expectProblem({ title: { ja: 'タイトル' } }, 'fields.title.en: is required (en is the default locale)');
      expectProblem({ title: '' }, 'fields.title: must not be empty');
      expectProblem({ title: { en: '', ja: 'x' } }, 'fields.title.en: must not be empty');
    });

    it('lets other locales stay empty', () => {
      expectValid({ title: { en: 'x', ja: '' } });
    });

    it('counts false and 0 as values, and an empty array as none', () => {
      const def: VersionedFormSetDefinition = {
        ...validateFormSetDefinition({
          id: FORM_SET_ID,
          slug: 'req',
          name: 'Required',
          fields: [
            { key: 'flag', type: 'boolean', label: 'Flag', required: true },
            { key: 'count', type: 'number', label: 'Count', required: true },
            { key: 'tags', type: 'multiselect', label: 'Tags', required: true, masterEntityKey: 'tags' },
          ],
        }),
        version: 1,
      };
      expect(validateEntryFields(def, locales, { flag: false, count: 0, tags: ['a'] }).ok).to.equal(true);
      const result = validateEntryFields(def, locales, { flag: false, count: 0, tags: [] });
      expect(result.ok ? '' : result.message).to.equal('fields.tags: must have at least one item');
    });
  });

  describe('unknown field keys', () => {
    it('are refused, naming the key and the form set', () => {
      expectProblem({ title: 'T', headline: 'x' }, 'fields.headline: is not a field of form set "everything"; its fields are title, subtitle, link, summary, body, price, qty, visible, day, category, color, tags, cover, attachment, gallery, video, related');
    });
    it('include keys such as __proto__ and constructor', () => {
      const input = JSON.parse('{"title": "T", "__proto__": {"x": 1}, "constructor": 1}') as Record<string, unknown>;
      const found = messages(input);
      expect(found.some((m) => m.startsWith('fields.__proto__: is not a field'))).to.equal(true);
      expect(found.some((m) => m.startsWith('fields.constructor: is not a field'))).to.equal(true);
    });
  });

  describe('limits', () => {
    it('enforces minLength, maxLength and pattern on text', () => {
      expectProblem({ title: 'T', subtitle: 'ab' }, 'fields.subtitle: must be at least 3 characters');
      expectProblem({ title: 'T', subtitle: 'abc1' }, 'fields.subtitle: must match the pattern ^[A-Za-z ]+$');
      expectProblem({ title: 'T', summary: 'x'.repeat(21) }, 'fields.summary: must be at most 20 characters');
    });
    it('enforces a url pattern on top of the URL rule', () => {
      const def: VersionedFormSetDefinition = {
        ...validateFormSetDefinition({ id: FORM_SET_ID, slug: 'u', name: 'U', fields: [{ key: 'site', type: 'url', label: 'Site', limits: { pattern: '^https://', maxLength: 30 } }] }),
        version: 1,
      };
      expect(validateEntryFields(def, locales, { site: 'https://example.com' }).ok).to.equal(true);
      const refused = validateEntryFields(def, locales, { site: 'http://example.com' });
      expect(refused.ok ? '' : refused.message).to.equal('fields.site: must match the pattern ^https://');
      const long = validateEntryFields(def, locales, { site: `https://example.com/${'a'.repeat(20)}` });
      expect(long.ok ? '' : long.message).to.equal('fields.site: must be at most 30 characters');
    });
  });

  describe('master-backed fields', () => {
    it('are checked against the master only when a lookup is given', () => {
      expect(check({ title: 'T', category: 'anything' }, {}).ok).to.equal(true);
      expectProblem({ title: 'T', category: 'anything' }, 'fields.category: "anything" is not a record value of master "blog_category" (values include news, tips)');
    });
    it('report a master that does not exist', () => {
      const result = check({ title: 'T', color: 'red' }, { masterValues: (key) => (key === 'colors' ? undefined : masters[key]) });
      expect(result.ok ? '' : result.message).to.equal('fields.color: its master "colors" does not exist in this project');
    });
  });

  describe('errors', () => {
    it('lists every problem and joins them into one message naming field and problem', () => {
      const result = check({ title: { en: 'x'.repeat(13) }, price: -5, cover: 'x', extra: 1 });
      expect(result.ok).to.equal(false);
      if (result.ok) return;
      expect(result.problems).to.have.length(4);
      expect(result.problems[0]).to.deep.include({ field: 'extra' });
      expect(result.problems).to.deep.include({ field: 'title', locale: 'en', problem: 'must be at most 12 characters', message: 'fields.title.en: must be at most 12 characters' });
      expect(result.message).to.equal(result.problems.map((p) => p.message).join('; '));
    });

    it('refuses a fields value that is not an object', () => {
      for (const input of [null, 'x', [1]]) {
        const result = check(input);
        expect(result.ok ? '' : result.message).to.equal('fields: must be an object keyed by field key');
      }
    });

    it('assertValidEntryFields throws VALIDATION_ERROR with that message', () => {
      expectDomainError(() => assertValidEntryFields(definition, locales, { price: 'x' }), 'VALIDATION_ERROR', /^fields\.title: is required; fields\.price: must be a number$/);
      expect(assertValidEntryFields(definition, locales, { title: 'ok' })).to.deep.equal({ title: { en: 'ok' } });
    });

    it('refuses invalid content locales', () => {
      expectDomainError(() => validateEntryFields(definition, { locales: ['en'], defaultLocale: 'ja' }, {}), 'VALIDATION_ERROR', /default locale "ja" is not one of en/);
      expectDomainError(() => validateEntryFields(definition, { locales: [], defaultLocale: 'en' }, {}), 'VALIDATION_ERROR', /at least one locale/);
      expectDomainError(() => validateEntryFields(definition, { locales: ['EN!'], defaultLocale: 'EN!' }, {}), 'VALIDATION_ERROR', /not locale codes/);
    });
  });

  describe('compiled validator cache', () => {
    it('compiles once per (form set id, version, locales)', () => {
      const cache = new EntryFieldsValidatorCache();
      const first = cache.get(definition, locales);
      for (let i = 0; i < 50; i++) expect(cache.get({ ...definition }, { locales: ['en', 'ja'], defaultLocale: 'en' })).to.equal(first);
      expect(cache.compilations).to.equal(1);
      cache.get({ ...definition, version: 2 }, locales);
      cache.get(definition, { locales: ['en', 'ja', 'fr'], defaultLocale: 'en' });
      cache.get(definition, { locales: ['en', 'ja'], defaultLocale: 'ja' });
      expect(cache.compilations).to.equal(4);
      expect(cache.size).to.equal(4);
    });

    it('recompiles rather than trusting a hit whose fields differ (a stale version given)', () => {
      const cache = new EntryFieldsValidatorCache();
      cache.get(definition, locales);
      const changed = { ...definition, fields: definition.fields.slice(0, 1) };
      const validator = cache.get(changed, locales);
      expect(cache.compilations).to.equal(2);
      expect(validator.validate({ title: 'T', link: '/x' }).ok).to.equal(false);
      expect(cache.get({ ...changed }, locales)).to.equal(validator);
      expect(cache.compilations).to.equal(2);
    });

    it('evicts the least recently used validator beyond its capacity', () => {
      const cache = new EntryFieldsValidatorCache(2);
      const v1 = cache.get({ ...definition, version: 1 }, locales);
      cache.get({ ...definition, version: 2 }, locales);
      expect(cache.get({ ...definition, version: 1 }, locales)).to.equal(v1);
      cache.get({ ...definition, version: 3 }, locales);
      expect(cache.size).to.equal(2);
      expect(cache.get({ ...definition, version: 1 }, locales)).to.equal(v1);
      cache.get({ ...definition, version: 2 }, locales);
      expect(cache.compilations).to.equal(4);
    });

    it('the shared validator is reused by validateEntryFields', () => {
      const v = entryFieldsValidator(definition, locales);
      expect(entryFieldsValidator(definition, locales)).to.equal(v);
      expect(v.formSetId).to.equal(FORM_SET_ID);
      expect(v.version).to.equal(1);
    });
  });

  describe('toJsonSchema', () => {
    const schema = toJsonSchema(definition, locales, { masterValues });
    const validate = createAjv().compile(schema);

    it('is a JSON Schema that a strict ajv compiles and that serializes to JSON', () => {
      expect(JSON.parse(JSON.stringify(schema))).to.deep.equal(schema);
      expect(schema.title).to.equal('Fields of Every field type');
      expect(schema.required).to.deep.equal(['title']);
    });

    it('accepts what the validator accepts (plain and localized values, null for optional fields)', () => {
      const samples = [
        { title: 'Hello', body: doc, day: { from: '2026-05-01', to: '2026-05-02' }, gallery: [ASSET_ID, { assetId: ASSET_2 }], tags: ['a'] },
        { title: { en: 'Hello', ja: 'こんにちは' }, body: { en: '<p>x</p>' }, link: null, qty: 2, visible: true },
      ];
      for (const sample of samples) {
        expect(check(sample).ok).to.equal(true);
        expect(validate(sample), JSON.stringify(validate.errors)).to.equal(true);
      }
    });

    it('refuses what the validator refuses for shape and limits', () => {
      for (const sample of [{}, { title: 'x'.repeat(13) }, { title: 'T', extra: 1 }, { title: { fr: 'x', en: 'y' } }, { title: 'T', qty: 1.5 }, { title: 'T', cover: 'x' }, { title: 'T', link: 'example.com' }]) {
        expect(check(sample).ok, JSON.stringify(sample)).to.equal(false);
        expect(validate(sample), JSON.stringify(sample)).to.equal(false);
      }
    });

    it('describes each field, its locales and its master, with sample values', () => {
      const properties = schema.properties as Record<string, Record<string, unknown>>;
      expect(properties.title!.title).to.equal('Title');
      expect(properties.title!.description).to.match(/one value per content locale \(en, ja\).*plain value for the default locale \(en\).*required in the default locale/);
      expect(properties.category!.description).to.contain('master "blog_category"');
      expect(properties.category!.examples).to.deep.equal(['news', 'tips']);
      expect(properties.tags!.examples).to.deep.equal([['a', 'b', 'c', 'd']]);
    });
  });

  describe('sampleValues', () => {
    const select = { type: 'select' as const };
    it('gives the first record values of the master in display order', () => {
      const records = [
        { value: 'c', order: 2 },
        { value: 'a', order: 0 },
        { value: 'b', order: 1 },
        { value: 'd', order: 3 },
      ];
      expect(sampleValues(select, { records }, 3)).to.deep.equal(['a', 'b', 'c']);
      expect(sampleValues(select, new Set(['x', 'y']))).to.deep.equal(['x', 'y']);
    });
    it('gives none for other field types or an unknown master', () => {
      expect(sampleValues({ type: 'text' }, new Set(['x']))).to.deep.equal([]);
      expect(sampleValues(select, undefined)).to.deep.equal([]);
    });
  });
});

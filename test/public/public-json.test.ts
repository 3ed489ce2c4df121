import { expect } from 'chai';
import { seoValuesOf, shapeEntryView } from '../../src/public-content/entry-view.ts';
import { entryListJson, entryViewOf, listItem, serialiseEntry, singleEntryBody, singleEntryJson, snapshotItemJson, storedEntryView } from '../../src/public-content/public-json.ts';
import type { FormSetDefinition } from '../../src/domain/content/form-set/form-set-definition.ts';
import { entryJson, entryListResponse, formSetSummary, LIST_PAGE_FORMAT } from '../../src/http/public/entry-reads.ts';
import { hash } from 'node:crypto';
import path from 'node:path';
import { SqliteReadModelStore } from '../../src/read-models/sqlite-read-model-store.ts';
import { ReadModelReader } from '../../src/read-models/read-model-reader.ts';
import { schemaOf } from '../../src/projection-engine/projection.ts';
import { entryViewId, publicContent, type PublicFormSetDoc } from '../../projections/public-content.ts';
import { publicContentQueries } from '../../projections/public-content-queries.ts';
import { tempDir } from '../support/temp-dir.ts';

const definition = {
  id: 'fs-1',
  slug: 'blog',
  name: 'Blog "quoted"',
  description: null,
  blocks: [],
  fields: [
    { key: 'title', type: 'text', label: 'Title', required: true, locale_shared: false },
    { key: 'body', type: 'tiptap', label: 'Body', required: false, locale_shared: false },
    { key: 'cover', type: 'image', label: 'Cover', required: false, locale_shared: true },
    { key: 'gallery', type: 'image_gallery', label: 'Gallery', required: false, locale_shared: true },
    { key: 'score', type: 'number', label: 'Score', required: false, locale_shared: true },
  ],
  seoRoles: {},
  widgetRoles: { title: 'title', thumbnail: 'cover' },
  sitemap: { include: true, urlPattern: '/{formSetSlug}/{slug}', changefreq: 'weekly', priority: 0.5 },
} as unknown as FormSetDefinition;

function view(locale: string) {
  return shapeEntryView({
    projectId: 'p-1',
    formSet: { formSetId: 'fs-1', slug: 'blog', name: definition.name, definition },
    entry: { entryId: 'e-1', slug: 'hello', createdAt: '2026-11-22T10:00:00.000Z', publishedAt: '2026-11-22T11:00:00.000Z', importPath: null, external: null },
    revision: {
      revisionId: 'r-1',
      revision: 3,
      updatedAt: '2026-11-22T12:00:00.000Z',
      snapshot: {
        title: { en: 'Hello \u2028 "world" </script>', ja: 'こんにちは' },
        body: { en: { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Émoji 🎉 and \\ backslash' }] }] } },
        cover: 'asset-1',
        gallery: ['asset-2', { assetId: 'asset-3' }],
        score: 0.1 + 0.2,
      },
    },
    locale,
    defaultLocale: 'en',
  });
}

/** A view whose form set's name holds `,"data":` and whose data has a field keyed `data`: where the snapshot's bytes begin must not be fooled. */
function dataNamedView() {
  const fields = [...definition.fields, { key: 'data', type: 'text', label: 'Data', required: false, locale_shared: true }];
  return shapeEntryView({
    projectId: 'p-1',
    formSet: { formSetId: 'fs-1', slug: 'blog', name: 'x,"data":{"a":1},"mediaUrls":', definition: { ...definition, fields } as unknown as FormSetDefinition },
    entry: { entryId: 'e-2', slug: 'data', createdAt: '2026-11-22T10:00:00.000Z', publishedAt: '2026-11-22T11:00:00.000Z', importPath: null, external: null },
    revision: { revisionId: 'r-2', revision: 1, updatedAt: '2026-11-22T12:00:00.000Z', snapshot: { title: { en: ',"data":' }, data: ',"mediaUrls":', cover: 'asset-1' } },
    locale: 'en',
    defaultLocale: 'en',
  });
}

describe('public JSON serialised at projection time', () => {
  it('writes byte for byte what JSON.stringify makes of the single-entry response and the list item, on any base', () => {
    for (const locale of ['en', 'ja']) {
      const shaped = view(locale);
      const serialised = serialiseEntry(shaped);
      for (const base of ['http://127.0.0.1:8080/public/p/p-1/v1', 'https://example.com/public/v1']) {
        expect(singleEntryJson(serialised, shaped.media, base)).to.equal(JSON.stringify(singleEntryBody(shaped, base)));
        expect(entryJson({ ...shaped, ...serialised }, base)).to.equal(JSON.stringify(singleEntryBody(shaped, base)));
        // A document of a version 2 generation has no serialised parts: the same bytes, made on the fly.
        expect(entryJson(shaped, base)).to.equal(JSON.stringify(singleEntryBody(shaped, base)));
      }
      expect(serialised.jsonItem).to.equal(JSON.stringify(listItem(shaped)));
    }
  });

  it('stores a view without what its serialised JSON holds, and reads the whole view back from it', () => {
    for (const locale of ['en', 'ja']) {
      const shaped = view(locale);
      const stored = storedEntryView(shaped);
      expect(Object.keys(stored).slice(0, 5)).to.deep.equal(['jsonItem', 'jsonHead', 'jsonTail', 'entryId', 'media']);
      for (const part of ['formSet', 'revision', 'data', 'widgetRoles', 'seo']) expect(stored).to.not.have.property(part);
      expect(JSON.stringify(stored).length).to.be.below(JSON.stringify({ ...shaped, ...serialiseEntry(shaped) }).length - JSON.stringify(shaped.data).length);
      // Through JSON, as the store keeps it: the same view, the escapes (U+2028, </script>, emoji, backslash) and 0.1 + 0.2 included.
      const read = entryViewOf(JSON.parse(JSON.stringify(stored)));
      const { seo, ...withoutSeo } = shaped;
      expect(read).to.deep.equal({ ...withoutSeo, ...serialiseEntry(shaped) });
      // The SEO values, not stored, are made again from what is (the form set's definition, the data, the dates).
      expect(seoValuesOf(definition, read)).to.deep.equal(seo);
      expect(read.data).to.deep.equal(shaped.data);
      const base = 'https://example.com/public/v1';
      expect(entryJson(stored, base)).to.equal(JSON.stringify(singleEntryBody(shaped, base)));
      expect(JSON.stringify(listItem(entryViewOf(stored), { baseUrl: base }))).to.equal(JSON.stringify(listItem(shaped, { baseUrl: base })));
    }
    // A list item with its snapshot, made from the serialised parts alone.
    for (const shaped of [view('en'), view('ja'), dataNamedView()]) {
      const base = 'https://example.com/public/v1';
      expect(snapshotItemJson(serialiseEntry(shaped), shaped.media, base)).to.equal(JSON.stringify(listItem(shaped, { baseUrl: base })));
    }
    // A document an earlier version wrote (the whole view) is read as it is.
    const whole = { ...view('en'), ...serialiseEntry(view('en')) };
    expect(entryViewOf(whole)).to.equal(whole);
  });

  it('lists documents of an older generation (without jsonItem) with the same bytes as serialised ones, with and without snapshots', async () => {
    const store = SqliteReadModelStore.open(path.join(tempDir(), 'read-models.sqlite'));
    try {
      const target = { projection: publicContent.name, generation: 1 };
      await store.createGeneration(schemaOf(publicContent), 1, publicContent.version, '2026-11-22T10:00:00.000Z');
      await store.activateGeneration(publicContent.name, 1, null, '2026-11-22T10:00:00.000Z');
      const shaped = view('en');
      const { jsonHead, jsonTail, jsonItem } = serialiseEntry(shaped);
      const formSet = { formSetId: 'fs-1', projectId: 'p-1', slug: 'blog', name: 'Blog', description: null, definition } as unknown as PublicFormSetDoc;
      const request = { formSet, locale: 'en', limit: 20, offset: 0, sort: undefined, text: undefined, includeSnapshot: false };
      const reader = publicContentQueries(new ReadModelReader(store));
      const list = async () => (await entryListResponse(reader, request, 'http://127.0.0.1/public/p/p-1/v1')).json;
      const expected = entryListJson(JSON.stringify({ id: 'fs-1', slug: 'blog', name: 'Blog', description: null }), 1, 20, 0, [jsonItem]);
      await store.commit(target, [{ collection: 'entry_views', id: entryViewId('e-1', 'en'), doc: { ...shaped, jsonHead, jsonTail }, position: 1n }, { collection: 'live_counts', id: 'fs-1', doc: { formSetId: 'fs-1', liveEntries: 1 }, position: 1n }], 1n, '2026-11-22T10:00:00.000Z');
      expect(await list()).to.equal(expected);
      await store.commit(target, [{ collection: 'entry_views', id: entryViewId('e-1', 'en'), doc: { ...shaped, jsonHead, jsonTail, jsonItem }, position: 2n }], 2n, '2026-11-22T10:00:00.000Z');
      expect(await list()).to.equal(expected);
      // With snapshots: from a document of any generation (2: no serialised parts; 4: whole view and parts; 5: stored view), the same bytes.
      const base = 'http://127.0.0.1/public/p/p-1/v1';
      const withSnapshots = async () => (await entryListResponse(reader, { ...request, includeSnapshot: true }, base)).json;
      const expectedWithSnapshots = entryListJson(JSON.stringify({ id: 'fs-1', slug: 'blog', name: 'Blog', description: null }), 1, 20, 0, [JSON.stringify(listItem(shaped, { baseUrl: base }))]);
      const docs = [{ ...shaped }, { ...shaped, jsonHead, jsonTail, jsonItem }, { ...storedEntryView(shaped) }];
      for (const [n, doc] of docs.entries()) {
        await store.commit(target, [{ collection: 'entry_views', id: entryViewId('e-1', 'en'), doc, position: BigInt(3 + n) }], BigInt(3 + n), '2026-11-22T10:00:00.000Z');
        expect(await withSnapshots()).to.equal(expectedWithSnapshots);
      }
    } finally {
      await store.close();
    }
  });

  it('joins a list page as JSON.stringify would write it', () => {
    const formSet = { id: 'fs-1', slug: 'blog', name: 'Blog', description: null };
    const items = [view('en'), view('ja')].map((v) => listItem(v));
    expect(entryListJson(JSON.stringify(formSet), 7, 2, 4, items.map((item) => JSON.stringify(item)))).to.equal(JSON.stringify({ formSet, total: 7, limit: 2, offset: 4, items }));
    expect(entryListJson(JSON.stringify(formSet), 0, 20, 0, [])).to.equal(JSON.stringify({ formSet, total: 0, limit: 20, offset: 0, items: [] }));
  });

  it('makes list pages at request time as LIST_PAGE_FORMAT says, which their ETags name', () => {
    // What a request adds to the items serialised at projection time: the form set, the counts, and with
    // include_snapshot each item's data and media URLs on the request's base. Fixed inputs, so that only a
    // change of that code changes these bytes; when it does, an ETag would name two different pages:
    // raise LIST_PAGE_FORMAT (src/http/public/entry-reads.ts) and record the new digest here.
    const formSet = { formSetId: 'fs-1', slug: 'blog', name: 'Blog "news"', description: 'Posts' } as unknown as PublicFormSetDoc;
    const jsonItem = '{"entry":{"id":"e-1","slug":"first"},"published":{"revisionId":"r-1","revision":3,"updatedAt":"2026-11-22T10:00:00.000Z"}}';
    const jsonHead = '{"formSet":{"id":"fs-1","slug":"blog","name":"Blog"},"entry":{"id":"e-1","slug":"first"},"revision":{"id":"r-1","revision":3,"updatedAt":"2026-11-22T10:00:00.000Z"},"data":{"title":"First","cover":"a-1"},"mediaUrls":';
    const media = { cover: 'a-1', gallery: ['a-2', 'a-3'] };
    const summary = JSON.stringify(formSetSummary(formSet));
    const pages = [
      entryListJson(summary, 41, 20, 20, [jsonItem, jsonItem]),
      entryListJson(summary, 41, 20, 20, [snapshotItemJson({ jsonItem, jsonHead }, media, 'https://cms.example.com/public/v1')]),
    ];
    expect({ format: LIST_PAGE_FORMAT, digest: hash('sha1', pages.join('\n'), 'hex') }).to.deep.equal({ format: 1, digest: '5fc7e155d61854ef674c82cb2bf5aa68b60329a8' });
  });
});

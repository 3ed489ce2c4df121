import { encodePosition } from '../../src/event-store/position.ts';
import { expect } from 'chai';
import { projectionHarness } from '../support/projection-harness.ts';
import { entryStream } from '../../src/domain/content/entry/entry-events.ts';
import { formSetStreamId } from '../../src/domain/content/form-set/form-set-events.ts';
import { projectStream } from '../../src/domain/access/access-streams.ts';
import { startRebuild } from '../../src/projection-engine/rebuild.ts';
import { publicContent, type PublicFormSetDoc } from '../../projections/public-content.ts';
import { entryListQuery, LIST_ITEM_FIELD, parseSort, type EntryListRequest } from '../../src/http/public/entry-reads.ts';
import { entryViewOf, type StoredEntryView } from '../../src/public-content/public-json.ts';
import { silentLogger } from '../support/engine-fixture.ts';
import { dumpReadModels } from '../support/dump-read-models.ts';

const id = (n: number): string => `00000000-0000-4000-8000-${n.toString().padStart(12, '0')}`;
const PROJECT = id(900);
const TENANT = id(901);
const BLOG = id(800);
const ENTRY = id(1);
const DRAFT_ONLY = id(2);
const R1 = id(101);
const R2 = id(102);
const R3 = id(103);
const T0 = '2026-11-22T12:00:00.000Z';
const actor = { actor: { type: 'operator' as const, id: 'test' } };

function definition(slug = 'blog', urlPattern = '/{formSetSlug}/{slug}') {
  return {
    id: BLOG,
    slug,
    name: 'Blog',
    description: null,
    blocks: [],
    fields: [
      { key: 'title', type: 'text', label: 'Title', required: true, locale_shared: false },
      { key: 'summary', type: 'textarea', label: 'Summary', required: false, locale_shared: false },
    ],
    seoRoles: {},
    widgetRoles: { title: 'title' },
    sitemap: { include: true, urlPattern, changefreq: 'weekly', priority: 0.5 },
  };
}

/** SQLite's plan for the find of a list page of BLOG in English (entryListQuery), on the active generation. */
async function listPlan(h: ReturnType<typeof projectionHarness>, request: Partial<EntryListRequest> = {}): Promise<string> {
  const generation = (await h.store.activeGeneration(publicContent.name))!;
  const page: EntryListRequest = { formSet: { formSetId: BLOG } as PublicFormSetDoc, locale: 'en', limit: 20, offset: 0, sort: undefined, text: undefined, includeSnapshot: false, ...request };
  return h.store.queryPlan({ projection: publicContent.name, generation }, 'entry_views', entryListQuery(page), page.includeSnapshot ? undefined : LIST_ITEM_FIELD).join(' ');
}

/** The project (English only) and its blog form set; the scope of the blog's entry events. */
async function createEnglishBlog(log: ReturnType<typeof projectionHarness>['log']): Promise<{ projectId: string; formSetId: string }> {
  await log.append(projectStream(PROJECT), [{ type: 'project.created', data: { projectId: PROJECT, tenantId: TENANT, name: 'P', slug: 'p', plan: 'business', contentLocales: { locales: ['en'], defaultLocale: 'en' } } }], 'any', actor);
  await log.append(formSetStreamId(BLOG), [{ type: 'form-set.created', data: { projectId: PROJECT, version: 1, definition: definition() } }], 'no_stream', actor);
  return { projectId: PROJECT, formSetId: BLOG };
}

describe('public-content projection: given these events, expect these documents', () => {
  it('shapes a published entry per locale, re-shapes on locale and form set changes, and forgets it on delete', async () => {
    const h = projectionHarness(publicContent);
    try {
      const { log } = h;
      await log.append(projectStream(PROJECT), [{ type: 'project.created', data: { projectId: PROJECT, tenantId: TENANT, name: 'P', slug: 'p', plan: 'business', contentLocales: { locales: ['en', 'ja'], defaultLocale: 'en' } } }], 'any', actor);
      await log.append(formSetStreamId(BLOG), [{ type: 'form-set.created', data: { projectId: PROJECT, version: 1, definition: definition() } }], 'no_stream', actor);
      const scope = { projectId: PROJECT, formSetId: BLOG };
      await log.append(
        entryStream(ENTRY),
        [
          { type: 'entry.created', data: { ...scope, entryId: ENTRY, slug: 'hello' } },
          { type: 'entry.revision-saved', data: { ...scope, entryId: ENTRY, revisionId: R1, revision: 1, snapshot: { title: { en: 'Hello', ja: 'こんにちは' }, summary: { en: 'English only' } }, savedAt: T0 } },
          { type: 'entry.revision-submitted', data: { ...scope, entryId: ENTRY, revisionId: R1, revision: 1 } },
          { type: 'entry.revision-published', data: { ...scope, entryId: ENTRY, revisionId: R1, revision: 1, publishedAt: T0, trigger: 'publish' } },
          // A later draft is not public; its snapshot waits in drafts.
          { type: 'entry.revision-saved', data: { ...scope, entryId: ENTRY, revisionId: R2, revision: 2, snapshot: { title: { en: 'Draft title' } }, savedAt: T0 } },
        ],
        'no_stream',
        actor,
      );
      await log.append(entryStream(DRAFT_ONLY), [{ type: 'entry.created', data: { ...scope, entryId: DRAFT_ONLY, slug: 'unpublished' } }, { type: 'entry.revision-saved', data: { ...scope, entryId: DRAFT_ONLY, revisionId: R3, revision: 1, snapshot: { title: { en: 'x' } }, savedAt: T0 } }], 'no_stream', actor);
      await h.project();

      const ja = await h.doc('entry_views', `${ENTRY}:ja`);
      expect(ja).to.deep.include({ slug: 'hello', locale: 'ja', formSetSlug: 'blog', publishedAt: T0, updatedAt: T0 });
      // The form set, revision, data and widget roles are inside its serialised JSON only (version 5).
      for (const part of ['formSet', 'revision', 'data', 'widgetRoles']) expect(ja).to.not.have.property(part);
      const whole = entryViewOf(ja as unknown as StoredEntryView);
      expect(whole.data).to.deep.equal({ title: 'こんにちは', summary: 'English only' });
      expect(whole.revision).to.deep.equal({ id: R1, revision: 1, updatedAt: T0 });
      // Stored with what public reads take first (SQLite walks a document's keys in order to find one).
      expect(Object.keys(ja!).slice(0, 5)).to.deep.equal(['jsonItem', 'jsonHead', 'jsonTail', 'entryId', 'media']);
      // A list page in the default order (and sort=published_at) reads its items from the index alone (version 6).
      expect(await listPlan(h)).to.match(/COVERING INDEX rm_public_content__entry_views__g1__by_published/);
      expect(await listPlan(h, { sort: { field: 'publishedAt', direction: 'asc' } })).to.match(/COVERING INDEX rm_public_content__entry_views__g1__by_published/);
      expect(await listPlan(h, { sort: { field: 'publishedDate', direction: 'desc' } })).to.match(/COVERING INDEX rm_public_content__entry_views__g1__by_published_date/);
      expect(await listPlan(h, { sort: { field: 'updatedAt', direction: 'desc' } })).to.match(/USING INDEX rm_public_content__entry_views__g1__by_updated/);
      expect(await listPlan(h, { includeSnapshot: true })).not.to.match(/COVERING/);
      // A short scalar field has a sort slot with an index (version 7); a textarea's value stays in sortValues.
      expect(await h.doc('form_sets', BLOG)).to.deep.include({ sortSlots: { title: 's0' } });
      expect(ja).to.deep.include({ sortSlots: { s0: 'こんにちは' }, sortValues: { summary: 'English only' } });
      const blog = (await h.doc('form_sets', BLOG)) as unknown as PublicFormSetDoc;
      expect(parseSort('title:desc', blog)).to.deep.equal({ field: 'sortSlots.s0', direction: 'desc' });
      expect(parseSort('summary:asc', blog)).to.deep.equal({ field: 'sortValues.summary', direction: 'asc' });
      expect(await listPlan(h, { sort: parseSort('title:asc', blog) })).to.match(/USING INDEX rm_public_content__entry_views__g1__by_sort_s0/);
      expect(await listPlan(h, { sort: parseSort('summary:asc', blog) })).to.match(/TEMP B-TREE/);
      // A form set document of a generation before slots: its views hold every sort value in sortValues.
      const { sortSlots: _slots, ...unslotted } = blog;
      expect(parseSort('title:desc', unslotted)).to.deep.equal({ field: 'sortValues.title', direction: 'desc' });
      expect((await h.find('entry_views')).map((v) => v['entryId'])).to.deep.equal([ENTRY, ENTRY]);
      expect(await h.doc('site_index', ENTRY)).to.deep.include({ paths: [{ locale: 'en', path: '/blog/hello' }], title: 'Hello' });
      expect(await h.doc('live_counts', BLOG)).to.deep.include({ liveEntries: 1 });
      expect(await h.doc('drafts', ENTRY)).to.deep.include({ entryId: ENTRY, revision: 2 });

      // Locales change: fr joins (its values fall back to en), ja leaves.
      await log.append(projectStream(PROJECT), [{ type: 'project.content-locales-changed', data: { projectId: PROJECT, locales: ['en', 'fr'], defaultLocale: 'en' } }], 'any', actor);
      await h.project();
      expect((await h.find('entry_views', { sort: [['locale', 'asc']] })).map((v) => v['locale'])).to.deep.equal(['en', 'fr']);
      expect(entryViewOf((await h.doc('entry_views', `${ENTRY}:fr`)) as unknown as StoredEntryView).data).to.deep.equal({ title: 'Hello', summary: 'English only' });

      // The form set is renamed and its URL pattern uses the locale: views and site paths follow.
      await log.append(formSetStreamId(BLOG), [{ type: 'form-set.updated', data: { projectId: PROJECT, version: 2, definition: definition('news', '/{locale}/news/{slug}'), removedFieldKeys: [], removedBlockIds: [] } }], 'stream_exists', actor);
      await h.project();
      expect((await h.doc('entry_views', `${ENTRY}:en`))!['formSetSlug']).to.equal('news');
      expect((await h.doc('site_index', ENTRY))!['paths']).to.deep.equal([
        { locale: 'en', path: '/en/news/hello' },
        { locale: 'fr', path: '/fr/news/hello' },
      ]);

      // Rename, then delete: every view, row, redirect and draft of the entry goes.
      await log.append(entryStream(ENTRY), [{ type: 'entry.slug-changed', data: { ...scope, entryId: ENTRY, from: 'hello', to: 'hello-world' } }], 'stream_exists', actor);
      await h.project();
      expect(await h.doc('slug_redirects', `${BLOG}:hello`)).to.deep.include({ entryId: ENTRY });
      await log.append(entryStream(ENTRY), [{ type: 'entry.deleted', data: { ...scope, entryId: ENTRY, slug: 'hello-world', previousSlugs: ['hello'] } }], 'stream_exists', actor);
      await h.project();
      expect(await h.find('entry_views')).to.deep.equal([]);
      expect(await h.find('site_index')).to.deep.equal([]);
      expect(await h.find('slug_redirects')).to.deep.equal([]);
      expect(await h.doc('drafts', ENTRY)).to.equal(null);
      expect(await h.doc('live_counts', BLOG)).to.deep.include({ liveEntries: 0 });
      // The never-published entry was never public and still is not.
      expect(await h.doc('entries', DRAFT_ONLY)).to.deep.include({ live: null });

      // A rebuild of the whole history from the log arrives at the same documents.
      const before = await dumpReadModels(h.store, [publicContent]);
      const rebuild = startRebuild({ projection: publicContent, log, store: h.store, clock: h.clock, logger: silentLogger });
      await rebuild.result;
      expect(await dumpReadModels(h.store, [publicContent])).to.deep.equal(before);
      // Its indexes were built after the load, the covering one with them.
      expect(await listPlan(h)).to.match(/COVERING INDEX rm_public_content__entry_views__g2__by_published/);
    } finally {
      await h.close();
    }
  });

  it('keeps sort keys of text to their first 128 characters (version 10): the public JSON holds the whole value', async () => {
    const h = projectionHarness(publicContent);
    try {
      const { log } = h;
      const scope = await createEnglishBlog(log);
      const shared = 'x'.repeat(127);
      const entries = [
        // A title (sort slot) and a textarea (sortValues) of 5,000 characters.
        { entryId: id(11), title: `${'a'.repeat(130)}${'t'.repeat(4_870)}`, summary: `${shared}b${'s'.repeat(4_872)}` },
        // The same first 128 characters as the one before: equal sort keys, so the entry id decides.
        { entryId: id(12), title: 'b', summary: `${shared}b-but-a-different-tail` },
        // A character outside the BMP across the cut: the key ends before it rather than inside it.
        { entryId: id(13), title: 'c', summary: `${shared}😀 and more` },
      ];
      for (const [n, e] of entries.entries()) {
        await log.append(entryStream(e.entryId), [
          { type: 'entry.created', data: { ...scope, entryId: e.entryId, slug: `long-${n}` } },
          { type: 'entry.revision-saved', data: { ...scope, entryId: e.entryId, revisionId: id(200 + n), revision: 1, snapshot: { title: { en: e.title }, summary: { en: e.summary } }, savedAt: T0 } },
          { type: 'entry.revision-submitted', data: { ...scope, entryId: e.entryId, revisionId: id(200 + n), revision: 1 } },
          { type: 'entry.revision-published', data: { ...scope, entryId: e.entryId, revisionId: id(200 + n), revision: 1, publishedAt: T0, trigger: 'publish' } },
        ], 'no_stream', actor);
      }
      await h.project();
      const first = (await h.doc('entry_views', `${id(11)}:en`))!;
      expect(first).to.deep.include({ sortSlots: { s0: 'a'.repeat(128) }, sortValues: { summary: `${shared}b` } });
      expect(entryViewOf(first as unknown as StoredEntryView).data).to.deep.equal({ title: entries[0]!.title, summary: entries[0]!.summary });
      expect(((await h.doc('entry_views', `${id(13)}:en`))!['sortValues'] as { summary: string }).summary).to.equal(shared);
      const bySummary = await h.find('entry_views', { sort: [['sortValues.summary', 'asc'], ['entryId', 'asc']] });
      expect(bySummary.map((v) => v['entryId'])).to.deep.equal([id(13), id(11), id(12)]);
    } finally {
      await h.close();
    }
  });

  it('publishes a draft that version 1 kept by revision id (folding into a version 1 generation until the rebuild swaps in)', async () => {
    const h = projectionHarness(publicContent);
    try {
      const { log } = h;
      const scope = await createEnglishBlog(log);
      await log.append(entryStream(ENTRY), [
        { type: 'entry.created', data: { ...scope, entryId: ENTRY, slug: 'hello' } },
        { type: 'entry.revision-saved', data: { ...scope, entryId: ENTRY, revisionId: R1, revision: 1, snapshot: { title: { en: 'Saved before the upgrade' } }, savedAt: T0 } },
      ], 'no_stream', actor);
      await h.project();
      // The draft as this version keeps it: where its snapshot is in the log (version 15), not a copy.
      expect(await h.doc('drafts', ENTRY)).to.deep.equal({ revisionId: R1, entryId: ENTRY, revision: 1, savedAt: encodePosition((await h.log.headPosition())!) });
      // What version 1 left: the draft under its revision id, with a copy of its snapshot.
      const draft = { revisionId: R1, entryId: ENTRY, revision: 1, snapshot: { title: { en: 'Saved before the upgrade' } } };
      const checkpoint = (await h.store.getGeneration(publicContent.name, 1))!.checkpoint!;
      await h.store.commit(h.target, [{ collection: 'drafts', id: ENTRY, doc: null, position: checkpoint + 1n }, { collection: 'drafts', id: R1, doc: draft, position: checkpoint }], checkpoint, T0);
      await log.append(entryStream(ENTRY), [
        { type: 'entry.revision-submitted', data: { ...scope, entryId: ENTRY, revisionId: R1, revision: 1 } },
        { type: 'entry.revision-published', data: { ...scope, entryId: ENTRY, revisionId: R1, revision: 1, publishedAt: T0, trigger: 'publish' } },
      ], 'stream_exists', actor);
      await h.project();
      expect(await h.doc('entries', ENTRY)).to.deep.include({ live: { revisionId: R1, revision: 1, updatedAt: T0, snapshot: { title: { en: 'Saved before the upgrade' } } } });
      expect(await h.doc('entry_views', `${ENTRY}:en`)).to.deep.include({ sortSlots: { s0: 'Saved before the upgrade' } });
      expect(await h.find('drafts')).to.deep.equal([]);
    } finally {
      await h.close();
    }
  });
});

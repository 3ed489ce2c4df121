/**
 * What the public API may ask of the public-content read model (./public-content.ts), typed: no collection
 * names or casts outside the read-model layer. Every read goes through the ReadModelReader it is given, so
 * reads follow the active generation and its cache as any other.
 *
 * The public read path is hot: build the queries once (per route group, at construction), never per request.
 * Each query is the reader's call and nothing more (no await of its own, no copy of its arguments); a lookup
 * of one document by an index returns what find returns, an array of at most one, for the caller to take.
 */
import type { ReadModelReader } from '../src/read-models/read-model-reader.ts';
import type { Doc, Query } from '../src/read-models/read-model-store.ts';
import {
  entryViewId,
  slugRedirectId,
  type EntryViewDoc,
  type FormSetListDoc,
  type MasterViewDoc,
  type PublicEntryDoc,
  type PublicFormSetDoc,
  type SiteIndexDoc,
  type SiteVersionDoc,
  type SlugRedirectDoc,
  type SyncLogDoc,
} from './public-content.ts';


export const PUBLIC_CONTENT = 'public-content';

/** What a sitemap reads of each site_index row: its serialised <url>s, and (rows of an older generation) what makes them. */
const SITEMAP_FIELDS = ['urlXml', 'paths', 'lastmod', 'changefreq', 'priority'];
/** Entry views in the order of their creation: the oldest first (the id breaks ties). */
/** Ties by the view's id: the entry id, within the one locale these lookups name. */
const OLDEST_FIRST: NonNullable<Query['sort']> = [['createdAt', 'asc']];
const BY_SLUG: NonNullable<Query['sort']> = [['slug', 'asc']];
const BY_FORM_SET_AND_SLUG: NonNullable<Query['sort']> = [['formSetSlug', 'asc'], ['slug', 'asc']];
const BY_KEY: NonNullable<Query['sort']> = [['key', 'asc']];
const BY_SEQ: NonNullable<Query['sort']> = [['seq', 'asc']];

export function publicContentQueries(reader: ReadModelReader) {
  return {
    formSet: (formSetId: string) => reader.get<Doc<PublicFormSetDoc>>(PUBLIC_CONTENT, 'form_sets', formSetId),
    /** The project's form set with this slug: an array of at most one. */
    formSetWithSlug: (projectId: string, slug: string) => reader.find<Doc<PublicFormSetDoc>>(PUBLIC_CONTENT, 'form_sets', { filter: { projectId, slug }, limit: 1 }),
    formSetsOfProject: (projectId: string) => reader.find<Doc<PublicFormSetDoc>>(PUBLIC_CONTENT, 'form_sets', { filter: { projectId }, sort: BY_SLUG }),
    /** What a form set's entry list is made of besides its items: the number of live entries and the list's last change. */
    formSetList: (formSetId: string) => reader.get<Doc<FormSetListDoc>>(PUBLIC_CONTENT, 'live_counts', formSetId),
    /** A live entry of the form set by its slug now, in a locale (only `fields` of its view when given, see Query.fields): an array of at most one. */
    entryViewWithSlug: (formSetId: string, slug: string, locale: string, fields?: readonly string[]) =>
      reader.find<Doc<EntryViewDoc>>(PUBLIC_CONTENT, 'entry_views', { filter: { formSetId, locale, slug }, limit: 1, ...(fields ? { fields } : {}) }),
    /** Live entries' views in a locale, by the entries' ids, in one read: those that exist, by entry id. */
    async entryViews(entryIds: readonly string[], locale: string): Promise<Map<string, Doc<EntryViewDoc>>> {
      const found = await reader.getMany(PUBLIC_CONTENT, 'entry_views', entryIds.map((entryId) => entryViewId(entryId, locale)));
      return new Map(found.map(({ id, doc }) => [id.slice(0, id.lastIndexOf(':')), doc as Doc<EntryViewDoc>]));
    },
    /** A live entry's view in a locale, by the entry's id. */
    entryView: (entryId: string, locale: string) => reader.get<Doc<EntryViewDoc>>(PUBLIC_CONTENT, 'entry_views', entryViewId(entryId, locale)),
    /** The form set's oldest live entry in a locale: an array of at most one. */
    oldestEntryView: (formSetId: string, locale: string) => reader.find<Doc<EntryViewDoc>>(PUBLIC_CONTENT, 'entry_views', { filter: { formSetId, locale }, sort: OLDEST_FIRST, limit: 1 }),
    /** The oldest live entry of the project with this import path, in a locale: an array of at most one. */
    entryViewWithImportPath: (projectId: string, locale: string, importPath: string) =>
      reader.find<Doc<EntryViewDoc>>(PUBLIC_CONTENT, 'entry_views', { filter: { projectId, locale, importPath }, sort: OLDEST_FIRST, limit: 1 }),
    /**
     * The oldest live entry of the project with this external id, in a locale: an array of at most one. The
     * source and entity types narrow the match when given; without them any identity with the id matches.
     */
    entryViewWithExternalId: (projectId: string, locale: string, externalId: string, sourceType: string | undefined, entityType: string | undefined) =>
      reader.find<Doc<EntryViewDoc>>(PUBLIC_CONTENT, 'entry_views', {
        filter: {
          projectId,
          locale,
          'external.externalId': externalId,
          ...(sourceType === undefined ? {} : { 'external.sourceType': sourceType }),
          ...(entityType === undefined ? {} : { 'external.entityType': entityType }),
        },
        sort: OLDEST_FIRST,
        limit: 1,
      }),
    /** A page of a form set's entry views as the query asks (entryListQuery in src/http/public/entry-reads.ts). */
    entryViewPage: (query: Query) => reader.find<Doc<EntryViewDoc>>(PUBLIC_CONTENT, 'entry_views', query),
    /** One field of each entry view of a page (a list item's serialised bytes), null where a view holds none (an older generation's). */
    entryViewPageField: (query: Omit<Query, 'fields'>, field: string) => reader.findStrings(PUBLIC_CONTENT, 'entry_views', query, field),
    /** How many entry views match the filter and the search tokens (a searched list's total; without a search, formSetList holds it). */
    countEntryViews: (filter: Query['filter'], text: Query['text']) => reader.count(PUBLIC_CONTENT, 'entry_views', filter, text),
    /** Where a slug the form set's entries no longer have was left by: the entry that had it (however many renames ago). */
    slugRedirect: (formSetId: string, oldSlug: string) => reader.get<Doc<SlugRedirectDoc>>(PUBLIC_CONTENT, 'slug_redirects', slugRedirectId(formSetId, oldSlug)),
    entry: (entryId: string) => reader.get<Doc<PublicEntryDoc>>(PUBLIC_CONTENT, 'entries', entryId),
    /** The project's published masters in a locale, by key. */
    publishedMasterViews: (projectId: string, locale: string) => reader.find<Doc<MasterViewDoc>>(PUBLIC_CONTENT, 'master_views', { filter: { projectId, locale, published: true }, sort: BY_KEY }),
    /** The project's master with this key in a locale, published or not (the caller checks): an array of at most one. */
    masterViewWithKey: (projectId: string, locale: string, key: string) => reader.find<Doc<MasterViewDoc>>(PUBLIC_CONTENT, 'master_views', { filter: { projectId, locale, key }, limit: 1 }),
    /**
     * A page of the sync feed: the last changes of the project's entries and published masters (or, with a form
     * set, of its entries), in log order, after `afterSeq` (from the start when null).
     */
    syncPage: (scope: { projectId: string } | { formSetId: string }, afterSeq: string | null, limit: number) =>
      reader.find<Doc<SyncLogDoc>>(PUBLIC_CONTENT, 'sync_log', { filter: { ...scope, ...(afterSeq === null ? {} : { seq: { $gt: afterSeq } }) }, sort: BY_SEQ, limit }),
    /** The version of the site outputs (sitemaps, llms.txt) of a project or a form set, by its id: the position of their last change. */
    siteVersion: (projectOrFormSetId: string) => reader.get<Doc<SiteVersionDoc>>(PUBLIC_CONTENT, 'site_versions', projectOrFormSetId),
    /** A sitemap's rows of the form set (or, without one, of the project), in the sitemap's order, reading only what a sitemap needs. */
    sitemapRows: (projectId: string, formSetId: string | undefined) =>
      reader.findAll<Doc<SiteIndexDoc>>(PUBLIC_CONTENT, 'site_index', {
        filter: formSetId !== undefined ? { formSetId } : { projectId },
        sort: formSetId !== undefined ? BY_SLUG : BY_FORM_SET_AND_SLUG,
        fields: SITEMAP_FIELDS,
      }),
    /** Every site_index row of the project, whole (what llms.txt lists), by form set and slug. */
    siteIndexOfProject: (projectId: string) => reader.findAll<Doc<SiteIndexDoc>>(PUBLIC_CONTENT, 'site_index', { filter: { projectId }, sort: BY_FORM_SET_AND_SLUG }),
  };
}

export type PublicContentQueries = ReturnType<typeof publicContentQueries>;

import type { CollectionSpec } from '../src/read-models/read-model-store.ts';
import { SORT_SLOTS } from '../src/public-content/entry-view.ts';

/**
 * The collections of the public-content read model and their indexes (projections/public-content.ts says what
 * each collection holds; public-content-documents.ts, the shape of its documents).
 */

/** The entry view fields the entries list sorts by, per sort key of the API. */
export const ENTRY_VIEW_SORT_FIELDS = {
  created_at: 'createdAt',
  updated_at: 'updatedAt',
  published_at: 'publishedAt',
  published_date: 'publishedDate',
} as const;

/**
 * A list's index: the form set and locale, then the sort field; the store ends it with the view's id, which
 * breaks ties. Ids are `${entryId}:${locale}`, so within a locale ties fall in entry id order, as they did when the
 * index held the entry id as well (version 14: 0.58 KB an entry less in the eight list indexes).
 */
const listIndex = (name: string, field: string, include?: string[]) => ({ name, fields: [['formSetId', 1], ['locale', 1], [field, 1]] as Array<[string, 1]>, ...(include ? { include } : {}) });

export const PUBLIC_CONTENT_COLLECTIONS: Readonly<Record<string, CollectionSpec>> = {
  projects: {},
  form_sets: { indexes: [{ name: 'by_project_slug', fields: [['projectId', 1], ['slug', 1]] }] },
  entries: {
    indexes: [
      // Read while folding: a form set's or the project's locales change re-shapes their entries.
      { name: 'by_form_set', fields: [['formSetId', 1]], whileFolding: true },
      { name: 'by_project', fields: [['projectId', 1]], whileFolding: true },
    ],
  },
  drafts: {},
  entry_views: {
    indexes: [
      { name: 'by_slug', fields: [['formSetId', 1], ['locale', 1], ['slug', 1]] },
      listIndex('by_created', 'createdAt'),
      listIndex('by_updated', 'updatedAt'),
      // The orders public lists use most (none given or sort=published_at; sort=published_date): their pages
      // read each item from the index (version 6), with no seek of each view. Each such index costs ~0.2 KB
      // more per entry and locale on disk, so sort=created_at and updated_at seek their 20 views.
      listIndex('by_published', 'publishedAt', ['jsonItem']),
      listIndex('by_published_date', 'publishedDate', ['jsonItem']),
      // A list sorted by a field of the form set with a sort slot (version 7); by any other, a scan.
      ...SORT_SLOTS.map((slot) => listIndex(`by_sort_${slot}`, `sortSlots.${slot}`)),
      // Lookups of the few views that have one (version 13).
      { name: 'by_import_path', fields: [['projectId', 1], ['locale', 1], ['importPath', 1]], sparse: true },
      { name: 'by_external_id', fields: [['projectId', 1], ['locale', 1], ['external.externalId', 1]], sparse: true },
    ],
    textField: 'search',
    // Every search is within one form set and locale: on MongoDB the text index is compound with them.
    textPrefix: ['formSetId', 'locale'],
  },
  site_index: {
    indexes: [
      { name: 'by_project', fields: [['projectId', 1], ['formSetSlug', 1], ['slug', 1]] },
      { name: 'by_form_set', fields: [['formSetId', 1], ['slug', 1]] },
    ],
  },
  site_versions: {},
  // The sync feed (version 16): the project's changes in log order, or one form set's.
  sync_log: {
    indexes: [
      { name: 'by_project_seq', fields: [['projectId', 1], ['seq', 1]] },
      { name: 'by_form_set_seq', fields: [['formSetId', 1], ['seq', 1]], sparse: true },
    ],
  },
  live_counts: {},
  slug_redirects: {},
  // Read while folding: the project's locales change re-shapes its masters.
  masters: { indexes: [{ name: 'by_project', fields: [['projectId', 1]], whileFolding: true }] },
  master_views: {
    indexes: [
      { name: 'by_project_locale_key', fields: [['projectId', 1], ['locale', 1], ['key', 1]] },
      { name: 'by_master', fields: [['masterId', 1]] },
    ],
  },
};

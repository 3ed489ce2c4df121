import type { FormSetEvent } from '../src/domain/content/form-set/form-set-events.ts';
import type { MasterEvent } from '../src/domain/content/master/master-events.ts';
import { encodePosition } from '../src/event-store/position.ts';
import { defineProjection } from '../src/projection-engine/projection.ts';
import { changedScopes } from './public-content-changes.ts';
import { PUBLIC_CONTENT_COLLECTIONS } from './public-content-collections.ts';
import type { PublicChange } from './public-content-documents.ts';
import { applyEntry, applyFormSet, applyMaster, applyProject, type PublicEntryEvent, type PublicProjectEvent } from './public-content-fold.ts';

/**
 * The public read API's documents, shaped at projection time so that a public request is a lookup
 * (DESIGN: public handlers read read models only). Only live content is here: an entry appears once a
 * revision of it is published and leaves on entry.deleted (or with its form set).
 *
 * Collections:
 * - `projects`, id projectId: the content locales every view is shaped for.
 * - `form_sets`, id formSetId: the definition (fields, roles, sitemap settings) entries are shaped with.
 * - `entries`, id entryId: every entry's identity (slug, import metadata, creation) and its live revision
 *   with where its snapshot is (SnapshotRef: the log position of its save, read with view.eventAt; version 15,
 *   before which it held a copy), from which the views are re-shaped when locales or the form set change.
 * - `drafts`, id entryId: the entry's latest revision and where its snapshot is, while it is not live (only the
 *   latest revision can be published); it moves to the entry when published. One document per entry however
 *   many revisions came before (version 2; version 1 kept every draft and rewrote the entry's list of them on
 *   each save). Preview reads the admin `content` projection instead.
 * - `entry_views`, id `${entryId}:${locale}`: StoredEntryView, one per live entry and content locale: its public
 *   JSON already serialised (SerialisedEntry: a read writes those bytes; version 3), and what reads filter and
 *   sort by; the form set, revision, data and widget roles only inside that JSON (version 5, see
 *   entryViewOf). Searchable through its `search` tokens. The indexes of the two published orders hold each
 *   view's list item too (IndexSpec.include; version 6; as a string since version 9), so that those pages read the index alone. The
 *   first four short scalar fields of a form set have a sort slot each, with an index (version 7).
 * - `site_index`, id entryId: one small row per live entry of a form set listed in sitemaps, with its site
 *   path(s), their sitemap `<url>`s serialised, and what llms.txt shows, so sitemaps and llms.txt never read
 *   whole entry views, and a sitemap is its rows' fragments joined.
 * - `site_versions`, id projectId or formSetId: the position of the last change to its sitemap and llms.txt
 *   rows, which keys the API's cache of those outputs and their ETags.
 * - `live_counts`, id formSetId: how many of its entries are live, the list's total without a search, and
 *   the last change of its entry lists (FormSetListDoc; version 11).
 * - `slug_redirects`, id `${formSetId}:${oldSlug}`: a former slug and the entry it now names.
 * - `master_views`, id `${masterId}:${locale}`: a master's records with labels resolved in each locale.
 *   `masters`, id masterId, keeps the records as stored, to re-shape from.
 * - `sync_log`, id `entry:<entryId>` or `master:<masterId>`: the last change of each entry's and published
 *   master's public output, with where in the log it happened (SyncLogDoc; version 16): the sync feed pages
 *   through it in that order, so a site applies what changed since its cursor.
 *
 * Fan-out (locales changed, form set changed) reads the affected documents with view.find. `live_counts`
 * is kept from the entries' state (an entry counted when it first goes live, uncounted when deleted while
 * live): it relies, as every fold reading other documents does, on commits that land whole on every store
 * (see Projection), so that a batch folded again after a failure reads the entries as they were before it.
 */

// The module is in parts: the documents and their ids, the collections and indexes, the folds, the views they
// shape, and the scopes a commit changed. What the rest of the code imports from here is re-exported.
export type {
  DraftDoc,
  EntryViewDoc,
  FormSetListDoc,
  MasterSourceDoc,
  MasterViewDoc,
  PublicEntryDoc,
  PublicFormSetDoc,
  PublicProjectDoc,
  SiteIndexDoc,
  SiteVersionDoc,
  SlugRedirectDoc,
  SyncLogDoc,
} from './public-content-documents.ts';
export { entryViewId, masterViewId, slugRedirectId, syncLogId } from './public-content-documents.ts';
export { ENTRY_VIEW_SORT_FIELDS } from './public-content-collections.ts';
export { changedScopes } from './public-content-changes.ts';

const HANDLED = new Set([
  'project.created',
  'project.content-locales-changed',
  'form-set.created',
  'form-set.updated',
  'form-set.deleted',
  'entry.created',
  'entry.revision-saved',
  'entry.revision-published',
  'entry.slug-changed',
  'entry.import-metadata-set',
  'entry.deleted',
  'master.created',
  'master.renamed',
  'master.record-added',
  'master.record-updated',
  'master.record-removed',
  'master.records-replaced',
  'master.published',
  'master.unpublished',
]);

export const publicContent = defineProjection({
  name: 'public-content',
  // Version 4: each entry view's serialised parts are its first keys (reshapeEntry). Version 5: what those
  // parts hold is not stored apart as well (StoredEntryView). Version 8: the change feed (changes below).
  // Version 9: the published orders' indexes hold each list item as its string (IndexSpec.include, read by
  // findStrings), where they held its JSON text, which a read had to parse. Version 10: sort keys of text are its
  // first 128 characters (sortKey), where they held the whole value (a textarea's, in every view). Version 11:
  // live_counts holds the last change of each form set's lists (FormSetListDoc), which their ETags name. Version
  // 12: rich text in the views holds only what the rich-text model allows (localizedData sanitises it), so a
  // service upgraded to it rebuilds the views of content stored before the model. Version 13: the lookups by import
  // path and external id are sparse indexes (IndexSpec.sparse): views without either (most) are not in them
  // (0.36 KB an entry of the bench's seed); views do not store their SEO values, which the JSON-LD and Open Graph
  // documents make from the data when asked for (seoValuesOf; 0.3 KB a view). Version 14: the list indexes end
  // with the view's id alone, not the entry id as well (public-content-collections.ts, listIndex). Version 15:
  // entries and drafts keep where a revision's snapshot is in the log, not a copy of it (SnapshotRef). Version 16:
  // the sync feed's sync_log (SyncLogDoc).
  version: 16,
  description: 'Published entries shaped per locale for the public API, sitemaps, SEO documents and llms.txt; public masters.',
  collections: PUBLIC_CONTENT_COLLECTIONS,
  filter: { eventTypes: [...HANDLED] },
  // Public response caches drop what a commit changed; API-only replicas read it from the change feed.
  changes: (writes) => changedScopes(writes),

  async apply(recorded, view) {
    if (!HANDLED.has(recorded.type)) return;
    const at = recorded.metadata.occurredAt;
    const change: PublicChange = { version: encodePosition(recorded.position), eventId: recorded.id };
    if (recorded.type.startsWith('project.')) return applyProject({ type: recorded.type, data: recorded.data } as PublicProjectEvent, view, change);
    if (recorded.type.startsWith('form-set.')) return applyFormSet({ type: recorded.type, data: recorded.data } as FormSetEvent, view, change);
    if (recorded.type.startsWith('master.')) return applyMaster({ type: recorded.type, data: recorded.data } as MasterEvent, view, change);
    return applyEntry({ type: recorded.type, data: recorded.data } as PublicEntryEvent, at, view, change);
  },
});

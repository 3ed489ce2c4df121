import type { RecordedEvent } from '../src/event-store/event-store.ts';
import type { DocumentWrite } from '../src/read-models/read-model-store.ts';
import { encodePosition } from '../src/event-store/position.ts';
import type { ExternalIdentity, Snapshot } from '../src/domain/content/entry/entry-events.ts';
import type { FormSetDefinition } from '../src/domain/content/form-set/form-set-definition.ts';
import type { FormSetDoc } from './content.ts';
import { orderedRecords, recordLabel, type MasterRecord } from '../src/domain/content/master/master-entity.ts';
import { defineProjection, type ProjectionView } from '../src/projection-engine/projection.ts';
import { shapeEntryView, SORT_SLOTS, sortSlotsOf, type EntryView, type SortSlot } from '../src/public-content/entry-view.ts';
import { expandUrlPattern, patternUsesLocale } from '../src/public-content/url-pattern.ts';
import { storedEntryView, type SerialisedEntry, type StoredEntryView } from '../src/public-content/public-json.ts';
import { urlFragment } from '../src/public-content/sitemap-xml.ts';

/**
 * The public read API's documents, shaped at projection time so that a public request is a lookup
 * (DESIGN: public handlers read read models only). Only live content is here: an entry appears once a
 * revision of it is published and leaves on entry.deleted (or with its form set).
 *
 * Collections:
 * - `projects`, id projectId: the content locales every view is shaped for.
 * - `form_sets`, id formSetId: the definition (fields, roles, sitemap settings) entries are shaped with.
 * - `entries`, id entryId: every entry's identity (slug, import metadata, creation) and its live revision
 *   with the raw snapshot, from which the views are re-shaped when locales or the form set change.
 * - `drafts`, id entryId: the snapshot of the entry's latest revision while it is not live (only the latest
 *   revision can be published); it moves to the entry when published. One document per entry, so a save
 *   writes one document of the snapshot's size however many revisions came before (version 2; version 1
 *   kept every draft and rewrote the entry's list of them on each save). Preview reads the admin `content`
 *   projection instead.
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
 *
 * Fan-out (locales changed, form set changed) reads the affected documents with view.find. `live_counts`
 * is kept from the entries' state (an entry counted when it first goes live, uncounted when deleted while
 * live): it relies, as every fold reading other documents does, on commits that land whole on every store
 * (see Projection), so that a batch folded again after a failure reads the entries as they were before it.
 */

export interface PublicProjectDoc {
  projectId: string;
  locales: string[];
  defaultLocale: string;
}

/** What the admin read model keeps of a form set, less its version and times. */
export type PublicFormSetDoc = Pick<FormSetDoc, 'formSetId' | 'projectId' | 'slug' | 'name' | 'description' | 'definition'> & {
  /**
   * The fields whose sort values its entry views hold in a sort slot (sortSlotsOf; version 7): a list sorted by
   * one reads that slot's index. Absent on documents of earlier generations, whose views hold every sort value
   * in sortValues.
   */
  sortSlots?: Record<string, SortSlot>;
};

export interface PublicEntryDoc {
  entryId: string;
  projectId: string;
  formSetId: string;
  slug: string;
  createdAt: string;
  importPath: string | null;
  external: ExternalIdentity | null;
  /** When a revision of the entry first went live; null while it never has. */
  firstPublishedAt: string | null;
  live: { revisionId: string; revision: number; updatedAt: string; snapshot: Snapshot } | null;
  /** Former slugs (each may have a redirect), oldest first. */
  previousSlugs: string[];
}

export interface DraftDoc {
  revisionId: string;
  entryId: string;
  revision: number;
  snapshot: Snapshot;
}

export interface SiteIndexDoc {
  projectId: string;
  formSetId: string;
  formSetSlug: string;
  entryId: string;
  slug: string;
  /** The entry's path(s) on the site: one per content locale when the URL pattern uses {locale}. */
  paths: Array<{ locale: string; path: string }>;
  /** Each path's `<url>` of a sitemap, serialised from the path onward (urlFragment; version 3). */
  urlXml?: string[];
  lastmod: string;
  changefreq: string;
  priority: number;
  /** In the default locale: what llms.txt lists. */
  title: string;
  description: string | null;
}

export interface SiteVersionDoc {
  scope: 'project' | 'form-set';
  /** Position of the last event that changed the site outputs of the project or form set. */
  version: string;
}

/**
 * A document of `live_counts`: what a form set's public entry list is made of besides its items. Version 11
 * added the change: every event that changes the list (an entry view of the form set written or removed, the
 * form set's name or description) also writes it here, so that a list page's ETag is made from it and the
 * request (listEtag) without hashing the page, and a conditional request is answered without reading it.
 * Earlier generations' documents hold the count alone.
 */
export interface FormSetListDoc {
  formSetId: string;
  /** How many of its entries are live: the list's total without a search (every live entry has a view in every locale). */
  liveEntries: number;
  /** The id of the last event that changed the list (the sitemaps' version, its position, is in site_versions). */
  eventId?: string;
}

/** The event a projection step applies, as the public outputs it changes name it (touchSite). */
interface PublicChange {
  /** Its position (encodePosition): the sitemaps' and llms.txt's version. */
  version: string;
  /** Its id: unlike a position, never the same for another event, even in a log restored from an older backup. */
  eventId: string;
}

export interface SlugRedirectDoc {
  formSetId: string;
  oldSlug: string;
  entryId: string;
}

export interface MasterSourceDoc {
  masterId: string;
  projectId: string;
  key: string;
  name: string;
  records: MasterRecord[];
  sitePublishedAt: string | null;
}

export interface MasterViewDoc {
  masterId: string;
  projectId: string;
  key: string;
  locale: string;
  /** Whether the master is public (site_published_at set); unpublished views are kept but never served. */
  published: boolean;
  entity: { id: string; key: string; name: string; recordCount: number; publishedAt: string | null };
  records: Array<{ value: string; label: string; parent: string | null }>;
}

type Doc<T> = T & Record<string, unknown>;

/**
 * A document of `entry_views`. Versions 3 and 4 wrote the whole view beside its serialised parts, version 2
 * without them; reads take either while a rebuild after an upgrade runs.
 */
export type EntryViewDoc = StoredEntryView | (EntryView & Partial<SerialisedEntry>);

export const entryViewId = (entryId: string, locale: string): string => `${entryId}:${locale}`;
export const slugRedirectId = (formSetId: string, oldSlug: string): string => `${formSetId}:${oldSlug}`;
export const masterViewId = (masterId: string, locale: string): string => `${masterId}:${locale}`;

/** The entry view fields the entries list sorts by, per sort key of the API. */
export const ENTRY_VIEW_SORT_FIELDS = {
  created_at: 'createdAt',
  updated_at: 'updatedAt',
  published_at: 'publishedAt',
  published_date: 'publishedDate',
} as const;

const listIndex = (name: string, field: string, include?: string[]) => ({ name, fields: [['formSetId', 1], ['locale', 1], [field, 1], ['entryId', 1]] as Array<[string, 1]>, ...(include ? { include } : {}) });

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
  // service upgraded to it rebuilds the views of content stored before the model.
  version: 12,
  description: 'Published entries shaped per locale for the public API, sitemaps, SEO documents and llms.txt; public masters.',
  collections: {
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
        { name: 'by_import_path', fields: [['projectId', 1], ['locale', 1], ['importPath', 1]] },
        { name: 'by_external_id', fields: [['projectId', 1], ['locale', 1], ['external.externalId', 1]] },
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
  },
  filter: { eventTypes: [...HANDLED] },
  // Public response caches drop what a commit changed; API-only replicas read it from the change feed.
  changes: (writes) => changedScopes(writes),

  async apply(recorded, view) {
    if (!HANDLED.has(recorded.type)) return;
    const at = recorded.metadata.occurredAt;
    const change: PublicChange = { version: encodePosition(recorded.position), eventId: recorded.id };
    const d = recorded.data as Record<string, any>;
    if (recorded.type.startsWith('project.')) return applyProject(recorded, view, change);
    if (recorded.type.startsWith('form-set.')) return applyFormSet(recorded, view, change);
    if (recorded.type.startsWith('master.')) return applyMaster(recorded, view);

    switch (recorded.type) {
      case 'entry.created': {
        const entry: PublicEntryDoc = {
          entryId: d.entryId,
          projectId: d.projectId,
          formSetId: d.formSetId,
          slug: d.slug,
          createdAt: at,
          importPath: d.importPath ?? null,
          external: d.external ?? null,
          firstPublishedAt: null,
          live: null,
          previousSlugs: [],
        };
        view.put('entries', entry.entryId, { ...entry });
        view.delete('slug_redirects', slugRedirectId(d.formSetId, d.slug));
        return;
      }
      case 'entry.revision-saved': {
        if (!(await view.get<Doc<PublicEntryDoc>>('entries', d.entryId))) return;
        view.put('drafts', d.entryId, { revisionId: d.revisionId, entryId: d.entryId, revision: d.revision, snapshot: d.snapshot } satisfies DraftDoc);
        return;
      }
      case 'entry.revision-published': {
        const entry = await view.get<Doc<PublicEntryDoc>>('entries', d.entryId);
        // Version 1 kept drafts by revision id; this code folds into a generation it built until the
        // rebuild after the upgrade swaps in, so a draft saved before the upgrade is found there too.
        const current = await view.get<Doc<DraftDoc>>('drafts', d.entryId);
        const key = current ? d.entryId : d.revisionId;
        const draft = current ?? (await view.get<Doc<DraftDoc>>('drafts', key));
        if (!entry || !draft || draft.revisionId !== d.revisionId) return;
        view.delete('drafts', key);
        if (entry.firstPublishedAt === null) await addLiveCount(view, entry.formSetId, 1);
        const next: PublicEntryDoc = {
          ...entry,
          firstPublishedAt: entry.firstPublishedAt ?? d.publishedAt,
          live: { revisionId: d.revisionId, revision: d.revision, updatedAt: d.publishedAt, snapshot: draft.snapshot },
        };
        view.put('entries', next.entryId, { ...next });
        await reshapeEntry(view, next, change);
        return;
      }
      case 'entry.slug-changed': {
        const entry = await view.get<Doc<PublicEntryDoc>>('entries', d.entryId);
        if (!entry) return;
        const next = { ...entry, slug: d.to as string, previousSlugs: [...entry.previousSlugs.filter((s) => s !== d.from && s !== d.to), d.from as string] };
        view.put('entries', next.entryId, next);
        view.put('slug_redirects', slugRedirectId(d.formSetId, d.from), { formSetId: d.formSetId, oldSlug: d.from, entryId: d.entryId } satisfies SlugRedirectDoc);
        view.delete('slug_redirects', slugRedirectId(d.formSetId, d.to));
        await reshapeEntry(view, next, change);
        return;
      }
      case 'entry.import-metadata-set': {
        const entry = await view.get<Doc<PublicEntryDoc>>('entries', d.entryId);
        if (!entry) return;
        const next = { ...entry, importPath: d.importPath ?? null, external: d.external ?? null };
        view.put('entries', next.entryId, next);
        await reshapeEntry(view, next, change);
        return;
      }
      case 'entry.deleted': {
        const entry = await view.get<Doc<PublicEntryDoc>>('entries', d.entryId);
        if (!entry) return;
        view.delete('entries', d.entryId);
        if (entry.live !== null) await addLiveCount(view, entry.formSetId, -1);
        await removeViews(view, entry, change);
        view.delete('drafts', d.entryId);
        for (const slug of new Set([...entry.previousSlugs, ...(d.previousSlugs as string[])])) {
          const redirect = await view.get<Doc<SlugRedirectDoc>>('slug_redirects', slugRedirectId(d.formSetId, slug));
          if (redirect?.entryId === d.entryId) view.delete('slug_redirects', slugRedirectId(d.formSetId, slug));
        }
        return;
      }
    }
  },
});

async function applyProject(recorded: RecordedEvent, view: ProjectionView, change: PublicChange): Promise<void> {
  const d = recorded.data as Record<string, any>;
  if (recorded.type === 'project.created') {
    view.put('projects', d.projectId, { projectId: d.projectId, locales: [...d.contentLocales.locales], defaultLocale: d.contentLocales.defaultLocale } satisfies PublicProjectDoc);
    return;
  }
  // project.content-locales-changed: every live entry and every master of the project is re-shaped.
  const previous = await view.get<Doc<PublicProjectDoc>>('projects', d.projectId);
  const next: PublicProjectDoc = { projectId: d.projectId, locales: [...d.locales], defaultLocale: d.defaultLocale };
  view.put('projects', next.projectId, { ...next });
  const dropped = (previous?.locales ?? []).filter((locale) => !next.locales.includes(locale));
  for (const entry of await view.find<Doc<PublicEntryDoc>>('entries', { projectId: d.projectId })) {
    if (entry.live === null) continue;
    for (const locale of dropped) view.delete('entry_views', entryViewId(entry.entryId, locale));
    await reshapeEntry(view, entry, change);
  }
  for (const master of await view.find<Doc<MasterSourceDoc>>('masters', { projectId: d.projectId })) {
    for (const locale of dropped) view.delete('master_views', masterViewId(master.masterId, locale));
    reshapeMaster(view, master, next);
  }
}

async function applyFormSet(recorded: RecordedEvent, view: ProjectionView, change: PublicChange): Promise<void> {
  const d = recorded.data as Record<string, any>;
  if (recorded.type === 'form-set.deleted') {
    view.delete('form_sets', d.formSetId);
    for (const entry of await view.find<Doc<PublicEntryDoc>>('entries', { formSetId: d.formSetId })) await removeViews(view, entry, change);
    view.delete('site_versions', d.formSetId);
    view.delete('live_counts', d.formSetId);
    view.put('site_versions', d.projectId, { scope: 'project', version: change.version } satisfies SiteVersionDoc);
    return;
  }
  const definition = d.definition as FormSetDefinition;
  const doc: PublicFormSetDoc = {
    formSetId: definition.id,
    projectId: d.projectId,
    slug: definition.slug,
    name: definition.name,
    description: definition.description,
    definition,
    sortSlots: sortSlotsOf(definition),
  };
  view.put('form_sets', doc.formSetId, { ...doc });
  if (recorded.type === 'form-set.updated') {
    for (const entry of await view.find<Doc<PublicEntryDoc>>('entries', { formSetId: doc.formSetId })) {
      if (entry.live !== null) await reshapeEntry(view, entry, change, { formSet: doc });
    }
    // Its name heads a section of llms.txt and its slug is in site paths, with or without live entries.
    await touchSite(view, change, doc.projectId, doc.formSetId);
  }
}

/** Writes the entry's views in every content locale and its site index row; nothing while it is not live. */
async function reshapeEntry(view: ProjectionView, entry: PublicEntryDoc, change: PublicChange, known: { formSet?: PublicFormSetDoc } = {}): Promise<void> {
  if (entry.live === null || entry.firstPublishedAt === null) return;
  const formSet = known.formSet ?? (await view.get<Doc<PublicFormSetDoc>>('form_sets', entry.formSetId));
  const project = await view.get<Doc<PublicProjectDoc>>('projects', entry.projectId);
  if (!formSet || !project) return;
  const views: EntryView[] = [];
  for (const locale of project.locales) {
    const shaped = shapeEntryView({
      projectId: entry.projectId,
      formSet: { formSetId: formSet.formSetId, slug: formSet.slug, name: formSet.name, definition: formSet.definition },
      entry: { entryId: entry.entryId, slug: entry.slug, createdAt: entry.createdAt, publishedAt: entry.firstPublishedAt, importPath: entry.importPath, external: entry.external },
      revision: entry.live,
      locale,
      defaultLocale: project.defaultLocale,
    });
    views.push(shaped);
    view.put('entry_views', entryViewId(entry.entryId, locale), storedEntryView(shaped));
  }
  await touchSite(view, change, entry.projectId, entry.formSetId);
  const settings = formSet.definition.sitemap;
  if (!settings.include) {
    view.delete('site_index', entry.entryId);
    return;
  }
  const main = views.find((v) => v.locale === project.defaultLocale) ?? views[0]!;
  const locales = patternUsesLocale(settings.urlPattern) ? project.locales : [project.defaultLocale];
  const row: SiteIndexDoc = {
    projectId: entry.projectId,
    formSetId: formSet.formSetId,
    formSetSlug: formSet.slug,
    entryId: entry.entryId,
    slug: entry.slug,
    paths: locales.map((locale) => ({ locale, path: expandUrlPattern(settings.urlPattern, { slug: entry.slug, formSetSlug: formSet.slug, entryId: entry.entryId, locale }) })),
    lastmod: entry.live.updatedAt,
    changefreq: settings.changefreq,
    priority: settings.priority,
    title: main.seo.title ?? entry.slug,
    description: main.seo.description,
  };
  row.urlXml = row.paths.map(({ path }) => urlFragment({ path, lastmod: row.lastmod, changefreq: row.changefreq, priority: row.priority }));
  view.put('site_index', entry.entryId, { ...row });
}

/**
 * Counts an entry that went live (1) or was taken out (-1). The count alone: the change that did it names
 * itself when it touches the list after (touchSite); a list whose count changed without that has no change
 * to make its ETag from, and its pages are hashed instead.
 */
async function addLiveCount(view: ProjectionView, formSetId: string, delta: number): Promise<void> {
  const current = await view.get<Doc<FormSetListDoc>>('live_counts', formSetId);
  view.put('live_counts', formSetId, { formSetId, liveEntries: Math.max(0, (current?.liveEntries ?? 0) + delta) } satisfies FormSetListDoc);
}

/** Takes a live entry out of the public API: its views in every content locale and its site index row. */
async function removeViews(view: ProjectionView, entry: PublicEntryDoc, change: PublicChange): Promise<void> {
  if (entry.live === null) return;
  const project = await view.get<Doc<PublicProjectDoc>>('projects', entry.projectId);
  for (const locale of project?.locales ?? []) view.delete('entry_views', entryViewId(entry.entryId, locale));
  view.delete('site_index', entry.entryId);
  await touchSite(view, change, entry.projectId, entry.formSetId);
}

/**
 * Records that the project's and the form set's public outputs changed at this event: their site outputs
 * (sitemaps, llms.txt), which the API caches per version and answers conditional requests for without
 * rebuilding them, and the form set's entry lists (see FormSetListDoc), whose ETags name the change.
 */
async function touchSite(view: ProjectionView, change: PublicChange, projectId: string, formSetId: string): Promise<void> {
  view.put('site_versions', projectId, { scope: 'project', version: change.version } satisfies SiteVersionDoc);
  view.put('site_versions', formSetId, { scope: 'form-set', version: change.version } satisfies SiteVersionDoc);
  const list = await view.get<Doc<FormSetListDoc>>('live_counts', formSetId);
  view.put('live_counts', formSetId, { formSetId, liveEntries: list?.liveEntries ?? 0, eventId: change.eventId } satisfies FormSetListDoc);
}

async function applyMaster(recorded: RecordedEvent, view: ProjectionView): Promise<void> {
  const d = recorded.data as Record<string, any>;
  let master: MasterSourceDoc | null;
  if (recorded.type === 'master.created') {
    master = { masterId: d.masterId, projectId: d.projectId, key: d.key, name: d.name, records: orderedRecords(d.records), sitePublishedAt: null };
  } else {
    const stored = await view.get<Doc<MasterSourceDoc>>('masters', d.masterId);
    if (!stored) return;
    master = { ...stored };
    switch (recorded.type) {
      case 'master.renamed':
        master.name = d.name;
        break;
      case 'master.record-added':
        master.records = orderedRecords([...master.records.filter((r) => r.value !== d.record.value), d.record]);
        break;
      case 'master.record-updated':
        master.records = orderedRecords(master.records.map((r) => (r.value === d.record.value ? d.record : r)));
        break;
      case 'master.record-removed':
        master.records = orderedRecords(master.records.filter((r) => r.value !== d.value));
        break;
      case 'master.records-replaced':
        master.records = orderedRecords(d.records);
        break;
      case 'master.published':
        master.sitePublishedAt = d.publishedAt;
        break;
      case 'master.unpublished':
        master.sitePublishedAt = null;
        break;
    }
  }
  view.put('masters', master.masterId, { ...master });
  const project = await view.get<Doc<PublicProjectDoc>>('projects', master.projectId);
  if (project) reshapeMaster(view, master, project);
}

function reshapeMaster(view: ProjectionView, master: MasterSourceDoc, project: PublicProjectDoc): void {
  for (const locale of project.locales) {
    const doc: MasterViewDoc = {
      masterId: master.masterId,
      projectId: master.projectId,
      key: master.key,
      locale,
      published: master.sitePublishedAt !== null,
      entity: { id: master.masterId, key: master.key, name: master.name, recordCount: master.records.length, publishedAt: master.sitePublishedAt },
      records: master.records.map((r) => ({ value: r.value, label: recordLabel(r, locale, project.defaultLocale), parent: r.parent })),
    };
    view.put('master_views', masterViewId(master.masterId, locale), { ...doc });
  }
}

/**
 * What a commit of this projection changed, as scopes of public responses: `entry:<entryId>` (its views),
 * `form-set:<formSetId>` (its lists, primary entry and sitemap), `project:<projectId>` (its sitemap,
 * llms.txt and masters), and `content` for any change (responses that name no narrower scope). Every change
 * of a live entry also touches its form set and project (site_versions), so their outputs follow.
 */
export function changedScopes(writes: readonly DocumentWrite[]): Set<string> {
  const scopes = new Set<string>(['content']);
  for (const write of writes) {
    switch (write.collection) {
      case 'entry_views':
        scopes.add(`entry:${write.id.slice(0, write.id.lastIndexOf(':'))}`);
        break;
      case 'site_versions':
        // A deleted row names no scope: its id is a form set's or a project's.
        if ((write.doc as SiteVersionDoc | null)?.scope !== 'form-set') scopes.add(`project:${write.id}`);
        if ((write.doc as SiteVersionDoc | null)?.scope !== 'project') scopes.add(`form-set:${write.id}`);
        break;
      case 'live_counts':
        scopes.add(`form-set:${write.id}`);
        break;
      case 'form_sets': {
        // Its name heads a section of its project's llms.txt.
        scopes.add(`form-set:${write.id}`);
        const projectId = (write.doc as { projectId?: string } | null)?.projectId;
        if (projectId !== undefined) scopes.add(`project:${projectId}`);
        break;
      }
      case 'projects':
        scopes.add(`project:${write.id}`);
        break;
      case 'masters':
      case 'master_views': {
        // A master view is removed only when its locale is (an access change too, which empties the cache).
        const projectId = (write.doc as { projectId?: string } | null)?.projectId;
        if (projectId !== undefined) scopes.add(`project:${projectId}`);
        break;
      }
    }
  }
  return scopes;
}

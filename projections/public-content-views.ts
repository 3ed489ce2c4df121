import { recordLabel } from '../src/domain/content/master/master-entity.ts';
import type { ProjectionView } from '../src/projection-engine/projection.ts';
import { shapeEntryView, type EntryView } from '../src/public-content/entry-view.ts';
import { storedEntryView } from '../src/public-content/public-json.ts';
import { urlFragment } from '../src/public-content/sitemap-fragments.ts';
import { expandUrlPattern, patternUsesLocale } from '../src/public-content/url-pattern.ts';
import {
  entryViewId,
  masterViewId,
  type Doc,
  type FormSetListDoc,
  type MasterSourceDoc,
  type MasterViewDoc,
  type PublicChange,
  type PublicEntryDoc,
  type PublicFormSetDoc,
  type PublicProjectDoc,
  type SiteIndexDoc,
  type SiteVersionDoc,
  type SnapshotRef,
  type SyncLogDoc,
  syncLogId,
} from './public-content-documents.ts';
import { decodePosition } from '../src/event-store/position.ts';
import { savedSnapshot, type Snapshot } from '../src/domain/content/entry/entry-events.ts';

/**
 * The public-content documents shaped from others, written by the folds (public-content-fold.ts): an entry's
 * views and site index row, a master's views, and the site versions and live counts that name a change.
 */

/** A draft's or live revision's SnapshotRef, as a document keeps it. */
export function snapshotRefOf(ref: SnapshotRef): SnapshotRef {
  return ref.savedAt !== undefined ? { savedAt: ref.savedAt } : { snapshot: ref.snapshot };
}

/** The snapshot a SnapshotRef names: read from the log at the save's position, or as an earlier version kept it. */
async function snapshotOf(view: ProjectionView, ref: SnapshotRef): Promise<Snapshot> {
  if (ref.savedAt === undefined) return ref.snapshot;
  const saved = await view.eventAt(decodePosition(ref.savedAt));
  const snapshot = savedSnapshot(saved);
  if (snapshot === undefined) throw new Error(`the event at log position ${ref.savedAt} is ${saved.type}, not the entry.revision-saved whose snapshot a public-content document names`);
  return snapshot;
}

/** Writes the entry's views in every content locale and its site index row; nothing while it is not live. */
export async function reshapeEntry(view: ProjectionView, entry: PublicEntryDoc, change: PublicChange, known: { formSet?: PublicFormSetDoc } = {}): Promise<void> {
  if (entry.live === null || entry.firstPublishedAt === null) return;
  const formSet = known.formSet ?? (await view.get<Doc<PublicFormSetDoc>>('form_sets', entry.formSetId));
  const project = await view.get<Doc<PublicProjectDoc>>('projects', entry.projectId);
  if (!formSet || !project) return;
  const views: EntryView[] = [];
  const { revisionId, revision: number, updatedAt } = entry.live;
  const revision = { revisionId, revision: number, updatedAt, snapshot: await snapshotOf(view, entry.live) };
  for (const locale of project.locales) {
    const shaped = shapeEntryView({
      projectId: entry.projectId,
      formSet: { formSetId: formSet.formSetId, slug: formSet.slug, name: formSet.name, definition: formSet.definition },
      entry: { entryId: entry.entryId, slug: entry.slug, createdAt: entry.createdAt, publishedAt: entry.firstPublishedAt, importPath: entry.importPath, external: entry.external },
      revision,
      locale,
      defaultLocale: project.defaultLocale,
    });
    views.push(shaped);
    view.put('entry_views', entryViewId(entry.entryId, locale), storedEntryView(shaped));
  }
  await touchSite(view, change, entry.projectId, entry.formSetId);
  recordSync(view, change, { projectId: entry.projectId, kind: 'entry', removed: false, entryId: entry.entryId, formSetId: entry.formSetId, formSetSlug: formSet.slug, slug: entry.slug, previousSlugs: [...entry.previousSlugs] });
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
export async function addLiveCount(view: ProjectionView, formSetId: string, delta: number): Promise<void> {
  const current = await view.get<Doc<FormSetListDoc>>('live_counts', formSetId);
  view.put('live_counts', formSetId, { formSetId, liveEntries: Math.max(0, (current?.liveEntries ?? 0) + delta) } satisfies FormSetListDoc);
}

/** Takes a live entry out of the public API: its views in every content locale and its site index row. */
export async function removeViews(view: ProjectionView, entry: PublicEntryDoc, change: PublicChange): Promise<void> {
  if (entry.live === null) return;
  const project = await view.get<Doc<PublicProjectDoc>>('projects', entry.projectId);
  for (const locale of project?.locales ?? []) view.delete('entry_views', entryViewId(entry.entryId, locale));
  view.delete('site_index', entry.entryId);
  await touchSite(view, change, entry.projectId, entry.formSetId);
  // Its form set's slug as the entry's last change had it (the form set may be gone with it).
  const last = await view.get<Doc<SyncLogDoc>>('sync_log', syncLogId('entry', entry.entryId));
  recordSync(view, change, { projectId: entry.projectId, kind: 'entry', removed: true, entryId: entry.entryId, formSetId: entry.formSetId, ...(last?.formSetSlug ? { formSetSlug: last.formSetSlug } : {}), slug: entry.slug, previousSlugs: [...entry.previousSlugs] });
}

/** The sync feed's document of an entry or master: its last change, at this event (SyncLogDoc). */
export function recordSync(view: ProjectionView, change: PublicChange, doc: Omit<SyncLogDoc, 'seq'>): void {
  const id = doc.kind === 'entry' ? doc.entryId! : doc.masterId!;
  view.put('sync_log', syncLogId(doc.kind, id), { ...doc, seq: `${change.version}:${id}` } satisfies SyncLogDoc);
}

/**
 * Records that the project's and the form set's public outputs changed at this event: their site outputs
 * (sitemaps, llms.txt), which the API caches per version and answers conditional requests for without
 * rebuilding them, and the form set's entry lists (see FormSetListDoc), whose ETags name the change.
 */
export async function touchSite(view: ProjectionView, change: PublicChange, projectId: string, formSetId: string): Promise<void> {
  view.put('site_versions', projectId, { scope: 'project', version: change.version } satisfies SiteVersionDoc);
  view.put('site_versions', formSetId, { scope: 'form-set', version: change.version } satisfies SiteVersionDoc);
  const list = await view.get<Doc<FormSetListDoc>>('live_counts', formSetId);
  view.put('live_counts', formSetId, { formSetId, liveEntries: list?.liveEntries ?? 0, eventId: change.eventId } satisfies FormSetListDoc);
}

export function reshapeMaster(view: ProjectionView, master: MasterSourceDoc, project: PublicProjectDoc): void {
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

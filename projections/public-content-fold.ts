import type { ProjectEvent } from '../src/domain/access/access-events.ts';
import type { EntryEventOf } from '../src/domain/content/entry/entry-events.ts';
import type { FormSetEvent } from '../src/domain/content/form-set/form-set-events.ts';
import type { FormSetDefinition } from '../src/domain/content/form-set/form-set-definition.ts';
import { orderedRecords } from '../src/domain/content/master/master-entity.ts';
import type { MasterEvent } from '../src/domain/content/master/master-events.ts';
import type { ProjectionView } from '../src/projection-engine/projection.ts';
import { sortSlotsOf } from '../src/public-content/entry-view.ts';
import {
  entryViewId,
  masterViewId,
  slugRedirectId,
  type Doc,
  type DraftDoc,
  type MasterSourceDoc,
  type PublicChange,
  type PublicEntryDoc,
  type PublicFormSetDoc,
  type PublicProjectDoc,
  type SiteVersionDoc,
  type SlugRedirectDoc,
} from './public-content-documents.ts';
import { addLiveCount, recordSync, removeViews, reshapeEntry, reshapeMaster, snapshotRefOf, touchSite } from './public-content-views.ts';

/**
 * How the public-content projection (projections/public-content.ts) folds each event it handles, by the
 * aggregate it is about: the project's content locales, form sets, entries and masters.
 */

/** The project events the public read model follows: the content locales every view is shaped for. */
export type PublicProjectEvent = Extract<ProjectEvent, { type: 'project.created' | 'project.content-locales-changed' }>;

/** The entry events the public read model follows. */
export type PublicEntryEvent = EntryEventOf<'entry.created' | 'entry.revision-saved' | 'entry.revision-published' | 'entry.slug-changed' | 'entry.import-metadata-set' | 'entry.deleted'>;

export async function applyEntry(event: PublicEntryEvent, at: string, view: ProjectionView, change: PublicChange): Promise<void> {
  switch (event.type) {
    case 'entry.created': {
      const d = event.data;
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
      const d = event.data;
      if (!(await view.get<Doc<PublicEntryDoc>>('entries', d.entryId))) return;
      view.put('drafts', d.entryId, { revisionId: d.revisionId, entryId: d.entryId, revision: d.revision, savedAt: change.version } satisfies DraftDoc);
      return;
    }
    case 'entry.revision-published': {
      const d = event.data;
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
        live: { revisionId: d.revisionId, revision: d.revision, updatedAt: d.publishedAt, ...snapshotRefOf(draft) },
      };
      view.put('entries', next.entryId, { ...next });
      await reshapeEntry(view, next, change);
      return;
    }
    case 'entry.slug-changed': {
      const d = event.data;
      const entry = await view.get<Doc<PublicEntryDoc>>('entries', d.entryId);
      if (!entry) return;
      const next = { ...entry, slug: d.to, previousSlugs: [...entry.previousSlugs.filter((s) => s !== d.from && s !== d.to), d.from] };
      view.put('entries', next.entryId, next);
      view.put('slug_redirects', slugRedirectId(d.formSetId, d.from), { formSetId: d.formSetId, oldSlug: d.from, entryId: d.entryId } satisfies SlugRedirectDoc);
      view.delete('slug_redirects', slugRedirectId(d.formSetId, d.to));
      await reshapeEntry(view, next, change);
      return;
    }
    case 'entry.import-metadata-set': {
      const d = event.data;
      const entry = await view.get<Doc<PublicEntryDoc>>('entries', d.entryId);
      if (!entry) return;
      const next = { ...entry, importPath: d.importPath ?? null, external: d.external ?? null };
      view.put('entries', next.entryId, next);
      await reshapeEntry(view, next, change);
      return;
    }
    case 'entry.deleted': {
      const d = event.data;
      const entry = await view.get<Doc<PublicEntryDoc>>('entries', d.entryId);
      if (!entry) return;
      view.delete('entries', d.entryId);
      if (entry.live !== null) await addLiveCount(view, entry.formSetId, -1);
      await removeViews(view, entry, change);
      view.delete('drafts', d.entryId);
      for (const slug of new Set([...entry.previousSlugs, ...d.previousSlugs])) {
        const redirect = await view.get<Doc<SlugRedirectDoc>>('slug_redirects', slugRedirectId(d.formSetId, slug));
        if (redirect?.entryId === d.entryId) view.delete('slug_redirects', slugRedirectId(d.formSetId, slug));
      }
      return;
    }
  }
}

export async function applyProject(event: PublicProjectEvent, view: ProjectionView, change: PublicChange): Promise<void> {
  if (event.type === 'project.created') {
    const d = event.data;
    view.put('projects', d.projectId, { projectId: d.projectId, locales: [...d.contentLocales.locales], defaultLocale: d.contentLocales.defaultLocale } satisfies PublicProjectDoc);
    return;
  }
  // project.content-locales-changed: every live entry and every master of the project is re-shaped.
  const d = event.data;
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

export async function applyFormSet(event: FormSetEvent, view: ProjectionView, change: PublicChange): Promise<void> {
  if (event.type === 'form-set.deleted') {
    const d = event.data;
    view.delete('form_sets', d.formSetId);
    for (const entry of await view.find<Doc<PublicEntryDoc>>('entries', { formSetId: d.formSetId })) await removeViews(view, entry, change);
    view.delete('site_versions', d.formSetId);
    view.delete('live_counts', d.formSetId);
    view.put('site_versions', d.projectId, { scope: 'project', version: change.version } satisfies SiteVersionDoc);
    return;
  }
  const d = event.data;
  const definition: FormSetDefinition = d.definition;
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
  if (event.type === 'form-set.updated') {
    for (const entry of await view.find<Doc<PublicEntryDoc>>('entries', { formSetId: doc.formSetId })) {
      if (entry.live !== null) await reshapeEntry(view, entry, change, { formSet: doc });
    }
    // Its name heads a section of llms.txt and its slug is in site paths, with or without live entries.
    await touchSite(view, change, doc.projectId, doc.formSetId);
  }
}

export async function applyMaster(event: MasterEvent, view: ProjectionView, change: PublicChange): Promise<void> {
  let master: MasterSourceDoc | null;
  let wasPublished = false;
  if (event.type === 'master.created') {
    const d = event.data;
    master = { masterId: d.masterId, projectId: d.projectId, key: d.key, name: d.name, records: orderedRecords(d.records), sitePublishedAt: null };
  } else {
    const stored = await view.get<Doc<MasterSourceDoc>>('masters', event.data.masterId);
    if (!stored) return;
    master = { ...stored };
    wasPublished = stored.sitePublishedAt !== null;
    switch (event.type) {
      case 'master.renamed':
        master.name = event.data.name;
        break;
      case 'master.record-added': {
        const { record } = event.data;
        master.records = orderedRecords([...master.records.filter((r) => r.value !== record.value), record]);
        break;
      }
      case 'master.record-updated': {
        const { record } = event.data;
        master.records = orderedRecords(master.records.map((r) => (r.value === record.value ? record : r)));
        break;
      }
      case 'master.record-removed': {
        const { value } = event.data;
        master.records = orderedRecords(master.records.filter((r) => r.value !== value));
        break;
      }
      case 'master.records-replaced':
        master.records = orderedRecords(event.data.records);
        break;
      case 'master.published':
        master.sitePublishedAt = event.data.publishedAt;
        break;
      case 'master.unpublished':
        master.sitePublishedAt = null;
        break;
    }
  }
  view.put('masters', master.masterId, { ...master });
  const project = await view.get<Doc<PublicProjectDoc>>('projects', master.projectId);
  if (project) reshapeMaster(view, master, project);
  // The sync feed follows published masters, and the one that was just unpublished.
  const published = master.sitePublishedAt !== null;
  if (published || wasPublished) recordSync(view, change, { projectId: master.projectId, kind: 'master', removed: !published, masterId: master.masterId, key: master.key });
}

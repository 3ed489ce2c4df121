import type { RecordedEvent } from '../src/event-store/event-store.ts';
import { encodePosition } from '../src/event-store/position.ts';
import { entryEvents, type EntryEvent } from '../src/domain/content/entry/entry-events.ts';
import type { RevisionStatus } from '../src/domain/content/entry/entry-workflow.ts';
import { entryListing, LISTING_LOCALE_EVENTS, listingLocaleOf, type ListingLocale } from '../src/domain/content/entry/entry-listing.ts';
import { formSetEvents, type FormSetEvent } from '../src/domain/content/form-set/form-set-events.ts';
import { orderedRecords, type MasterRecord } from '../src/domain/content/master/master-entity.ts';
import { masterEvents, type MasterEvent } from '../src/domain/content/master/master-events.ts';
import { defineProjection, type ProjectionView } from '../src/projection-engine/projection.ts';
import type { Doc } from '../src/read-models/read-model-store.ts';

/**
 * Content as the admin API (and the public API) reads it: form sets, entries, their revisions with the
 * workflow status of each, slug redirects and masters.
 *
 * Collections (plain JSON; times are ISO 8601 UTC strings: the event's own times where it carries them,
 * its metadata.occurredAt otherwise):
 * - `form_sets`, id formSetId: the full definition as the last event carried it, and its version.
 *   Deleted form sets are removed (their entries are not touched here).
 * - `entries`, id entryId: what lists and lookups need, without snapshots and of a size that does not grow
 *   with the history (a save rewrites this small document and adds one revision document; nothing holds
 *   every revision). `latestRevision` is the newest revision (whatever its status), `liveRevision` the
 *   published one the public API serves, `revisionCount` how many there are. `title`, `titleSort` and
 *   `search` (tokens of the title and text fields in every locale) come from the latest revision, with the
 *   form set and default locale as they were when it was saved. Every change stamps `updatedAt`,
 *   `updatedAtMs` (the same time as a number, so a range query bounds both sides), `updatedBy` (the actor)
 *   and `updatedPosition` (the log position of the event, 20 digits: what a pinned walk of the list,
 *   src/application/keyset-page.ts, compares). A deleted entry is removed with all its revisions (found
 *   through by_entry_revision) and redirects.
 * - `revisions`, id revisionId: one per save, with its workflow status (draft,
 *   pending_review, scheduled, published, rejected, superseded). The scheduler finds due revisions with
 *   due_for_publishing: {status: 'scheduled', publishAt <= now} across projects (by_status_publish_at within one).
 * - `slug_redirects`, id `${formSetId}:${oldSlug}`: a former slug and the entry it now names (read the
 *   entry for its current slug). Removed when the entry is deleted or a live entry takes the slug again.
 * - `masters`, id masterId: records in display order (depth first from the roots, siblings by order).
 * - `projects`, id projectId: the default content locale titles are read in.
 *
 * Version 2: entries no longer list every revision id; they carry the listing fields and indexes for the
 * admin lists' filters and sorts. Version 3: entries carry `locales`, the locales their latest revision
 * has text in (the console's locale coverage). A deleted entry's revision documents go in the commit of the
 * deletion (commits land whole on every store).
 *
 * Version 4: a revision holds the log position of the save that carried its snapshot (`snapshotAt`), not a copy of
 * it: no read model holds a copy of the log (./content-queries.ts reads the snapshot from the log, one lookup).
 * Copies took 0.9 KB an entry of the bench's 10,000-entry seed. The indexes by import path and external identity
 * are sparse (IndexSpec.sparse): entries without one are not in them.
 *
 * Fields beyond the API contract: entries.liveRevision/latestRevision as documented, revisions.updatedAt,
 * revisions.supersededAt/supersededBy, revisions.rejectedAt, revisions.publishTrigger, masters.recordCount.
 */

export type { EntryDoc, FormSetDoc, MasterDoc, RevisionDoc, SlugRedirectDoc, StoredRevisionDoc } from './content-documents.ts';
import type { EntryDoc, FormSetDoc, MasterDoc, RevisionDoc, SlugRedirectDoc, StoredRevisionDoc } from './content-documents.ts';

export const redirectId = (formSetId: string, oldSlug: string): string => `${formSetId}:${oldSlug}`;


const ENTRY_TYPES = new Set<string>(entryEvents.map((d) => d.type));
const FORM_SET_TYPES = new Set<string>(formSetEvents.map((d) => d.type));

/** The entry list's sorts: API name to the entries field, each served by an index per form set. */
export const ENTRY_LIST_SORTS = {
  updated_at: 'updatedAt',
  title: 'titleSort',
  published_at: 'liveRevision.publishedAt',
} as const;

export const content = defineProjection({
  name: 'content',
  version: 4,
  description: 'Form sets, entries, revisions with their workflow status, slug redirects and masters.',
  collections: {
    form_sets: {
      indexes: [{ name: 'by_project_slug', fields: [['projectId', 1], ['slug', 1]], unique: true }],
    },
    entries: {
      indexes: [
        { name: 'by_form_set_slug', fields: [['formSetId', 1], ['slug', 1]] },
        { name: 'by_form_set_updated', fields: [['formSetId', 1], ['updatedAt', -1]] },
        { name: 'by_form_set_title', fields: [['formSetId', 1], ['titleSort', 1]] },
        { name: 'by_form_set_published', fields: [['formSetId', 1], ['liveRevision.publishedAt', -1]] },
        { name: 'by_form_set_status_updated', fields: [['formSetId', 1], ['latestRevision.status', 1], ['updatedAt', -1]] },
        { name: 'by_form_set_assignee_updated', fields: [['formSetId', 1], ['assignee', 1], ['updatedAt', -1]] },
        { name: 'by_form_set_updated_by', fields: [['formSetId', 1], ['updatedBy.id', 1], ['updatedAt', -1]] },
        // The second part of a pinned walk: entries changed after its position, in the order of their changes.
        { name: 'by_form_set_changed', fields: [['formSetId', 1], ['updatedPosition', 1]] },
        // Entries imported with a path or an external identity, which most are not (version 4: sparse).
        { name: 'by_project_import_path', fields: [['projectId', 1], ['importPath', 1]], sparse: true },
        {
          name: 'by_project_external',
          fields: [['projectId', 1], ['external.sourceType', 1], ['external.entityType', 1], ['external.externalId', 1]],
          sparse: true,
        },
      ],
      textField: 'search',
    },
    revisions: {
      indexes: [
        // Read while folding: entry.deleted removes every revision of the entry.
        { name: 'by_entry_revision', fields: [['entryId', 1], ['revision', 1]], whileFolding: true },
        { name: 'by_status_publish_at', fields: [['projectId', 1], ['status', 1], ['publishAt', 1]] },
        // The scheduled-publishing job looks across projects.
        { name: 'due_for_publishing', fields: [['status', 1], ['publishAt', 1]] },
      ],
    },
    slug_redirects: {
      indexes: [{ name: 'by_entry', fields: [['entryId', 1]] }],
    },
    masters: {
      indexes: [{ name: 'by_project_key', fields: [['projectId', 1], ['key', 1]], unique: true }],
    },
    projects: {},
  },
  filter: { eventTypes: [...LISTING_LOCALE_EVENTS, ...[...formSetEvents, ...entryEvents, ...masterEvents].map((definition) => definition.type)] },

  async apply(recorded, view) {
    if (LISTING_LOCALE_EVENTS.includes(recorded.type)) {
      const locale = listingLocaleOf(recorded);
      view.put('projects', locale.projectId, { ...locale });
      return;
    }
    if (FORM_SET_TYPES.has(recorded.type)) return applyFormSet({ type: recorded.type, data: recorded.data } as FormSetEvent, recorded, view);
    if (ENTRY_TYPES.has(recorded.type)) return applyEntry({ type: recorded.type, data: recorded.data } as EntryEvent, recorded, view);
    return applyMaster({ type: recorded.type, data: recorded.data } as MasterEvent, recorded, view);
  },
});

// ---------------------------------------------------------------------------------------------------
// Form sets

async function applyFormSet(event: FormSetEvent, recorded: RecordedEvent, view: ProjectionView): Promise<void> {
  const at = recorded.metadata.occurredAt;
  switch (event.type) {
    case 'form-set.created': {
      const { definition } = event.data;
      const doc: FormSetDoc = {
        formSetId: definition.id,
        projectId: event.data.projectId,
        slug: definition.slug,
        name: definition.name,
        description: definition.description,
        definition,
        version: event.data.version,
        createdAt: at,
        updatedAt: at,
      };
      view.put('form_sets', doc.formSetId, { ...doc });
      return;
    }
    case 'form-set.updated': {
      const { definition } = event.data;
      const previous = await view.get<Doc<FormSetDoc>>('form_sets', definition.id);
      if (!previous) return;
      view.put('form_sets', definition.id, {
        ...previous,
        slug: definition.slug,
        name: definition.name,
        description: definition.description,
        definition,
        version: event.data.version,
        updatedAt: at,
      });
      return;
    }
    case 'form-set.deleted':
      view.delete('form_sets', event.data.formSetId);
      return;
  }
}

// ---------------------------------------------------------------------------------------------------
// Entries and revisions

async function applyEntry(event: EntryEvent, recorded: RecordedEvent, view: ProjectionView): Promise<void> {
  const at = recorded.metadata.occurredAt;
  const by = { type: recorded.metadata.actor.type, id: recorded.metadata.actor.id };
  const stamp: ChangeStamp = { updatedAt: at, updatedAtMs: Date.parse(at), updatedBy: by, updatedPosition: encodePosition(recorded.position) };
  const updateEntry = (entryId: string, patch: (entry: EntryDoc) => Partial<EntryDoc>) => updateEntryDoc(view, entryId, stamp, patch);
  const setLatestStatus = (entryId: string, revisionId: string, status: RevisionStatus) =>
    updateEntry(entryId, (entry) => ({ latestRevision: entry.latestRevision?.revisionId === revisionId ? { ...entry.latestRevision, status } : entry.latestRevision }));
  switch (event.type) {
    case 'entry.created': {
      const d = event.data;
      const doc: EntryDoc = {
        entryId: d.entryId,
        projectId: d.projectId,
        formSetId: d.formSetId,
        slug: d.slug,
        previousSlugs: [],
        importPath: d.importPath ?? null,
        external: d.external ?? null,
        assignee: null,
        createdAt: at,
        ...stamp,
        latestRevision: null,
        liveRevision: null,
        revisionCount: 0,
        title: '',
        titleSort: '',
        search: '',
        locales: [],
        duplicatedFrom: d.duplicatedFrom ?? null,
      };
      view.put('entries', doc.entryId, { ...doc });
      // The slug names a live entry now: no redirect may answer for it.
      view.delete('slug_redirects', redirectId(d.formSetId, d.slug));
      return;
    }

    case 'entry.revision-saved': {
      const d = event.data;
      const doc: StoredRevisionDoc = {
        revisionId: d.revisionId,
        entryId: d.entryId,
        projectId: d.projectId,
        formSetId: d.formSetId,
        revision: d.revision,
        status: 'draft',
        snapshotAt: encodePosition(recorded.position),
        savedBy: by,
        savedAt: d.savedAt,
        updatedAt: d.savedAt,
        publishAt: null,
        publishedAt: null,
        ...(d.restoredFrom === undefined ? {} : { restoredFrom: { revisionId: d.restoredFrom.revisionId, revision: d.restoredFrom.revision } }),
      };
      view.put('revisions', doc.revisionId, { ...doc });
      const formSet = await view.get<Doc<FormSetDoc>>('form_sets', d.formSetId);
      const project = await view.get<Doc<ListingLocale>>('projects', d.projectId);
      const listing = entryListing(formSet?.definition ?? null, d.snapshot, project?.defaultLocale ?? null);
      await updateEntry(d.entryId, () => ({
        latestRevision: { revisionId: d.revisionId, revision: d.revision, status: 'draft' },
        revisionCount: d.revision,
        ...listing,
      }));
      return;
    }

    case 'entry.revision-submitted':
      await updateRevision(view, event.data.revisionId, at, () => ({ status: 'pending_review', submittedAt: at }));
      await setLatestStatus(event.data.entryId, event.data.revisionId, 'pending_review');
      return;

    case 'entry.revision-approved':
      await updateRevision(view, event.data.revisionId, at, () => ({ status: 'scheduled', publishAt: event.data.publishAt }));
      await setLatestStatus(event.data.entryId, event.data.revisionId, 'scheduled');
      return;

    case 'entry.revision-published': {
      const d = event.data;
      await updateRevision(view, d.revisionId, at, (revision) => ({
        status: 'published',
        publishedAt: d.publishedAt,
        publishAt: d.publishAt ?? revision.publishAt,
        publishTrigger: d.trigger,
      }));
      if (d.supersedes !== undefined) {
        await updateRevision(view, d.supersedes, at, () => ({ status: 'superseded', supersededAt: d.publishedAt, supersededBy: d.revisionId }));
      }
      await updateEntry(d.entryId, (entry) => ({
        liveRevision: { revisionId: d.revisionId, revision: d.revision, publishedAt: d.publishedAt },
        latestRevision: entry.latestRevision?.revisionId === d.revisionId ? { ...entry.latestRevision, status: 'published' } : entry.latestRevision,
      }));
      return;
    }

    case 'entry.revision-rejected': {
      const { reason } = event.data;
      await updateRevision(view, event.data.revisionId, at, (revision) => {
        const { rejectedReason: _previous, ...rest } = revision;
        return { ...rest, status: 'rejected', publishAt: null, rejectedAt: at, ...(reason === undefined ? {} : { rejectedReason: reason }) };
      }, { replace: true });
      await setLatestStatus(event.data.entryId, event.data.revisionId, 'rejected');
      return;
    }

    case 'entry.revision-withdrawn':
      await updateRevision(view, event.data.revisionId, at, () => ({ status: 'draft', publishAt: null }));
      await setLatestStatus(event.data.entryId, event.data.revisionId, 'draft');
      return;

    case 'entry.revision-reopened':
      await updateRevision(view, event.data.revisionId, at, (revision) => {
        const { rejectedReason: _reason, rejectedAt: _at, ...rest } = revision;
        return { ...rest, status: 'draft' };
      }, { replace: true });
      await setLatestStatus(event.data.entryId, event.data.revisionId, 'draft');
      return;

    case 'entry.slug-changed': {
      const { entryId, projectId, formSetId, from, to } = event.data;
      await updateEntry(entryId, (entry) => ({
        slug: to,
        previousSlugs: [...entry.previousSlugs.filter((s) => s !== to && s !== from), from],
      }));
      view.put('slug_redirects', redirectId(formSetId, from), { formSetId, projectId, oldSlug: from, entryId } satisfies SlugRedirectDoc);
      // Taken back: the slug is the entry's own again.
      view.delete('slug_redirects', redirectId(formSetId, to));
      return;
    }

    case 'entry.import-metadata-set':
      await updateEntry(event.data.entryId, () => ({ importPath: event.data.importPath, external: event.data.external }));
      return;

    case 'entry.assigned':
      await updateEntry(event.data.entryId, () => ({ assignee: event.data.userId }));
      return;

    case 'entry.deleted': {
      const { entryId, formSetId, previousSlugs } = event.data;
      const entry = await view.get<Doc<EntryDoc>>('entries', entryId);
      for (const revision of await view.find<Doc<RevisionDoc>>('revisions', { entryId })) view.delete('revisions', revision.revisionId);
      for (const slug of new Set([...previousSlugs, ...(entry?.previousSlugs ?? [])])) {
        const redirect = await view.get<Doc<SlugRedirectDoc>>('slug_redirects', redirectId(formSetId, slug));
        if (redirect?.entryId === entryId) view.delete('slug_redirects', redirectId(formSetId, slug));
      }
      view.delete('entries', entryId);
      return;
    }
  }
}

/** What every change to an entry document records: when, by whom, and at which log position. */
type ChangeStamp = Pick<EntryDoc, 'updatedAt' | 'updatedAtMs' | 'updatedBy' | 'updatedPosition'>;

async function updateEntryDoc(view: ProjectionView, entryId: string, stamp: ChangeStamp, patch: (entry: EntryDoc) => Partial<EntryDoc>): Promise<void> {
  const entry = await view.get<Doc<EntryDoc>>('entries', entryId);
  if (!entry) return;
  view.put('entries', entryId, { ...entry, ...patch(entry), ...stamp });
}

/**
 * Patches a revision (or, with `replace`, replaces it with what `patch` returns, so fields can be
 * dropped). A revision the projection does not hold (deleted with its entry) is left alone.
 */
async function updateRevision(
  view: ProjectionView,
  revisionId: string,
  at: string,
  patch: (revision: Doc<RevisionDoc>) => Partial<RevisionDoc>,
  options: { replace?: boolean } = {},
): Promise<void> {
  const revision = await view.get<Doc<RevisionDoc>>('revisions', revisionId);
  if (!revision) return;
  const next = options.replace ? patch(revision) : { ...revision, ...patch(revision) };
  view.put('revisions', revisionId, { ...next, updatedAt: at });
}

// ---------------------------------------------------------------------------------------------------
// Masters

async function applyMaster(event: MasterEvent, recorded: RecordedEvent, view: ProjectionView): Promise<void> {
  const at = recorded.metadata.occurredAt;
  if (event.type === 'master.created') {
    const d = event.data;
    const records = orderedRecords(d.records);
    const doc: MasterDoc = {
      masterId: d.masterId,
      projectId: d.projectId,
      key: d.key,
      name: d.name,
      records,
      recordCount: records.length,
      sitePublishedAt: null,
      createdAt: at,
      updatedAt: at,
    };
    view.put('masters', doc.masterId, { ...doc });
    return;
  }
  const master = await view.get<Doc<MasterDoc>>('masters', event.data.masterId);
  if (!master) return;
  const withRecords = (records: readonly MasterRecord[]): Partial<MasterDoc> => {
    const ordered = orderedRecords(records);
    return { records: ordered, recordCount: ordered.length };
  };
  let patch: Partial<MasterDoc>;
  switch (event.type) {
    case 'master.renamed':
      patch = { name: event.data.name };
      break;
    case 'master.record-added': {
      const record = event.data.record;
      patch = withRecords([...master.records.filter((r) => r.value !== record.value), record]);
      break;
    }
    case 'master.record-updated': {
      const record = event.data.record;
      patch = withRecords(master.records.map((r) => (r.value === record.value ? record : r)));
      break;
    }
    case 'master.record-removed':
      patch = withRecords(master.records.filter((r) => r.value !== event.data.value));
      break;
    case 'master.records-replaced':
      patch = withRecords(event.data.records);
      break;
    case 'master.published':
      patch = { sitePublishedAt: event.data.publishedAt };
      break;
    case 'master.unpublished':
      patch = { sitePublishedAt: null };
      break;
  }
  view.put('masters', master.masterId, { ...master, ...patch, updatedAt: at });
}

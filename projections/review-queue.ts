import type { RecordedEvent } from '../src/event-store/event-store.ts';
import { entryEvents, type EntryEvent } from '../src/domain/content/entry/entry-events.ts';
import { entryListing, LISTING_LOCALE_EVENTS, listingLocaleOf, type ListingLocale } from '../src/domain/content/entry/entry-listing.ts';
import type { InReviewStatus } from '../src/domain/content/entry/entry-workflow.ts';
import type { FormSetDefinition } from '../src/domain/content/form-set/form-set-definition.ts';
import { formSetEvents, type FormSetEvent } from '../src/domain/content/form-set/form-set-events.ts';
import { defineProjection, type ProjectionView } from '../src/projection-engine/projection.ts';

/**
 * The review desk's queue: every revision waiting for a reviewer (pending_review) or for its publish time
 * (scheduled), across a project's form sets. Fed by the workflow events, so listing it is an index walk,
 * never a scan of entries or revisions.
 *
 * Collections:
 * - `items`, id entryId (only an entry's latest revision can be in review, so an entry has at most one
 *   item): the revision, its entry's title and slug, the form set, who submitted it and when, the
 *   assignee, the status and the publish time (scheduled only). Submitting adds the item; approving with a
 *   date makes it scheduled; publishing (by a reviewer or the scheduled job), rejecting, withdrawing and
 *   deleting the entry remove it.
 * - `entries`, id entryId: what an item shows of its entry, kept from the entry's own events: slug,
 *   assignee, and the title of its latest revision (with the form set and default locale as they were at
 *   the save).
 * - `form_sets`, id formSetId: name and what the title is read from; `projects`, id projectId: the
 *   default locale.
 */


export interface ReviewItemDoc {
  entryId: string;
  projectId: string;
  formSetId: string;
  formSetName: string | null;
  entrySlug: string;
  title: string;
  revisionId: string;
  revision: number;
  status: InReviewStatus;
  submittedBy: { type: string; id: string };
  submittedAt: string;
  assignee: string | null;
  /** Set while scheduled. */
  publishAt: string | null;
}

export interface ReviewEntryDoc {
  entryId: string;
  projectId: string;
  formSetId: string;
  slug: string;
  assignee: string | null;
  title: string;
  latestRevisionId: string | null;
}

interface FormSetInfo {
  formSetId: string;
  name: string;
  definition: Pick<FormSetDefinition, 'fields' | 'seoRoles' | 'widgetRoles'>;
}

type Doc<T> = T & Record<string, unknown>;

const FORM_SET_TYPES = new Set<string>(formSetEvents.map((d) => d.type));

export const reviewQueue = defineProjection({
  name: 'review-queue',
  version: 1,
  description: 'Revisions waiting for review or for their publish time, across form sets: the review desk.',
  collections: {
    items: {
      indexes: [
        { name: 'by_project_submitted', fields: [['projectId', 1], ['submittedAt', 1]] },
        { name: 'by_project_assignee_submitted', fields: [['projectId', 1], ['assignee', 1], ['submittedAt', 1]] },
        { name: 'by_project_form_set_submitted', fields: [['projectId', 1], ['formSetId', 1], ['submittedAt', 1]] },
        { name: 'by_project_status_submitted', fields: [['projectId', 1], ['status', 1], ['submittedAt', 1]] },
        { name: 'by_form_set', fields: [['formSetId', 1]] },
      ],
    },
    entries: {},
    form_sets: {},
    projects: {},
  },
  filter: { eventTypes: [...LISTING_LOCALE_EVENTS, ...FORM_SET_TYPES, ...entryEvents.map((d) => d.type)] },

  async apply(recorded, view) {
    if (LISTING_LOCALE_EVENTS.includes(recorded.type)) {
      const locale = listingLocaleOf(recorded);
      view.put('projects', locale.projectId, { ...locale });
      return;
    }
    if (FORM_SET_TYPES.has(recorded.type)) return applyFormSet({ type: recorded.type, data: recorded.data } as FormSetEvent, view);
    return applyEntry({ type: recorded.type, data: recorded.data } as EntryEvent, recorded, view);
  },
});

async function applyFormSet(event: FormSetEvent, view: ProjectionView): Promise<void> {
  if (event.type === 'form-set.deleted') {
    view.delete('form_sets', event.data.formSetId);
    return;
  }
  const { definition } = event.data;
  view.put('form_sets', definition.id, { formSetId: definition.id, name: definition.name, definition: { fields: definition.fields, seoRoles: definition.seoRoles, widgetRoles: definition.widgetRoles } } satisfies FormSetInfo);
  if (event.type === 'form-set.updated') {
    // Its name shows on every item of the form set.
    for (const item of await view.find<Doc<ReviewItemDoc>>('items', { formSetId: definition.id })) view.put('items', item.entryId, { ...item, formSetName: definition.name });
  }
}

async function applyEntry(event: EntryEvent, recorded: RecordedEvent, view: ProjectionView): Promise<void> {
  const at = recorded.metadata.occurredAt;
  const { entryId } = event.data;
  const patchItem = async (patch: Partial<ReviewItemDoc>, revisionId?: string) => {
    const item = await view.get<Doc<ReviewItemDoc>>('items', entryId);
    if (item && (revisionId === undefined || item.revisionId === revisionId)) view.put('items', entryId, { ...item, ...patch });
  };
  const patchEntry = async (patch: Partial<ReviewEntryDoc>) => {
    const entry = await view.get<Doc<ReviewEntryDoc>>('entries', entryId);
    if (entry) view.put('entries', entryId, { ...entry, ...patch });
  };
  switch (event.type) {
    case 'entry.created': {
      const d = event.data;
      view.put('entries', entryId, { entryId, projectId: d.projectId, formSetId: d.formSetId, slug: d.slug, assignee: null, title: '', latestRevisionId: null } satisfies ReviewEntryDoc);
      return;
    }
    case 'entry.revision-saved': {
      const d = event.data;
      const formSet = await view.get<Doc<FormSetInfo>>('form_sets', d.formSetId);
      const project = await view.get<Doc<ListingLocale>>('projects', d.projectId);
      await patchEntry({ title: entryListing(formSet?.definition ?? null, d.snapshot, project?.defaultLocale ?? null).title, latestRevisionId: d.revisionId });
      return;
    }
    case 'entry.revision-submitted': {
      const d = event.data;
      const entry = await view.get<Doc<ReviewEntryDoc>>('entries', entryId);
      if (!entry) return;
      const formSet = await view.get<Doc<FormSetInfo>>('form_sets', d.formSetId);
      const item: ReviewItemDoc = {
        entryId,
        projectId: d.projectId,
        formSetId: d.formSetId,
        formSetName: formSet?.name ?? null,
        entrySlug: entry.slug,
        title: entry.title,
        revisionId: d.revisionId,
        revision: d.revision,
        status: 'pending_review',
        submittedBy: { type: recorded.metadata.actor.type, id: recorded.metadata.actor.id },
        submittedAt: at,
        assignee: entry.assignee,
        publishAt: null,
      };
      view.put('items', entryId, { ...item });
      return;
    }
    case 'entry.revision-approved':
      await patchItem({ status: 'scheduled', publishAt: event.data.publishAt }, event.data.revisionId);
      return;
    case 'entry.revision-published':
    case 'entry.revision-rejected':
    case 'entry.revision-withdrawn': {
      const item = await view.get<Doc<ReviewItemDoc>>('items', entryId);
      if (item?.revisionId === event.data.revisionId) view.delete('items', entryId);
      return;
    }
    case 'entry.assigned':
      await patchEntry({ assignee: event.data.userId });
      await patchItem({ assignee: event.data.userId });
      return;
    case 'entry.slug-changed':
      await patchEntry({ slug: event.data.to });
      await patchItem({ entrySlug: event.data.to });
      return;
    case 'entry.deleted':
      view.delete('items', entryId);
      view.delete('entries', entryId);
      return;
    default:
      return;
  }
}

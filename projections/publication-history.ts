import { encodePosition } from '../src/event-store/position.ts';
import type { RecordedEvent } from '../src/event-store/event-store.ts';
import type { EntryEventOf } from '../src/domain/content/entry/entry-events.ts';
import { defineProjection, type ProjectionView } from '../src/projection-engine/projection.ts';

/**
 * When each entry was live on the public API, and under which slug and revision: the publication intervals
 * that answer "what did the public API serve at instant T" (the admin as-of routes). Times are the events'
 * own occurredAt, never the clock, so a rebuild arrives at the same intervals.
 *
 * An interval [from, to) opens when a revision is published, and when a live entry's slug changes (the same
 * revision under its new slug); it closes when another revision is published, when the slug changes, when
 * the entry is deleted, and when its form set is deleted (the public API stops serving its entries then).
 * `to` is null while open (`toMs` is then Number.MAX_SAFE_INTEGER, so "live at T" is one range query:
 * fromMs <= T < toMs).
 *
 * Collections:
 * - `intervals`, id `${entryId}:${position of the event that opened it}`: project, form set, entry, slug,
 *   revision (id and number), who published it and how (trigger), from/to;
 * - `entries`, id entryId: the entry's current slug and its open interval, for the next event.
 */
export interface PublicationIntervalDoc {
  intervalId: string;
  projectId: string;
  formSetId: string;
  entryId: string;
  slug: string;
  revisionId: string;
  revision: number;
  /** When the revision was published (the interval may start later: a slug change). */
  publishedAt: string;
  publishedBy: { type: string; id: string };
  trigger: string;
  from: string;
  fromMs: number;
  to: string | null;
  toMs: number;
  /** What opened and what closed it. */
  openedBy: 'publish' | 'slug-change';
  closedBy: 'publish' | 'slug-change' | 'entry-deleted' | 'form-set-deleted' | null;
}

interface EntryStateDoc {
  entryId: string;
  projectId: string;
  formSetId: string;
  slug: string;
  /** The open interval, or null while the entry is not live. */
  open: string | null;
}

type Doc<T> = T & Record<string, unknown>;

export const OPEN_INTERVAL_MS = Number.MAX_SAFE_INTEGER;

export const publicationHistory = defineProjection({
  name: 'publication-history',
  version: 1,
  description: 'When each entry was live on the public API, under which slug and revision: the as-of reads.',
  collections: {
    intervals: {
      indexes: [
        { name: 'by_form_set_from', fields: [['formSetId', 1], ['fromMs', -1]] },
        { name: 'by_form_set_slug_from', fields: [['formSetId', 1], ['slug', 1], ['fromMs', -1]] },
        { name: 'by_entry_from', fields: [['entryId', 1], ['fromMs', -1]] },
      ],
    },
    // Read while folding: a deleted form set closes its entries' publications.
    entries: { indexes: [{ name: 'by_form_set', fields: [['formSetId', 1]], whileFolding: true }] },
  },
  filter: { eventTypes: ['entry.created', 'entry.slug-changed', 'entry.revision-published', 'entry.deleted', 'form-set.deleted'] },
  async apply(event, view) {
    const at = event.metadata.occurredAt;
    switch (event.type) {
      case 'entry.created': {
        const d = (event as unknown as EntryEventOf<'entry.created'>).data;
        view.put('entries', d.entryId, { entryId: d.entryId, projectId: d.projectId, formSetId: d.formSetId, slug: d.slug, open: null } satisfies EntryStateDoc);
        return;
      }
      case 'entry.revision-published': {
        const d = (event as unknown as EntryEventOf<'entry.revision-published'>).data;
        const entry = await view.get<Doc<EntryStateDoc>>('entries', d.entryId);
        if (!entry) return;
        await close(view, entry.open, at, 'publish');
        const interval: PublicationIntervalDoc = {
          intervalId: intervalId(d.entryId, event),
          projectId: d.projectId,
          formSetId: d.formSetId,
          entryId: d.entryId,
          slug: entry.slug,
          revisionId: d.revisionId,
          revision: d.revision,
          publishedAt: d.publishedAt,
          publishedBy: { type: event.metadata.actor.type, id: event.metadata.actor.id },
          trigger: d.trigger,
          ...opening(at),
          openedBy: 'publish',
        };
        view.put('intervals', interval.intervalId, { ...interval });
        view.put('entries', d.entryId, { ...entry, open: interval.intervalId });
        return;
      }
      case 'entry.slug-changed': {
        const d = (event as unknown as EntryEventOf<'entry.slug-changed'>).data;
        const entry = await view.get<Doc<EntryStateDoc>>('entries', d.entryId);
        if (!entry) return;
        let open: string | null = null;
        const current = entry.open ? await view.get<Doc<PublicationIntervalDoc>>('intervals', entry.open) : null;
        if (current) {
          await close(view, current.intervalId, at, 'slug-change');
          const next: PublicationIntervalDoc = { ...current, intervalId: intervalId(d.entryId, event), slug: d.to, ...opening(at), openedBy: 'slug-change' };
          view.put('intervals', next.intervalId, { ...next });
          open = next.intervalId;
        }
        view.put('entries', d.entryId, { ...entry, slug: d.to, open });
        return;
      }
      case 'entry.deleted': {
        const d = (event as unknown as EntryEventOf<'entry.deleted'>).data;
        const entry = await view.get<Doc<EntryStateDoc>>('entries', d.entryId);
        if (!entry) return;
        await close(view, entry.open, at, 'entry-deleted');
        view.delete('entries', d.entryId);
        return;
      }
      case 'form-set.deleted': {
        const { formSetId } = event.data as { formSetId: string };
        for (const entry of await view.find<Doc<EntryStateDoc>>('entries', { formSetId })) {
          await close(view, entry.open, at, 'form-set-deleted');
          view.delete('entries', entry.entryId);
        }
        return;
      }
    }
  },
});

function intervalId(entryId: string, event: RecordedEvent): string {
  return `${entryId}:${encodePosition(event.position)}`;
}

function opening(at: string): Pick<PublicationIntervalDoc, 'from' | 'fromMs' | 'to' | 'toMs' | 'closedBy'> {
  return { from: at, fromMs: Date.parse(at), to: null, toMs: OPEN_INTERVAL_MS, closedBy: null };
}

async function close(view: ProjectionView, id: string | null, at: string, by: NonNullable<PublicationIntervalDoc['closedBy']>): Promise<void> {
  if (!id) return;
  const interval = await view.get<Doc<PublicationIntervalDoc>>('intervals', id);
  if (!interval || interval.to !== null) return;
  view.put('intervals', id, { ...interval, to: at, toMs: Date.parse(at), closedBy: by });
}

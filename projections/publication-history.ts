import { encodePosition } from '../src/event-store/position.ts';
import type { RecordedEvent } from '../src/event-store/event-store.ts';
import type { EntryEventOf } from '../src/domain/content/entry/entry-events.ts';
import { entryEventInstantMs } from '../src/domain/content/entry/entry-instant.ts';
import { defineProjection, type ProjectionView } from '../src/projection-engine/projection.ts';
import type { Doc } from '../src/read-models/read-model-store.ts';

/**
 * When each entry was live on the public API, and under which slug and revision: the publication intervals
 * that answer "what did the public API serve at instant T" (the admin as-of routes). Times are the events'
 * own, never the clock, so a rebuild arrives at the same intervals: an event takes effect at its instant as
 * src/domain/content/entry/entry-instant.ts counts it (a publication at its publishedAt), never before the
 * entry's previous change.
 *
 * An interval [from, to) opens when a revision is published, and when a live entry's slug changes (the same
 * revision under its new slug); it closes when another revision is published, when the slug changes, when
 * the entry is deleted, and when its form set is deleted (the public API stops serving its entries then).
 * `to` is null while open (`toMs` is then Number.MAX_SAFE_INTEGER, so "live at T" is one range query:
 * fromMs <= T < toMs).
 *
 * Collections:
 * - `intervals`, id `${entryId}:${position of the event that opened it}`: project, form set, entry, slug,
 *   revision (id and number), who published it and how (trigger), when the entry first went live (the public
 *   list's order), from/to;
 * - `redirects`, id `${formSetId}:${position}`: when a former slug answered 301 on the public API (the public
 *   content's slug_redirects over time): opened when an entry leaves the slug, closed when another entry
 *   takes it (created with it, or renamed to it), when the entry is deleted, or with its form set. Whether it
 *   answered 301 at T also needs the entry live then (the public API redirects only to a live entry);
 * - `entries`, id entryId: the entry's current slug, its open interval, when it first went live, the
 *   instant of its last change and its latest save (whose snapshot a publication serves), for the next event.
 *
 * Version 2 added `redirects`, the first publication (list order) and decision instants.
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
  /** When the entry first went live (the public API's `publishedAt`, which its list is ordered by). */
  firstPublishedAt: string;
  firstPublishedMs: number;
  /** The stream revision of the revision's save (its snapshot): one read gives the values served. */
  savedAt: { streamRevision: number } | null;
  /** What opened and what closed it. */
  openedBy: 'publish' | 'slug-change';
  closedBy: 'publish' | 'slug-change' | 'entry-deleted' | 'form-set-deleted' | null;
}

/** A former slug of an entry, while the public API answered it with a 301 (when the entry was live). */
export interface SlugRedirectIntervalDoc {
  redirectId: string;
  projectId: string;
  formSetId: string;
  /** The former slug. */
  slug: string;
  entryId: string;
  from: string;
  fromMs: number;
  to: string | null;
  toMs: number;
  closedBy: 'slug-taken' | 'entry-deleted' | 'form-set-deleted' | null;
}

interface EntryStateDoc {
  entryId: string;
  projectId: string;
  formSetId: string;
  slug: string;
  /** The open interval, or null while the entry is not live. */
  open: string | null;
  /** When it first went live; null before. */
  firstPublishedAt: string | null;
  /** The instant of its last change here: a later event never takes effect before it. */
  lastMs: number;
  /** Its latest save: the revision and the save's stream revision (only the latest revision can be published). */
  lastSaved?: { revisionId: string; streamRevision: number };
}


export const OPEN_INTERVAL_MS = Number.MAX_SAFE_INTEGER;

export const publicationHistory = defineProjection({
  name: 'publication-history',
  // Version 2: redirects, the first publication of each interval's entry (the public list's order), where the
  // revision's save is (one read for the values served), and events taking effect at their decision's instant
  // (entry-instant.ts).
  version: 2,
  description: 'When each entry was live on the public API, under which slug and revision, and when a former slug redirected: the as-of reads.',
  collections: {
    intervals: {
      indexes: [
        // The public list's order: first published, newest first.
        { name: 'by_form_set_first_published', fields: [['formSetId', 1], ['firstPublishedMs', -1], ['entryId', -1]] },
        { name: 'by_form_set_slug_from', fields: [['formSetId', 1], ['slug', 1], ['fromMs', -1]] },
        { name: 'by_entry_from', fields: [['entryId', 1], ['fromMs', -1]] },
      ],
    },
    redirects: {
      indexes: [
        { name: 'by_form_set_slug_from', fields: [['formSetId', 1], ['slug', 1], ['fromMs', -1]] },
        // Read while folding: a slug taken, an entry or a form set deleted closes the redirects open then.
        { name: 'by_open_slug', fields: [['formSetId', 1], ['slug', 1], ['toMs', 1]], whileFolding: true },
        { name: 'by_open_entry', fields: [['entryId', 1], ['toMs', 1]], whileFolding: true },
      ],
    },
    // Read while folding: a deleted form set closes its entries' publications.
    entries: { indexes: [{ name: 'by_form_set', fields: [['formSetId', 1]], whileFolding: true }] },
  },
  filter: { eventTypes: ['entry.created', 'entry.revision-saved', 'entry.slug-changed', 'entry.revision-published', 'entry.deleted', 'form-set.deleted'] },
  async apply(event, view) {
    switch (event.type) {
      case 'entry.created': {
        const d = (event as unknown as EntryEventOf<'entry.created'>).data;
        const at = Date.parse(event.metadata.occurredAt);
        view.put('entries', d.entryId, { entryId: d.entryId, projectId: d.projectId, formSetId: d.formSetId, slug: d.slug, open: null, firstPublishedAt: null, lastMs: at } satisfies EntryStateDoc);
        // The public API serves its slug from its own entry now, live or not: the former holder's redirect ends.
        await closeRedirects(view, { formSetId: d.formSetId, slug: d.slug }, at, 'slug-taken');
        return;
      }
      case 'entry.revision-saved': {
        const d = (event as unknown as EntryEventOf<'entry.revision-saved'>).data;
        const entry = await view.get<Doc<EntryStateDoc>>('entries', d.entryId);
        if (entry) view.put('entries', d.entryId, { ...entry, lastSaved: { revisionId: d.revisionId, streamRevision: Number(event.revision) } } satisfies EntryStateDoc);
        return;
      }
      case 'entry.revision-published': {
        const d = (event as unknown as EntryEventOf<'entry.revision-published'>).data;
        const entry = await view.get<Doc<EntryStateDoc>>('entries', d.entryId);
        if (!entry) return;
        const at = instantOf(event, entry);
        await close(view, entry.open, at, 'publish');
        const firstPublishedAt = entry.firstPublishedAt ?? d.publishedAt;
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
          firstPublishedAt,
          firstPublishedMs: Date.parse(firstPublishedAt),
          savedAt: entry.lastSaved?.revisionId === d.revisionId ? { streamRevision: entry.lastSaved.streamRevision } : null,
          ...opening(at),
          openedBy: 'publish',
        };
        view.put('intervals', interval.intervalId, { ...interval });
        view.put('entries', d.entryId, { ...entry, open: interval.intervalId, firstPublishedAt, lastMs: at } satisfies EntryStateDoc);
        return;
      }
      case 'entry.slug-changed': {
        const d = (event as unknown as EntryEventOf<'entry.slug-changed'>).data;
        const entry = await view.get<Doc<EntryStateDoc>>('entries', d.entryId);
        if (!entry) return;
        const at = instantOf(event, entry);
        let open: string | null = null;
        const current = entry.open ? await view.get<Doc<PublicationIntervalDoc>>('intervals', entry.open) : null;
        if (current) {
          await close(view, current.intervalId, at, 'slug-change');
          const next: PublicationIntervalDoc = { ...current, intervalId: intervalId(d.entryId, event), slug: d.to, ...opening(at), openedBy: 'slug-change' };
          view.put('intervals', next.intervalId, { ...next });
          open = next.intervalId;
        }
        // The new slug is this entry's now; the old one redirects to it (public content's slug_redirects).
        await closeRedirects(view, { formSetId: d.formSetId, slug: d.to }, at, 'slug-taken');
        await closeRedirects(view, { formSetId: d.formSetId, slug: d.from }, at, 'slug-taken');
        const redirect: SlugRedirectIntervalDoc = { redirectId: `${d.formSetId}:${encodePosition(event.position)}`, projectId: d.projectId, formSetId: d.formSetId, slug: d.from, entryId: d.entryId, ...opening(at) };
        view.put('redirects', redirect.redirectId, { ...redirect });
        view.put('entries', d.entryId, { ...entry, slug: d.to, open, lastMs: at } satisfies EntryStateDoc);
        return;
      }
      case 'entry.deleted': {
        const d = (event as unknown as EntryEventOf<'entry.deleted'>).data;
        const entry = await view.get<Doc<EntryStateDoc>>('entries', d.entryId);
        if (!entry) return;
        const at = instantOf(event, entry);
        await close(view, entry.open, at, 'entry-deleted');
        await closeRedirects(view, { entryId: d.entryId }, at, 'entry-deleted');
        view.delete('entries', d.entryId);
        return;
      }
      case 'form-set.deleted': {
        const { formSetId } = event.data as { formSetId: string };
        const at = Date.parse(event.metadata.occurredAt);
        for (const entry of await view.find<Doc<EntryStateDoc>>('entries', { formSetId })) {
          await close(view, entry.open, Math.max(at, entry.lastMs), 'form-set-deleted');
          view.delete('entries', entry.entryId);
        }
        await closeRedirects(view, { formSetId }, at, 'form-set-deleted');
        return;
      }
    }
  },
});

/** When the event takes effect: its decision's instant (entry-instant.ts), never before the entry's last change. */
function instantOf(event: RecordedEvent, entry: EntryStateDoc): number {
  return Math.max(entryEventInstantMs(event.type, event.data, event.metadata.occurredAt), entry.lastMs ?? 0);
}

function intervalId(entryId: string, event: RecordedEvent): string {
  return `${entryId}:${encodePosition(event.position)}`;
}

function opening(ms: number): { from: string; fromMs: number; to: null; toMs: number; closedBy: null } {
  return { from: new Date(ms).toISOString(), fromMs: ms, to: null, toMs: OPEN_INTERVAL_MS, closedBy: null };
}

async function close(view: ProjectionView, id: string | null, ms: number, by: NonNullable<PublicationIntervalDoc['closedBy']>): Promise<void> {
  if (!id) return;
  const interval = await view.get<Doc<PublicationIntervalDoc>>('intervals', id);
  if (!interval || interval.to !== null) return;
  view.put('intervals', id, { ...interval, ...closing(interval.fromMs, ms), closedBy: by });
}

/** Closes the redirects open now that match (a former slug of a form set, an entry's, a form set's). */
async function closeRedirects(view: ProjectionView, where: { formSetId: string; slug: string } | { entryId: string } | { formSetId: string }, ms: number, by: NonNullable<SlugRedirectIntervalDoc['closedBy']>): Promise<void> {
  for (const redirect of await view.find<Doc<SlugRedirectIntervalDoc>>('redirects', { ...where, toMs: OPEN_INTERVAL_MS })) {
    view.put('redirects', redirect.redirectId, { ...redirect, ...closing(redirect.fromMs, ms), closedBy: by });
  }
}

/** The end of an interval at `ms`, never before its start. */
function closing(fromMs: number, ms: number): { to: string; toMs: number } {
  const toMs = Math.max(fromMs, ms);
  return { to: new Date(toMs).toISOString(), toMs };
}

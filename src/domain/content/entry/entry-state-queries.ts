/**
 * Questions asked of an entry's state outside its decisions: its latest, live and scheduled revisions, what a
 * publish answers, and the command that duplicates it.
 */
import { notFound } from '../../domain-error.ts';
import type { CreateEntry } from './entry-commands.ts';
import type { EntryEvent, EntryEventOf } from './entry-events.ts';
import type { EntryState, LiveRevision, RevisionState } from './entry-state.ts';

export function latestRevision(state: EntryState): RevisionState | undefined {
  return state.exists ? (state.latest ?? undefined) : undefined;
}

/** The published revision (what the public API serves), if any. */
export function liveRevision(state: EntryState): LiveRevision | undefined {
  return state.exists ? (state.live ?? undefined) : undefined;
}

/** Whether the revision id is the entry's latest or live revision (the ones the aggregate knows). */
export function knowsRevision(state: EntryState, revisionId: string): boolean {
  return state.exists && (state.latest?.revisionId === revisionId || state.live?.revisionId === revisionId);
}

/** The revision waiting for the scheduled job, if any (at most one: only the latest revision can be scheduled). */
export function scheduledRevision(state: EntryState): RevisionState | undefined {
  return state.exists && !state.deleted && state.latest?.status === 'scheduled' ? state.latest : undefined;
}

export type PublishOutcome = {
  /** published: this command made it live; already_published: it was live before, and no event was appended. */
  outcome: 'published' | 'already_published';
  revisionId: string;
  revision: number;
  publishedAt: string;
  /** The revision this publish superseded (only with outcome published). */
  supersedes?: string;
};

/**
 * What POST /revisions/{id}/publish answers. Give the state after the command and the events it appended:
 * a publish of the live revision decides no events (no duplicate entry.revision-published), and this
 * tells the route to answer already_published. Null when the revision is not live (the command failed).
 */
export function publishOutcome(state: EntryState, revisionId: string, appended: readonly EntryEvent[] = []): PublishOutcome | null {
  const live = liveRevision(state);
  if (!live || live.revisionId !== revisionId || live.publishedAt === null) return null;
  const event = appended.find((e): e is EntryEventOf<'entry.revision-published'> => e.type === 'entry.revision-published' && e.data.revisionId === revisionId);
  return {
    outcome: event ? 'published' : 'already_published',
    revisionId: live.revisionId,
    revision: live.revision,
    publishedAt: live.publishedAt,
    ...(event?.data.supersedes === undefined ? {} : { supersedes: event.data.supersedes }),
  };
}

/**
 * The create command that duplicates `source` (spec section 2): a new draft with the field values of the
 * source's latest revision and slug {slug}-copy unless another is given. Import metadata and the assignee
 * are not copied (an import path or external id names one entry). Throws NOT_FOUND for a missing or
 * deleted source.
 */
export function duplicateEntry(source: EntryState, input: { entryId: string; revisionId: string; slug?: string }): CreateEntry {
  if (!source.exists || source.deleted) throw notFound('The entry to duplicate does not exist.');
  const latest = source.latest;
  return {
    type: 'create',
    entryId: input.entryId,
    projectId: source.projectId,
    formSetId: source.formSetId,
    slug: input.slug ?? `${source.slug}-copy`,
    initialRevision: { revisionId: input.revisionId, snapshot: structuredClone(latest?.snapshot ?? {}) },
    duplicatedFrom: latest ? { entryId: source.entryId, revisionId: latest.revisionId, revision: latest.revision } : { entryId: source.entryId },
  };
}

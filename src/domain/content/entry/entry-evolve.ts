/**
 * The entry aggregate's evolve: how each event changes the state (see entry-decider.ts).
 */
import type { EventActor } from '../../decider.ts';
import type { EntryEvent } from './entry-events.ts';
import type { EntryState, ExistingEntry, RevisionState } from './entry-state.ts';

export function initialState(): EntryState {
  return { exists: false };
}

export function evolve(state: EntryState, event: EntryEvent): EntryState {
  if (event.type === 'entry.created') {
    const d = event.data;
    return {
      exists: true,
      deleted: false,
      entryId: d.entryId,
      projectId: d.projectId,
      formSetId: d.formSetId,
      slug: d.slug,
      previousSlugs: [],
      importPath: d.importPath ?? null,
      external: d.external ?? null,
      duplicatedFrom: d.duplicatedFrom ?? null,
      assignee: null,
      revisionCount: 0,
      latest: null,
      live: null,
    };
  }
  if (!state.exists) return state;
  switch (event.type) {
    case 'entry.revision-saved': {
      const d = event.data;
      const revision: RevisionState = {
        revisionId: d.revisionId,
        revision: d.revision,
        status: 'draft',
        snapshot: d.snapshot,
        savedAt: d.savedAt,
        publishAt: null,
        publishedAt: null,
        restoredFrom: d.restoredFrom ?? null,
        rejectionReason: null,
        savedBy: actorOf(event.actor),
        submittedBy: null,
        approvedBy: null,
      };
      return { ...state, revisionCount: d.revision, latest: revision };
    }
    case 'entry.revision-submitted':
      return updateRevision(state, event.data.revisionId, { status: 'pending_review', submittedBy: actorOf(event.actor) });
    case 'entry.revision-approved':
      return updateRevision(state, event.data.revisionId, { status: 'scheduled', publishAt: event.data.publishAt, approvedBy: actorOf(event.actor) });
    case 'entry.revision-published': {
      const d = event.data;
      const next = updateRevision(state, d.revisionId, { status: 'published', publishedAt: d.publishedAt });
      return { ...next, live: { revisionId: d.revisionId, revision: d.revision, publishedAt: d.publishedAt } };
    }
    case 'entry.revision-rejected':
      return updateRevision(state, event.data.revisionId, { status: 'rejected', publishAt: null, rejectionReason: event.data.reason ?? null, approvedBy: null });
    case 'entry.revision-withdrawn':
      return updateRevision(state, event.data.revisionId, { status: 'draft', publishAt: null, submittedBy: null, approvedBy: null });
    case 'entry.revision-reopened':
      return updateRevision(state, event.data.revisionId, { status: 'draft', rejectionReason: null, submittedBy: null, approvedBy: null });
    case 'entry.slug-changed':
      return { ...state, slug: event.data.to, previousSlugs: [...state.previousSlugs.filter((s) => s !== event.data.to), event.data.from] };
    case 'entry.import-metadata-set':
      return { ...state, importPath: event.data.importPath, external: event.data.external };
    case 'entry.assigned':
      return { ...state, assignee: event.data.userId };
    case 'entry.deleted':
      return { ...state, deleted: true };
    default:
      return state;
  }
}

function actorOf(actor: EventActor | undefined): EventActor | null {
  return actor ? { type: actor.type, id: actor.id } : null;
}

/** Workflow events only ever name the latest revision (the decider refuses the others). */
function updateRevision(state: ExistingEntry, revisionId: string, patch: Partial<RevisionState>): ExistingEntry {
  return state.latest?.revisionId === revisionId ? { ...state, latest: { ...state.latest, ...patch } } : state;
}

/**
 * The checks and helpers the entry aggregate's decisions share: who may act, which entry a command names, what
 * a refusal names, and how an event is made.
 */
import { forbidden, invalid, notFound, type RefusalSubject } from '../../domain-error.ts';
import { requirePersonFor, type PolicyAction } from '../../approval-policy.ts';
import type { EntryEvent, EntryEventOf, Snapshot } from './entry-events.ts';
import type { EntryContext } from './entry-commands.ts';
import type { EntryState, ExistingEntry, RevisionRef } from './entry-state.ts';
import { forbiddenReason, mayPerform, type EntryAction, type EntryPrincipal } from './entry-workflow.ts';

export type Scope = { entryId: string; projectId: string; formSetId: string };
export const scopeOf = (entry: ExistingEntry): Scope => ({ entryId: entry.entryId, projectId: entry.projectId, formSetId: entry.formSetId });
export const refOf = (r: RevisionRef): RevisionRef => ({ revisionId: r.revisionId, revision: r.revision });

/**
 * FORBIDDEN when the principal may not act on an entry of the form set `formSetId`; `subject`, when given, is
 * what the refusal names (see RefusalSubject).
 */
export function authorize(principal: EntryPrincipal, action: EntryAction, formSetId: string, subject?: RefusalSubject): void {
  if (mayPerform(principal, action, formSetId)) return;
  const refusal = forbidden(`${capitalise(forbiddenReason(principal, action))}.`);
  throw subject ? refusal.about(subject) : refusal;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** An agent key is bound to one project: another project's entries do not exist for it (404, as the route does). */
export function visibleTo(principal: EntryPrincipal, projectId: string): boolean {
  return principal.kind !== 'agent' || principal.projectId === projectId;
}

export function requireEntry(state: EntryState, entryId: string, principal: EntryPrincipal): ExistingEntry {
  if (!state.exists || state.deleted || state.entryId !== entryId || !visibleTo(principal, state.projectId)) {
    throw notFound(`Entry ${entryId} does not exist${state.exists && state.deleted ? ' (it was deleted)' : ''}.`);
  }
  return state;
}

export function requireSnapshot(snapshot: unknown): asserts snapshot is Snapshot {
  if (snapshot === null || typeof snapshot !== 'object' || Array.isArray(snapshot)) throw invalid('fields must be an object of field values keyed by field key');
}

export const RELOAD = 'Reload the entry and retry with its latest revision id and number.';

export function event<T extends EntryEvent['type']>(type: T, data: EntryEventOf<T>['data']): EntryEventOf<T> {
  return { type, data } as EntryEventOf<T>;
}

/** What a refusal about this entry (and revision) names. */
export function subjectOf(entry: ExistingEntry, revision?: RevisionRef): { entryId: string; formSetId: string; revisionId?: string; revision?: number } {
  return { entryId: entry.entryId, formSetId: entry.formSetId, ...(revision ? { revisionId: revision.revisionId, revision: revision.revision } : {}) };
}

/** humanApproval for a change to a live entry (one with a published revision, which the public API serves). */
export function requirePersonForLive(entry: ExistingEntry, context: EntryContext, action: PolicyAction, what: string): void {
  if (entry.live !== null) requirePersonFor(context.principal, context.approvalPolicy, action, subjectOf(entry), what);
}

/**
 * The entry aggregate: an entry, its revisions (each a full snapshot) and the approval workflow of spec
 * section 3. Pure: ids arrive in commands, time in the context.
 *
 * The state is bounded, whatever the length of the history: it holds the entry's identity, its latest
 * revision in full (every workflow trigger acts on it: only the latest revision moves) and a reference to
 * the live one. An older revision a command names is described by the command itself (`recorded`, from
 * the admin read model): the decision needs it only to tell "stale" (REVISION_CONFLICT) from "not this
 * entry's" (NOT_FOUND), and a restore takes the old snapshot from it. So folding, snapshotting and
 * caching an entry cost the same at 10 and at 10,000 revisions.
 *
 * Error codes:
 * - NOT_FOUND: the entry does not exist, was deleted (every command, for every caller), belongs to
 *   another project than the agent key's, or the revision id is not one of its revisions;
 * - FORBIDDEN: the caller may not pull the trigger (see ENTRY_PERMISSIONS), checked before any state;
 * - PLAN_REQUIRED: assigning below the Business plan;
 * - VALIDATION_ERROR: slug rules, import-metadata limits, publishAt, reason, revision number;
 * - REVISION_CONFLICT: only for a stale view: expectedRevision is not the latest number, the revision
 *   number sent does not match the revision id, or the revision named is not the entry's latest
 *   (superseded revisions, earlier drafts);
 * - CONFLICT: the latest revision's status does not accept the trigger (message names both, hint lists
 *   what is allowed), saving while the latest revision is pending_review or scheduled, an entry or
 *   revision id already in use;
 * - HUMAN_APPROVAL_REQUIRED, FOUR_EYES_REQUIRED (ApprovalRefused): the project's approval policy refuses the
 *   approval or publication, or (humanApproval) an agent key's change to what the public site serves: renaming,
 *   deleting or changing the import metadata of a live entry, withdrawing a scheduled revision
 *   (EntryContext.approvalPolicy; both rules off by default). Four eyes compares people: an agent key acts for
 *   the person who issued it (EntryContext.keyIssuers, ../../access/people.ts).
 */
import type { Decider, EventActor } from '../../decider.ts';
import { conflict, DomainError, forbidden, invalid, notFound, revisionConflict, type RefusalSubject } from '../../domain-error.ts';
import type { ApprovalPolicy } from '../../access/project-decider.ts';
import { NO_KEY_ISSUERS, principalAsActor, type KeyIssuers } from '../../access/people.ts';
import { ApprovalRefused, requirePersonFor, type PolicyAction } from '../../approval-policy.ts';
import { requirePlan, type Plan } from '../../plans.ts';
import type { EntryEvent, EntryEventOf, ExternalIdentity, PublishTrigger, Snapshot } from './entry-events.ts';
import { approverPhrase, fourEyesSentence, objectionsTo, policyRecord, refusingRules, type Objections } from './approval-checks.ts';
import {
  allowedTriggers,
  forbiddenReason,
  isTransitionAllowed,
  mayPerform,
  type EntryAction,
  type EntryPrincipal,
  type RevisionStatus,
  type WorkflowTrigger,
} from './entry-workflow.ts';
import { validateImportMetadata } from './import-metadata.ts';
import { validateSlug } from './slug.ts';
import { toUtcInstant, type TimeInput } from './utc-instant.ts';

export { validateSlug } from './slug.ts';
export { toUtcInstant, type TimeInput } from './utc-instant.ts';
export { ApprovalRefused } from '../../approval-policy.ts';

// ---------------------------------------------------------------------------------------------------
// State

export interface RevisionRef {
  revisionId: string;
  revision: number;
}

export interface RevisionState extends RevisionRef {
  status: RevisionStatus;
  snapshot: Snapshot;
  /** The revision's updatedAt. */
  savedAt: string;
  /** Set while scheduled, kept once published by the job. */
  publishAt: string | null;
  publishedAt: string | null;
  restoredFrom: RevisionRef | null;
  rejectionReason: string | null;
  /** Who saved it (its last editor: a revision is never edited after its save). Null when unknown. */
  savedBy: EventActor | null;
  /** Who submitted it for review, while it is pending_review or scheduled (and after it was published). */
  submittedBy: EventActor | null;
  /** Who approved it for a publish time, while it is scheduled (and after the job published it). */
  approvedBy: EventActor | null;
}

export interface ExistingEntry {
  exists: true;
  /** A deleted entry refuses every command with NOT_FOUND. */
  deleted: boolean;
  entryId: string;
  projectId: string;
  formSetId: string;
  slug: string;
  /** Former slugs, oldest first, each answered with a 301 to the current one. Never holds the current slug. */
  previousSlugs: string[];
  importPath: string | null;
  external: ExternalIdentity | null;
  duplicatedFrom: { entryId: string; revisionId?: string | undefined; revision?: number | undefined } | null;
  assignee: string | null;
  /** How many revisions the entry has: the latest revision's number (0 before the first save). */
  revisionCount: number;
  /** The newest revision, whatever its status, with its snapshot. */
  latest: RevisionState | null;
  /** The revision in status published (what the public API serves), if any. */
  live: LiveRevision | null;
}

export interface LiveRevision extends RevisionRef {
  publishedAt: string;
}

/**
 * A revision that is neither the entry's latest nor its live one, as the caller read it (the admin read
 * model's revision document, checked to belong to the entry). The aggregate keeps no older revisions.
 */
export interface RecordedRevision extends RevisionRef {
  status: RevisionStatus;
}

export type EntryState = { exists: false } | ExistingEntry;

/**
 * The version of EntryState's shape and of what evolve folds into it, kept with stored snapshots of it
 * (AggregateSnapshots): raise it with any change to either, and snapshots of the old shape are ignored.
 */
export const ENTRY_STATE_VERSION = 3;

// ---------------------------------------------------------------------------------------------------
// Commands and context

export interface EntryContext {
  principal: EntryPrincipal;
  plan: Plan;
  /**
   * The project's approval policy; absent: both rules off (the spec's behaviour), and approval events record
   * nothing of it. Given: every approval event records it (policyInForce).
   */
  approvalPolicy?: ApprovalPolicy;
  /**
   * The project's usual policy: each rule on once it has been on in the project (default: approvalPolicy). An
   * approval a rule of it would have refused, made while that rule was off, records it (wouldHaveBeenRefusedBy).
   */
  usualApprovalPolicy?: ApprovalPolicy;
  /** Who issued each of the project's agent keys: four eyes compares people, and a key acts for its issuer. */
  keyIssuers?: KeyIssuers;
  /** The command's time: savedAt and publishedAt, and "has publishAt passed". */
  now: Date;
}

export interface CreateEntry {
  type: 'create';
  entryId: string;
  projectId: string;
  formSetId: string;
  slug: string;
  /** The first revision's id and field values (already validated against the form set). */
  initialRevision?: { revisionId: string; snapshot: Snapshot };
  importPath?: string;
  external?: ExternalIdentity;
  duplicatedFrom?: { entryId: string; revisionId?: string; revision?: number };
}

export interface SaveRevision {
  type: 'saveRevision';
  entryId: string;
  /** Id of the new revision. */
  revisionId: string;
  /** Full field values, already validated against the form set by the caller. */
  snapshot: Snapshot;
  /** The revision number the edit was based on; REVISION_CONFLICT when a newer revision exists. */
  expectedRevision?: number;
}

export interface RestoreRevision {
  type: 'restoreRevision';
  entryId: string;
  /** Id of the new revision. */
  revisionId: string;
  /** The old revision whose snapshot becomes the new draft. */
  fromRevisionId: string;
  /** That revision as recorded, when it is not the latest (the aggregate holds only the latest snapshot). */
  source?: { revision: number; snapshot: Snapshot };
  expectedRevision?: number;
}

/** A workflow trigger aimed at one revision. `revision`, when given, must be that revision's number. */
interface RevisionCommand {
  entryId: string;
  revisionId: string;
  revision?: number;
  /** The named revision as recorded, when it may be an older one (see RecordedRevision). */
  recorded?: RecordedRevision;
}

export interface SubmitForReview extends RevisionCommand {
  type: 'submitForReview';
}
export interface Approve extends RevisionCommand {
  type: 'approve';
  /** Absent: publish now. Present: schedule for that time (must be after context.now). */
  publishAt?: TimeInput;
}
/** POST /revisions/{revisionId}/publish: id and number as save_revision returned them. */
export interface Publish extends RevisionCommand {
  type: 'publish';
  revision: number;
}
export interface Reject extends RevisionCommand {
  type: 'reject';
  reason?: string;
}
export interface Withdraw extends RevisionCommand {
  type: 'withdraw';
}
export interface Reopen extends RevisionCommand {
  type: 'reopen';
}
/** The scheduled publishing job. With revisionId, only that revision may be published. */
export interface PublishScheduled {
  type: 'publishScheduled';
  entryId: string;
  revisionId?: string;
}
export interface Rename {
  type: 'rename';
  entryId: string;
  slug: string;
}
/** Replaces what is given: undefined keeps the current value, null clears it. */
export interface SetImportMetadata {
  type: 'setImportMetadata';
  entryId: string;
  importPath?: string | null;
  external?: ExternalIdentity | null;
}
export interface Assign {
  type: 'assign';
  entryId: string;
  userId: string | null;
}
export interface DeleteEntry {
  type: 'delete';
  entryId: string;
}

export type EntryCommand =
  | CreateEntry
  | SaveRevision
  | RestoreRevision
  | SubmitForReview
  | Approve
  | Publish
  | Reject
  | Withdraw
  | Reopen
  | PublishScheduled
  | Rename
  | SetImportMetadata
  | Assign
  | DeleteEntry;

export const REJECTION_REASON_MAX = 2000;

// ---------------------------------------------------------------------------------------------------
// Evolve

function initialState(): EntryState {
  return { exists: false };
}

function evolve(state: EntryState, event: EntryEvent): EntryState {
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

// ---------------------------------------------------------------------------------------------------
// Queries on state

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

// ---------------------------------------------------------------------------------------------------
// Decide

type Scope = { entryId: string; projectId: string; formSetId: string };
const scopeOf = (entry: ExistingEntry): Scope => ({ entryId: entry.entryId, projectId: entry.projectId, formSetId: entry.formSetId });
const refOf = (r: RevisionRef): RevisionRef => ({ revisionId: r.revisionId, revision: r.revision });

/** FORBIDDEN when the principal may not; `subject`, when given, is what the refusal names (see RefusalSubject). */
function authorize(principal: EntryPrincipal, action: EntryAction, subject?: RefusalSubject): void {
  if (mayPerform(principal, action)) return;
  const refusal = forbidden(`${capitalise(forbiddenReason(principal, action))}.`);
  throw subject ? refusal.about(subject) : refusal;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** An agent key is bound to one project: another project's entries do not exist for it (404, as the route does). */
function visibleTo(principal: EntryPrincipal, projectId: string): boolean {
  return principal.kind !== 'agent' || principal.projectId === projectId;
}

function requireEntry(state: EntryState, entryId: string, principal: EntryPrincipal): ExistingEntry {
  if (!state.exists || state.deleted || state.entryId !== entryId || !visibleTo(principal, state.projectId)) {
    throw notFound(`Entry ${entryId} does not exist${state.exists && state.deleted ? ' (it was deleted)' : ''}.`);
  }
  return state;
}

function requireSnapshot(snapshot: unknown): asserts snapshot is Snapshot {
  if (snapshot === null || typeof snapshot !== 'object' || Array.isArray(snapshot)) throw invalid('fields must be an object of field values keyed by field key');
}

const RELOAD = 'Reload the entry and retry with its latest revision id and number.';

function decide(command: EntryCommand, state: EntryState, context: EntryContext): EntryEvent[] {
  if (command.type === 'create') return decideCreate(command, state, context);
  const entry = requireEntry(state, command.entryId, context.principal);
  try {
    return decideOnEntry(command, entry, context);
  } catch (error) {
    // A refusal names the entry it refused (the audit record files it in the entry's history).
    if (error instanceof DomainError) error.about(subjectOf(entry));
    throw error;
  }
}

function decideOnEntry(command: Exclude<EntryCommand, CreateEntry>, entry: ExistingEntry, context: EntryContext): EntryEvent[] {
  switch (command.type) {
    case 'saveRevision':
      authorize(context.principal, 'save_revision');
      requireSnapshot(command.snapshot);
      return saveRevision(entry, command.revisionId, structuredClone(command.snapshot), command.expectedRevision, context, undefined);
    case 'restoreRevision': {
      authorize(context.principal, 'restore_revision');
      const source =
        entry.latest?.revisionId === command.fromRevisionId
          ? entry.latest
          : command.source === undefined
            ? undefined
            : { revisionId: command.fromRevisionId, revision: command.source.revision, snapshot: command.source.snapshot };
      if (!source) throw notFound(`Revision ${command.fromRevisionId} does not belong to entry ${entry.slug}.`);
      requireSnapshot(source.snapshot);
      return saveRevision(entry, command.revisionId, structuredClone(source.snapshot), command.expectedRevision, context, refOf(source));
    }
    case 'submitForReview':
      return transition(entry, command, 'submit_for_review', context, (target) => [event('entry.revision-submitted', { ...scopeOf(entry), ...refOf(target) })]);
    case 'approve':
      return decideApprove(entry, command, context);
    case 'publish':
      return decidePublish(entry, command, context);
    case 'reject': {
      const reason = command.reason?.trim();
      const checkReason = (): void => {
        if (reason !== undefined && reason.length > REJECTION_REASON_MAX) throw invalid(`reason must be at most ${REJECTION_REASON_MAX} characters (it has ${reason.length})`);
      };
      return transition(
        entry,
        command,
        'reject',
        context,
        (target) => [
          event('entry.revision-rejected', {
            ...scopeOf(entry),
            ...refOf(target),
            from: target.status as 'pending_review' | 'scheduled',
            ...(reason ? { reason } : {}),
          }),
        ],
        checkReason,
      );
    }
    case 'withdraw':
      return transition(entry, command, 'withdraw', context, (target) => [
        event('entry.revision-withdrawn', { ...scopeOf(entry), ...refOf(target), from: target.status as 'pending_review' | 'scheduled' }),
      ]);
    case 'reopen':
      return transition(entry, command, 'reopen', context, (target) => [event('entry.revision-reopened', { ...scopeOf(entry), ...refOf(target) })]);
    case 'publishScheduled':
      return decidePublishScheduled(entry, command, context);
    case 'rename': {
      authorize(context.principal, 'rename');
      validateSlug(command.slug);
      if (command.slug === entry.slug) return [];
      requirePersonForLive(entry, context, 'rename', 'rename a live entry (its public URL changes; the old one redirects)');
      return [event('entry.slug-changed', { ...scopeOf(entry), from: entry.slug, to: command.slug })];
    }
    case 'setImportMetadata':
      return decideImportMetadata(entry, command, context);
    case 'assign': {
      requirePlan(context.plan, 'business', 'Assigning entries');
      authorize(context.principal, 'assign');
      const userId = command.userId;
      if (userId !== null && (typeof userId !== 'string' || userId.length === 0 || userId.length > 200)) throw invalid('userId must be a user id (1 to 200 characters) or null');
      if (userId === entry.assignee) return [];
      return [event('entry.assigned', { ...scopeOf(entry), userId })];
    }
    case 'delete':
      authorize(context.principal, 'delete');
      requirePersonForLive(entry, context, 'delete', 'delete a live entry (the public API answers 404 for it)');
      return [event('entry.deleted', { ...scopeOf(entry), slug: entry.slug, previousSlugs: [...entry.previousSlugs] })];
  }
}

function event<T extends EntryEvent['type']>(type: T, data: EntryEventOf<T>['data']): EntryEventOf<T> {
  return { type, data } as EntryEventOf<T>;
}

function decideCreate(command: CreateEntry, state: EntryState, context: EntryContext): EntryEvent[] {
  if (state.exists) throw conflict(`Entry ${command.entryId} already exists${state.deleted ? ' (deleted; its id is not reused)' : ''}.`);
  authorize(context.principal, 'create');
  if (!visibleTo(context.principal, command.projectId)) throw notFound(`Form set ${command.formSetId} does not exist.`);
  validateSlug(command.slug);
  validateImportMetadata({ importPath: command.importPath, external: command.external });
  const scope: Scope = { entryId: command.entryId, projectId: command.projectId, formSetId: command.formSetId };
  const events: EntryEvent[] = [
    event('entry.created', {
      ...scope,
      slug: command.slug,
      ...(command.importPath === undefined ? {} : { importPath: command.importPath }),
      ...(command.external === undefined ? {} : { external: { ...command.external } }),
      ...(command.duplicatedFrom === undefined ? {} : { duplicatedFrom: { ...command.duplicatedFrom } }),
    }),
  ];
  if (command.initialRevision) {
    requireSnapshot(command.initialRevision.snapshot);
    events.push(
      event('entry.revision-saved', {
        ...scope,
        revisionId: command.initialRevision.revisionId,
        revision: 1,
        snapshot: structuredClone(command.initialRevision.snapshot),
        savedAt: context.now.toISOString(),
      }),
    );
  }
  return events;
}

/**
 * Every save appends a new draft revision with the full snapshot. Over a published revision the live
 * content stays as it is (spec section 2). While the latest revision is pending_review or scheduled,
 * saving is refused (CONFLICT): the table has no edge that would take it back to draft, so the editor
 * withdraws it first, which also cancels a scheduled publish explicitly rather than as a side effect.
 */
function saveRevision(
  entry: ExistingEntry,
  revisionId: string,
  snapshot: Snapshot,
  expectedRevision: number | undefined,
  context: EntryContext,
  restoredFrom: RevisionRef | undefined,
): EntryEvent[] {
  const latest = entry.latest;
  const latestNumber = entry.revisionCount;
  if (expectedRevision !== undefined && expectedRevision !== latestNumber) {
    throw revisionConflict(`The edit is based on revision ${expectedRevision}, but the latest revision of entry ${entry.slug} is ${latestNumber}.`, RELOAD);
  }
  const used = latest?.revisionId === revisionId ? latest : entry.live?.revisionId === revisionId ? entry.live : undefined;
  if (used) throw conflict(`Revision id ${revisionId} is already used by revision ${used.revision}.`);
  if (latest && (latest.status === 'pending_review' || latest.status === 'scheduled')) {
    throw conflict(
      `Revision ${latest.revision} is ${latest.status}: saving a new revision is not allowed while the latest revision is ${latest.status}.`,
      'Withdraw the revision (back to draft) first, then save.',
    );
  }
  return [
    event('entry.revision-saved', {
      ...scopeOf(entry),
      revisionId,
      revision: latestNumber + 1,
      snapshot,
      savedAt: context.now.toISOString(),
      ...(restoredFrom ? { restoredFrom } : {}),
    }),
  ];
}

/**
 * Checks shared by every trigger aimed at a revision, in this order:
 * 1. NOT_FOUND: the revision does not belong to this entry;
 * 2. FORBIDDEN: the principal may not pull the trigger;
 * 3. VALIDATION_ERROR: the command's own input (publishAt, reason);
 * 4. REVISION_CONFLICT: the given number is not that revision's number;
 * 5. (publish only) the revision is live already: no events, the route answers already_published;
 * 6. REVISION_CONFLICT: the revision is not the entry's latest (the caller's view is stale; this is
 *    always the case for superseded revisions and for earlier drafts);
 * 7. CONFLICT: the latest revision's status does not accept the trigger (naming both).
 */
function transition(
  entry: ExistingEntry,
  command: RevisionCommand,
  trigger: Exclude<WorkflowTrigger, 'scheduled_publish'>,
  context: EntryContext,
  then: (target: RevisionState) => EntryEvent[],
  validateInput?: () => void,
): EntryEvent[] {
  const named = namedRevision(entry, command);
  if (!named) throw notFound(`Revision ${command.revisionId} does not belong to entry ${entry.slug}.`);
  authorize(context.principal, trigger, subjectOf(entry, named));
  if (trigger === 'approve' || trigger === 'publish') {
    requirePersonFor(context.principal, context.approvalPolicy, trigger, subjectOf(entry, named), `${trigger} revisions`);
  }
  validateInput?.();
  if (command.revision !== undefined && command.revision !== named.revision) {
    throw revisionConflict(`Revision id ${command.revisionId} is revision ${named.revision}, not ${command.revision}.`, RELOAD);
  }
  if (trigger === 'publish' && entry.live?.revisionId === named.revisionId) return [];
  const latest = entry.latest!;
  if (latest.revisionId !== named.revisionId) {
    throw revisionConflict(
      `Revision ${named.revision} (${named.status}) is not the latest revision of entry ${entry.slug}; the latest is revision ${latest.revision} (${latest.status}).`,
      RELOAD,
    );
  }
  if (!isTransitionAllowed(latest.status, trigger)) throw statusConflict(latest, trigger);
  if (trigger === 'approve' || trigger === 'publish') requireFourEyes(entry, latest, trigger, context);
  // A person approved it for its time: an agent key may not take that back (a revision in review it may).
  if (trigger === 'withdraw' && latest.status === 'scheduled') {
    requirePersonFor(context.principal, context.approvalPolicy, 'withdraw', subjectOf(entry, latest), 'withdraw a scheduled revision (it was approved for publication)');
  }
  return then(latest);
}

/** What a refusal about this entry (and revision) names. */
function subjectOf(entry: ExistingEntry, revision?: RevisionRef): { entryId: string; formSetId: string; revisionId?: string; revision?: number } {
  return { entryId: entry.entryId, formSetId: entry.formSetId, ...(revision ? { revisionId: revision.revisionId, revision: revision.revision } : {}) };
}

/** humanApproval for a change to a live entry (one with a published revision, which the public API serves). */
function requirePersonForLive(entry: ExistingEntry, context: EntryContext, action: PolicyAction, what: string): void {
  if (entry.live !== null) requirePersonFor(context.principal, context.approvalPolicy, action, subjectOf(entry), what);
}

/** What the approval policy's rules say of the principal approving or publishing the revision. */
function objectionsOfPrincipal(target: RevisionState, context: EntryContext): Objections {
  const approver = context.principal.kind === 'system' ? null : principalAsActor(context.principal);
  return objectionsTo(approver, target, context.keyIssuers ?? NO_KEY_ISSUERS);
}

/**
 * fourEyes: whoever approves or publishes is another person than the revision's last editor and its submitter.
 * People, not credentials: an agent key acts for the person who issued it.
 */
function requireFourEyes(entry: ExistingEntry, target: RevisionState, action: 'approve' | 'publish', context: EntryContext): void {
  if (!context.approvalPolicy?.fourEyes || context.principal.kind === 'system') return;
  const objection = objectionsOfPrincipal(target, context).fourEyes;
  if (objection === null) return;
  throw new ApprovalRefused(
    'fourEyes',
    action,
    subjectOf(entry, target),
    `The project's approval policy requires four eyes (fourEyes is on): ${approverPhrase(context.principal.kind, objection)}${fourEyesSentence(objection, target.revision)}, so someone else must ${action} it.`,
    'approvalPolicy.fourEyes: ask another tenant_admin to approve or publish this revision (it is in the review queue).',
  );
}

/** What an approval event records of the policy (nothing when the context carries no policy). */
function approvalRecord(objections: Objections, context: EntryContext): ReturnType<typeof policyRecord> | Record<string, never> {
  if (!context.approvalPolicy) return {};
  return policyRecord(objections, context.approvalPolicy, context.usualApprovalPolicy ?? context.approvalPolicy);
}

/** The revision a command names: the latest, the live one, or an older one as the command recorded it. */
function namedRevision(entry: ExistingEntry, command: RevisionCommand): RecordedRevision | undefined {
  if (entry.latest?.revisionId === command.revisionId) return entry.latest;
  if (entry.live?.revisionId === command.revisionId) return { ...entry.live, status: 'published' };
  const recorded = command.recorded;
  if (recorded?.revisionId === command.revisionId && recorded.revision < entry.revisionCount) return recorded;
  return undefined;
}

function statusConflict(target: RevisionState, trigger: WorkflowTrigger): Error {
  const allowed = allowedTriggers(target.status);
  let hint = allowed.length > 0 ? `From ${target.status} the allowed actions are: ${allowed.join(', ')}.` : `No action applies to a ${target.status} revision.`;
  if (trigger === 'publish' && target.status === 'draft') hint = 'Submit it for review first: save_revision, then submit_entry_for_review, then publish_revision.';
  if (trigger === 'publish' && target.status === 'scheduled') {
    hint = `The scheduled job publishes it once ${target.publishAt} has passed; to publish now, withdraw it, submit it again and publish.`;
  }
  if (target.status === 'published') hint = 'Save a new revision to change the live content.';
  return conflict(`Revision ${target.revision} is ${target.status}: ${trigger} is not allowed from ${target.status}.`, hint);
}

function decideApprove(entry: ExistingEntry, command: Approve, context: EntryContext): EntryEvent[] {
  let publishAt: string | undefined;
  const parsePublishAt = (): void => {
    if (command.publishAt === undefined) return;
    publishAt = toUtcInstant(command.publishAt, 'publishAt');
    if (Date.parse(publishAt) <= context.now.getTime()) {
      throw invalid(`publishAt ${publishAt} is not in the future (now is ${context.now.toISOString()})`, 'Approve without a publish date to publish now.');
    }
  };
  return transition(
    entry,
    command,
    'approve',
    context,
    (target) =>
      publishAt === undefined
        ? [published(entry, target, 'approve', context, approvalRecord(objectionsOfPrincipal(target, context), context))]
        : [event('entry.revision-approved', { ...scopeOf(entry), ...refOf(target), publishAt, ...approvalRecord(objectionsOfPrincipal(target, context), context) })],
    parsePublishAt,
  );
}

/**
 * POST /revisions/{id}/publish. Publishing is approving without a date under the route's name: it moves
 * pending_review to published, and nothing else. From draft it is refused (CONFLICT; the flow is save,
 * submit, publish, and an agent may do all three); from scheduled too (the table publishes a scheduled
 * revision only by the job; withdraw it to publish sooner). The live revision: no events (already_published).
 */
function decidePublish(entry: ExistingEntry, command: Publish, context: EntryContext): EntryEvent[] {
  const checkNumber = (): void => {
    if (!Number.isInteger(command.revision) || command.revision < 1) throw invalid('revision must be a positive integer (the number save_revision returned)');
  };
  return transition(entry, command, 'publish', context, (target) => [published(entry, target, 'publish', context, approvalRecord(objectionsOfPrincipal(target, context), context))], checkNumber);
}

/**
 * The scheduled job publishes what a person approved for its time, under the policy in force at that time: an
 * approval the policy now refuses (an agent key's under humanApproval; under fourEyes, one by the person who
 * wrote or submitted the revision, such as an approval made while fourEyes was off) is not published. The
 * revision is rejected instead, with the rule and why, so it leaves the schedule and its author is told.
 */
function decidePublishScheduled(entry: ExistingEntry, command: PublishScheduled, context: EntryContext): EntryEvent[] {
  authorize(context.principal, 'scheduled_publish');
  const target = scheduledRevision(entry);
  if (!target || target.publishAt === null) return [];
  if (command.revisionId !== undefined && command.revisionId !== target.revisionId) return [];
  if (Date.parse(target.publishAt) > context.now.getTime()) return [];
  const objections = objectionsTo(target.approvedBy, target, context.keyIssuers ?? NO_KEY_ISSUERS);
  const refusing = context.approvalPolicy ? refusingRules(objections, context.approvalPolicy) : [];
  if (refusing.length > 0) {
    const rule = refusing[0]!;
    const reason =
      rule === 'humanApproval'
        ? `Not published at ${target.publishAt}: the approval policy in force requires a person to approve (humanApproval is on), and revision ${target.revision} was approved by an agent key. A person must approve it: reopen it and submit it again.`
        : `Not published at ${target.publishAt}: the approval policy in force requires four eyes (fourEyes is on), and the person who approved revision ${target.revision} is ${fourEyesSentence(objections.fourEyes!, target.revision)}. Another person must approve it: reopen it and submit it again.`;
    return [event('entry.revision-rejected', { ...scopeOf(entry), ...refOf(target), from: 'scheduled', reason, rule })];
  }
  return [published(entry, target, 'schedule', context, approvalRecord(objections, context))];
}

function published(entry: ExistingEntry, target: RevisionState, trigger: PublishTrigger, context: EntryContext, record: ReturnType<typeof approvalRecord>): EntryEvent {
  const supersedes = entry.live !== null && entry.live.revisionId !== target.revisionId ? entry.live.revisionId : undefined;
  return event('entry.revision-published', {
    ...scopeOf(entry),
    ...refOf(target),
    publishedAt: context.now.toISOString(),
    trigger,
    ...(supersedes === undefined ? {} : { supersedes }),
    ...(trigger === 'schedule' && target.publishAt !== null ? { publishAt: target.publishAt } : {}),
    ...record,
  });
}

function decideImportMetadata(entry: ExistingEntry, command: SetImportMetadata, context: EntryContext): EntryEvent[] {
  authorize(context.principal, 'set_import_metadata');
  validateImportMetadata({ importPath: command.importPath, external: command.external });
  const importPath = command.importPath === undefined ? entry.importPath : command.importPath;
  const external =
    command.external === undefined
      ? entry.external
      : command.external === null
        ? null
        : {
            ...(command.external.sourceType === undefined ? {} : { sourceType: command.external.sourceType }),
            ...(command.external.entityType === undefined ? {} : { entityType: command.external.entityType }),
            externalId: command.external.externalId,
          };
  if (importPath === entry.importPath && sameExternal(external, entry.external)) return [];
  requirePersonForLive(entry, context, 'set_import_metadata', 'change the import path or external id of a live entry (the public API finds it by them)');
  return [event('entry.import-metadata-set', { ...scopeOf(entry), importPath, external })];
}

function sameExternal(a: ExternalIdentity | null, b: ExternalIdentity | null): boolean {
  if (a === null || b === null) return a === b;
  return a.sourceType === b.sourceType && a.entityType === b.entityType && a.externalId === b.externalId;
}

/** The entry aggregate: stream `entry-${entryId}` (see entryStream). */
export const entryDecider: Decider<EntryState, EntryCommand, EntryEvent, EntryContext> = { initialState, evolve, decide };

import { grantsAllow, type Capability } from '../../capabilities.ts';
import { grantsOf, type AgentScope, type Principal } from '../../principal.ts';

/**
 * The approval workflow of spec section 3, as data: revision statuses, the triggers that move them,
 * the transition table, and who may pull each trigger. The decider enforces it; routes and docs may
 * read it (for example to show which actions a revision offers).
 */
export const REVISION_STATUSES = ['draft', 'pending_review', 'scheduled', 'published', 'rejected', 'superseded'] as const;
export type RevisionStatus = (typeof REVISION_STATUSES)[number];

/** The statuses of a revision waiting: for a reviewer (pending_review) or for its publish time (scheduled). The review queue lists them. */
export const IN_REVIEW_STATUSES = ['pending_review', 'scheduled'] as const satisfies readonly RevisionStatus[];
export type InReviewStatus = (typeof IN_REVIEW_STATUSES)[number];

/**
 * Triggers, named as in the spec. `publish` is POST /revisions/{id}/publish (MCP publish_revision):
 * our name for "approve without a date" reached through the publish route; it makes no transition
 * the table lacks. `scheduled_publish` is the scheduled publishing job.
 */
export const WORKFLOW_TRIGGERS = ['submit_for_review', 'approve', 'reject', 'withdraw', 'reopen', 'publish', 'scheduled_publish'] as const;
export type WorkflowTrigger = (typeof WORKFLOW_TRIGGERS)[number];

export interface WorkflowTransition {
  from: RevisionStatus;
  trigger: WorkflowTrigger | 'newer_revision_published';
  condition?: 'no_publish_date' | 'publish_date' | 'publish_at_passed';
  to: RevisionStatus;
}

/** Spec section 3's table, row for row, plus `publish` (same move as approve with no date). */
export const WORKFLOW_TRANSITIONS: readonly WorkflowTransition[] = [
  { from: 'draft', trigger: 'submit_for_review', to: 'pending_review' },
  { from: 'pending_review', trigger: 'approve', condition: 'no_publish_date', to: 'published' },
  { from: 'pending_review', trigger: 'approve', condition: 'publish_date', to: 'scheduled' },
  { from: 'scheduled', trigger: 'scheduled_publish', condition: 'publish_at_passed', to: 'published' },
  { from: 'pending_review', trigger: 'reject', to: 'rejected' },
  { from: 'scheduled', trigger: 'reject', to: 'rejected' },
  { from: 'rejected', trigger: 'reopen', to: 'draft' },
  { from: 'pending_review', trigger: 'withdraw', to: 'draft' },
  { from: 'scheduled', trigger: 'withdraw', to: 'draft' },
  { from: 'published', trigger: 'newer_revision_published', to: 'superseded' },
  { from: 'pending_review', trigger: 'publish', to: 'published' },
];

/** The triggers a revision in this status accepts (the job and supersession excluded: nobody pulls those by hand). */
export function allowedTriggers(status: RevisionStatus): WorkflowTrigger[] {
  const triggers = WORKFLOW_TRANSITIONS.filter((t) => t.from === status && t.trigger !== 'newer_revision_published' && t.trigger !== 'scheduled_publish').map(
    (t) => t.trigger as WorkflowTrigger,
  );
  return [...new Set(triggers)];
}

export function isTransitionAllowed(status: RevisionStatus, trigger: WorkflowTrigger): boolean {
  return WORKFLOW_TRANSITIONS.some((t) => t.from === status && t.trigger === trigger);
}

/** Everything one may do to an entry, for the permission table. */
export const ENTRY_ACTIONS = [
  'create',
  'save_revision',
  'restore_revision',
  'submit_for_review',
  'withdraw',
  'reopen',
  'approve',
  'publish',
  'reject',
  'scheduled_publish',
  'rename',
  'set_import_metadata',
  'assign',
  'delete',
] as const;
export type EntryAction = (typeof ENTRY_ACTIONS)[number];

/** A caller that is the service itself: the scheduled publishing job. */
export interface SystemPrincipal {
  kind: 'system';
  name: 'scheduler';
}
export const SCHEDULER: SystemPrincipal = { kind: 'system', name: 'scheduler' };
export type EntryPrincipal = Principal | SystemPrincipal;

export interface ActionPermission {
  /** The capability a console user needs (src/domain/capabilities.ts); null: no console user may. */
  capability: Capability | null;
  agentScopes: readonly AgentScope[];
  system: boolean;
}

const ALL_SCOPES: readonly AgentScope[] = ['full', 'content', 'schema'];
const EDITORS: ActionPermission = { capability: 'content.write', agentScopes: ALL_SCOPES, system: false };
const PUBLISHERS: ActionPermission = { capability: 'content.approve', agentScopes: ALL_SCOPES, system: false };

/**
 * Who may do what (spec section 5), by capability for console users (tenant_user holds content.write and
 * content.submit, tenant_admin every capability, a custom role what it lists):
 * - content.write creates and edits, and pulls the editor's triggers withdraw and reopen; content.submit
 *   submits for review; content.approve approves, rejects and publishes; content.delete deletes entries;
 *   a role limited to form sets holds them in those form sets only;
 * - agent keys of any scope may do what tenant_user may, and approve and publish (spec: "save and publish
 *   revisions"); they may NOT reject: rejecting is a reviewer's judgement sent back to an editor, and
 *   section 5 gives agents no review rights (an agent that wants a revision back in draft withdraws it);
 * - deleting an entry: content.delete (tenant_admin), or an agent key of scope full or schema ("entries");
 *   content keys "create and update entries" but do not delete them;
 * - the scheduled publishing job runs as the system principal, which may do nothing else.
 */
export const ENTRY_PERMISSIONS: Readonly<Record<EntryAction, ActionPermission>> = {
  create: EDITORS,
  save_revision: EDITORS,
  restore_revision: EDITORS,
  submit_for_review: { capability: 'content.submit', agentScopes: ALL_SCOPES, system: false },
  withdraw: EDITORS,
  reopen: EDITORS,
  rename: EDITORS,
  set_import_metadata: EDITORS,
  assign: EDITORS,
  approve: PUBLISHERS,
  publish: PUBLISHERS,
  reject: { capability: 'content.approve', agentScopes: [], system: false },
  delete: { capability: 'content.delete', agentScopes: ['full', 'schema'], system: false },
  scheduled_publish: { capability: null, agentScopes: [], system: true },
};

/** Whether the principal may pull the trigger on an entry of the form set `formSetId`. */
export function mayPerform(principal: EntryPrincipal, action: EntryAction, formSetId: string): boolean {
  const permission = ENTRY_PERMISSIONS[action];
  switch (principal.kind) {
    case 'user':
      return permission.capability !== null && grantsAllow(grantsOf(principal), permission.capability, formSetId);
    case 'agent':
      return permission.agentScopes.includes(principal.scope);
    case 'system':
      return permission.system;
  }
}

/** Why the principal may not: a sentence for the FORBIDDEN message. */
export function forbiddenReason(principal: EntryPrincipal, action: EntryAction): string {
  const permission = ENTRY_PERMISSIONS[action];
  const [verb, doing] = ACTION_WORDS[action];
  switch (principal.kind) {
    case 'user': {
      if (permission.capability === null) return `${doing} is done by the service itself, not by a console user`;
      const grants = grantsOf(principal);
      if (grants.capabilities.includes(permission.capability)) return `${doing} in this form set is not part of your role: it is limited to other form sets`;
      const held = grants.roleId === null ? `the ${principal.role} role` : 'a custom role without it';
      return `${doing} requires the tenant_admin role or a custom role with the ${permission.capability} capability; this session has ${held}`;
    }
    case 'agent':
      return permission.agentScopes.length === 0
        ? `agent keys may not ${verb}${action === 'reject' ? ': rejecting is a reviewer action in the console' : ''}`
        : `${doing} needs an agent key with scope ${permission.agentScopes.join(' or ')}; this key has scope ${principal.scope}`;
    case 'system':
      return `the ${principal.name} may not ${verb}`;
  }
}

/** [infinitive, gerund] of each action, for messages. */
const ACTION_WORDS: Readonly<Record<EntryAction, readonly [string, string]>> = {
  create: ['create entries', 'creating an entry'],
  save_revision: ['save revisions', 'saving a revision'],
  restore_revision: ['restore revisions', 'restoring a revision'],
  submit_for_review: ['submit revisions for review', 'submitting for review'],
  withdraw: ['withdraw revisions', 'withdrawing a revision'],
  reopen: ['reopen revisions', 'reopening a revision'],
  approve: ['approve revisions', 'approving a revision'],
  publish: ['publish revisions', 'publishing a revision'],
  reject: ['reject revisions', 'rejecting a revision'],
  scheduled_publish: ['run the scheduled publishing job', 'scheduled publishing'],
  rename: ['rename entries', 'renaming an entry'],
  set_import_metadata: ['set import metadata', 'setting import metadata'],
  assign: ['assign entries', 'assigning an entry'],
  delete: ['delete entries', 'deleting an entry'],
};

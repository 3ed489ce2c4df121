import { DomainError } from '../domain-error.ts';
import { CAPABILITIES, TENANT_USER_GRANTS, type Capability, type RoleGrants } from '../capabilities.ts';
import { grantsOf, isTenantAdmin, type AgentScope } from '../principal.ts';
import type { Caller } from './caller.ts';

/**
 * Who may do what (spec section 3 rule 1, section 4.4 notes and section 5), as one pure table.
 *
 * Console users, by capability (src/domain/capabilities.ts): every member reads; each other action needs one
 * capability. tenant_admin holds them all; tenant_user holds content.write, content.submit and
 * submissions.handle: it may read, create, edit, submit for review, withdraw and reopen (the editor's triggers
 * of spec section 3), assign, upload media and create or update master records, nothing that approves,
 * publishes, rejects, deletes or configures. A tenant's custom roles hold other sets; defining them is for a
 * tenant_admin alone (`needs: 'tenant_admin'`), so that nobody else can write themselves a wider role.
 *
 * Agent keys, by scope:
 * - content: read the schema, create and update entries, save and publish revisions (which includes the
 *   workflow steps around publishing: submit, withdraw, reopen, approve, schedule, assign), list media;
 * - full, and schema (an alias with the same rights): all of that, plus deleting entries, uploading and
 *   deleting media, form sets, contact forms, blueprints, master entities and records, and the project
 *   settings the MCP tool set exposes to keys (login appearance, console IP allowlist);
 * - never, whatever the scope: delete form sets or contact forms, delete form blocks or field
 *   definitions, issue other API keys, invite members, change billing or social settings;
 * - never, because a user session is required (spec 4.4): patch content locales (tenant_admin only),
 *   update master records and master trees;
 * - not part of any scope: reject (a reviewer's judgement), keys and members management, webhooks,
 *   project settings, the approval policy (agents are what it restrains), the audit log, contact form
 *   submissions (personal data), preview links.
 * The entry and master rules agree with src/domain/content (entry-workflow.ts, master-decider.ts).
 *
 * Operators (the CLI) may do everything. Plan gates (PLAN_REQUIRED) are separate: see requirePlan.
 */
export const ACTIONS = [
  // tenants and projects
  'tenants.create',
  'sign-in.read',
  'sign-in.manage',
  'projects.create',
  'project.read',
  'project.settings.change',
  'billing.change',
  'social-settings.change',
  'locales.read',
  'locales.patch',
  'login-appearance.read',
  'login-appearance.update',
  'ip-allowlist.read',
  'ip-allowlist.manage',
  'approval-policy.read',
  'approval-policy.change',
  'webhooks.read',
  'webhooks.manage',
  'audit.read',
  'operations.manage',
  'help.read',
  // keys and members
  'keys.list',
  'keys.issue',
  'keys.revoke',
  'members.list',
  'members.invite',
  'members.manage',
  // form sets
  'form-sets.read',
  'form-sets.write',
  'form-sets.delete',
  'form-blocks.delete',
  'fields.delete',
  // entries and revisions
  'entries.read',
  'entries.write',
  'entries.translate',
  'entries.delete',
  'entries.assign',
  'entries.history.read',
  'revisions.read',
  'revisions.save',
  'working-copies.keep',
  'revisions.submit',
  'revisions.withdraw',
  'revisions.reopen',
  'revisions.approve',
  'revisions.reject',
  'revisions.publish',
  'revisions.schedule',
  'preview.issue',
  // media
  'media.list',
  'media.upload',
  'media.delete',
  // masters
  'masters.read',
  'masters.write',
  'masters.delete',
  'masters.publish',
  'masters.records.create',
  'masters.records.update',
  'masters.tree.update',
  // contact forms
  'contact-forms.read',
  'contact-forms.write',
  'contact-forms.delete',
  'submissions.read',
  'submissions.update',
  'submissions.erase',
  // blueprints and templates
  'blueprints.validate',
  'blueprints.apply',
  // custom roles
  'roles.read',
  'roles.manage',
] as const;

export type Action = (typeof ACTIONS)[number];

/** How agent keys stand towards an action. */
export type AgentRule =
  /** Spec section 5 rule 5: forbidden to every scope; `wording` completes "Agent keys can never …". */
  | { kind: 'never'; wording: string }
  /** Spec section 4.4: "need a user JWT; agent keys refused". */
  | { kind: 'user-session' }
  /** Allowed to these scopes (none: not part of any agent key scope). */
  | { kind: 'scopes'; scopes: readonly AgentScope[] };

/**
 * What a console user needs for an action: `member` (every member of the tenant), a capability, `tenant_admin`
 * (the spec's administrator role itself, never a custom role), or null when only operators may.
 */
export type UserRule = 'member' | Capability | 'tenant_admin' | null;

export interface Permission {
  /** Completes "… cannot <label>". */
  label: string;
  needs: UserRule;
  agents: AgentRule;
}

const ALL: readonly AgentScope[] = ['full', 'schema', 'content'];
const FULL: readonly AgentScope[] = ['full', 'schema'];
const NONE: readonly AgentScope[] = [];

const scopes = (list: readonly AgentScope[]): AgentRule => ({ kind: 'scopes', scopes: list });
const never = (wording: string): AgentRule => ({ kind: 'never', wording });
const userSession: AgentRule = { kind: 'user-session' };

const DELETE_FORM_SETS = 'delete form sets or contact forms';
const DELETE_BLOCKS = 'delete form blocks or field definitions';
const BILLING = 'change billing or social settings';

export const PERMISSIONS: Readonly<Record<Action, Permission>> = {
  'tenants.create': { label: 'create tenants', needs: null, agents: scopes(NONE) },
  'sign-in.read': { label: "read the tenant's single sign-on settings", needs: 'people.manage', agents: userSession },
  'sign-in.manage': { label: "change the tenant's single sign-on settings", needs: 'tenant_admin', agents: userSession },
  'projects.create': { label: 'create projects', needs: 'tenant_admin', agents: scopes(NONE) },
  'project.read': { label: 'read the project overview', needs: 'member', agents: scopes(ALL) },
  'project.settings.change': { label: 'change project settings', needs: 'settings.manage', agents: scopes(NONE) },
  'billing.change': { label: 'change the billing plan', needs: 'settings.manage', agents: never(BILLING) },
  'social-settings.change': { label: 'change social settings', needs: 'settings.manage', agents: never(BILLING) },
  'locales.read': { label: 'read content locales', needs: 'member', agents: scopes(ALL) },
  'locales.patch': { label: 'patch content locales', needs: 'schema.manage', agents: userSession },
  'login-appearance.read': { label: 'read the login appearance', needs: 'member', agents: scopes(ALL) },
  'login-appearance.update': { label: 'update the login appearance', needs: 'settings.manage', agents: scopes(FULL) },
  'ip-allowlist.read': { label: 'list console IP allowlist entries', needs: 'settings.manage', agents: scopes(FULL) },
  'ip-allowlist.manage': { label: 'add or delete console IP allowlist entries', needs: 'settings.manage', agents: scopes(FULL) },
  'approval-policy.read': { label: 'read the approval policy', needs: 'member', agents: scopes(ALL) },
  'approval-policy.change': { label: 'change the approval policy', needs: 'settings.manage', agents: scopes(NONE) },
  'webhooks.read': { label: 'read webhooks', needs: 'webhooks.manage', agents: scopes(NONE) },
  'webhooks.manage': { label: 'manage webhooks', needs: 'webhooks.manage', agents: scopes(NONE) },
  'audit.read': { label: 'read the project audit log', needs: 'audit.read', agents: scopes(NONE) },
  'operations.manage': { label: 'see and operate projections and outboxes', needs: 'settings.manage', agents: scopes(NONE) },
  'help.read': { label: 'read the admin help', needs: 'member', agents: scopes(ALL) },

  'keys.list': { label: 'list API keys', needs: 'people.manage', agents: scopes(NONE) },
  'keys.issue': { label: 'issue API keys', needs: 'people.manage', agents: never('issue other API keys') },
  'keys.revoke': { label: 'revoke API keys', needs: 'people.manage', agents: scopes(NONE) },
  'members.list': { label: 'list members', needs: 'member', agents: scopes(NONE) },
  'members.invite': { label: 'invite members', needs: 'people.manage', agents: never('invite members') },
  'members.manage': { label: "change members' roles or disable members", needs: 'people.manage', agents: scopes(NONE) },

  'form-sets.read': { label: 'read form sets', needs: 'member', agents: scopes(ALL) },
  'form-sets.write': { label: 'create or update form sets', needs: 'schema.manage', agents: scopes(FULL) },
  'form-sets.delete': { label: 'delete form sets', needs: 'schema.manage', agents: never(DELETE_FORM_SETS) },
  'form-blocks.delete': { label: 'delete form blocks', needs: 'schema.manage', agents: never(DELETE_BLOCKS) },
  'fields.delete': { label: 'delete field definitions', needs: 'schema.manage', agents: never(DELETE_BLOCKS) },

  'entries.read': { label: 'read entries', needs: 'member', agents: scopes(ALL) },
  'entries.write': { label: 'create or update entries', needs: 'content.write', agents: scopes(ALL) },
  'entries.translate': { label: 'translate entry locales', needs: 'content.write', agents: scopes(ALL) },
  'entries.delete': { label: 'delete entries', needs: 'content.delete', agents: scopes(FULL) },
  'entries.assign': { label: 'assign entries for review', needs: 'content.write', agents: scopes(ALL) },
  'entries.history.read': { label: 'read entry history', needs: 'member', agents: scopes(ALL) },
  'revisions.read': { label: 'read revisions', needs: 'member', agents: scopes(ALL) },
  'revisions.save': { label: 'save revisions', needs: 'content.write', agents: scopes(ALL) },
  'working-copies.keep': { label: 'keep a working copy of unsaved typing', needs: 'content.write', agents: userSession },
  'revisions.submit': { label: 'submit revisions for review', needs: 'content.submit', agents: scopes(ALL) },
  'revisions.withdraw': { label: 'withdraw revisions from review', needs: 'content.write', agents: scopes(ALL) },
  'revisions.reopen': { label: 'reopen rejected revisions', needs: 'content.write', agents: scopes(ALL) },
  'revisions.approve': { label: 'approve revisions', needs: 'content.approve', agents: scopes(ALL) },
  'revisions.reject': { label: 'reject revisions', needs: 'content.approve', agents: scopes(NONE) },
  'revisions.publish': { label: 'publish revisions', needs: 'content.approve', agents: scopes(ALL) },
  'revisions.schedule': { label: 'schedule publishing', needs: 'content.approve', agents: scopes(ALL) },
  'preview.issue': { label: 'issue preview links', needs: 'content.write', agents: scopes(NONE) },

  'media.list': { label: 'list media', needs: 'member', agents: scopes(ALL) },
  'media.upload': { label: 'upload media', needs: 'content.write', agents: scopes(FULL) },
  'media.delete': { label: 'delete media', needs: 'media.manage', agents: scopes(FULL) },

  'masters.read': { label: 'read masters', needs: 'member', agents: scopes(ALL) },
  'masters.write': { label: 'create or rename master entities', needs: 'schema.manage', agents: scopes(FULL) },
  'masters.delete': { label: 'delete master entities or records', needs: 'schema.manage', agents: scopes(NONE) },
  'masters.publish': { label: 'publish or unpublish masters', needs: 'schema.manage', agents: scopes(FULL) },
  'masters.records.create': { label: 'create master records', needs: 'content.write', agents: scopes(FULL) },
  'masters.records.update': { label: 'update master records', needs: 'content.write', agents: userSession },
  'masters.tree.update': { label: 'update master trees', needs: 'content.write', agents: userSession },

  'contact-forms.read': { label: 'read contact forms', needs: 'member', agents: scopes(FULL) },
  'contact-forms.write': { label: 'create or update contact forms', needs: 'contact-forms.manage', agents: scopes(FULL) },
  'contact-forms.delete': { label: 'delete contact forms', needs: 'contact-forms.manage', agents: never(DELETE_FORM_SETS) },
  'submissions.read': { label: 'read contact form submissions', needs: 'submissions.handle', agents: scopes(NONE) },
  'submissions.update': { label: 'mark or annotate contact form submissions', needs: 'submissions.handle', agents: scopes(NONE) },
  'submissions.erase': { label: 'erase contact form submissions (their values become unreadable for good)', needs: 'contact-forms.manage', agents: scopes(NONE) },

  'blueprints.validate': { label: 'validate blueprints', needs: 'content.write', agents: scopes(FULL) },
  'blueprints.apply': { label: 'apply blueprints or templates', needs: 'schema.manage', agents: scopes(FULL) },

  'roles.read': { label: "read the tenant's roles", needs: 'member', agents: scopes(NONE) },
  'roles.manage': { label: 'define, change or remove roles', needs: 'tenant_admin', agents: scopes(NONE) },
};

/** The capability an action needs from a console user, or null when it needs none (members, tenant_admin, operators). */
export function capabilityFor(action: Action): Capability | null {
  const needs = PERMISSIONS[action].needs;
  return needs !== null && (CAPABILITIES as readonly string[]).includes(needs) ? (needs as Capability) : null;
}

/**
 * The capabilities an agent key of a scope carries: those of every action the scope allows. Issuing a key is
 * granting them (see grantsBeyond): a member cannot issue a key that may do what they may not.
 */
export function agentScopeGrants(scope: AgentScope): RoleGrants {
  const capabilities = new Set<Capability>();
  for (const action of ACTIONS) {
    const { agents } = PERMISSIONS[action];
    const capability = capabilityFor(action);
    if (capability && agents.kind === 'scopes' && agents.scopes.includes(scope)) capabilities.add(capability);
  }
  return { roleId: null, capabilities: CAPABILITIES.filter((c) => capabilities.has(c)), formSetIds: null };
}

export interface Denial {
  message: string;
  hint: string;
}

/** Why the caller may not do the action, or null when it may. */
export function denial(caller: Caller, action: Action): Denial | null {
  const permission = PERMISSIONS[action];
  switch (caller.kind) {
    case 'operator':
      return null;
    case 'user': {
      const needs = permission.needs;
      if (needs === null) {
        return { message: `Console users cannot ${permission.label} (${action}); only an operator can.`, hint: 'Use the operator CLI.' };
      }
      if (needs === 'member') return null;
      const grants = grantsOf(caller);
      if (needs === 'tenant_admin') {
        if (isTenantAdmin(caller)) return null;
        return {
          message: `Only a tenant_admin can ${permission.label} (${action}); this session has ${sessionRole(caller.role, grants)}.`,
          hint: 'Ask a tenant admin to do it.',
        };
      }
      if (grants.capabilities.includes(needs)) return null;
      return {
        message: `Only a tenant_admin can ${permission.label} (${action}), or a custom role with the ${needs} capability; this session has ${sessionRole(caller.role, grants)}.`,
        hint: 'Ask a tenant admin to do it, or to give you a role that may.',
      };
    }
    case 'agent': {
      const rule = permission.agents;
      if (rule.kind === 'never') {
        return {
          message: `Agent keys can never ${rule.wording}, whatever their scope: ${permission.label} (${action}) is refused.`,
          hint: 'Sign in to the console as a tenant admin to do this.',
        };
      }
      if (rule.kind === 'user-session') {
        // Any console session when a tenant_user may, else a tenant_admin's.
        const role = permission.needs === 'member' || (permission.needs !== null && (TENANT_USER_GRANTS.capabilities as readonly string[]).includes(permission.needs)) ? 'a console' : 'a tenant_admin';
        return {
          message: `To ${permission.label} (${action}) a user session is required; agent keys are refused.`,
          hint: `Use ${role} session token (sign in to the console) instead of an agent key.`,
        };
      }
      if (rule.scopes.includes(caller.scope)) return null;
      if (rule.scopes.length === 0) {
        return {
          message: `Agent keys cannot ${permission.label} (${action}): it is not part of any agent key scope.`,
          hint: 'Use a console session.',
        };
      }
      return {
        message: `A ${caller.scope}-scope agent key cannot ${permission.label} (${action}); it needs the ${rule.scopes.join(' or ')} scope.`,
        hint: 'Issue an agent key with scope full for this.',
      };
    }
  }
}

function sessionRole(role: string, grants: RoleGrants): string {
  return grants.roleId === null ? `the ${role} role` : `a custom role (${grants.capabilities.join(', ') || 'reading only'})`;
}

export function can(caller: Caller, action: Action): boolean {
  return denial(caller, action) === null;
}

/** Throws FORBIDDEN naming the action and the reason. */
export function assertCan(caller: Caller, action: Action): void {
  const refused = denial(caller, action);
  if (refused) throw new DomainError('FORBIDDEN', refused.message, refused.hint);
}

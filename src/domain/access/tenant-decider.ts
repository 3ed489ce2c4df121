import type { Decider } from '../decider.ts';
import { conflict, invalid, notFound } from '../domain-error.ts';
import type { TenantEvent } from './access-events.ts';
import { auditProject, displayName } from './access-values.ts';
import { assertCallerSeesTenant, type Caller } from './caller.ts';
import { oidcSettingsValue, sameOidcSettings, type OidcSettings, type RoleGroup } from './oidc-settings.ts';
import { samlSettingsValue, sameSamlSettings, type SamlSettings } from './saml-settings.ts';
import { assertCan } from './permissions.ts';
import { customRoleValue, MAX_CUSTOM_ROLES, sameDefinition, type CustomRole, type CustomRoleInput } from './custom-roles.ts';

/** A tenant owns projects and users. Stream: tenantStream(id). */
export interface Tenant {
  id: string;
  name: string;
  /** Sign-in through the tenant's OpenID Connect provider; null (or absent) when not set up. */
  oidc?: OidcSettings | null;
  /** Sign-in through the tenant's SAML 2.0 provider; null (or absent) when not set up. One of oidc and saml at most. */
  saml?: SamlSettings | null;
  /** Password sign-in needs a second factor (people without one set it up before their session begins). */
  secondFactorRequired?: boolean;
  /** The tenant's own roles, by id (absent: none defined). */
  roles?: Readonly<Record<string, CustomRole>>;
}

export type TenantState = Tenant | null;

export type TenantCommand =
  | { type: 'create-tenant'; tenantId: string; name: string }
  /** The whole OpenID Connect setup; its client secret already sealed (see oidcSecretContext). */
  | { type: 'configure-oidc'; settings: OidcSettings; projectId?: string }
  | { type: 'remove-oidc'; projectId?: string }
  | { type: 'configure-saml'; settings: SamlSettings; projectId?: string }
  | { type: 'remove-saml'; projectId?: string }
  | { type: 'set-second-factor-policy'; required: boolean; projectId?: string }
  /** A new custom role (roleId chosen by the caller, for idempotent retries). */
  | { type: 'define-role'; roleId: string; definition: CustomRoleInput; projectId?: string }
  /** The role's whole definition after the change. */
  | { type: 'redefine-role'; roleId: string; definition: CustomRoleInput; projectId?: string }
  /** `holders`: how many members hold the role, as the application counted them; removal is refused while any do. */
  | { type: 'remove-role'; roleId: string; holders: number; projectId?: string };

export interface TenantContext {
  caller: Caller;
}

export const tenantDecider: Decider<TenantState, TenantCommand, TenantEvent, TenantContext> = {
  initialState: () => null,

  evolve(state, event) {
    switch (event.type) {
      case 'tenant.created':
        return { id: event.data.tenantId, name: event.data.name, oidc: null };
      case 'tenant.oidc-configured': {
        if (!state) return state;
        const { tenantId: _tenantId, projectId: _projectId, ...settings } = event.data;
        return { ...state, oidc: settings };
      }
      case 'tenant.oidc-removed':
        return state ? { ...state, oidc: null } : state;
      case 'tenant.saml-configured': {
        if (!state) return state;
        const { tenantId: _tenantId, projectId: _projectId, ...settings } = event.data;
        return { ...state, saml: settings };
      }
      case 'tenant.saml-removed':
        return state ? { ...state, saml: null } : state;
      case 'tenant.second-factor-policy-changed':
        return state ? { ...state, secondFactorRequired: event.data.required } : state;
      case 'tenant.role-defined':
      case 'tenant.role-changed': {
        if (!state) return state;
        const { tenantId: _tenantId, projectId: _projectId, ...role } = event.data;
        return { ...state, roles: { ...state.roles, [role.roleId]: role } };
      }
      case 'tenant.role-removed': {
        if (!state) return state;
        const { [event.data.roleId]: _removed, ...roles } = state.roles ?? {};
        return { ...state, roles };
      }
      default:
        return state;
    }
  },

  decide(command, state, { caller }) {
    if (command.type === 'create-tenant') {
      assertCan(caller, 'tenants.create');
      if (state) throw conflict(`tenant ${command.tenantId} already exists`);
      return [{ type: 'tenant.created', data: { tenantId: command.tenantId, name: displayName(command.name, 'name') } }];
    }
    if (!state) throw notFound('tenant not found');
    assertCallerSeesTenant(caller, state.id, 'tenant');
    if (command.type === 'define-role' || command.type === 'redefine-role' || command.type === 'remove-role') return decideRole(command, state, caller);
    // Every other command changes how the tenant's people sign in: the tenant's admins (or an operator) do.
    assertCan(caller, 'sign-in.manage');
    switch (command.type) {
      case 'configure-oidc': {
        const settings = oidcSettingsValue(command.settings);
        assertRolesExist(state, settings.roleGroups);
        if (state.saml) throw conflict('This organisation signs in with SAML: remove it before setting up OpenID Connect.');
        if (sameOidcSettings(state.oidc ?? null, settings)) return [];
        return [{ type: 'tenant.oidc-configured', data: { tenantId: state.id, ...settings, ...auditProject(command) } }];
      }
      case 'remove-oidc': {
        return state.oidc ? [{ type: 'tenant.oidc-removed', data: { tenantId: state.id, ...auditProject(command) } }] : [];
      }
      case 'configure-saml': {
        const settings = samlSettingsValue(command.settings);
        assertRolesExist(state, settings.roleGroups);
        if (state.oidc) throw conflict('This organisation signs in with OpenID Connect: remove it before setting up SAML.');
        if (sameSamlSettings(state.saml ?? null, settings)) return [];
        return [{ type: 'tenant.saml-configured', data: { tenantId: state.id, ...settings, ...auditProject(command) } }];
      }
      case 'remove-saml': {
        return state.saml ? [{ type: 'tenant.saml-removed', data: { tenantId: state.id, ...auditProject(command) } }] : [];
      }
      case 'set-second-factor-policy': {
        if (typeof command.required !== 'boolean') throw invalid('required must be true or false');
        if (command.required === (state.secondFactorRequired ?? false)) return [];
        return [{ type: 'tenant.second-factor-policy-changed', data: { tenantId: state.id, required: command.required, ...auditProject(command) } }];
      }
    }
  },
};

/** Every custom role the sign-in settings give to a group exists (VALIDATION_ERROR naming the first that does not). */
function assertRolesExist(state: Tenant, roleGroups: readonly RoleGroup[] | undefined): void {
  const missing = roleGroups?.find(({ roleId }) => !state.roles?.[roleId]);
  if (missing) throw invalid(`roleGroups: the organisation has no role ${missing.roleId} (for the group "${missing.group}")`, 'Define the role first (POST /roles), then give it to the group.');
}

type RoleCommand = Extract<TenantCommand, { type: 'define-role' | 'redefine-role' | 'remove-role' }>;

/** Custom roles: a tenant_admin's (or an operator's) alone, so that nobody else writes themselves a wider role. */
function decideRole(command: RoleCommand, state: Tenant, caller: Caller): TenantEvent[] {
  assertCan(caller, 'roles.manage');
  const roles = state.roles ?? {};
  const existing = roles[command.roleId];
  if (command.type === 'remove-role') {
    if (!existing) return [];
    const provider = [state.oidc, state.saml].find((settings) => settings?.roleGroups?.some((mapping) => mapping.roleId === command.roleId));
    if (provider) throw conflict(`Single sign-on gives the role "${existing.name}" to a group: take it out of the sign-in settings first.`);
    if (command.holders > 0) {
      throw conflict(`${command.holders} member${command.holders === 1 ? ' holds' : 's hold'} the role "${existing.name}": give them another role first.`);
    }
    return [{ type: 'tenant.role-removed', data: { tenantId: state.id, roleId: command.roleId, ...auditProject(command) } }];
  }
  const definition = customRoleValue(command.definition);
  const sameName = Object.values(roles).find((role) => role.roleId !== command.roleId && role.name.toLowerCase() === definition.name.toLowerCase());
  if (sameName) throw conflict(`The organisation already has a role named "${sameName.name}".`);
  const data = { tenantId: state.id, roleId: command.roleId, ...definition, ...auditProject(command) };
  if (command.type === 'define-role') {
    if (existing) {
      if (sameDefinition(existing, definition)) return [];
      throw conflict(`role ${command.roleId} already exists`);
    }
    if (Object.keys(roles).length >= MAX_CUSTOM_ROLES) throw conflict(`An organisation may define at most ${MAX_CUSTOM_ROLES} roles.`);
    return [{ type: 'tenant.role-defined', data }];
  }
  if (!existing) throw notFound(`No role ${command.roleId}.`);
  return sameDefinition(existing, definition) ? [] : [{ type: 'tenant.role-changed', data }];
}

import { invalid } from '../domain-error.ts';
import { CAPABILITIES, FORM_SET_CAPABILITIES, isCapability, type Capability, type RoleGrants } from '../capabilities.ts';
import { grantsOf, type UserRole } from '../principal.ts';
import { displayName } from './access-values.ts';
import { isUuid } from '../../event-store/position.ts';

/**
 * A tenant's own role: a name, a set of capabilities (src/domain/capabilities.ts), and optionally the form sets
 * its content capabilities are limited to. Its members are tenant_user in the spec's terms (the member API's
 * `role`), with `roleId` naming this role. Defined, changed and removed by a tenant_admin (tenant.role-*).
 */
export interface CustomRole {
  roleId: string;
  name: string;
  description: string;
  capabilities: Capability[];
  /** Form set ids the content capabilities are limited to; null: every form set. */
  formSetIds: string[] | null;
}

export type CustomRoleDefinition = Omit<CustomRole, 'roleId'>;

/** A definition as a caller gives it, before customRoleValue checks it and puts it in its stored form. */
export interface CustomRoleInput {
  name: string;
  description?: string | null;
  capabilities: readonly string[];
  formSetIds?: readonly string[] | null;
}

export const MAX_CUSTOM_ROLES = 50;
export const ROLE_NAME_MAX_LENGTH = 80;
export const ROLE_DESCRIPTION_MAX_LENGTH = 500;
export const MAX_ROLE_FORM_SETS = 100;
/** The spec's role names: a custom role cannot be named like one (aliases such as reviewer are fine: roles are given by id). */
const RESERVED_NAMES = ['tenant_admin', 'tenant_user'];

/** The stored form of a definition given by a caller: VALIDATION_ERROR naming the field and the rule. */
export function customRoleValue(definition: CustomRoleInput): CustomRoleDefinition {
  const name = displayName(definition.name, 'name');
  if (name.length > ROLE_NAME_MAX_LENGTH) throw invalid(`name must be at most ${ROLE_NAME_MAX_LENGTH} characters`);
  if (RESERVED_NAMES.includes(name.toLowerCase())) throw invalid(`name "${name}" is one of the built-in roles' names`, 'Choose another name, for example "Legal reviewer".');
  const description = (definition.description ?? '').trim();
  if (description.length > ROLE_DESCRIPTION_MAX_LENGTH) throw invalid(`description must be at most ${ROLE_DESCRIPTION_MAX_LENGTH} characters`);
  if (/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.test(description)) throw invalid('description must not contain control characters other than line breaks');
  const unknown = definition.capabilities.filter((c) => !isCapability(c));
  if (unknown.length > 0) throw invalid(`capabilities: unknown ${unknown.map((c) => JSON.stringify(c)).join(', ')}`, `Known capabilities: ${CAPABILITIES.join(', ')}.`);
  // Stored in the table's order, once each, so that equal sets compare equal.
  const capabilities = CAPABILITIES.filter((c) => definition.capabilities.includes(c));
  let formSetIds: string[] | null = null;
  if (definition.formSetIds !== undefined && definition.formSetIds !== null) {
    const ids = [...new Set(definition.formSetIds.map((formSetId) => formSetId.toLowerCase()))].sort();
    if (ids.length === 0) throw invalid('formSetIds must name at least one form set, or be null for every form set');
    if (ids.length > MAX_ROLE_FORM_SETS) throw invalid(`formSetIds may name at most ${MAX_ROLE_FORM_SETS} form sets`);
    const malformed = ids.find((formSetId) => !isUuid(formSetId));
    if (malformed) throw invalid(`formSetIds: ${JSON.stringify(malformed)} is not a form set id`);
    if (!capabilities.some((c) => FORM_SET_CAPABILITIES.includes(c))) {
      throw invalid(`formSetIds limits only ${FORM_SET_CAPABILITIES.join(', ')}; this role has none of them`, 'Leave formSetIds null, or give the role a content capability.');
    }
    formSetIds = ids;
  }
  return { name, description, capabilities, formSetIds };
}

export function sameDefinition(a: CustomRoleDefinition, b: CustomRoleDefinition): boolean {
  return a.name === b.name && a.description === b.description && JSON.stringify(a.capabilities) === JSON.stringify(b.capabilities) && JSON.stringify(a.formSetIds) === JSON.stringify(b.formSetIds);
}

export function grantsOfRole(role: CustomRole): RoleGrants {
  return { roleId: role.roleId, capabilities: role.capabilities, formSetIds: role.formSetIds };
}

/**
 * What a member whose custom role is gone may do: read, nothing more (the role was removed, or never reached
 * this read model): least privilege, never the role's old grants.
 */
export function orphanedGrants(roleId: string): RoleGrants {
  return { roleId, capabilities: [], formSetIds: null };
}

/**
 * What a member holds: their custom role's grants as the role is defined now (`findRole`), nothing beyond reading
 * when it is gone, or their spec role's grants when they hold none.
 */
export function grantsOfMember(member: { role: UserRole; roleId?: string | null }, findRole: (roleId: string) => CustomRole | undefined): RoleGrants {
  if (!member.roleId) return grantsOf({ role: member.role });
  const role = findRole(member.roleId);
  return role ? grantsOfRole(role) : orphanedGrants(member.roleId);
}

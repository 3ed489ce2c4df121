import { useQuery } from '@tanstack/react-query';
import type { AdminSchema } from '@annals/client';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { builtInGrants, grantsCover, type Capability, type RoleGrants } from '../session/grants.ts';
import type { MessageKey } from '../i18n/en.ts';
import { USER_ROLES, type UserRole } from './shapes.ts';

/** The organisation's roles as GET /roles answers them: its own, the two built-in ones, and every capability. */
export type RoleList = AdminSchema<'RoleList'>;
export type CustomRole = AdminSchema<'CustomRole'>;

/**
 * A role as a member holds it, in one select's value: a built-in role (tenant_admin, tenant_user), or one of
 * the organisation's custom roles as `custom:{roleId}` (held with tenant_user).
 */
export type RoleChoice = UserRole | `custom:${string}`;

export function roleChoiceOf(member: { role: UserRole; roleId?: string | null }): RoleChoice {
  return member.roleId ? `custom:${member.roleId}` : member.role;
}

/**
 * The body that gives a role: PATCH /users/{userId}, POST /users and POST /users/invitations take it. A built-in
 * role alone (which takes a custom role away), or a custom role by its id (held with tenant_user).
 */
export function roleBody(choice: RoleChoice): { role: UserRole; roleId?: string } {
  return choice.startsWith('custom:') ? { role: 'tenant_user', roleId: choice.slice('custom:'.length) } : { role: choice as UserRole };
}

/** The organisation's roles (every member reads them), shared by the People and Roles pages. */
export function useRoles() {
  const { api } = useProject();
  return useQuery({ queryKey: ['roles'], queryFn: () => api.GET('/roles') });
}

/**
 * The roles the user may give, and whether they may change a member's: a tenant_admin gives every role; someone
 * else who manages people (a custom role with people.manage) gives only roles within their own grants, never
 * tenant_admin, and changes no member who may do more than they may (the service refuses it anyway).
 */
export function useRoleGiving(roles: RoleList | undefined) {
  const { grants, manageRoles, can } = useProject();
  const grantsOfChoice = (choice: RoleChoice): RoleGrants | null => {
    if (!choice.startsWith('custom:')) return builtInGrants(choice as UserRole);
    return roles?.items.find((role) => role.id === choice.slice('custom:'.length)) ?? null;
  };
  const mayGive = (choice: RoleChoice): boolean => {
    if (manageRoles) return true;
    if (!can('people.manage') || choice === 'tenant_admin') return false;
    const given = grantsOfChoice(choice);
    return given !== null && grantsCover(grants, given);
  };
  const choices: RoleChoice[] = [...USER_ROLES, ...(roles?.items.map((role) => `custom:${role.id}` as const) ?? [])];
  return { choices: choices.filter(mayGive), mayGive, mayChange: (member: { role: UserRole; roleId?: string | null }) => can('people.manage') && mayGive(roleChoiceOf(member)) };
}

/**
 * A capability in words: the service's own (GET /roles, each completing "May …") in English, the console's
 * translation in another language.
 */
export function useCapabilityLabel(roles: RoleList | undefined) {
  const { t, language } = useI18n();
  return (capability: Capability): string => {
    const served = language === 'en' ? roles?.capabilities.find((c) => c.capability === capability)?.label : undefined;
    return served ?? t(`capability.${capability}` as MessageKey);
  };
}

/** A member's role in words: their custom role's name, or the built-in role's. */
export function useRoleName(roles: RoleList | undefined) {
  const { t } = useI18n();
  return (member: { role: UserRole; roleId?: string | null }) => (member.roleId ? (roles?.items.find((role) => role.id === member.roleId)?.name ?? member.roleId) : t(`role.${member.role}`));
}

/** The options of a role select: the built-in roles, then the organisation's own (of `choices`, those the user may give). */
export function RoleOptions({ roles, choices, current }: { roles: RoleList | undefined; choices: RoleChoice[]; current?: RoleChoice }) {
  const { t } = useI18n();
  const offered = current && !choices.includes(current) ? [current, ...choices] : choices;
  const custom = (roles?.items ?? []).filter((role) => offered.includes(`custom:${role.id}`));
  return (
    <>
      {USER_ROLES.filter((role) => offered.includes(role)).map((role) => (
        <option key={role} value={role}>
          {t(`role.${role}`)}
        </option>
      ))}
      {custom.length > 0 && (
        <optgroup label={t('people.customRoles')}>
          {custom.map((role) => (
            <option key={role.id} value={`custom:${role.id}`}>
              {role.name}
            </option>
          ))}
        </optgroup>
      )}
    </>
  );
}

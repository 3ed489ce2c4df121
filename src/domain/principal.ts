/**
 * Who is calling, once authenticated. Console users act with a session JWT and a role; agents act with
 * an agent key bound to one project and a scope. Spec section 5.
 */
import { TENANT_ADMIN_GRANTS, TENANT_USER_GRANTS, type RoleGrants } from './capabilities.ts';

export type UserRole = 'tenant_admin' | 'tenant_user';
export type AgentScope = 'full' | 'content' | 'schema';

export type Principal =
  /**
   * `role` is the spec's role (a member of a custom role is a tenant_user there); `grants` what the member may
   * do, from their custom role when they have one (absent: the role's own grants, see grantsOf).
   */
  | { kind: 'user'; userId: string; tenantId: string; role: UserRole; grants?: RoleGrants }
  | { kind: 'agent'; keyId: string; tenantId: string; projectId: string; scope: AgentScope };

/** Every role name accepted wherever a role is given: the two roles and their aliases (normaliseRole). */
export const ROLE_NAMES = ['tenant_admin', 'tenant_user', 'editor', 'reviewer'] as const;

/** Role aliases accepted wherever a role is given: editor and reviewer are tenant_user. */
export function normaliseRole(role: string): UserRole | null {
  switch (role) {
    case 'tenant_admin':
      return 'tenant_admin';
    case 'tenant_user':
    case 'editor':
    case 'reviewer':
      return 'tenant_user';
    default:
      return null;
  }
}

/**
 * Whether a console user is the spec's tenant_admin itself: every capability, and what no custom role may do
 * (define roles, change sign-in, give tenant_admin, act on anyone).
 */
export function isTenantAdmin(user: { role: UserRole; grants?: RoleGrants }): boolean {
  return user.role === 'tenant_admin' && !user.grants?.roleId;
}

/** What a console user may do: their custom role's grants, or their role's. */
export function grantsOf(user: { role: UserRole; grants?: RoleGrants }): RoleGrants {
  return user.grants ?? (user.role === 'tenant_admin' ? TENANT_ADMIN_GRANTS : TENANT_USER_GRANTS);
}

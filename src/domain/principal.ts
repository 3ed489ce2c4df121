/**
 * Who is calling, once authenticated. Console users act with a session JWT and a role; agents act with
 * an agent key bound to one project and a scope. Spec section 5.
 */
export type UserRole = 'tenant_admin' | 'tenant_user';
export type AgentScope = 'full' | 'content' | 'schema';

export type Principal =
  | { kind: 'user'; userId: string; tenantId: string; role: UserRole }
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

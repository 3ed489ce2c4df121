import type { AdminSchema } from '@annals/client';

/**
 * What the signed-in person may do, as GET /auth/session answers it (src/domain/capabilities.ts on the service):
 * the capabilities of their role (the spec's tenant_admin or tenant_user, or one of the organisation's custom
 * roles), the form sets a custom role limits the content capabilities to, and whether they define roles and
 * single sign-on (a tenant_admin). The console shows only what they may do; the service refuses the rest anyway.
 */
export type Grants = AdminSchema<'CurrentSession'>['grants'];
export type Capability = Grants['capabilities'][number];
type Role = AdminSchema<'CurrentSession'>['user']['role'];

/** The capabilities a role's form-set limit narrows (FORM_SET_CAPABILITIES on the service). */
export const CONTENT_CAPABILITIES: readonly Capability[] = ['content.write', 'content.submit', 'content.approve', 'content.delete'];

/** Whether the grants allow a capability; in a form set, when one is given and the capability is one a limit narrows. */
export function grantsAllow(grants: Grants, capability: Capability, formSetId?: string): boolean {
  if (!grants.capabilities.includes(capability)) return false;
  if (grants.formSetIds === null || formSetId === undefined || !CONTENT_CAPABILITIES.includes(capability)) return true;
  return grants.formSetIds.includes(formSetId);
}

/**
 * The grants of the spec's two roles by themselves, for when GET /auth/session could not be asked (the sign-in's
 * answer carries none and the service did not answer): a custom role's member is then shown no more than a tenant_user's.
 */
export function builtInGrants(role: Role): Grants {
  const capabilities: Capability[] =
    role === 'tenant_admin'
      ? ['content.write', 'content.submit', 'content.approve', 'content.delete', 'schema.manage', 'media.manage', 'contact-forms.manage', 'submissions.handle', 'webhooks.manage', 'people.manage', 'settings.manage', 'audit.read']
      : ['content.write', 'content.submit', 'submissions.handle'];
  return { roleId: null, roleName: null, capabilities, formSetIds: null, manageRoles: role === 'tenant_admin' };
}

/** What a role gives, to compare with what a person holds (a custom role's, or a built-in role's). */
export interface RoleGrants {
  capabilities: readonly Capability[];
  formSetIds: readonly string[] | null;
}

/**
 * Whether `held` covers all that `wanted` gives (grantsBeyond on the service finds nothing): nobody but a
 * tenant_admin gives a role that may do what they may not.
 */
export function grantsCover(held: RoleGrants, wanted: RoleGrants): boolean {
  return wanted.capabilities.every((capability) => {
    if (!held.capabilities.includes(capability)) return false;
    if (!CONTENT_CAPABILITIES.includes(capability) || held.formSetIds === null) return true;
    return wanted.formSetIds?.every((id) => held.formSetIds!.includes(id)) ?? false;
  });
}

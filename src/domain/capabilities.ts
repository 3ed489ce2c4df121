/**
 * What a console user may do, as a set of capabilities: the two roles of the spec are fixed sets, and a
 * tenant may define its own roles as other sets (custom roles), so that duties are separated: the person
 * who writes is not the one who approves, and an approver need not administer keys, people or settings.
 * Every member reads the project (its content, schema, media, members and policies); each capability adds
 * writes. Which actions each capability allows is one table: src/domain/access/permissions.ts.
 */
export const CAPABILITIES = [
  'content.write',
  'content.submit',
  'content.approve',
  'content.delete',
  'schema.manage',
  'media.manage',
  'contact-forms.manage',
  'submissions.handle',
  'webhooks.manage',
  'people.manage',
  'settings.manage',
  'audit.read',
] as const;

export type Capability = (typeof CAPABILITIES)[number];

/** What each capability allows, in words a role editor shows (completes "May …"). */
export const CAPABILITY_LABELS: Readonly<Record<Capability, string>> = {
  'content.write': 'create and edit entries, upload media, keep master records',
  'content.submit': 'submit revisions for review',
  'content.approve': 'approve, reject, schedule and publish revisions',
  'content.delete': 'delete entries',
  'schema.manage': 'design form sets, masters and content locales, apply blueprints',
  'media.manage': 'delete media',
  'contact-forms.manage': 'design contact forms and erase their submissions',
  'submissions.handle': 'read and annotate contact form submissions',
  'webhooks.manage': 'manage webhooks',
  'people.manage': 'manage people, their roles, API keys and sign-in',
  'settings.manage': 'change project settings, the approval policy, the login page and operations',
  'audit.read': 'read and export the audit log',
};

/**
 * The capabilities a form-set limit narrows: a role limited to form sets writes, submits, approves and
 * deletes entries of those form sets only (it still reads every form set's entries).
 */
export const FORM_SET_CAPABILITIES: readonly Capability[] = ['content.write', 'content.submit', 'content.approve', 'content.delete'];

/**
 * What a console user holds. `roleId` names the tenant's custom role, null for the spec's two roles;
 * `formSetIds` limits the content capabilities to those form sets (null: every form set).
 */
export interface RoleGrants {
  roleId: string | null;
  capabilities: readonly Capability[];
  formSetIds: readonly string[] | null;
}

export const TENANT_ADMIN_GRANTS: RoleGrants = Object.freeze({ roleId: null, capabilities: Object.freeze([...CAPABILITIES]), formSetIds: null });
/** The spec's tenant_user (and its aliases editor and reviewer): creates, edits and submits, handles submissions. */
export const TENANT_USER_GRANTS: RoleGrants = Object.freeze({ roleId: null, capabilities: Object.freeze<Capability[]>(['content.write', 'content.submit', 'submissions.handle']), formSetIds: null });

/** Whether the grants allow a capability, in a form set when the capability is one a limit narrows (formSetId given). */
export function grantsAllow(grants: RoleGrants, capability: Capability, formSetId?: string): boolean {
  if (!grants.capabilities.includes(capability)) return false;
  if (grants.formSetIds === null || formSetId === undefined || !FORM_SET_CAPABILITIES.includes(capability)) return true;
  return grants.formSetIds.includes(formSetId);
}

/**
 * What `wanted` holds beyond `held`: capabilities `held` lacks, and a content capability `wanted` holds in a form
 * set that `held` is limited away from (or everywhere while `held` is limited). Empty when `held` covers it all:
 * nobody grants (to a role, a member or a key) what they could not do themselves.
 */
export function grantsBeyond(wanted: RoleGrants, held: RoleGrants): string[] {
  const beyond: string[] = [];
  for (const capability of wanted.capabilities) {
    if (!held.capabilities.includes(capability)) beyond.push(capability);
    else if (FORM_SET_CAPABILITIES.includes(capability) && held.formSetIds !== null) {
      const outside = wanted.formSetIds === null ? ['every form set'] : wanted.formSetIds.filter((id) => !held.formSetIds!.includes(id));
      if (outside.length > 0) beyond.push(`${capability} in ${outside.join(', ')}`);
    }
  }
  return beyond;
}

export function isCapability(value: string): value is Capability {
  return (CAPABILITIES as readonly string[]).includes(value);
}

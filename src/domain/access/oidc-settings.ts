import { invalid } from '../domain-error.ts';
import { isUuid } from '../../event-store/position.ts';

/**
 * A tenant's OpenID Connect sign-in, as the tenant decider keeps it and tenant.oidc-configured carries it. The
 * client secret is sealed by the application (SecretBox, record `oidcSecretContext(tenantId)`) before it
 * reaches the domain: the domain and the log only ever see the sealed form.
 */
export interface OidcSettings {
  /** The provider's issuer identifier: https, or http on a loopback address (a provider on this machine). */
  issuer: string;
  clientId: string;
  sealedClientSecret: string;
  /** Lower-cased domain names; a person signs in only with a verified e-mail address in one of them. */
  allowedEmailDomains: string[];
  /** The ID token claim that lists the person's groups (default `groups`). */
  groupsClaim: string;
  /** Members of any of these groups sign in as tenant_admin. */
  adminGroups: string[];
  /** Members of any of these sign in as tenant_user; when empty, every other person of an allowed domain does. */
  userGroups: string[];
  /** Groups whose members sign in with one of the organisation's own roles (the first that matches); absent: none. */
  roleGroups?: RoleGroup[];
  /** Passwords are refused for the tenant's users: single sign-on only. */
  ssoOnly: boolean;
}

/**
 * A group whose members sign in as tenant_user with the custom role `roleId` (src/domain/access/custom-roles.ts).
 * When the settings map any group to a custom role, the provider decides custom roles as it decides the spec's:
 * someone in none of those groups holds none.
 */
export interface RoleGroup {
  group: string;
  roleId: string;
}

export const MAX_ROLE_GROUPS = 50;

/** roleGroups as given, checked and normalised (groups trimmed, each once, role ids lower-cased); [] when absent. */
export function roleGroupsValue(roleGroups: readonly RoleGroup[] | undefined): RoleGroup[] {
  const normalised = (roleGroups ?? []).map(({ group, roleId }) => ({ group: group.trim(), roleId: roleId.trim().toLowerCase() }));
  if (normalised.length > MAX_ROLE_GROUPS) throw invalid(`roleGroups: at most ${MAX_ROLE_GROUPS} groups`);
  if (normalised.some(({ group }) => group.length === 0 || group.length > 500)) throw invalid('roleGroups: group names are 1 to 500 characters');
  const wrong = normalised.find(({ roleId }) => !isUuid(roleId));
  if (wrong) throw invalid(`roleGroups: ${JSON.stringify(wrong.roleId)} is not a role id`);
  const groups = normalised.map(({ group }) => group);
  const twice = groups.find((group, i) => groups.indexOf(group) !== i);
  if (twice !== undefined) throw invalid(`roleGroups: the group "${twice}" is named twice; a group gives one role`);
  return normalised;
}

export const DEFAULT_GROUPS_CLAIM = 'groups';
const MAX_GROUPS = 100;
const MAX_DOMAINS = 50;
const DOMAIN_NAME = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

/** The additional authenticated data a tenant's client secret is sealed with: a sealed secret copied to another tenant does not open. */
export function oidcSecretContext(tenantId: string): string {
  return `oidc:${tenantId}`;
}

/** Whether `hostname` (as URL.hostname gives it) is this machine: the only place plain http is accepted. */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/**
 * An issuer as settings accept it: an absolute https URL without query, fragment or credentials (http only for
 * a loopback host), with no trailing slash added or removed (the ID token's iss must equal it exactly).
 */
export function issuerValue(value: string): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw invalid('issuer must be an absolute URL, e.g. https://login.example.com/realms/staff');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    throw invalid('issuer must use https (plain http only for a provider on this machine: localhost or 127.0.0.1)');
  }
  if (url.search || url.hash || url.username || url.password) throw invalid('issuer must not carry a query, a fragment or credentials');
  return value.trim();
}

/** Lower-cased, unique domain names; VALIDATION_ERROR names the first that is not one. */
export function emailDomainsValue(domains: readonly string[]): string[] {
  const normalised = [...new Set(domains.map((domain) => domain.trim().toLowerCase().replace(/^@/, '')))];
  if (normalised.length === 0) throw invalid('allowedEmailDomains must name at least one e-mail domain (e.g. example.com): without it anyone the provider knows could sign in');
  if (normalised.length > MAX_DOMAINS) throw invalid(`allowedEmailDomains: at most ${MAX_DOMAINS} domains`);
  const wrong = normalised.find((domain) => !DOMAIN_NAME.test(domain));
  if (wrong !== undefined) throw invalid(`allowedEmailDomains: "${wrong}" is not a domain name`);
  return normalised;
}

export function groupsValue(groups: readonly string[], name: string): string[] {
  const normalised = [...new Set(groups.map((group) => group.trim()))];
  if (normalised.length > MAX_GROUPS) throw invalid(`${name}: at most ${MAX_GROUPS} groups`);
  if (normalised.some((group) => group.length === 0 || group.length > 500)) throw invalid(`${name}: group names are 1 to 500 characters`);
  return normalised;
}

/** The settings as given, checked and normalised (VALIDATION_ERROR otherwise). */
export function oidcSettingsValue(settings: OidcSettings): OidcSettings {
  const clientId = settings.clientId.trim();
  if (clientId.length === 0 || clientId.length > 500) throw invalid('clientId: 1 to 500 characters');
  if (!/^v1\./.test(settings.sealedClientSecret)) throw invalid('the client secret must be sealed before it is recorded');
  const groupsClaim = settings.groupsClaim.trim();
  if (!/^[A-Za-z0-9_:./-]{1,200}$/.test(groupsClaim)) throw invalid('groupsClaim: the name of a claim (letters, digits, _ : . / -)');
  const adminGroups = groupsValue(settings.adminGroups, 'adminGroups');
  if (adminGroups.length === 0) throw invalid('adminGroups must name at least one group: the people who may administer the tenant through sign-on');
  return {
    issuer: issuerValue(settings.issuer),
    clientId,
    sealedClientSecret: settings.sealedClientSecret,
    allowedEmailDomains: emailDomainsValue(settings.allowedEmailDomains),
    groupsClaim,
    adminGroups,
    userGroups: groupsValue(settings.userGroups, 'userGroups'),
    ...withRoleGroups(settings.roleGroups),
    ssoOnly: settings.ssoOnly,
  };
}

/** `roleGroups` when there are any (settings recorded before they existed have none, and compare equal). */
export function withRoleGroups(roleGroups: readonly RoleGroup[] | undefined): { roleGroups?: RoleGroup[] } {
  const value = roleGroupsValue(roleGroups);
  return value.length > 0 ? { roleGroups: value } : {};
}

/** Whether two settings are the same (a configuration that changes nothing appends nothing). */
export function sameOidcSettings(a: OidcSettings | null, b: OidcSettings): boolean {
  return a !== null && JSON.stringify(a) === JSON.stringify(b);
}

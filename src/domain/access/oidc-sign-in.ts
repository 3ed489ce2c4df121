import { DomainError, forbidden } from '../domain-error.ts';
import type { UserRole } from '../principal.ts';
import type { OidcSettings } from './oidc-settings.ts';
import { assertConsoleAccess } from './sign-in.ts';
import type { Project } from './project-decider.ts';

/**
 * Sign-in through a tenant's OpenID Connect provider, as a pure decision over what the provider vouched for (an
 * ID token the application has validated: signature, issuer, audience, expiry, nonce) and what the access read
 * model holds. The application around it:
 *   1. validate the authorization response and the ID token (openid-client: state, PKCE, nonce, iss, aud, exp);
 *   2. look up the user linked to (issuer, sub), and the user with the token's e-mail address;
 *   3. decideOidcSignIn(...) -> whom to sign in, and what to record first: a new user, a link, a role change;
 *   4. record the sign-in (user.signed-in), then issue the console session.
 *
 * The groups claim decides the role at every sign-in: the provider is where people's duties are managed.
 */
export const OIDC_SIGN_IN_REFUSED = 'Single sign-on did not sign you in to this organisation.';

export interface OidcClaims {
  /** The ID token's sub: the person at the provider, for good. */
  subject: string;
  email?: unknown;
  emailVerified?: unknown;
  /** The value of the settings' groups claim, as the token carries it. */
  groups?: unknown;
  /** The provider's session id (sid), when it sends one. */
  sessionId?: unknown;
}

/** A user as the decision needs them (from the access read model). */
export interface OidcUser {
  id: string;
  tenantId: string;
  email: string;
  role: UserRole;
  /** The organisation's custom role the user holds, if any. */
  roleId?: string | null;
  disabled: boolean;
  /** The subject this user is linked to under the settings' issuer, if any. */
  linkedSubject?: string | null;
}

/** What decides who may sign in through a provider and in which role (OpenID Connect's settings; SAML's, with its groups attribute as the claim). */
export type SsoRules = Pick<OidcSettings, 'allowedEmailDomains' | 'adminGroups' | 'userGroups' | 'roleGroups' | 'groupsClaim'>;

/** The role a sign-in gives: the spec's, and the organisation's own role (roleId) when a group gives one. */
export interface SsoRole {
  role: UserRole;
  roleId: string | null;
}

export interface OidcSignInInput {
  tenantId: string;
  settings: SsoRules;
  claims: OidcClaims;
  /** The user linked to (issuer, subject), when one is. */
  linkedUser: OidcUser | null;
  /** The user whose e-mail is the token's, when one is. */
  userWithEmail: OidcUser | null;
  /** The project whose console login page was used: its tenant must be the settings' and its allowlist applies. */
  project: Pick<Project, 'tenantId' | 'plan' | 'consoleIpAllowlist'>;
  clientIp?: string;
}

export type OidcSignInDecision =
  | { kind: 'existing'; userId: string; role: UserRole; roleId: string | null; email: string; link: boolean; roleChange: SsoRole | null }
  | { kind: 'provision'; email: string; role: UserRole; roleId: string | null };

/** Whom to sign in and what to record first; UNAUTHORIZED or FORBIDDEN with a message that says why, never whose account. */
export function decideOidcSignIn(input: OidcSignInInput): OidcSignInDecision {
  const { settings, claims, project } = input;
  if (project.tenantId !== input.tenantId) throw new DomainError('UNAUTHORIZED', OIDC_SIGN_IN_REFUSED);
  const email = verifiedEmail(claims);
  const domain = email.slice(email.lastIndexOf('@') + 1);
  if (!settings.allowedEmailDomains.includes(domain)) {
    throw forbidden(`${OIDC_SIGN_IN_REFUSED} E-mail addresses at ${domain} may not sign in here.`, 'Sign in with your address at one of the domains your administrator allowed.');
  }
  const given = roleOf(settings, claims.groups);
  assertConsoleAccess(project, input.clientIp);

  const linked = input.linkedUser;
  if (linked) {
    if (linked.tenantId !== input.tenantId) throw new DomainError('UNAUTHORIZED', OIDC_SIGN_IN_REFUSED);
    if (linked.disabled) throw forbidden('This account is disabled.', 'Ask a tenant admin to restore access.');
    return { kind: 'existing', userId: linked.id, ...held(linked, given, settings), email: linked.email, link: false };
  }
  const user = input.userWithEmail;
  if (!user) return { kind: 'provision', email, ...given };
  // An account of another tenant, or one already linked to another person at this provider: the provider gave
  // this address to someone else, or the account belongs elsewhere. Either way, not theirs.
  if (user.tenantId !== input.tenantId || (user.linkedSubject !== undefined && user.linkedSubject !== null && user.linkedSubject !== claims.subject)) {
    throw new DomainError('UNAUTHORIZED', OIDC_SIGN_IN_REFUSED);
  }
  if (user.disabled) throw forbidden('This account is disabled.', 'Ask a tenant admin to restore access.');
  return { kind: 'existing', userId: user.id, ...held(user, given, settings), email: user.email, link: true };
}

/**
 * The role a user signs in with, and the change to record first. The groups decide the spec's role at every sign-in;
 * they decide the custom role too when the settings give any group one (someone in none of those groups then holds
 * none). Otherwise a custom role given in the console stays while the groups keep the person tenant_user.
 */
function held(user: OidcUser, given: SsoRole, settings: SsoRules): { role: UserRole; roleId: string | null; roleChange: SsoRole | null } {
  const current = user.roleId ?? null;
  const providerDecides = (settings.roleGroups?.length ?? 0) > 0;
  const roleId = providerDecides || given.role === 'tenant_admin' ? given.roleId : current;
  const changed = user.role !== given.role || roleId !== current;
  return { role: given.role, roleId, roleChange: changed ? { role: given.role, roleId } : null };
}

/** The token's e-mail address, lower-cased, when the provider says it verified it; UNAUTHORIZED otherwise. */
function verifiedEmail(claims: OidcClaims): string {
  if (typeof claims.email !== 'string' || !/^[^@\s]+@[^@\s]+$/.test(claims.email.trim()) || claims.email.length > 320) {
    throw new DomainError('UNAUTHORIZED', `${OIDC_SIGN_IN_REFUSED} The provider sent no e-mail address.`, 'Ask your administrator to release the email claim (scope "email") to this application.');
  }
  if (claims.emailVerified !== true) {
    throw new DomainError('UNAUTHORIZED', `${OIDC_SIGN_IN_REFUSED} The provider did not say it verified your e-mail address.`, 'Verify your address with the identity provider, or ask your administrator to release email_verified.');
  }
  return claims.email.trim().toLowerCase();
}

/**
 * tenant_admin for a member of an admin group; tenant_user with the custom role of the first role group they are in;
 * tenant_user for a user group's member (anyone's, when there are none); FORBIDDEN otherwise.
 */
export function roleOf(settings: Pick<OidcSettings, 'adminGroups' | 'userGroups' | 'roleGroups' | 'groupsClaim'>, groupsClaim: unknown): SsoRole {
  const groups = new Set(Array.isArray(groupsClaim) ? groupsClaim.filter((g): g is string => typeof g === 'string') : typeof groupsClaim === 'string' ? [groupsClaim] : []);
  if (settings.adminGroups.some((group) => groups.has(group))) return { role: 'tenant_admin', roleId: null };
  const mapped = settings.roleGroups?.find(({ group }) => groups.has(group));
  if (mapped) return { role: 'tenant_user', roleId: mapped.roleId };
  if (settings.userGroups.length === 0 || settings.userGroups.some((group) => groups.has(group))) return { role: 'tenant_user', roleId: null };
  throw forbidden(`${OIDC_SIGN_IN_REFUSED} You are in none of the groups allowed to sign in.`, `Ask your administrator to add you to a group this organisation lets in (claim "${settings.groupsClaim}").`);
}

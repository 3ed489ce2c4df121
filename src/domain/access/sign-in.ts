import { DomainError, forbidden } from '../domain-error.ts';
import type { UserRole } from '../principal.ts';
import { isAllowed } from '../../security/ip-allowlist.ts';
import { effectiveIpAllowlist, type Project } from './project-decider.ts';
import type { User } from './user-decider.ts';

/**
 * Console sign-in and the console IP allowlist, as pure decisions. The application around them:
 *   1. normalise the e-mail (access-values emailAddress) and look the user up;
 *   2. verify the password with verifyPassword, or, when no user was found, verifyPasswordAgainstNothing
 *      (same cost, so response times do not reveal which e-mails exist);
 *   3. decideSignIn(...) -> the session subject, then SessionTokens.issueSession;
 *   4. when needsRehash(user.passwordHash), hash the password again and append user.password-changed.
 * On every request made with a session JWT that targets a project, assertConsoleAccess(project, ip).
 */
export const SIGN_IN_FAILED = 'Email or password is incorrect.';

export interface SignInInput {
  /** The user the e-mail names, or null when none does. */
  user: User | null;
  /** The result of verifyPassword (false when there was no user). */
  passwordMatches: boolean;
  /** The project whose console login page was used, when there is one: its allowlist applies. */
  project?: Pick<Project, 'tenantId' | 'plan' | 'consoleIpAllowlist'> | null;
  clientIp?: string;
  /** The user's tenant signs in with single sign-on only (its OIDC settings' ssoOnly). */
  ssoOnly?: boolean;
}

/** The session to issue, or UNAUTHORIZED (one message for unknown e-mail and wrong password) / FORBIDDEN. */
export function decideSignIn(input: SignInInput): { userId: string; tenantId: string; role: UserRole } {
  const { user, passwordMatches, project } = input;
  if (!user || !passwordMatches) throw new DomainError('UNAUTHORIZED', SIGN_IN_FAILED);
  // A login page of another tenant's project: answer as for wrong credentials, revealing nothing.
  if (project && project.tenantId !== user.tenantId) throw new DomainError('UNAUTHORIZED', SIGN_IN_FAILED);
  if (user.disabled) throw forbidden('This account is disabled.', 'Ask a tenant admin to restore access.');
  // Said only to whoever knows the password: it reveals nothing the password did not.
  if (input.ssoOnly) throw forbidden('Your organisation signs in with single sign-on only: passwords are not accepted.', 'Use the single sign-on button on the login page.');
  if (project) assertConsoleAccess(project, input.clientIp);
  return { userId: user.id, tenantId: user.tenantId, role: user.role };
}

/**
 * FORBIDDEN when the project enforces a console IP allowlist (Business plan and above, non-empty) that
 * does not admit the address. An unknown address is refused by a non-empty list. The message does not
 * reveal the list.
 */
export function assertConsoleAccess(project: Pick<Project, 'plan' | 'consoleIpAllowlist'>, clientIp: string | undefined): void {
  const entries = effectiveIpAllowlist(project);
  if (entries.length === 0) return;
  if (clientIp === undefined || !isAllowed(clientIp, entries)) {
    throw forbidden('Console access from this network address is not allowed for this project.', "Ask a tenant admin to add your address to the project's console IP allowlist.");
  }
}

import type { Decider } from '../decider.ts';
import { conflict, DomainError, forbidden, invalid, notFound } from '../domain-error.ts';
import { grantsOf, isTenantAdmin, normaliseRole, type UserRole } from '../principal.ts';
import { grantsBeyond, TENANT_ADMIN_GRANTS, TENANT_USER_GRANTS, type RoleGrants } from '../capabilities.ts';
import { grantsOfMember, grantsOfRole, type CustomRole } from './custom-roles.ts';
import { isPasswordHash } from '../../security/password-hashing.ts';
import type { UserEvent } from './access-events.ts';
import { auditProject, emailAddress } from './access-values.ts';
import { assertCallerSeesTenant, type Caller } from './caller.ts';
import { assertCan } from './permissions.ts';
import { acceptProof, applyProof, hasSecondFactor, MAX_PASSKEYS, NO_SECOND_FACTORS, type Passkey, passkeyName, proofOfRecord, proofRecord, type SecondFactorMethod, type SecondFactorProof, type SecondFactors } from './second-factor.ts';

/**
 * A console user. Stream: userStream(id). The e-mail is unique in the whole system: the application
 * reserves the normalised address (src/application/reservations.ts, scope user-email) before appending user.created.
 * Only a hash of the password is ever held; hashing (slow, random salt) happens before the command.
 */
export interface User {
  id: string;
  tenantId: string;
  /** Trimmed and lower-cased. */
  email: string;
  role: UserRole;
  /** The tenant's custom role the user holds (role is then tenant_user); absent or null: none. */
  roleId?: string | null;
  passwordHash: string;
  disabled: boolean;
  /** Review notices by e-mail (submitted revisions for tenant_admins; their own revisions' outcome for authors). Absent: on. */
  reviewNotices?: boolean;
  /** An invitation by e-mail not yet accepted: the SHA-256 of its link's secret, and when the link expires. */
  invitation?: { tokenHash: string; expiresAt: string } | null;
  /** The person each identity provider (by issuer) knows as this user (user.identity-linked). */
  identities?: Record<string, string>;
  /** The second factor for password sign-in (absent: none set up). */
  secondFactor?: SecondFactors;
  /** When the SAML request of the user's last SAML sign-in was made (ms): an answer to it, or to an older one, is not taken again. */
  lastSamlRequestAt?: number;
}

export type UserState = User | null;

/**
 * Version of the user state's shape, for stored snapshots (AggregateSnapshots): raise it when evolve or User
 * changes. The state is bounded whatever the history (sessions are not kept in it; passkeys and codes are capped).
 */
export const USER_STATE_VERSION = 1;

export type UserCommand =
  /** `role` may be an alias: editor and reviewer are tenant_user. */
  | { type: 'create-user'; userId: string; tenantId: string; email: string; role: string; roleId?: string | null; passwordHash: string; invitation?: Invitation; projectId?: string }
  /** Sends the invitation again, with a new link (the earlier one stops working). */
  | { type: 'invite-again'; invitation: Invitation }
  /** The invitee, proven by the link's secret (hashed), chooses a password before the link expires. */
  | { type: 'accept-invitation'; tokenHash: string; passwordHash: string; now: string }
  /** `projectId`: the project whose audit log shows the change (a sign-in through a provider names the one it came by). */
  | { type: 'change-role'; role: string; roleId?: string | null; projectId?: string }
  | { type: 'change-password'; passwordHash: string }
  | { type: 'disable-user' }
  /** Sign-out: the user's own session `sessionId` (a JWT's jti), valid until `expiresAt`, is refused from now on. */
  | { type: 'revoke-session'; sessionId: string; expiresAt: string }
  /** The identity provider's session ended (its back-channel logout): the session begun in it is refused from now on. By the sign-in (an operator caller). */
  | { type: 'end-session'; sessionId: string; expiresAt: string }
  /** The user's own notice preferences (nobody else's). */
  | { type: 'set-notice-preferences'; reviewNotices: boolean }
  /** Single sign-on vouched that `subject` at `issuer` is this user (decideOidcSignIn); by the sign-in itself (an operator caller). */
  | { type: 'link-identity'; protocol?: 'oidc' | 'saml'; issuer: string; subject: string; projectId?: string }
  /** A console session began: by the user who signed in. */
  | { type: 'record-sign-in'; sessionId: string; method: 'password' | 'oidc' | 'saml'; issuer?: string; idpSessionId?: string; expiresAt: string; projectId?: string; secondFactor?: SecondFactorProof; /** SAML: when the request the provider answered was made (ms). */ requestedAt?: number }
  /** The user sets up an authenticator app (its secret sealed); `recoveryCodeHashes` are issued when they hold none. */
  | { type: 'enrol-totp'; sealedSecret: string; recoveryCodeHashes: string[]; projectId?: string }
  | { type: 'remove-totp'; projectId?: string }
  /** The user registers a passkey (checked by the application); `recoveryCodeHashes` are issued when they hold none. */
  | { type: 'register-passkey'; passkey: Passkey; recoveryCodeHashes: string[]; projectId?: string }
  | { type: 'remove-passkey'; credentialId: string; projectId?: string }
  /** New recovery codes replace those left. */
  | { type: 'issue-recovery-codes'; codeHashes: string[]; projectId?: string }
  /** A tenant admin removes every second factor of a user who lost theirs. */
  | { type: 'reset-second-factor'; projectId?: string }
  /** Someone with the user's password gave a wrong second factor: recorded as the user (the person the attempt claims to be). */
  | { type: 'record-second-factor-failure'; method: SecondFactorMethod; projectId?: string };

/** An invitation's link: the SHA-256 (hex) of its secret, and when it expires (UTC ISO). */
export interface Invitation {
  tokenHash: string;
  expiresAt: string;
}

/** One message for every refused link (unknown, used, replaced, expired): it reveals nothing about the account. */
export const INVITATION_REFUSED = 'This invitation link is not valid: it was used already, replaced by a newer one, or has expired.';

export interface UserContext {
  caller: Caller;
  /**
   * The tenant's custom roles as the application read them from the tenant: needed to give one (a roleId), and
   * for a member who is not a tenant_admin to act on others (what the other holds must be within their own).
   */
  roles?: Readonly<Record<string, CustomRole>>;
}

export const userDecider: Decider<UserState, UserCommand, UserEvent, UserContext> = {
  initialState: () => null,

  evolve(state, event) {
    if (event.type === 'user.created') {
      const d = event.data;
      return { id: d.userId, tenantId: d.tenantId, email: d.email, role: d.role, roleId: d.roleId ?? null, passwordHash: d.passwordHash, disabled: false, reviewNotices: true };
    }
    if (!state) return state;
    switch (event.type) {
      case 'user.role-changed':
        return { ...state, role: event.data.role, roleId: event.data.roleId ?? null };
      case 'user.password-changed':
        return { ...state, passwordHash: event.data.passwordHash };
      case 'user.disabled':
        return { ...state, disabled: true };
      case 'user.session-revoked':
        // Sessions live in tokens, not in the aggregate: nothing to decide on later depends on them.
        return state;
      case 'user.notice-preferences-changed':
        return { ...state, reviewNotices: event.data.reviewNotices };
      case 'user.invited':
        return { ...state, invitation: { tokenHash: event.data.tokenHash, expiresAt: event.data.expiresAt } };
      case 'user.invitation-accepted':
        return { ...state, invitation: null };
      case 'user.identity-linked':
        return { ...state, identities: { ...state.identities, [event.data.issuer]: event.data.subject } };
      case 'user.signed-in': {
        if (event.data.requestedAt !== undefined) return { ...state, lastSamlRequestAt: event.data.requestedAt };
        const proof = event.data.secondFactor ? proofOfRecord(event.data.secondFactor) : null;
        return proof ? { ...state, secondFactor: applyProof(state.secondFactor ?? NO_SECOND_FACTORS, proof) } : state;
      }
      case 'user.totp-enrolled':
        return { ...state, secondFactor: { ...(state.secondFactor ?? NO_SECOND_FACTORS), totp: { sealedSecret: event.data.sealedSecret, lastStep: -1 } } };
      case 'user.totp-removed':
        return { ...state, secondFactor: { ...(state.secondFactor ?? NO_SECOND_FACTORS), totp: null } };
      case 'user.recovery-codes-issued':
        return { ...state, secondFactor: { ...(state.secondFactor ?? NO_SECOND_FACTORS), recoveryCodeHashes: event.data.codeHashes } };
      case 'user.passkey-registered': {
        const { userId: _userId, projectId: _projectId, ...passkey } = event.data;
        const factors = state.secondFactor ?? NO_SECOND_FACTORS;
        return { ...state, secondFactor: { ...factors, passkeys: [...factors.passkeys, passkey] } };
      }
      case 'user.passkey-removed': {
        const factors = state.secondFactor ?? NO_SECOND_FACTORS;
        return { ...state, secondFactor: { ...factors, passkeys: factors.passkeys.filter((passkey) => passkey.credentialId !== event.data.credentialId) } };
      }
      case 'user.second-factor-reset':
        return { ...state, secondFactor: NO_SECOND_FACTORS };
      case 'user.second-factor-failed':
        return state;
    }
  },

  decide(command, state, { caller, roles }) {
    if (command.type === 'create-user') {
      assertCallerSeesTenant(caller, command.tenantId, 'tenant');
      assertCan(caller, 'members.invite');
      if (state) throw conflict(`user ${command.userId} already exists`);
      const given = givenRole(command.role, command.roleId ?? null, roles);
      assertMayGrant(caller, given, 'invite a member with');
      const created: UserEvent = {
        type: 'user.created',
        data: {
          userId: command.userId,
          tenantId: command.tenantId,
          email: emailAddress(command.email),
          role: given.role,
          ...(given.roleId ? { roleId: given.roleId } : {}),
          passwordHash: hashValue(command.passwordHash),
          ...auditProject(command),
        },
      };
      return command.invitation ? [created, invited(command.userId, command.invitation)] : [created];
    }
    if (command.type === 'accept-invitation') {
      // Answered alike for every refusal, the account's existence included.
      if (!state?.invitation || state.disabled || !sameHash(state.invitation.tokenHash, command.tokenHash) || command.now >= state.invitation.expiresAt) {
        throw new DomainError('UNAUTHORIZED', INVITATION_REFUSED);
      }
      return [
        { type: 'user.password-changed', data: { userId: state.id, passwordHash: hashValue(command.passwordHash) } },
        { type: 'user.invitation-accepted', data: { userId: state.id } },
      ];
    }

    if (!state) throw notFound('user not found');
    assertCallerSeesTenant(caller, state.tenantId, 'user');
    const self = caller.kind === 'user' && caller.userId === state.id;

    switch (command.type) {
      case 'change-role': {
        assertCan(caller, 'members.manage');
        if (self) throw forbidden('You cannot change your own role.', 'Ask another tenant admin.');
        assertMayActOn(caller, state, roles, "change the role of");
        const given = givenRole(command.role, command.roleId ?? null, roles);
        assertMayGrant(caller, given, 'give');
        const previousRoleId = state.roleId ?? null;
        if (given.role === state.role && given.roleId === previousRoleId) return [];
        const customRoles = given.roleId !== null || previousRoleId !== null ? { roleId: given.roleId, previousRoleId } : {};
        return [{ type: 'user.role-changed', data: { userId: state.id, role: given.role, previousRole: state.role, ...customRoles, ...auditProject(command) } }];
      }
      case 'change-password': {
        // Users change their own password (the application checks the current one first); admins reset others'.
        if (!self) {
          assertCan(caller, 'members.manage');
          assertMayActOn(caller, state, roles, 'reset the password of');
        }
        return [{ type: 'user.password-changed', data: { userId: state.id, passwordHash: hashValue(command.passwordHash) } }];
      }
      case 'set-notice-preferences': {
        if (!self) throw forbidden('Only the user themselves can change their notice preferences.', 'Sign in as that user.');
        if (typeof command.reviewNotices !== 'boolean') throw invalid('reviewNotices must be true or false');
        return command.reviewNotices === (state.reviewNotices ?? true) ? [] : [{ type: 'user.notice-preferences-changed', data: { userId: state.id, reviewNotices: command.reviewNotices } }];
      }
      case 'disable-user': {
        assertCan(caller, 'members.manage');
        if (self) throw forbidden('You cannot disable your own account.', 'Ask another tenant admin.');
        assertMayActOn(caller, state, roles, 'disable');
        return state.disabled ? [] : [{ type: 'user.disabled', data: { userId: state.id } }];
      }
      case 'invite-again': {
        assertCan(caller, 'members.invite');
        assertMayActOn(caller, state, roles, 'invite again');
        if (state.disabled) throw conflict('This account is disabled: it cannot be invited again.');
        if (!state.invitation) throw conflict(`${state.email} has accepted their invitation, or was added with a password: there is nothing to send again.`);
        return [invited(state.id, command.invitation)];
      }
      case 'link-identity': {
        // Only the sign-in links, on the provider's word: no person may tie an account to an identity.
        if (caller.kind !== 'operator') throw forbidden('Identities are linked by signing in through the identity provider.');
        const linked = state.identities?.[command.issuer];
        if (linked === command.subject) return [];
        if (linked !== undefined) throw conflict('This account is linked to another person at this identity provider.');
        return [{ type: 'user.identity-linked', data: { userId: state.id, protocol: command.protocol ?? 'oidc', issuer: command.issuer, subject: command.subject, ...auditProject(command) } }];
      }
      case 'record-sign-in': {
        if (!self) throw forbidden('A sign-in is recorded by the person who signed in.');
        if (state.disabled) throw forbidden('This account is disabled.', 'Ask a tenant admin to restore access.');
        if ((command.method !== 'password') !== (command.issuer !== undefined)) throw invalid('a sign-in through an identity provider names its issuer, and only such a sign-in does');
        const proof = command.method === 'password' ? command.secondFactor : undefined;
        // A password alone does not sign in someone who set up a second factor, whatever the caller believed.
        if (command.method === 'password' && !proof && hasSecondFactor(state.secondFactor)) throw new DomainError('UNAUTHORIZED', 'A second factor is needed to sign in.', 'Sign in again and give the code from your authenticator app, a recovery code or your passkey.');
        if (proof) acceptProof(state.secondFactor, proof);
        // A provider's SAML answer signs in once: its request must be newer than the last one answered (a copied answer and flow cookie replay nothing).
        if (command.method === 'saml' && (command.requestedAt === undefined || !Number.isSafeInteger(command.requestedAt) || command.requestedAt <= (state.lastSamlRequestAt ?? -1))) {
          throw new DomainError('UNAUTHORIZED', "Single sign-on did not sign you in: the identity provider's answer was used already.", 'Start again from the login page.');
        }
        return [{ type: 'user.signed-in', data: { userId: state.id, sessionId: command.sessionId, method: command.method, ...(command.issuer === undefined ? {} : { issuer: command.issuer }), ...(command.idpSessionId ? { idpSessionId: command.idpSessionId } : {}), expiresAt: command.expiresAt, ...auditProject(command), ...(proof ? { secondFactor: proofRecord(proof) } : {}), ...(command.method === 'saml' ? { requestedAt: command.requestedAt } : {}) } }];
      }
      case 'enrol-totp': {
        assertOwnSecondFactor(self, state);
        if (state.secondFactor?.totp) throw conflict('An authenticator app is set up already: remove it before setting up another.');
        if (!/^v1\./.test(command.sealedSecret)) throw invalid('the authenticator secret is sealed before it is recorded, never in clear');
        return [{ type: 'user.totp-enrolled', data: { userId: state.id, sealedSecret: command.sealedSecret, ...auditProject(command) } }, ...firstRecoveryCodes(state, command.recoveryCodeHashes, command.projectId)];
      }
      case 'remove-totp': {
        assertOwnSecondFactor(self, state);
        return state.secondFactor?.totp ? [{ type: 'user.totp-removed', data: { userId: state.id, ...auditProject(command) } }] : [];
      }
      case 'register-passkey': {
        assertOwnSecondFactor(self, state);
        const passkeys = state.secondFactor?.passkeys ?? [];
        if (passkeys.some((passkey) => passkey.credentialId === command.passkey.credentialId)) throw conflict('This passkey is registered already.');
        if (passkeys.length >= MAX_PASSKEYS) throw conflict(`At most ${MAX_PASSKEYS} passkeys: remove one before adding another.`);
        return [{ type: 'user.passkey-registered', data: { userId: state.id, ...command.passkey, name: passkeyName(command.passkey.name), ...auditProject(command) } }, ...firstRecoveryCodes(state, command.recoveryCodeHashes, command.projectId)];
      }
      case 'remove-passkey': {
        assertOwnSecondFactor(self, state);
        if (!state.secondFactor?.passkeys.some((passkey) => passkey.credentialId === command.credentialId)) throw notFound('No such passkey.');
        return [{ type: 'user.passkey-removed', data: { userId: state.id, credentialId: command.credentialId, ...auditProject(command) } }];
      }
      case 'issue-recovery-codes': {
        assertOwnSecondFactor(self, state);
        if (!hasSecondFactor(state.secondFactor)) throw conflict('Recovery codes stand in for an authenticator app or a passkey: set one up first.');
        return [{ type: 'user.recovery-codes-issued', data: { userId: state.id, codeHashes: recoveryCodeHashes(command.codeHashes), ...auditProject(command) } }];
      }
      case 'reset-second-factor': {
        assertCan(caller, 'members.manage');
        if (self) throw forbidden('You cannot reset your own second factor.', 'Sign in with a recovery code and set it up again, or ask another tenant admin.');
        assertMayActOn(caller, state, roles, 'reset the second factor of');
        const factors = state.secondFactor;
        if (!factors || (!hasSecondFactor(factors) && factors.recoveryCodeHashes.length === 0)) return [];
        return [{ type: 'user.second-factor-reset', data: { userId: state.id, ...auditProject(command) } }];
      }
      case 'record-second-factor-failure': {
        if (!self) throw forbidden('A failed second factor is recorded for the person who tried.');
        return [{ type: 'user.second-factor-failed', data: { userId: state.id, method: command.method, ...auditProject(command) } }];
      }
      case 'end-session': {
        // The identity provider's logout, through the sign-in: no person ends another's session.
        if (caller.kind !== 'operator') throw forbidden("A session is ended by its user's sign-out, or by the identity provider's logout.");
        return [{ type: 'user.session-revoked', data: { userId: state.id, sessionId: command.sessionId, expiresAt: command.expiresAt } }];
      }
      case 'revoke-session': {
        if (!self) throw forbidden('Only the signed-in user signs out their own session.');
        return [{ type: 'user.session-revoked', data: { userId: state.id, sessionId: command.sessionId, expiresAt: command.expiresAt } }];
      }
    }
  },
};

/** A second factor is set up by its owner, signed in with an account still enabled. */
function assertOwnSecondFactor(self: boolean, state: User): void {
  if (!self) throw forbidden('A second factor is set up by its owner.', 'A tenant admin can only reset it.');
  if (state.disabled) throw forbidden('This account is disabled.', 'Ask a tenant admin to restore access.');
}

/** Recovery codes issued with the first second factor (none while some are left). */
function firstRecoveryCodes(state: User, codeHashes: string[], projectId: string | undefined): UserEvent[] {
  if ((state.secondFactor?.recoveryCodeHashes.length ?? 0) > 0) return [];
  return [{ type: 'user.recovery-codes-issued', data: { userId: state.id, codeHashes: recoveryCodeHashes(codeHashes), ...auditProject({ projectId }) } }];
}

function recoveryCodeHashes(hashes: string[]): string[] {
  if (hashes.length === 0 || hashes.some((hash) => !/^[0-9a-f]{64}$/.test(hash)) || new Set(hashes).size !== hashes.length) throw invalid('recovery codes are recorded as distinct SHA-256 hashes, never in clear');
  return hashes;
}

interface GivenRole {
  role: UserRole;
  roleId: string | null;
  grants: RoleGrants;
}

/** A role as given (a spec role, or tenant_user with one of the tenant's custom roles), with what it grants. */
function givenRole(roleName: string, roleId: string | null, roles: UserContext['roles']): GivenRole {
  const role = roleValue(roleName);
  if (roleId === null) return { role, roleId, grants: role === 'tenant_admin' ? TENANT_ADMIN_GRANTS : TENANT_USER_GRANTS };
  if (role !== 'tenant_user') throw invalid('a custom role (roleId) is held with role tenant_user', 'Give role tenant_user with the roleId, or role tenant_admin alone.');
  const custom = roles?.[roleId];
  if (!custom) throw notFound(`The organisation has no role ${roleId}.`);
  return { role, roleId, grants: grantsOfRole(custom) };
}

/**
 * Nobody grants what they could not do themselves: a member who is not a tenant_admin (a custom role with
 * people.manage) gives only roles within their own grants, and never tenant_admin. Operators and tenant_admins may.
 */
function assertMayGrant(caller: Caller, given: GivenRole, doing: string): void {
  if (caller.kind !== 'user' || isTenantAdmin(caller)) return;
  if (given.role === 'tenant_admin') throw forbidden(`Only a tenant_admin may ${doing} the tenant_admin role.`, 'Ask a tenant admin.');
  const beyond = grantsBeyond(given.grants, grantsOf(caller));
  if (beyond.length > 0) throw forbidden(`You cannot ${doing} a role that may do more than yours: ${beyond.join('; ')}.`, 'Ask a tenant admin.');
}

/** Nor act on (change, disable, reset) a member who may do more than they may, a tenant_admin included. */
function assertMayActOn(caller: Caller, user: User, roles: UserContext['roles'], doing: string): void {
  if (caller.kind !== 'user' || isTenantAdmin(caller)) return;
  if (user.role === 'tenant_admin') throw forbidden(`Only a tenant_admin may ${doing} a tenant_admin.`, 'Ask a tenant admin.');
  if (!roles) throw new Error('Acting on a member needs the tenant roles in the context (AccessWriter.userContext).');
  const beyond = grantsBeyond(grantsOfMember(user, (roleId) => roles[roleId]), grantsOf(caller));
  if (beyond.length > 0) throw forbidden(`You cannot ${doing} a member who may do more than you: ${beyond.join('; ')}.`, 'Ask a tenant admin.');
}

/** Normalises a role given by a caller, aliases included; VALIDATION_ERROR for anything else. */
export function roleValue(role: string): UserRole {
  const normalised = normaliseRole(role.trim().toLowerCase());
  if (!normalised) throw invalid('role must be tenant_admin or tenant_user (editor and reviewer are accepted as tenant_user)');
  return normalised;
}

function invited(userId: string, invitation: Invitation): UserEvent {
  if (!/^[0-9a-f]{64}$/.test(invitation.tokenHash)) throw invalid('an invitation carries the SHA-256 of its secret, never the secret');
  return { type: 'user.invited', data: { userId, tokenHash: invitation.tokenHash, expiresAt: invitation.expiresAt } };
}

/** Compares two hex hashes in time that does not depend on where they differ. */
function sameHash(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

function hashValue(passwordHash: string): string {
  // Guards the log: a clear password given here by mistake is refused, never stored.
  if (!isPasswordHash(passwordHash)) throw invalid('passwordHash must be a password hash made by hashPassword, never a clear password');
  return passwordHash;
}

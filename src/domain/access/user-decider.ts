import type { Decider } from '../decider.ts';
import { conflict, forbidden, invalid, notFound } from '../domain-error.ts';
import { normaliseRole, type UserRole } from '../principal.ts';
import { isPasswordHash } from '../../security/password-hashing.ts';
import type { UserEvent } from './access-events.ts';
import { emailAddress } from './access-values.ts';
import { assertCallerSeesTenant, type Caller } from './caller.ts';
import { assertCan } from './permissions.ts';

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
  passwordHash: string;
  disabled: boolean;
  /** Review notices by e-mail (submitted revisions for tenant_admins; their own revisions' outcome for authors). Absent: on. */
  reviewNotices?: boolean;
}

export type UserState = User | null;

export type UserCommand =
  /** `role` may be an alias: editor and reviewer are tenant_user. */
  | { type: 'create-user'; userId: string; tenantId: string; email: string; role: string; passwordHash: string }
  | { type: 'change-role'; role: string }
  | { type: 'change-password'; passwordHash: string }
  | { type: 'disable-user' }
  /** Sign-out: the user's own session `sessionId` (a JWT's jti), valid until `expiresAt`, is refused from now on. */
  | { type: 'revoke-session'; sessionId: string; expiresAt: string }
  /** The user's own notice preferences (nobody else's). */
  | { type: 'set-notice-preferences'; reviewNotices: boolean };

export interface UserContext {
  caller: Caller;
}

export const userDecider: Decider<UserState, UserCommand, UserEvent, UserContext> = {
  initialState: () => null,

  evolve(state, event) {
    if (event.type === 'user.created') {
      const d = event.data;
      return { id: d.userId, tenantId: d.tenantId, email: d.email, role: d.role, passwordHash: d.passwordHash, disabled: false, reviewNotices: true };
    }
    if (!state) return state;
    switch (event.type) {
      case 'user.role-changed':
        return { ...state, role: event.data.role };
      case 'user.password-changed':
        return { ...state, passwordHash: event.data.passwordHash };
      case 'user.disabled':
        return { ...state, disabled: true };
      case 'user.session-revoked':
        // Sessions live in tokens, not in the aggregate: nothing to decide on later depends on them.
        return state;
      case 'user.notice-preferences-changed':
        return { ...state, reviewNotices: event.data.reviewNotices };
    }
  },

  decide(command, state, { caller }) {
    if (command.type === 'create-user') {
      assertCallerSeesTenant(caller, command.tenantId, 'tenant');
      assertCan(caller, 'members.invite');
      if (state) throw conflict(`user ${command.userId} already exists`);
      return [
        {
          type: 'user.created',
          data: {
            userId: command.userId,
            tenantId: command.tenantId,
            email: emailAddress(command.email),
            role: roleValue(command.role),
            passwordHash: hashValue(command.passwordHash),
          },
        },
      ];
    }

    if (!state) throw notFound('user not found');
    assertCallerSeesTenant(caller, state.tenantId, 'user');
    const self = caller.kind === 'user' && caller.userId === state.id;

    switch (command.type) {
      case 'change-role': {
        assertCan(caller, 'members.manage');
        if (self) throw forbidden('You cannot change your own role.', 'Ask another tenant admin.');
        const role = roleValue(command.role);
        return role === state.role ? [] : [{ type: 'user.role-changed', data: { userId: state.id, role, previousRole: state.role } }];
      }
      case 'change-password': {
        // Users change their own password (the application checks the current one first); admins reset others'.
        if (!self) assertCan(caller, 'members.manage');
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
        return state.disabled ? [] : [{ type: 'user.disabled', data: { userId: state.id } }];
      }
      case 'revoke-session': {
        if (!self) throw forbidden('Only the signed-in user signs out their own session.');
        return [{ type: 'user.session-revoked', data: { userId: state.id, sessionId: command.sessionId, expiresAt: command.expiresAt } }];
      }
    }
  },
};

/** Normalises a role given by a caller, aliases included; VALIDATION_ERROR for anything else. */
export function roleValue(role: string): UserRole {
  const normalised = normaliseRole(role.trim().toLowerCase());
  if (!normalised) throw invalid('role must be tenant_admin or tenant_user (editor and reviewer are accepted as tenant_user)');
  return normalised;
}

function hashValue(passwordHash: string): string {
  // Guards the log: a clear password given here by mistake is refused, never stored.
  if (!isPasswordHash(passwordHash)) throw invalid('passwordHash must be a password hash made by hashPassword, never a clear password');
  return passwordHash;
}

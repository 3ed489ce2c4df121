import { expect } from 'chai';
import type { UserEvent } from '../../../src/domain/access/access-events.ts';
import { userDecider, type UserContext } from '../../../src/domain/access/user-decider.ts';
import { hashPassword } from '../../../src/security/password-hashing.ts';
import { admin, ADMIN_ID, agent, editor, EDITOR_ID, foreignAdmin, operator, TENANT, given } from './support.ts';

const USER_ID = 'd1111111-1111-4111-8111-111111111111';
const PASSWORD = 'correct horse battery staple';
const as = (caller: UserContext['caller']): UserContext => ({ caller });

describe('user decider', () => {
  let passwordHash: string;
  let otherHash: string;
  before(async () => {
    passwordHash = await hashPassword(PASSWORD, { N: 1024, r: 8, p: 1 });
    otherHash = await hashPassword('another long password', { N: 1024, r: 8, p: 1 });
  });

  const create = (role = 'editor', email = '  Jane.Doe@Example.COM ') => ({ type: 'create-user' as const, userId: USER_ID, tenantId: TENANT, email, role, passwordHash });
  const created = (role: 'tenant_admin' | 'tenant_user' = 'tenant_user'): UserEvent => ({
    type: 'user.created',
    data: { userId: USER_ID, tenantId: TENANT, email: 'jane.doe@example.com', role, passwordHash },
  });

  describe('create', () => {
    it('normalises the e-mail and maps the editor and reviewer aliases to tenant_user', () => {
      for (const role of ['editor', 'reviewer', 'tenant_user', ' Editor ']) given(userDecider, []).when(create(role), as(admin)).then([created('tenant_user')]);
      given(userDecider, []).when(create('tenant_admin'), as(operator)).then([created('tenant_admin')]);
    });

    it('refuses unknown roles and malformed e-mails', () => {
      given(userDecider, []).when(create('owner'), as(admin)).thenFails('VALIDATION_ERROR', /role must be tenant_admin or tenant_user/);
      for (const email of ['jane', 'jane@', '@example.com', 'jane doe@example.com', 'jane@localhost', 'jane@example..com', '.jane@example.com']) {
        given(userDecider, []).when(create('editor', email), as(admin)).thenFails('VALIDATION_ERROR', /email/);
      }
    });

    it('refuses a clear password where a hash belongs, without echoing it', () => {
      const error = given(userDecider, []).when({ ...create(), passwordHash: PASSWORD }, as(admin)).thenFails('VALIDATION_ERROR', /never a clear password/);
      expect(error.message).not.to.contain(PASSWORD);
    });

    it('is inviting a member: tenant admins and operators only, never agent keys', () => {
      given(userDecider, []).when(create(), as(editor)).thenFails('FORBIDDEN', /tenant_admin/);
      for (const scope of ['full', 'schema', 'content'] as const) {
        given(userDecider, []).when(create(), as(agent(scope))).thenFails('FORBIDDEN', /Agent keys can never invite members/);
      }
      given(userDecider, []).when(create(), as(foreignAdmin)).thenFails('NOT_FOUND');
      given(userDecider, [created()]).when(create(), as(admin)).thenFails('CONFLICT');
    });

    it('puts a hash, never the password, in the event', () => {
      const events = given(userDecider, []).when(create(), as(admin)).events();
      expect(JSON.stringify(events)).not.to.contain(PASSWORD);
      expect(events[0]!.data).to.have.property('passwordHash').that.matches(/^scrypt\$/);
    });
  });

  describe('role', () => {
    it('is changed by a tenant admin, aliases included; unchanged is no event', () => {
      given(userDecider, [created()]).when({ type: 'change-role', role: 'tenant_admin' }, as(admin)).then([
        { type: 'user.role-changed', data: { userId: USER_ID, role: 'tenant_admin', previousRole: 'tenant_user' } },
      ]);
      given(userDecider, [created()]).when({ type: 'change-role', role: 'reviewer' }, as(admin)).then([]);
    });

    it('is not changed by tenant users, agent keys, other tenants or oneself', () => {
      given(userDecider, [created()]).when({ type: 'change-role', role: 'tenant_admin' }, as(editor)).thenFails('FORBIDDEN');
      given(userDecider, [created()]).when({ type: 'change-role', role: 'tenant_admin' }, as(agent('full'))).thenFails('FORBIDDEN');
      given(userDecider, [created()]).when({ type: 'change-role', role: 'tenant_admin' }, as(foreignAdmin)).thenFails('NOT_FOUND');
      const self = { kind: 'user' as const, userId: USER_ID, tenantId: TENANT, role: 'tenant_admin' as const };
      given(userDecider, [created('tenant_admin')]).when({ type: 'change-role', role: 'editor' }, as(self)).thenFails('FORBIDDEN', /your own role/);
    });
  });

  describe('password', () => {
    it('is changed by the user themself or reset by a tenant admin, always as a hash', () => {
      const self = { kind: 'user' as const, userId: USER_ID, tenantId: TENANT, role: 'tenant_user' as const };
      for (const caller of [self, admin, operator]) {
        given(userDecider, [created()]).when({ type: 'change-password', passwordHash: otherHash }, as(caller)).then([{ type: 'user.password-changed', data: { userId: USER_ID, passwordHash: otherHash } }]);
      }
      given(userDecider, [created()]).when({ type: 'change-password', passwordHash: 'new clear password' }, as(self)).thenFails('VALIDATION_ERROR');
    });

    it("is not changed by another tenant user or an agent key", () => {
      const other = { kind: 'user' as const, userId: EDITOR_ID, tenantId: TENANT, role: 'tenant_user' as const };
      given(userDecider, [created()]).when({ type: 'change-password', passwordHash: otherHash }, as(other)).thenFails('FORBIDDEN');
      given(userDecider, [created()]).when({ type: 'change-password', passwordHash: otherHash }, as(agent('full'))).thenFails('FORBIDDEN');
    });
  });

  describe('disable', () => {
    it('disables once', () => {
      given(userDecider, [created()]).when({ type: 'disable-user' }, as(admin)).then([{ type: 'user.disabled', data: { userId: USER_ID } }]);
      given(userDecider, [created(), { type: 'user.disabled', data: { userId: USER_ID } }]).when({ type: 'disable-user' }, as(admin)).then([]);
    });

    it('does not let an admin disable themself', () => {
      const self = { kind: 'user' as const, userId: ADMIN_ID, tenantId: TENANT, role: 'tenant_admin' as const };
      const adminCreated: UserEvent = { type: 'user.created', data: { userId: ADMIN_ID, tenantId: TENANT, email: 'admin@example.com', role: 'tenant_admin', passwordHash } };
      given(userDecider, [adminCreated]).when({ type: 'disable-user' }, as(self)).thenFails('FORBIDDEN', /your own account/);
    });
  });

  it('answers NOT_FOUND for a user that does not exist', () => {
    given(userDecider, []).when({ type: 'disable-user' }, as(admin)).thenFails('NOT_FOUND');
  });

  describe('revoke-session (sign-out)', () => {
    const revoke = { type: 'revoke-session' as const, sessionId: 'b1111111-1111-4111-8111-111111111111', expiresAt: '2026-11-23T00:00:00.000Z' };
    const self = { kind: 'user' as const, userId: USER_ID, tenantId: TENANT, role: 'tenant_user' as const };
    it('records the signed-in user\'s own session as revoked', () => {
      given(userDecider, [created()]).when(revoke, as(self)).then([{ type: 'user.session-revoked', data: { userId: USER_ID, sessionId: revoke.sessionId, expiresAt: revoke.expiresAt } }]);
    });
    it('is nobody else\'s to do', () => {
      given(userDecider, [created()]).when(revoke, as(admin)).thenFails('FORBIDDEN', /signs out their own session/);
      given(userDecider, [created()]).when(revoke, as(operator)).thenFails('FORBIDDEN');
    });
  });

  describe('invitations by e-mail', () => {
    const hashA = 'a'.repeat(64);
    const hashB = 'b'.repeat(64);
    const invitation = (tokenHash = hashA, expiresAt = '2026-12-13T00:00:00.000Z') => ({ tokenHash, expiresAt });
    const invited = (tokenHash = hashA, expiresAt = '2026-12-13T00:00:00.000Z'): UserEvent => ({ type: 'user.invited', data: { userId: USER_ID, tokenHash, expiresAt } });
    const accept = (tokenHash = hashA, now = '2026-12-07T00:00:00.000Z') => ({ type: 'accept-invitation' as const, tokenHash, passwordHash: otherHash, now });

    it('creates the user and the invitation together; only the hash of the link\'s secret is in the events', () => {
      given(userDecider, []).when({ ...create(), invitation: invitation() }, as(admin)).then([created(), invited()]);
      given(userDecider, []).when({ ...create(), invitation: { tokenHash: 'the-secret-itself', expiresAt: '2026-12-13T00:00:00.000Z' } }, as(admin)).thenFails('VALIDATION_ERROR', /never the secret/);
    });

    it('the invitee chooses a password with the link before it expires; the link is then spent', () => {
      given(userDecider, [created(), invited()])
        .when(accept(), as(operator))
        .then([
          { type: 'user.password-changed', data: { userId: USER_ID, passwordHash: otherHash } },
          { type: 'user.invitation-accepted', data: { userId: USER_ID } },
        ]);
      given(userDecider, [created(), invited(), { type: 'user.password-changed', data: { userId: USER_ID, passwordHash: otherHash } }, { type: 'user.invitation-accepted', data: { userId: USER_ID } }])
        .when(accept(), as(operator))
        .thenFails('UNAUTHORIZED', /not valid/);
    });

    it('refuses alike a wrong secret, an expired link, one replaced by a newer invitation, a disabled account and an unknown user', () => {
      given(userDecider, [created(), invited()]).when(accept(hashB), as(operator)).thenFails('UNAUTHORIZED', /not valid/);
      given(userDecider, [created(), invited()]).when(accept(hashA, '2026-12-13T00:00:00.000Z'), as(operator)).thenFails('UNAUTHORIZED', /not valid/);
      given(userDecider, [created(), invited(), invited(hashB)]).when(accept(hashA), as(operator)).thenFails('UNAUTHORIZED', /not valid/);
      given(userDecider, [created(), invited(), { type: 'user.disabled', data: { userId: USER_ID } }]).when(accept(), as(operator)).thenFails('UNAUTHORIZED', /not valid/);
      given(userDecider, []).when(accept(), as(operator)).thenFails('UNAUTHORIZED', /not valid/);
      // A user added with a password has no invitation to accept.
      given(userDecider, [created()]).when(accept(), as(operator)).thenFails('UNAUTHORIZED', /not valid/);
    });

    it('sends a pending invitation again with a new link (tenant_admin); not once accepted, nor for a user added with a password', () => {
      given(userDecider, [created(), invited()]).when({ type: 'invite-again', invitation: invitation(hashB, '2026-12-20T00:00:00.000Z') }, as(admin)).then([invited(hashB, '2026-12-20T00:00:00.000Z')]);
      given(userDecider, [created(), invited()]).when({ type: 'invite-again', invitation: invitation(hashB) }, as(editor)).thenFails('FORBIDDEN');
      given(userDecider, [created()]).when({ type: 'invite-again', invitation: invitation(hashB) }, as(admin)).thenFails('CONFLICT', /nothing to send again/);
      given(userDecider, [created(), invited(), { type: 'user.invitation-accepted', data: { userId: USER_ID } }]).when({ type: 'invite-again', invitation: invitation(hashB) }, as(admin)).thenFails('CONFLICT');
    });
  });
});

/**
 * Console users: creating and inviting them, accepting an invitation, changing a member's role, disabling
 * one, signing out a session, a user's own notice preferences. See AccessService.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { invalid } from '../domain/domain-error.ts';
import { assertCallerSeesTenant, type Caller } from '../domain/access/caller.ts';
import { auditProject, emailAddress } from '../domain/access/access-values.ts';
import { userStream } from '../domain/access/access-streams.ts';
import { INVITATION_REFUSED, roleValue, userDecider, type Invitation, type UserCommand } from '../domain/access/user-decider.ts';
import { DomainError } from '../domain/domain-error.ts';
import { hashPassword } from '../security/password-hashing.ts';
import { USER_EMAIL_SCOPE, type WriteOptions, INVITATION_TTL_MS, type InvitationLink, type CreateUserInput, type UserChanged, type UserCreated } from './access-service-types.ts';
import { checkPassword, positionOf } from './access-input.ts';
import type { AccessWriter } from './access-writer.ts';

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export class UserAccess {
  readonly #w: AccessWriter;

  constructor(writer: AccessWriter) {
    this.#w = writer;
  }

  /**
   * Creates a console user in an existing tenant, reserving the normalised e-mail system-wide (CONFLICT
   * when taken, whatever its case). The password is checked (length), hashed, and forgotten.
   */
  async createUser(caller: Caller, input: CreateUserInput, options: WriteOptions = {}): Promise<UserCreated> {
    assertCallerSeesTenant(caller, input.tenantId, 'tenant');
    const email = emailAddress(input.email);
    roleValue(input.role);
    checkPassword(input.password);
    await this.#w.requireTenant(input.tenantId);
    return this.createUserWithHash(caller, { ...input, email }, await hashPassword(input.password), options);
  }

  /**
   * Invites a console user by e-mail: the user is created with a password nobody knows (a random secret, hashed
   * and forgotten) and an invitation whose link holds a new secret; only the secret's SHA-256 is recorded. The
   * link's token (`{userId}.{secret}`) is in the result, in clear, once: to be mailed, never stored.
   */
  async inviteUser(caller: Caller, input: Omit<CreateUserInput, 'password'>, options: WriteOptions = {}): Promise<UserCreated & { invitation: InvitationLink }> {
    assertCallerSeesTenant(caller, input.tenantId, 'tenant');
    const email = emailAddress(input.email);
    roleValue(input.role);
    await this.#w.requireTenant(input.tenantId);
    const userId = input.userId ?? randomUUID();
    const link = this.#newInvitation(userId);
    const created = await this.createUserWithHash(caller, { ...input, userId, email }, await hashPassword(randomBytes(32).toString('base64url')), options, link.invitation);
    return { ...created, invitation: link };
  }

  /** Sends a pending invitation again with a new link (the earlier link stops working). CONFLICT once accepted. */
  async inviteAgain(caller: Caller, userId: string, options: WriteOptions = {}): Promise<UserChanged & { invitation: InvitationLink }> {
    const link = this.#newInvitation(userId);
    const changed = await this.#changeUser(caller, userId, { type: 'invite-again', invitation: link.invitation }, options);
    return { ...changed, invitation: link };
  }

  /**
   * The invitee chooses a password with the link's token, before it expires; the link is then spent. One refusal
   * (UNAUTHORIZED) for every bad token, whatever is wrong with it.
   */
  async acceptInvitation(token: string, password: string, options: WriteOptions = {}): Promise<UserChanged> {
    const match = /^([0-9a-f-]{36})\.([A-Za-z0-9_-]{43})$/.exec(token.trim());
    if (!match) throw new DomainError('UNAUTHORIZED', INVITATION_REFUSED);
    checkPassword(password);
    const [, userId, secret] = match as unknown as [string, string, string];
    const caller: Caller = { kind: 'operator', operatorId: 'invitation' };
    const command: UserCommand = { type: 'accept-invitation', tokenHash: sha256Hex(secret), passwordHash: await hashPassword(password), now: this.#w.clock.now().toISOString() };
    // The invitee acts: the events are theirs in the log.
    const result = await this.#w.user(caller, userId, command, { caller }, { ...options, actor: { type: 'user', id: userId } });
    const user = result.state!;
    return { userId, tenantId: user.tenantId, email: user.email, role: user.role, roleId: user.roleId ?? null, disabled: user.disabled, position: positionOf(result) };
  }

  #newInvitation(userId: string): InvitationLink {
    const secret = randomBytes(32).toString('base64url');
    const expiresAt = new Date(this.#w.clock.now().getTime() + INVITATION_TTL_MS).toISOString();
    return { token: `${userId}.${secret}`, expiresAt, invitation: { tokenHash: sha256Hex(secret), expiresAt } };
  }

  /** Changes a member's role (members.manage: tenant_admin; never one's own). Unchanged when it already has it. */
  async changeUserRole(caller: Caller, userId: string, role: string, options: WriteOptions & { roleId?: string | null; projectId?: string } = {}): Promise<UserChanged> {
    // An operator giving a custom role gives one of the member's own tenant.
    const tenantId = options.roleId && caller.kind === 'operator' ? (await this.#w.loadUser(userId))?.tenantId : undefined;
    return this.#changeUser(caller, userId, { type: 'change-role', role, roleId: options.roleId ?? null, ...auditProject(options) }, options, tenantId);
  }

  /** Disables a member: sign-in and every session of theirs are refused from then on (never one's own account). */
  async disableUser(caller: Caller, userId: string, options: WriteOptions = {}): Promise<UserChanged> {
    return this.#changeUser(caller, userId, { type: 'disable-user' }, options);
  }

  async #changeUser(caller: Caller, userId: string, command: UserCommand, options: WriteOptions, rolesTenantId?: string): Promise<UserChanged> {
    const result = await this.#w.user(caller, userId, command, await this.#w.userContext(caller, rolesTenantId), options);
    const user = result.state!;
    return { userId, tenantId: user.tenantId, email: user.email, role: user.role, roleId: user.roleId ?? null, disabled: user.disabled, position: positionOf(result) };
  }

  /**
   * Signs out one console session of the calling user: its token is refused from now on, on every process
   * and after restarts (user.session-revoked, folded into the access read model). Returns the position to
   * wait for, so the caller's next request already sees it.
   */
  async signOut(caller: Caller, session: { sessionId: string; expiresAt: Date }, options: WriteOptions = {}): Promise<{ position: bigint }> {
    if (caller.kind !== 'user') throw invalid('Only a console session signs out; agent keys are revoked instead.');
    const command = { type: 'revoke-session' as const, sessionId: session.sessionId, expiresAt: session.expiresAt.toISOString() };
    const result = await this.#w.user(caller, caller.userId, command, { caller }, options);
    return { position: positionOf(result) };
  }

  /** The signed-in user's own notice preferences (nobody else's). */
  async setNoticePreferences(caller: Caller, userId: string, preferences: { reviewNotices: boolean }): Promise<{ userId: string; reviewNotices: boolean; position: bigint }> {
    const result = await this.#w.user(caller, userId, { type: 'set-notice-preferences', reviewNotices: preferences.reviewNotices }, { caller }, {});
    return { userId, reviewNotices: result.state!.reviewNotices ?? true, position: positionOf(result) };
  }

  /** Creates a user whose password hash (or invitation) is made already, reserving the e-mail (see createReserved). */
  async createUserWithHash(
    caller: Caller,
    input: { tenantId: string; email: string; role: string; roleId?: string | null; userId?: string; projectId?: string },
    passwordHash: string,
    options: WriteOptions,
    invitation?: Invitation,
  ): Promise<UserCreated> {
    const userId = input.userId ?? randomUUID();
    const email = emailAddress(input.email);
    const result = await this.#w.createReserved(
      caller,
      { scope: USER_EMAIL_SCOPE, key: email, owner: userId, what: 'e-mail address' },
      userStream(userId),
      userDecider,
      { type: 'create-user', userId, tenantId: input.tenantId, email, role: input.role, roleId: input.roleId ?? null, passwordHash, ...(invitation ? { invitation } : {}), ...auditProject(input) },
      await this.#w.userContext(caller, input.roleId ? input.tenantId : undefined),
      options,
    );
    const user = result.state!;
    return { userId, tenantId: user.tenantId, email: user.email, role: user.role, roleId: user.roleId ?? null, position: positionOf(result) };
  }
}

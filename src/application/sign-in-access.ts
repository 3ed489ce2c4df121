/**
 * A tenant's single sign-on: its OpenID Connect settings, and what a sign-in through the provider records (a
 * user provisioned on first sign-in, the provider's subject linked to the user, the role the provider's groups
 * give, the sign-in itself). The decisions are the deciders' and decideOidcSignIn's; see AccessService.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Caller, OperatorPrincipal } from '../domain/access/caller.ts';
import { tenantStream } from '../domain/access/access-streams.ts';
import { tenantDecider } from '../domain/access/tenant-decider.ts';
import type { OidcSettings } from '../domain/access/oidc-settings.ts';
import type { SamlSettings } from '../domain/access/saml-settings.ts';
import type { SecondFactorProof } from '../domain/access/second-factor.ts';
import { auditProject } from '../domain/access/access-values.ts';
import type { UserRole } from '../domain/principal.ts';
import { hashPassword } from '../security/password-hashing.ts';
import { handleCommand } from './command-handler.ts';
import { positionOf } from './access-input.ts';
import type { AccessWriter } from './access-writer.ts';
import type { UserAccess } from './user-access.ts';
import type { WriteOptions } from './access-service-types.ts';

export type SsoProtocol = 'oidc' | 'saml';

/** The caller a sign-in through a provider acts as when it records what the provider vouched for: `oidc:<host>` or `saml:<host>` (a SAML entity ID that is no URL: itself, cut to 100 characters). */
export function identityProviderCaller(issuer: string, protocol: SsoProtocol = 'oidc'): OperatorPrincipal {
  let host: string;
  try {
    host = new URL(issuer).host || issuer.slice(0, 100);
  } catch {
    host = issuer.slice(0, 100);
  }
  return { kind: 'operator', operatorId: `${protocol}:${host}` };
}

export class SignInAccess {
  readonly #w: AccessWriter;
  readonly #users: UserAccess;

  constructor(writer: AccessWriter, users: UserAccess) {
    this.#w = writer;
    this.#users = users;
  }

  /** Sets the tenant's OpenID Connect sign-in as a whole (its client secret sealed by the caller); nothing is appended when nothing changes. */
  async configureOidc(caller: Caller, tenantId: string, settings: OidcSettings, options: WriteOptions & { projectId?: string } = {}): Promise<{ tenantId: string; settings: OidcSettings; position: bigint }> {
    const result = await handleCommand(this.#w.log, tenantStream(tenantId), tenantDecider, { type: 'configure-oidc', settings, ...auditProject(options) }, { caller }, this.#w.append(caller, options));
    return { tenantId, settings: result.state!.oidc!, position: positionOf(result) };
  }

  /** Sets the tenant's SAML sign-in as a whole; nothing is appended when nothing changes. */
  async configureSaml(caller: Caller, tenantId: string, settings: SamlSettings, options: WriteOptions & { projectId?: string } = {}): Promise<{ tenantId: string; settings: SamlSettings; position: bigint }> {
    const result = await handleCommand(this.#w.log, tenantStream(tenantId), tenantDecider, { type: 'configure-saml', settings, ...auditProject(options) }, { caller }, this.#w.append(caller, options));
    return { tenantId, settings: result.state!.saml!, position: positionOf(result) };
  }

  async removeSaml(caller: Caller, tenantId: string, options: WriteOptions & { projectId?: string } = {}): Promise<{ tenantId: string; position: bigint }> {
    const result = await handleCommand(this.#w.log, tenantStream(tenantId), tenantDecider, { type: 'remove-saml', ...auditProject(options) }, { caller }, this.#w.append(caller, options));
    return { tenantId, position: positionOf(result) };
  }

  async removeOidc(caller: Caller, tenantId: string, options: WriteOptions & { projectId?: string } = {}): Promise<{ tenantId: string; position: bigint }> {
    const result = await handleCommand(this.#w.log, tenantStream(tenantId), tenantDecider, { type: 'remove-oidc', ...auditProject(options) }, { caller }, this.#w.append(caller, options));
    return { tenantId, position: positionOf(result) };
  }

  /**
   * A person the provider vouched for, new here: a user with a password nobody knows (a random secret, hashed
   * and forgotten), linked to the provider's subject. The e-mail is reserved as for any user.
   */
  async provision(input: { tenantId: string; email: string; role: UserRole; roleId?: string | null; issuer: string; subject: string; projectId?: string; protocol?: SsoProtocol }): Promise<{ userId: string; position: bigint }> {
    const caller = identityProviderCaller(input.issuer, input.protocol);
    const userId = randomUUID();
    await this.#users.createUserWithHash(caller, { tenantId: input.tenantId, email: input.email, role: input.role, roleId: input.roleId ?? null, userId, ...auditProject(input) }, await hashPassword(randomBytes(32).toString('base64url')), {});
    return this.link(userId, input.issuer, input.subject, input.projectId, input.protocol);
  }

  /** Links the provider's subject to the user (nothing when linked already). */
  async link(userId: string, issuer: string, subject: string, projectId?: string, protocol: SsoProtocol = 'oidc'): Promise<{ userId: string; position: bigint }> {
    const caller = identityProviderCaller(issuer, protocol);
    const result = await this.#w.user(caller, userId, { type: 'link-identity', protocol, issuer, subject, ...auditProject({ projectId }) }, { caller }, {});
    return { userId, position: positionOf(result) };
  }

  /** The role (and custom role) the provider's groups give, recorded as a role change by the sign-in. */
  async changeRole(userId: string, tenantId: string, issuer: string, given: { role: UserRole; roleId: string | null }, projectId?: string, protocol: SsoProtocol = 'oidc'): Promise<{ position: bigint }> {
    const caller = identityProviderCaller(issuer, protocol);
    const command = { type: 'change-role' as const, role: given.role, roleId: given.roleId, ...auditProject({ projectId }) };
    const result = await this.#w.user(caller, userId, command, await this.#w.userContext(caller, given.roleId ? tenantId : undefined), {});
    return { position: positionOf(result) };
  }

  /** Ends a console session because the provider's session ended (its back-channel logout): user.session-revoked, by the provider. */
  async endSession(userId: string, issuer: string, session: { sessionId: string; expiresAt: string }, protocol: SsoProtocol = 'oidc'): Promise<{ position: bigint }> {
    const caller = identityProviderCaller(issuer, protocol);
    const result = await this.#w.user(caller, userId, { type: 'end-session', sessionId: session.sessionId, expiresAt: session.expiresAt }, { caller }, {});
    return { position: positionOf(result) };
  }

  /** Records that a console session began (with a password, or through the provider `issuer`), by the user who signed in. */
  async recordSignIn(caller: Caller, input: { userId: string; sessionId: string; issuer?: string; protocol?: SsoProtocol; idpSessionId?: string; requestedAt?: number; expiresAt: Date; projectId?: string; secondFactor?: SecondFactorProof }, options: WriteOptions = {}): Promise<{ position: bigint }> {
    const via = input.issuer === undefined ? { method: 'password' as const, ...(input.secondFactor ? { secondFactor: input.secondFactor } : {}) } : { method: input.protocol ?? ('oidc' as const), issuer: input.issuer, ...(input.idpSessionId ? { idpSessionId: input.idpSessionId } : {}), ...(input.requestedAt === undefined ? {} : { requestedAt: input.requestedAt }) };
    const command = { type: 'record-sign-in' as const, sessionId: input.sessionId, ...via, expiresAt: input.expiresAt.toISOString(), ...auditProject(input) };
    const result = await this.#w.user(caller, input.userId, command, { caller }, options);
    return { position: positionOf(result) };
  }
}

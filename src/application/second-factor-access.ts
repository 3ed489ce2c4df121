/**
 * A user's second factor for password sign-in, as it is recorded: set up and removed by its owner, reset by a
 * tenant admin for someone who lost theirs, failures recorded as the person who tried, and the tenant's policy.
 * The checks of codes and signatures are made before these commands (src/sign-in/second-factor.ts); the
 * decisions (a step used before, a code spent, a counter that did not move on) are the user decider's.
 */
import type { Caller } from '../domain/access/caller.ts';
import { tenantStream } from '../domain/access/access-streams.ts';
import { tenantDecider } from '../domain/access/tenant-decider.ts';
import type { User, UserCommand, UserContext } from '../domain/access/user-decider.ts';
import type { Passkey, SecondFactorMethod } from '../domain/access/second-factor.ts';
import { auditProject } from '../domain/access/access-values.ts';
import { handleCommand } from './command-handler.ts';
import { positionOf } from './access-input.ts';
import type { AccessWriter } from './access-writer.ts';
import type { WriteOptions } from './access-service-types.ts';

type Audit = WriteOptions & { projectId?: string };

export class SecondFactorAccess {
  readonly #w: AccessWriter;

  constructor(writer: AccessWriter) {
    this.#w = writer;
  }

  /** The user as the log has them, second factor included (its secrets sealed); null for no such user. */
  async user(userId: string): Promise<User | null> {
    return this.#w.loadUser(userId);
  }

  /** Sets up an authenticator app; `recoveryCodeHashes` are recorded when the user holds none. Whether they were. */
  async enrolTotp(caller: Caller, userId: string, sealedSecret: string, recoveryCodeHashes: string[], options: Audit = {}): Promise<{ recoveryCodesIssued: boolean; position: bigint }> {
    return this.#issuing(caller, userId, { type: 'enrol-totp', sealedSecret, recoveryCodeHashes, ...auditProject(options) }, options);
  }

  async removeTotp(caller: Caller, userId: string, options: Audit = {}): Promise<{ position: bigint }> {
    return this.#user(caller, userId, { type: 'remove-totp', ...auditProject(options) }, options);
  }

  /** Registers a checked passkey; `recoveryCodeHashes` are recorded when the user holds none. Whether they were. */
  async registerPasskey(caller: Caller, userId: string, passkey: Passkey, recoveryCodeHashes: string[], options: Audit = {}): Promise<{ recoveryCodesIssued: boolean; position: bigint }> {
    return this.#issuing(caller, userId, { type: 'register-passkey', passkey, recoveryCodeHashes, ...auditProject(options) }, options);
  }

  async removePasskey(caller: Caller, userId: string, credentialId: string, options: Audit = {}): Promise<{ position: bigint }> {
    return this.#user(caller, userId, { type: 'remove-passkey', credentialId, ...auditProject(options) }, options);
  }

  async issueRecoveryCodes(caller: Caller, userId: string, codeHashes: string[], options: Audit = {}): Promise<{ position: bigint }> {
    return this.#user(caller, userId, { type: 'issue-recovery-codes', codeHashes, ...auditProject(options) }, options);
  }

  /** A tenant admin removes every second factor of another user (who lost theirs). */
  async reset(caller: Caller, userId: string, options: Audit = {}): Promise<{ position: bigint }> {
    // A member who is not a tenant_admin resets only someone who may do no more than they: the decider needs the roles.
    return this.#user(caller, userId, { type: 'reset-second-factor', ...auditProject(options) }, options, await this.#w.userContext(caller));
  }

  /** A wrong second factor, recorded as the person it was tried for. */
  async recordFailure(caller: Caller, userId: string, method: SecondFactorMethod, options: Audit = {}): Promise<{ position: bigint }> {
    return this.#user(caller, userId, { type: 'record-second-factor-failure', method, ...auditProject(options) }, options);
  }

  /** Whether the tenant's people must prove a second factor when they sign in with a password. */
  async setPolicy(caller: Caller, tenantId: string, required: boolean, options: Audit = {}): Promise<{ tenantId: string; required: boolean; position: bigint }> {
    const result = await handleCommand(this.#w.log, tenantStream(tenantId), tenantDecider, { type: 'set-second-factor-policy', required, ...auditProject(options) }, { caller }, this.#w.append(caller, options));
    return { tenantId, required: result.state?.secondFactorRequired ?? false, position: positionOf(result) };
  }

  async #user(caller: Caller, userId: string, command: UserCommand, options: WriteOptions, context: UserContext = { caller }): Promise<{ position: bigint }> {
    const result = await this.#w.user(caller, userId, command, context, options);
    return { position: positionOf(result) };
  }

  async #issuing(caller: Caller, userId: string, command: UserCommand, options: WriteOptions): Promise<{ recoveryCodesIssued: boolean; position: bigint }> {
    const result = await this.#w.user(caller, userId, command, { caller }, options);
    return { recoveryCodesIssued: result.events.some((event) => event.type === 'user.recovery-codes-issued'), position: positionOf(result) };
  }
}

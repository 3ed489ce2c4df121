import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { AccessService } from '../application/access-service.ts';
import type { Principal, UserRole } from '../domain/principal.ts';
import { DomainError, forbidden } from '../domain/domain-error.ts';
import { hasSecondFactor, SECOND_FACTOR_REFUSED, secondFactorMethods, type SecondFactorMethod, type SecondFactorProof, type SecondFactorSummary } from '../domain/access/second-factor.ts';
import type { User } from '../domain/access/user-decider.ts';
import type { RelyingParty, SecondFactorChecks, SignInTicket, TotpSetup } from './second-factor.ts';

type UserPrincipal = Extract<Principal, { kind: 'user' }>;

/** What a password sign-in still needs before its session begins. */
export interface SecondFactorChallenge {
  /** Given back with the second factor (sealed; five minutes). */
  ticket: string;
  expiresAt: string;
  /** The ways this person can prove it, passkeys first; empty when they must set one up (enrolmentRequired). */
  methods: SecondFactorMethod[];
  /** The organisation requires a second factor and this person has none: they set up an authenticator app now. */
  enrolmentRequired: boolean;
}

/** The second factor as given: a code (from the app, or a recovery code), or a passkey's answer to the ticket's challenge. */
export type SecondFactorAnswer =
  | { method: 'totp'; code: string; setupToken?: string }
  | { method: 'recovery-code'; code: string }
  | { method: 'passkey'; response: AuthenticationResponseJSON };

/** The throttle refused the attempt before anything was checked. */
export class SecondFactorThrottled extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('Too many wrong second factors: wait before trying again.');
  }
}

/** A session begun, as the caller's issueSession made it. */
export interface IssuedSession {
  token: string;
  claims: { sessionId: string; expiresAt: Date };
}

/**
 * A password sign-in's second step: whether it is needed (the person has a second factor, or their organisation
 * requires one), the passkey challenge, the authenticator app set up on the way in when required, and the
 * check of the answer. A wrong answer is recorded (user.second-factor-failed) and throttled; a right one begins
 * the session, recorded with its proof (user.signed-in), which the user decider refuses when it was used before.
 */
export class SecondFactorSignIn {
  readonly #checks: SecondFactorChecks;
  readonly #access: AccessService;

  constructor(deps: { checks: SecondFactorChecks; access: AccessService }) {
    this.#checks = deps.checks;
    this.#access = deps.access;
  }

  /**
   * After the password was right: null when the session may begin, else what the person must answer. `setUp` is
   * what the access read model says the person set up (not their stream folded on every sign-in): should it say
   * "none" wrongly, the user decider still refuses the password-only sign-in. `required`: the organisation's policy.
   */
  afterPassword(subject: { userId: string; tenantId: string; role: UserRole; email: string }, options: { setUp: SecondFactorSummary | undefined; required: boolean; projectId?: string; cookie: boolean }): SecondFactorChallenge | null {
    const methods = secondFactorMethods(options.setUp);
    const enrolled = methods.includes('passkey') || methods.includes('totp');
    if (!enrolled && !options.required) return null;
    const { ticket, expiresAt } = this.#checks.issueTicket({ ...subject, ...(options.projectId ? { projectId: options.projectId } : {}), cookie: options.cookie });
    return { ticket, expiresAt, methods, enrolmentRequired: !enrolled };
  }

  /** The passkey challenge for this sign-in, and the ticket that now carries it. */
  async passkeyOptions(sealedTicket: string, rp: RelyingParty): Promise<{ options: PublicKeyCredentialRequestOptionsJSON; ticket: string; expiresAt: string }> {
    const ticket = this.#checks.openTicket(sealedTicket);
    const user = await this.#signingIn(ticket);
    const passkeys = user.secondFactor?.passkeys ?? [];
    if (passkeys.length === 0) throw new DomainError('CONFLICT', 'You have no passkey: sign in with your authenticator app or a recovery code.');
    return this.#checks.authenticationOptions(ticket, passkeys, rp);
  }

  /** An authenticator app to set up on the way in, for someone whose organisation requires a second factor and who has none. */
  async totpSetup(sealedTicket: string): Promise<TotpSetup> {
    const ticket = this.#checks.openTicket(sealedTicket);
    const user = await this.#signingIn(ticket);
    if (hasSecondFactor(user.secondFactor)) throw new DomainError('CONFLICT', 'You have a second factor already: sign in with it.');
    return this.#checks.totpSetup(user.id, user.email);
  }

  /**
   * Checks the answer and begins the session: `issueSession` makes it, and the sign-in is recorded with its proof
   * (refused by the decider when the proof was used before). Recovery codes come back when the sign-in set up
   * the authenticator app (shown once).
   */
  async finish(sealedTicket: string, answer: SecondFactorAnswer, rp: RelyingParty, clientIp: string, issueSession: (subject: { userId: string; tenantId: string; role: UserRole }) => Promise<IssuedSession>): Promise<{ ticket: SignInTicket; session: IssuedSession; recoveryCodes?: string[] }> {
    const ticket = this.#checks.openTicket(sealedTicket);
    const decision = this.#checks.throttle.begin(ticket.userId, clientIp);
    if (!decision.allowed) throw new SecondFactorThrottled(decision.retryAfterSeconds);
    const user = await this.#signingIn(ticket);
    // The role as it is now (it may have changed since the password step).
    const caller: UserPrincipal = { kind: 'user', userId: user.id, tenantId: user.tenantId, role: user.role };
    const audit = ticket.projectId ? { projectId: ticket.projectId } : {};
    let recoveryCodes: string[] | undefined;
    let proof: SecondFactorProof | null;
    if (answer.method === 'totp' && answer.setupToken !== undefined) {
      // Set up on the way in: only for someone with no second factor, proven by a first code from the new app.
      if (hasSecondFactor(user.secondFactor)) throw new DomainError('CONFLICT', 'You have a second factor already: sign in with it.');
      const secret = this.#checks.openTotpSetup(user.id, answer.setupToken);
      const step = this.#checks.totpStep(secret, answer.code);
      proof = step === null ? null : { method: 'totp', step };
      if (proof) {
        const codes = this.#checks.newRecoveryCodes();
        const enrolled = await this.#access.secondFactor.enrolTotp(caller, user.id, this.#checks.sealTotpSecret(user.id, secret), codes.hashes, audit);
        if (enrolled.recoveryCodesIssued) recoveryCodes = codes.codes;
      }
    } else {
      proof = await this.#prove(user, ticket, answer, rp);
    }
    if (!proof) return this.#failed(caller, answer.method, audit);
    const session = await issueSession(caller);
    try {
      await this.#access.signIn.recordSignIn(caller, { userId: user.id, sessionId: session.claims.sessionId, expiresAt: session.claims.expiresAt, ...audit, secondFactor: proof });
    } catch (error) {
      // Checked, but used before (a replayed code, a spent recovery code, an answered challenge): a failure too.
      if (error instanceof DomainError && error.code === 'UNAUTHORIZED') return this.#failed(caller, answer.method, audit);
      throw error;
    }
    decision.attempt.succeeded();
    return { ticket, session, ...(recoveryCodes ? { recoveryCodes } : {}) };
  }

  async #prove(user: User, ticket: SignInTicket, answer: SecondFactorAnswer, rp: RelyingParty): Promise<SecondFactorProof | null> {
    const factors = user.secondFactor;
    switch (answer.method) {
      case 'totp': {
        if (!factors?.totp) return null;
        const step = this.#checks.totpStep(this.#checks.openTotpSecret(user.id, factors.totp.sealedSecret), answer.code);
        return step === null ? null : { method: 'totp', step };
      }
      case 'recovery-code': {
        const codeHash = this.#checks.recoveryCodeHash(answer.code);
        return codeHash === null ? null : { method: 'recovery-code', codeHash };
      }
      case 'passkey': {
        try {
          const checked = await this.#checks.verifyAuthentication(ticket, factors?.passkeys ?? [], answer.response, rp);
          return { method: 'passkey', ...checked };
        } catch (error) {
          if (error instanceof DomainError && error.code === 'UNAUTHORIZED') return null;
          throw error;
        }
      }
    }
  }

  async #failed(caller: UserPrincipal, method: SecondFactorMethod, audit: { projectId?: string }): Promise<never> {
    await this.#access.secondFactor.recordFailure(caller, caller.userId, method, audit);
    throw new DomainError('UNAUTHORIZED', SECOND_FACTOR_REFUSED, 'Try again with a new code, or use a recovery code.');
  }

  /** The person the ticket signs in, as the log has them now (a disabled account stops here). */
  async #signingIn(ticket: SignInTicket): Promise<User> {
    const user = await this.#access.secondFactor.user(ticket.userId);
    if (!user || user.tenantId !== ticket.tenantId) throw new DomainError('UNAUTHORIZED', 'This sign-in has expired or is not valid.', 'Sign in again.');
    if (user.disabled) throw forbidden('This account is disabled.', 'Ask a tenant admin to restore access.');
    return user;
  }
}

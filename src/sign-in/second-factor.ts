import { createHash } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Clock } from '../clock.ts';
import { DomainError } from '../domain/domain-error.ts';
import type { UserRole } from '../domain/principal.ts';
import { type Passkey, RECOVERY_CODE_COUNT, recoveryCodeDisplay, recoveryCodeValue, SECOND_FACTOR_REFUSED, totpSecretContext } from '../domain/access/second-factor.ts';
import { LoginThrottle } from '../security/login-throttle.ts';
import { SecretBoxError, type SecretBox } from '../security/secret-box.ts';

/**
 * The checks of a second factor that need secrets or signatures, and the sealed tickets that carry a sign-in
 * from the password to the second factor (no table of pending sign-ins: any instance finishes what another
 * began). What a check proves goes to the user decider as a SecondFactorProof (src/domain/access/second-factor.ts).
 *
 * - TOTP (RFC 6238, SHA-1, six digits, 30 seconds: what authenticator apps make), one step either side for
 *   clock drift; the secret is 160 random bits, sealed with the secrets key for `totp:<userId>`.
 * - Recovery codes: 80 random bits each (16 base32 characters), kept as SHA-256.
 * - Passkeys (WebAuthn, @simplewebauthn/server): the relying party is the host the console is served from; the
 *   challenge rides in the sealed ticket, and the decider takes each challenge's answer once.
 */
export const TICKET_TTL_MS = 5 * 60_000;
export const SETUP_TTL_MS = 10 * 60_000;
const TICKET_CONTEXT = 'second-factor-ticket';
const TOTP_SETUP_CONTEXT = 'totp-setup';
const PASSKEY_SETUP_CONTEXT = 'passkey-setup';
const TOTP_ISSUER = 'annals';
const TOTP_PERIOD_SECONDS = 30;
const SEALED_LIMIT = 8192;

/** Who passed the password step and how their session is to be given (a token or the console's cookie). */
export interface SignInTicket {
  userId: string;
  tenantId: string;
  role: UserRole;
  email: string;
  projectId?: string;
  cookie: boolean;
  expiresAt: number;
  /** A passkey challenge made for this sign-in, and when (ms). */
  challenge?: string;
  challengedAt?: number;
}

/** The relying party a passkey belongs to: the console's host (its id) and origin, as the browser sees them. */
export interface RelyingParty {
  id: string;
  origin: string;
  name: string;
}

export interface TotpSetup {
  /** The secret in base32, for apps that cannot scan. */
  secret: string;
  otpauthUri: string;
  /** The URI as a QR code (a PNG data URL). */
  qrCode: string;
  /** The secret sealed for this user, given back with the first code to finish the setup. */
  setupToken: string;
  expiresAt: string;
}

const refused = (message = SECOND_FACTOR_REFUSED) => new DomainError('UNAUTHORIZED', message, 'Sign in again.');

export class SecondFactorChecks {
  readonly #box: SecretBox;
  readonly #clock: Clock;
  /** Second factors are guessed against 10^6 codes: fewer tries than passwords before the waits grow. */
  readonly throttle: LoginThrottle;

  constructor(deps: { box: SecretBox; clock: Clock }) {
    this.#box = deps.box;
    this.#clock = deps.clock;
    this.throttle = new LoginThrottle({
      clock: deps.clock,
      address: { free: 20, baseMs: 2000, capMs: 15 * 60_000, forgetAfterMs: 60 * 60_000 },
      accountAtAddress: { free: 5, baseMs: 2000, capMs: 15 * 60_000, forgetAfterMs: 60 * 60_000 },
      account: { free: 10, baseMs: 2000, capMs: 15 * 60_000, forgetAfterMs: 60 * 60_000 },
    });
  }

  // ---- tickets

  issueTicket(ticket: Omit<SignInTicket, 'expiresAt'>): { ticket: string; expiresAt: string } {
    const expiresAt = this.#clock.now().getTime() + TICKET_TTL_MS;
    return { ticket: this.#box.seal(JSON.stringify({ ...ticket, expiresAt }), TICKET_CONTEXT), expiresAt: new Date(expiresAt).toISOString() };
  }

  /** The ticket's sign-in, or UNAUTHORIZED for one altered, made with another key, or expired (one message). */
  openTicket(sealed: string): SignInTicket {
    const ticket = this.#open<SignInTicket>(sealed, TICKET_CONTEXT);
    if (!ticket || typeof ticket.userId !== 'string' || typeof ticket.expiresAt !== 'number' || ticket.expiresAt <= this.#clock.now().getTime()) {
      throw refused('This sign-in has expired or is not valid.');
    }
    return ticket;
  }

  // ---- TOTP

  /** A new authenticator secret for `email`, to show once; nothing is recorded until a first code proves the app has it. */
  async totpSetup(userId: string, email: string): Promise<TotpSetup> {
    const secret = new Secret({ size: 20 });
    const totp = new TOTP({ issuer: TOTP_ISSUER, label: email, secret, period: TOTP_PERIOD_SECONDS });
    const otpauthUri = totp.toString();
    const expiresAt = this.#clock.now().getTime() + SETUP_TTL_MS;
    const setupToken = this.#box.seal(JSON.stringify({ userId, secret: secret.base32, expiresAt }), TOTP_SETUP_CONTEXT);
    return { secret: secret.base32, otpauthUri, qrCode: await QRCode.toDataURL(otpauthUri, { errorCorrectionLevel: 'M', margin: 2, width: 240 }), setupToken, expiresAt: new Date(expiresAt).toISOString() };
  }

  /** The secret of a setup begun by this user and not expired (UNAUTHORIZED otherwise). */
  openTotpSetup(userId: string, setupToken: string): string {
    const setup = this.#open<{ userId: string; secret: string; expiresAt: number }>(setupToken, TOTP_SETUP_CONTEXT);
    if (!setup || setup.userId !== userId || setup.expiresAt <= this.#clock.now().getTime()) throw refused('This setup has expired or is not valid: start it again.');
    return setup.secret;
  }

  sealTotpSecret(userId: string, secret: string): string {
    return this.#box.seal(secret, totpSecretContext(userId));
  }

  openTotpSecret(userId: string, sealed: string): string {
    try {
      return this.#box.open(sealed, totpSecretContext(userId));
    } catch (error) {
      if (error instanceof SecretBoxError) throw new DomainError('FORBIDDEN', "Your authenticator app cannot be checked: its secret does not open with this service's SECRETS_KEY.", 'Use a recovery code, or ask a tenant admin to reset your second factor.');
      throw error;
    }
  }

  /** The 30-second step `code` was made in for `secret` (one step of drift either side), or null when it was not. */
  totpStep(secret: string, code: string): number | null {
    const token = code.replace(/\s/g, '');
    if (!/^\d{6}$/.test(token)) return null;
    const timestamp = this.#clock.now().getTime();
    const delta = TOTP.validate({ token, secret: Secret.fromBase32(secret), period: TOTP_PERIOD_SECONDS, timestamp, window: 1 });
    if (delta === null) return null;
    return Math.floor(timestamp / 1000 / TOTP_PERIOD_SECONDS) + delta;
  }

  // ---- recovery codes

  /** Ten new recovery codes as shown (once), and the hashes recorded. */
  newRecoveryCodes(): { codes: string[]; hashes: string[] } {
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => new Secret({ size: 10 }).base32);
    return { codes: codes.map(recoveryCodeDisplay), hashes: codes.map(recoveryCodeHash) };
  }

  /** The hash of a typed recovery code, or null when it cannot be one. */
  recoveryCodeHash(typed: string): string | null {
    const code = recoveryCodeValue(typed);
    return code === null ? null : recoveryCodeHash(code);
  }

  // ---- passkeys

  /** Options for the browser to create a passkey, and the sealed challenge to give back with its answer. */
  async registrationOptions(user: { id: string; email: string }, existing: Passkey[], rp: RelyingParty): Promise<{ options: PublicKeyCredentialCreationOptionsJSON; setupToken: string }> {
    const options = await generateRegistrationOptions({
      rpName: rp.name,
      rpID: rp.id,
      userName: user.email,
      userID: new TextEncoder().encode(user.id),
      attestationType: 'none',
      excludeCredentials: existing.map((passkey) => ({ id: passkey.credentialId, transports: passkey.transports })),
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
      timeout: SETUP_TTL_MS,
    });
    const expiresAt = this.#clock.now().getTime() + SETUP_TTL_MS;
    return { options, setupToken: this.#box.seal(JSON.stringify({ userId: user.id, challenge: options.challenge, rpId: rp.id, expiresAt }), PASSKEY_SETUP_CONTEXT) };
  }

  /** The passkey the browser created, checked against the challenge this user was given (UNAUTHORIZED otherwise). */
  async verifyRegistration(userId: string, setupToken: string, response: RegistrationResponseJSON, rp: RelyingParty, name: string): Promise<Passkey> {
    const setup = this.#open<{ userId: string; challenge: string; rpId: string; expiresAt: number }>(setupToken, PASSKEY_SETUP_CONTEXT);
    if (!setup || setup.userId !== userId || setup.rpId !== rp.id || setup.expiresAt <= this.#clock.now().getTime()) throw refused('This passkey setup has expired or is not valid: start it again.');
    let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
    try {
      verified = await verifyRegistrationResponse({ response, expectedChallenge: setup.challenge, expectedOrigin: rp.origin, expectedRPID: rp.id, requireUserVerification: false });
    } catch (error) {
      throw new DomainError('UNAUTHORIZED', `The passkey was not accepted: ${(error as Error).message}`, 'Try again; if it keeps failing, use another authenticator.');
    }
    if (!verified.verified) throw refused('The passkey was not accepted.');
    const { credential, credentialBackedUp } = verified.registrationInfo;
    return {
      credentialId: credential.id,
      publicKey: Buffer.from(credential.publicKey).toString('base64url'),
      counter: credential.counter,
      name,
      transports: (credential.transports ?? []).slice(0, 10),
      backedUp: credentialBackedUp,
    };
  }

  /** Options for the browser to sign this sign-in's challenge with one of the user's passkeys, and the ticket that carries it. */
  async authenticationOptions(ticket: SignInTicket, passkeys: Passkey[], rp: RelyingParty): Promise<{ options: PublicKeyCredentialRequestOptionsJSON; ticket: string; expiresAt: string }> {
    const options = await generateAuthenticationOptions({
      rpID: rp.id,
      allowCredentials: passkeys.map((passkey) => ({ id: passkey.credentialId, transports: passkey.transports as never })),
      userVerification: 'preferred',
      timeout: TICKET_TTL_MS,
    });
    const { expiresAt: _expiresAt, ...rest } = ticket;
    const reissued = this.issueTicket({ ...rest, challenge: options.challenge, challengedAt: this.#clock.now().getTime() });
    return { options, ...reissued };
  }

  /** Which passkey signed the ticket's challenge, and its counter now (UNAUTHORIZED when none of the user's did). */
  async verifyAuthentication(ticket: SignInTicket, passkeys: Passkey[], response: AuthenticationResponseJSON, rp: RelyingParty): Promise<{ credentialId: string; counter: number; challengedAt: number }> {
    if (!ticket.challenge || ticket.challengedAt === undefined) throw refused('Ask for the passkey sign-in options first.');
    const passkey = passkeys.find((candidate) => candidate.credentialId === response.id);
    if (!passkey) throw refused();
    try {
      const verified = await verifyAuthenticationResponse({
        response,
        expectedChallenge: ticket.challenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.id,
        credential: { id: passkey.credentialId, publicKey: Buffer.from(passkey.publicKey, 'base64url'), counter: passkey.counter, transports: passkey.transports as never },
        requireUserVerification: false,
      });
      if (!verified.verified) throw refused();
      return { credentialId: passkey.credentialId, counter: verified.authenticationInfo.newCounter, challengedAt: ticket.challengedAt };
    } catch (error) {
      if (error instanceof DomainError) throw error;
      throw refused();
    }
  }

  #open<T>(sealed: string, context: string): T | null {
    if (typeof sealed !== 'string' || sealed.length > SEALED_LIMIT) return null;
    try {
      return JSON.parse(this.#box.open(sealed, context)) as T;
    } catch {
      return null;
    }
  }
}

function recoveryCodeHash(code: string): string {
  return createHash('sha256').update(code).digest('hex');
}

import { DomainError, invalid } from '../domain-error.ts';

/**
 * A user's second factor for password sign-in, as pure values and decisions: an authenticator app (TOTP, its
 * secret sealed), passkeys (WebAuthn credentials: their public keys), and recovery codes (hashed, each good once).
 *
 * The checks that need secrets or signatures (the code against the TOTP secret, a passkey's signature) are made
 * before the command, in src/sign-in/second-factor.ts; what they prove reaches the user decider as a
 * SecondFactorProof, and the decider decides what only the history knows: a code's time step not used before
 * (no code signs in twice), a recovery code not spent, a passkey still registered and its counter moving on.
 */
export type SecondFactorMethod = 'totp' | 'recovery-code' | 'passkey';

export const RECOVERY_CODE_COUNT = 10;
export const MAX_PASSKEYS = 20;

export interface Passkey {
  credentialId: string;
  /** The COSE public key (base64url). */
  publicKey: string;
  /** The signature counter last seen (0: the authenticator keeps none). */
  counter: number;
  name: string;
  transports: string[];
  backedUp: boolean;
}

export interface SecondFactors {
  /** The authenticator app: its secret sealed for `totp:<userId>`, and the last 30-second step a code was used in. */
  totp: { sealedSecret: string; lastStep: number } | null;
  /** SHA-256 (hex) of the recovery codes not yet used. */
  recoveryCodeHashes: string[];
  passkeys: Passkey[];
  /** When the challenge of the last passkey sign-in was made (ms): an answer to it, or to an older one, is not taken again. */
  lastPasskeyChallengeAt?: number;
}

/** What a checked second factor proved, for the decider to accept or refuse. */
export type SecondFactorProof =
  | { method: 'totp'; step: number }
  | { method: 'recovery-code'; codeHash: string }
  /** `challengedAt`: when the sign-in's challenge was made (ms); each challenge is answered once. */
  | { method: 'passkey'; credentialId: string; counter: number; challengedAt: number };

export const NO_SECOND_FACTORS: SecondFactors = { totp: null, recoveryCodeHashes: [], passkeys: [] };

/** The record a TOTP secret is sealed for: a sealed secret copied onto another user does not open. */
export function totpSecretContext(userId: string): string {
  return `totp:${userId}`;
}

/** Whether a password alone no longer signs the user in (an authenticator app or a passkey is set up). */
export function hasSecondFactor(factors: SecondFactors | undefined): boolean {
  return !!factors && (factors.totp !== null || factors.passkeys.length > 0);
}

/** The ways the user can prove a second factor now, in the order a login page offers them. */
export function secondFactorMethods(factors: SecondFactors | undefined): SecondFactorMethod[] {
  if (!factors) return [];
  const methods: SecondFactorMethod[] = [];
  if (factors.passkeys.length > 0) methods.push('passkey');
  if (factors.totp) methods.push('totp');
  if (factors.recoveryCodeHashes.length > 0) methods.push('recovery-code');
  return methods;
}

/** One message for a wrong code and a used one: which it was helps nobody but a guesser. */
export const SECOND_FACTOR_REFUSED = 'The code or passkey was not accepted.';

/**
 * Accepts a checked proof against what the history knows, or refuses it (UNAUTHORIZED); the factors after the
 * sign-in (the step or code used up, the counter moved on).
 */
export function acceptProof(factors: SecondFactors | undefined, proof: SecondFactorProof): SecondFactors {
  const refused = () => new DomainError('UNAUTHORIZED', SECOND_FACTOR_REFUSED, 'Try again with a new code, or use a recovery code.');
  if (!factors) throw refused();
  switch (proof.method) {
    case 'totp': {
      // A code signs in once: a step at or before the last one used is a replay (or an older code seen over a shoulder).
      if (!factors.totp || !Number.isSafeInteger(proof.step) || proof.step <= factors.totp.lastStep) throw refused();
      return { ...factors, totp: { ...factors.totp, lastStep: proof.step } };
    }
    case 'recovery-code': {
      if (!factors.recoveryCodeHashes.includes(proof.codeHash)) throw refused();
      return { ...factors, recoveryCodeHashes: factors.recoveryCodeHashes.filter((hash) => hash !== proof.codeHash) };
    }
    case 'passkey': {
      const passkey = factors.passkeys.find((candidate) => candidate.credentialId === proof.credentialId);
      if (!passkey) throw refused();
      // An answer signs in once: its challenge must be newer than the last one answered (a counter of 0 proves nothing).
      if (!Number.isSafeInteger(proof.challengedAt) || proof.challengedAt <= (factors.lastPasskeyChallengeAt ?? -1)) throw refused();
      // A counter that does not move on, where the authenticator keeps one, says the credential was copied.
      if ((passkey.counter > 0 || proof.counter > 0) && proof.counter <= passkey.counter) throw refused();
      return { ...factors, lastPasskeyChallengeAt: proof.challengedAt, passkeys: factors.passkeys.map((candidate) => (candidate === passkey ? { ...passkey, counter: proof.counter } : candidate)) };
    }
  }
}

/** A passkey's name as the user gave it: trimmed, 1 to 100 characters. */
export function passkeyName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > 100) throw invalid('a passkey name is 1 to 100 characters');
  return trimmed;
}

/**
 * A recovery code as typed, in the form its hash was made of: 16 base32 letters and digits (80 random bits),
 * spaces, hyphens and case ignored; null when it cannot be one.
 */
export function recoveryCodeValue(typed: string): string | null {
  const compact = typed.replace(/[\s-]/g, '').toUpperCase();
  return /^[A-Z2-7]{16}$/.test(compact) ? compact : null;
}

/** A recovery code as shown: four groups of four. */
export function recoveryCodeDisplay(code: string): string {
  return code.match(/.{4}/g)!.join('-');
}

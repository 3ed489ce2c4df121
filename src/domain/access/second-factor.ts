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

/** What a user has set up, without secrets or keys: what the access read model keeps and a login page offers. */
export interface SecondFactorSummary {
  /** An authenticator app (TOTP). */
  totp: boolean;
  /** How many passkeys. */
  passkeys: number;
  /** How many recovery codes are left unused. */
  recoveryCodesLeft: number;
}

export const NO_SECOND_FACTOR_SUMMARY: SecondFactorSummary = { totp: false, passkeys: 0, recoveryCodesLeft: 0 };

/** The ways the user can prove a second factor now, in the order a login page offers them. */
export function secondFactorMethods(summary: SecondFactorSummary | undefined): SecondFactorMethod[] {
  if (!summary) return [];
  const methods: SecondFactorMethod[] = [];
  if (summary.passkeys > 0) methods.push('passkey');
  if (summary.totp) methods.push('totp');
  if (summary.recoveryCodesLeft > 0) methods.push('recovery-code');
  return methods;
}

/** One message for a wrong code and a used one: which it was helps nobody but a guesser. */
export const SECOND_FACTOR_REFUSED = 'The code or passkey was not accepted.';

/**
 * Accepts a checked proof against what the history knows, or refuses it (UNAUTHORIZED); the factors after the
 * sign-in (applyProof).
 */
export function acceptProof(factors: SecondFactors | undefined, proof: SecondFactorProof): SecondFactors {
  const refused = () => new DomainError('UNAUTHORIZED', SECOND_FACTOR_REFUSED, 'Try again with a new code, or use a recovery code.');
  if (!factors) throw refused();
  switch (proof.method) {
    case 'totp':
      // A code signs in once: a step at or before the last one used is a replay (or an older code seen over a shoulder).
      if (!factors.totp || !Number.isSafeInteger(proof.step) || proof.step <= factors.totp.lastStep) throw refused();
      break;
    case 'recovery-code':
      if (!factors.recoveryCodeHashes.includes(proof.codeHash)) throw refused();
      break;
    case 'passkey': {
      const passkey = factors.passkeys.find((candidate) => candidate.credentialId === proof.credentialId);
      if (!passkey) throw refused();
      // An answer signs in once: its challenge must be newer than the last one answered (a counter of 0 proves nothing).
      if (!Number.isSafeInteger(proof.challengedAt) || proof.challengedAt <= (factors.lastPasskeyChallengeAt ?? -1)) throw refused();
      // A counter that does not move on, where the authenticator keeps one, says the credential was copied.
      if ((passkey.counter > 0 || proof.counter > 0) && proof.counter <= passkey.counter) throw refused();
      break;
    }
  }
  return applyProof(factors, proof);
}

/** The factors after a sign-in with `proof`: the step used up, the code spent, the passkey's counter and challenge moved on. The decider's acceptance and the fold of user.signed-in both use it. */
export function applyProof(factors: SecondFactors, proof: SecondFactorProof): SecondFactors {
  switch (proof.method) {
    case 'totp':
      return factors.totp ? { ...factors, totp: { ...factors.totp, lastStep: proof.step } } : factors;
    case 'recovery-code':
      return { ...factors, recoveryCodeHashes: factors.recoveryCodeHashes.filter((hash) => hash !== proof.codeHash) };
    case 'passkey':
      return { ...factors, lastPasskeyChallengeAt: proof.challengedAt, passkeys: factors.passkeys.map((passkey) => (passkey.credentialId === proof.credentialId ? { ...passkey, counter: proof.counter } : passkey)) };
  }
}

/** How user.signed-in records a proof: enough to fold the history again (the step, the code spent, the counter, the challenge's time). */
export interface SecondFactorRecord {
  method: SecondFactorMethod;
  totpStep?: number;
  recoveryCodeHash?: string;
  credentialId?: string;
  counter?: number;
  challengedAt?: number;
}

export function proofRecord(proof: SecondFactorProof): SecondFactorRecord {
  switch (proof.method) {
    case 'totp':
      return { method: 'totp', totpStep: proof.step };
    case 'recovery-code':
      return { method: 'recovery-code', recoveryCodeHash: proof.codeHash };
    case 'passkey':
      return { method: 'passkey', credentialId: proof.credentialId, counter: proof.counter, challengedAt: proof.challengedAt };
  }
}

/** The proof a record names back (null for a record missing what its method needs). */
export function proofOfRecord(record: SecondFactorRecord): SecondFactorProof | null {
  switch (record.method) {
    case 'totp':
      return record.totpStep === undefined ? null : { method: 'totp', step: record.totpStep };
    case 'recovery-code':
      return record.recoveryCodeHash === undefined ? null : { method: 'recovery-code', codeHash: record.recoveryCodeHash };
    case 'passkey':
      return record.credentialId === undefined || record.counter === undefined || record.challengedAt === undefined ? null : { method: 'passkey', credentialId: record.credentialId, counter: record.counter, challengedAt: record.challengedAt };
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

import { z } from 'zod';
import { defineEvent } from '../../event-store/event-catalog.ts';
import { credentialId, id, keyHash, sealedSecret, secondFactorMethod } from './access-event-fields.ts';

/**
 * A user's second factor for password sign-in (src/domain/access/second-factor.ts), as the log records it: an
 * authenticator app's secret sealed, passkeys' public keys, recovery codes' hashes; never a secret in clear.
 * In each event `projectId` names the project whose audit log shows it (the console's, where the person acted).
 */
/**
 * The user set up an authenticator app (TOTP, RFC 6238: six digits every 30 seconds): its shared secret sealed with
 * the secrets key for the record `totp:<userId>`, never in clear. From now on a password alone does not sign them in.
 */
export const userTotpEnrolled = defineEvent({
  type: 'user.totp-enrolled',
  version: 1,
  schema: z.object({ userId: id, sealedSecret, projectId: id.optional() }),
});

/** The user removed their authenticator app. */
export const userTotpRemoved = defineEvent({
  type: 'user.totp-removed',
  version: 1,
  schema: z.object({ userId: id, projectId: id.optional() }),
});

/**
 * New recovery codes (each good for one sign-in when the authenticator is lost) replace any left: only their
 * SHA-256 is kept (the codes carry 80 random bits, so the hashes do not give them away); the codes are shown once.
 */
export const userRecoveryCodesIssued = defineEvent({
  type: 'user.recovery-codes-issued',
  version: 1,
  schema: z.object({ userId: id, codeHashes: z.array(keyHash).min(1).max(20), projectId: id.optional() }),
});

/**
 * The user registered a passkey (a WebAuthn credential: a key pair held by their device or password manager).
 * `publicKey`: the credential's COSE public key (base64url), which checks its signatures; `counter`: the
 * signature counter it reported (0 for authenticators that keep none).
 */
export const userPasskeyRegistered = defineEvent({
  type: 'user.passkey-registered',
  version: 1,
  schema: z.object({
    userId: id,
    credentialId,
    publicKey: z.string().regex(/^[A-Za-z0-9_-]{16,2000}$/, 'a base64url COSE public key'),
    counter: z.number().int().min(0),
    name: z.string().min(1).max(100),
    transports: z.array(z.string().min(1).max(30)).max(10),
    backedUp: z.boolean(),
    projectId: id.optional(),
  }),
});

export const userPasskeyRemoved = defineEvent({
  type: 'user.passkey-removed',
  version: 1,
  schema: z.object({ userId: id, credentialId, projectId: id.optional() }),
});

/** A tenant admin removed every second factor of a user who lost theirs (authenticator app, passkeys, recovery codes). */
export const userSecondFactorReset = defineEvent({
  type: 'user.second-factor-reset',
  version: 1,
  schema: z.object({ userId: id, projectId: id.optional() }),
});

/** Someone who knew the user's password gave a wrong second factor (a wrong or used code, or a passkey that did not check). */
export const userSecondFactorFailed = defineEvent({
  type: 'user.second-factor-failed',
  version: 1,
  schema: z.object({ userId: id, method: secondFactorMethod, projectId: id.optional() }),
});

/**
 * The audit key ring's port: the keys that sign what leaves the machine for auditors and witnesses (log
 * checkpoints as C2SP signed notes, audit exports as JWS). A key is Ed25519 and signs raw messages, so that
 * its private half can live where no process can read it (a key file outside DATA_DIR, read-only to the
 * service, or a PKCS#11 token): every format is built on `sign(message)` and never on a key object.
 *
 * Keys rotate: one key signs at a time, and every key that ever signed stays in `publicKeys()` with its
 * validity, so that what a retired key signed still verifies. Every signature names its key (the JWS `kid`,
 * the signed note's key hash).
 */

/** A key's public half and when it signed. */
export interface AuditPublicKeyInfo {
  /** The public key's RFC 7638 JWK thumbprint: the JWS `kid`. */
  keyId: string;
  /** The raw Ed25519 public key (32 bytes). */
  publicKey: Uint8Array;
  /** When the key began to sign (ISO 8601 UTC). */
  validFrom: string;
  /** When it stopped signing (ISO 8601 UTC), or null while it is the current key. */
  validUntil: string | null;
}

/** The key that signs now. */
export interface AuditSigningKey {
  /** The public key's RFC 7638 JWK thumbprint: the JWS `kid`. */
  readonly keyId: string;
  /** The raw Ed25519 public key (32 bytes). */
  readonly publicKey: Uint8Array;
  /** The raw Ed25519 signature (64 bytes) of `message`. */
  sign(message: Uint8Array): Promise<Uint8Array>;
}

export interface AuditKeyRing {
  /**
   * The key that signs now. Its `sign` refuses (AuditKeyRetiredError) once a rotation's successor has taken
   * over and this process cannot sign with it; `current()` itself throws when the key list cannot be read
   * (a key chain file that no longer verifies): ask again for each signature rather than keep the key.
   */
  current(): AuditSigningKey;
  /** Every key that ever signed, current and retired, oldest first. */
  publicKeys(): readonly AuditPublicKeyInfo[];
  /** Releases what the ring holds open (a PKCS#11 session). Idempotent. */
  close(): Promise<void>;
}

/**
 * `sign` refused: the key stopped signing (a rotation announced its successor, whose validity has begun) and
 * this process cannot sign with the successor. Signing again after the process's configuration names the new
 * key (or the key file or token holds it) succeeds; a signature by a retired key would be refused by every
 * verifier, so none is made.
 */
export class AuditKeyRetiredError extends Error {
  override name = 'AuditKeyRetiredError';
}

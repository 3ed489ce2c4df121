/**
 * The key-store port: one secret key per id (a contact-form submission's data key), kept outside the
 * event log, so that destroying a key makes whatever the log holds sealed under it unreadable for good
 * (crypto-shredding: erasure under privacy law in an append-only log). It also keeps the service's signing
 * keys (the audit signing key that signs log anchors and audit exports), by name, apart from those.
 *
 * Every adapter (SQLite file on the embedded default, MongoDB in production) passes
 * test/key-store/key-store.conformance.ts:
 * - put(id, key) stores a key once: putting the same key again succeeds; putting a different key for an id
 *   that holds one fails with KeyStoreError (a key is never replaced: data sealed under it would be lost);
 * - get(id) / getMany(ids) return the key, or null (getMany: no entry) when there is none or it was destroyed;
 * - destroy(id) removes the key for good and is idempotent; an id once destroyed cannot be given a key again
 *   (its tombstone keeps the id, never the key), so a late retry cannot resurrect erased data;
 * - destroyed(id) tells a destroyed key from one that never existed;
 * - putSigningKey(record) keeps the first signing key stored under a name and answers it: a second record
 *   for the name (another process that created its own at the same time) is not stored, and both callers
 *   get the kept one, so every process signs with the same key; signingKey(name) answers it, or null.
 *   Signing keys are never replaced or destroyed through the port, and live apart from submission keys (a
 *   submission key's id never names a signing key).
 * Keys are 32 bytes. Adapters never log or put key bytes in error messages.
 */
export interface KeyStore {
  put(id: string, key: Buffer): Promise<void>;
  get(id: string): Promise<Buffer | null>;
  getMany(ids: readonly string[]): Promise<Map<string, Buffer>>;
  destroy(id: string): Promise<void>;
  destroyed(id: string): Promise<boolean>;
  signingKey(name: string): Promise<SigningKeyRecord | null>;
  putSigningKey(record: SigningKeyRecord): Promise<SigningKeyRecord>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export const KEY_BYTES = 32;

export class KeyStoreError extends Error {
  override name = 'KeyStoreError';
}

export function assertKey(id: string, key: Buffer): void {
  if (typeof id !== 'string' || id.length === 0 || id.length > 200) throw new KeyStoreError('key ids are 1 to 200 characters');
  if (!Buffer.isBuffer(key) || key.length !== KEY_BYTES) throw new KeyStoreError(`keys are ${KEY_BYTES} bytes`);
}

/** A signing key pair as the key store keeps it: its private and public JWK as JSON text. */
export interface SigningKeyRecord {
  /** What the key signs, e.g. `audit`. */
  name: string;
  /** The public key's RFC 7638 thumbprint. */
  keyId: string;
  privateJwk: string;
  publicJwk: string;
  createdAt: string;
}

export function assertSigningKeyRecord(record: SigningKeyRecord): void {
  for (const field of ['name', 'keyId', 'privateJwk', 'publicJwk', 'createdAt'] as const) {
    if (typeof record[field] !== 'string' || record[field].length === 0) throw new KeyStoreError(`a signing key record needs ${field}`);
  }
  if (record.name.length > 200) throw new KeyStoreError('signing key names are 1 to 200 characters');
}

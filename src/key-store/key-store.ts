/**
 * The key-store port: one secret key per id (a contact-form submission's data key), kept outside the
 * event log, so that destroying a key makes whatever the log holds sealed under it unreadable for good
 * (crypto-shredding: erasure under privacy law in an append-only log).
 *
 * Every adapter (SQLite file on the embedded default, MongoDB in production) passes
 * test/key-store/key-store.conformance.ts:
 * - put(id, key) stores a key once: putting the same key again succeeds; putting a different key for an id
 *   that holds one fails with KeyStoreError (a key is never replaced: data sealed under it would be lost);
 * - get(id) / getMany(ids) return the key, or null (getMany: no entry) when there is none or it was destroyed;
 * - destroy(id) removes the key for good and is idempotent; an id once destroyed cannot be given a key again
 *   (its tombstone keeps the id, never the key), so a late retry cannot resurrect erased data;
 * - destroyed(id) tells a destroyed key from one that never existed.
 * Keys are 32 bytes. Adapters never log or put key bytes in error messages.
 */
export interface KeyStore {
  put(id: string, key: Buffer): Promise<void>;
  get(id: string): Promise<Buffer | null>;
  getMany(ids: readonly string[]): Promise<Map<string, Buffer>>;
  destroy(id: string): Promise<void>;
  destroyed(id: string): Promise<boolean>;
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

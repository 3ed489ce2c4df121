import type { AuditSigningKey } from './audit-keys.ts';

/**
 * Where the private halves of audit keys are and how they sign: a key file, a PKCS#11 token, or (the
 * fallback) the key store. The ring (./chained-audit-key-ring.ts) signs with the one of these keys that
 * the key chain names as current.
 */
export interface AuditKeySource {
  readonly kind: 'key-file' | 'pkcs11' | 'key-store';
  /** For messages: which file, token and label (never a PIN). */
  readonly description: string;
  /** The keys it can sign with: a key file's one key; every Ed25519 key under a token's label. */
  keys(): readonly AuditSigningKey[];
  /** Reads them again: a key file replaced in place, a key added to the token under the label. */
  reload(): void;
  /** Warnings about how the keys are kept, for the start-up log. */
  readonly warnings: readonly string[];
  close(): Promise<void>;
}

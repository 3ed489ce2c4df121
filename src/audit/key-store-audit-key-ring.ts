/**
 * The fallback audit key: one Ed25519 key kept in the key store beside the log (DATA_DIR/keys.sqlite, or the
 * `signing_keys` collection on MongoDB), created on first use, the same for every process. It is what a
 * single-machine install that configured nothing signs with; it protects nothing against whoever can read
 * DATA_DIR, its backups or the database (the service warns at start). Its chain is its own announcement
 * alone, made the same way every time (Ed25519 signatures are deterministic), valid from the key's creation.
 *
 * Once an operator configures a key file or a PKCS#11 key, this key becomes the chain's first, retired key:
 * what it signed still verifies, and it announces its successor (./open-audit-key-ring.ts).
 */
import { createPrivateKey, sign } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { KeyStore } from '../key-store/key-store.ts';
import type { AuditSigningKey } from './audit-keys.ts';
import type { AuditKeySource } from './audit-key-source.ts';
import { ChainedAuditKeyRing, fixedKeyChain, type OpenedAuditKeyRing } from './chained-audit-key-ring.ts';
import { jwkOf, keyIdOf, newEd25519PrivateKey, rawOfJwk, rawPublicKeyOf } from './ed25519.ts';
import { announceKey, KeyChain, type KeyAnnouncement } from './key-chain.ts';

/** The name of the audit signing key in the key store. */
export const AUDIT_SIGNING_KEY = 'audit';

/** The key store's audit key and when it was created, or null when it holds none (nothing creates one). */
export async function keyStoreAuditKey(keyStore: KeyStore): Promise<{ key: AuditSigningKey; createdAt: string } | null> {
  const record = await keyStore.signingKey(AUDIT_SIGNING_KEY);
  if (!record) return null;
  const privateKey = createPrivateKey({ key: JSON.parse(record.privateJwk) as never, format: 'jwk' });
  const publicKey = rawOfJwk(JSON.parse(record.publicJwk));
  return { key: { keyId: keyIdOf(publicKey), publicKey, sign: async (message) => new Uint8Array(sign(null, message, privateKey)) }, createdAt: record.createdAt };
}

/** The announcement of the key store's key as the first key of a chain, valid from its creation. */
export async function keyStoreKeyGenesis(stored: { key: AuditSigningKey; createdAt: string }): Promise<KeyAnnouncement> {
  return announceKey({ chain: null, key: stored.key, validFrom: new Date(stored.createdAt) });
}

/** The ring over the key store's audit key, creating it the first time (the key store keeps the first one stored). */
export async function openKeyStoreAuditKeyRing(keyStore: KeyStore, clock: Clock): Promise<OpenedAuditKeyRing> {
  let stored = await keyStoreAuditKey(keyStore);
  if (!stored) {
    const privateKey = newEd25519PrivateKey();
    const publicJwk = jwkOf(rawPublicKeyOf(privateKey));
    await keyStore.putSigningKey({
      name: AUDIT_SIGNING_KEY,
      keyId: keyIdOf(rawOfJwk(publicJwk)),
      privateJwk: JSON.stringify(privateKey.export({ format: 'jwk' })),
      publicJwk: JSON.stringify(publicJwk),
      createdAt: clock.now().toISOString(),
    });
    // Another process may have stored its own first: every process signs with the one kept.
    stored = (await keyStoreAuditKey(keyStore))!;
  }
  const chain = KeyChain.verify([await keyStoreKeyGenesis(stored)]);
  const key = stored.key;
  const source: AuditKeySource = {
    kind: 'key-store',
    description: 'the key store beside the log',
    warnings: [],
    keys: () => [key],
    reload: () => undefined,
    close: async () => undefined,
  };
  return new ChainedAuditKeyRing(source, fixedKeyChain(chain, 'the key store\'s key'), clock);
}

import { createPrivateKey, sign } from 'node:crypto';
import type { JWK } from 'jose';
import type { Clock } from '../clock.ts';
import type { KeyStore } from '../key-store/key-store.ts';
import type { AuditKeyRing, AuditPublicKeyInfo, AuditSigningKey } from './audit-keys.ts';
import { AUDIT_SIGNING_KEY, AuditSigner } from './audit-signer.ts';

/**
 * The audit key ring as it stood before keys left the database: one Ed25519 key, kept in the key store
 * beside the log (created on first use, the same for every process). It signs raw messages through
 * node:crypto, so that every format (signed notes, JWS) can be built on `sign(message)`.
 */
export async function openKeyStoreAuditKeyRing(keyStore: KeyStore, clock: Clock): Promise<AuditKeyRing> {
  await AuditSigner.open(keyStore, clock);
  const record = await keyStore.signingKey(AUDIT_SIGNING_KEY);
  if (!record) throw new Error('the key store kept no audit signing key');
  const privateKey = createPrivateKey({ key: JSON.parse(record.privateJwk) as JWK as never, format: 'jwk' });
  const publicKey = new Uint8Array(Buffer.from((JSON.parse(record.publicJwk) as JWK).x!, 'base64url'));
  const current: AuditSigningKey = {
    keyId: record.keyId,
    publicKey,
    sign: async (message) => new Uint8Array(sign(null, message, privateKey)),
  };
  const info: AuditPublicKeyInfo = { keyId: record.keyId, publicKey, validFrom: record.createdAt, validUntil: null };
  return {
    current: () => current,
    publicKeys: () => [info],
    close: async () => {},
  };
}

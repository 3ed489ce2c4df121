import { CompactSign, calculateJwkThumbprint, compactVerify, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { Clock } from '../clock.ts';
import type { KeyStore } from '../key-store/key-store.ts';

/** The name of the audit signing key in the key store. */
export const AUDIT_SIGNING_KEY = 'audit';
const ALG = 'EdDSA';

/** What the service signs for auditors: log anchors and audit exports, as compact JWS (Ed25519). */
export interface AuditPublicKey {
  /** The public key's RFC 7638 thumbprint, also the JWS `kid`. */
  keyId: string;
  /** The public key as a JWK (kty OKP, crv Ed25519): what auditors verify with. */
  jwk: JWK;
}

/** A signature that does not verify: altered payload, another key, or not a JWS at all. */
export class AuditSignatureError extends Error {
  override name = 'AuditSignatureError';
}

/**
 * Signs with the service's audit key (Ed25519 through jose), kept in the key store: created on first use,
 * the same for every process (the key store keeps the first one stored). The public key is what auditors
 * get (`annals audit public-key`); the private key never leaves the key store and this object.
 */
export class AuditSigner {
  private constructor(
    readonly publicKey: AuditPublicKey,
    private readonly privateKey: Awaited<ReturnType<typeof importJWK>>,
  ) {}

  /** The service's audit signer, creating its key pair in the key store the first time. */
  static async open(keyStore: KeyStore, clock: Clock): Promise<AuditSigner> {
    let record = await keyStore.signingKey(AUDIT_SIGNING_KEY);
    if (!record) {
      const pair = await generateKeyPair(ALG, { crv: 'Ed25519', extractable: true });
      const publicJwk = await exportJWK(pair.publicKey);
      const privateJwk = await exportJWK(pair.privateKey);
      record = await keyStore.putSigningKey({
        name: AUDIT_SIGNING_KEY,
        keyId: await calculateJwkThumbprint(publicJwk),
        privateJwk: JSON.stringify(privateJwk),
        publicJwk: JSON.stringify(publicJwk),
        createdAt: clock.now().toISOString(),
      });
    }
    const publicJwk = JSON.parse(record.publicJwk) as JWK;
    return new AuditSigner({ keyId: record.keyId, jwk: publicJwk }, await importJWK(JSON.parse(record.privateJwk) as JWK, ALG));
  }

  /** A compact JWS over the payload's JSON (header: alg EdDSA, kid). */
  async sign(payload: Record<string, unknown>): Promise<string> {
    return new CompactSign(new TextEncoder().encode(JSON.stringify(payload))).setProtectedHeader({ alg: ALG, kid: this.publicKey.keyId }).sign(this.privateKey);
  }
}

/** The payload of a JWS the public key signed; AuditSignatureError otherwise. */
export async function verifyAuditSignature(jws: string, key: AuditPublicKey): Promise<Record<string, unknown>> {
  try {
    const { payload, protectedHeader } = await compactVerify(jws, await importJWK(key.jwk, ALG), { algorithms: [ALG] });
    if (protectedHeader.kid !== undefined && protectedHeader.kid !== key.keyId) throw new AuditSignatureError(`signed with key ${protectedHeader.kid}, not ${key.keyId}`);
    return JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof AuditSignatureError) throw error;
    throw new AuditSignatureError(`the signature does not verify with key ${key.keyId}: ${(error as Error).message}`);
  }
}

/** The audit public key kept in the key store, or null before anything was signed. */
export async function auditPublicKey(keyStore: KeyStore): Promise<AuditPublicKey | null> {
  const record = await keyStore.signingKey(AUDIT_SIGNING_KEY);
  return record ? { keyId: record.keyId, jwk: JSON.parse(record.publicJwk) as JWK } : null;
}

/**
 * Compact JWS (RFC 7515, alg EdDSA, `kid` the signing key's id) signed through the audit key ring, and
 * verified against every key the ring lists with its validity. A ring key signs raw messages only (a PKCS#11
 * key has no key object), so the JWS is built by hand: the signature is Ed25519 over the ASCII of
 * `base64url(header).base64url(payload)`, which is also what `openssl pkeyutl -verify -rawin` checks.
 *
 * Every payload signed here carries the instant it was signed at (exports: `signedAt`, anchors:
 * `anchoredAt`), taken just before the signature; a verifier refuses a signature whose instant is outside
 * its key's validity (a retired key, or one not yet announced).
 */
import type { Clock } from '../clock.ts';
import { AuditKeyRetiredError, type AuditKeyRing, type AuditPublicKeyInfo, type AuditSigningKey } from './audit-keys.ts';
import { verifyEd25519 } from './ed25519.ts';

const ALG = 'EdDSA';

/** A signature that does not verify: altered payload, unknown or retired key, or not a JWS at all. */
export class AuditSignatureError extends Error {
  override name = 'AuditSignatureError';
}

/** A compact JWS of the payload's JSON, signed by `key` (header {alg: EdDSA, kid}). */
export async function signCompactJws(key: AuditSigningKey, payload: unknown): Promise<string> {
  const input = `${base64urlJson({ alg: ALG, kid: key.keyId })}.${base64urlJson(payload)}`;
  const signature = await key.sign(Buffer.from(input, 'ascii'));
  return `${input}.${Buffer.from(signature).toString('base64url')}`;
}

/** What signs for the audit trail: the ring's current key, with the signing instant in each payload. */
export class AuditSigner {
  constructor(
    readonly ring: AuditKeyRing,
    private readonly clock: Clock,
  ) {}

  /**
   * Signs the payload `build` makes for the key and the instant of signing. A key retired between choosing
   * it and signing (a rotation's successor taking over) is replaced by the ring's new current key, once.
   */
  async sign<T>(build: (signing: { keyId: string; signedAt: string }) => T): Promise<{ jws: string; payload: T; keyId: string }> {
    for (let attempt = 0; ; attempt++) {
      const key = this.ring.current();
      const payload = build({ keyId: key.keyId, signedAt: this.clock.now().toISOString() });
      try {
        return { jws: await signCompactJws(key, payload), payload, keyId: key.keyId };
      } catch (error) {
        if (!(error instanceof AuditKeyRetiredError) || attempt > 0) throw error;
      }
    }
  }
}

/**
 * The payload of a compact JWS signed by one of `keys` at an instant inside that key's validity;
 * AuditSignatureError otherwise. `signedAt` reads the signing instant from the payload.
 */
export function verifyAuditJws(jws: string, keys: readonly AuditPublicKeyInfo[], signedAt: (payload: Record<string, unknown>) => unknown): { payload: Record<string, unknown>; key: AuditPublicKeyInfo } {
  const parts = typeof jws === 'string' ? jws.split('.') : [];
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]+$/.test(p))) throw new AuditSignatureError('not a compact JWS');
  const [protectedPart, payloadPart, signaturePart] = parts as [string, string, string];
  const header = parseJsonObject(protectedPart);
  if (header?.['alg'] !== ALG) throw new AuditSignatureError(`the JWS algorithm is ${JSON.stringify(header?.['alg'])}, not EdDSA`);
  const kid = header['kid'];
  const candidates = typeof kid === 'string' ? keys.filter((k) => k.keyId === kid) : keys;
  if (candidates.length === 0) throw new AuditSignatureError(`signed by key ${String(kid)}, which is not among the audit keys (${keys.map((k) => k.keyId).join(', ') || 'none'})`);
  const input = Buffer.from(`${protectedPart}.${payloadPart}`, 'ascii');
  const signature = Buffer.from(signaturePart, 'base64url');
  const key = candidates.find((k) => verifyEd25519(k.publicKey, input, signature));
  if (!key) throw new AuditSignatureError(`the signature does not verify with key ${candidates.map((k) => k.keyId).join(', ')}`);
  const payload = parseJsonObject(payloadPart);
  if (!payload) throw new AuditSignatureError('the signed payload is not a JSON object');
  const at = signedAt(payload);
  if (typeof at !== 'string' || Number.isNaN(Date.parse(at))) throw new AuditSignatureError('the signed payload carries no signing instant');
  if (!withinValidity(key, at)) {
    throw new AuditSignatureError(`signed at ${at} by key ${key.keyId}, which signs from ${key.validFrom} ${key.validUntil ? `until ${key.validUntil}` : 'on'}: outside its validity`);
  }
  return { payload, key };
}

/** Whether the key signed at `at`: validFrom <= at < validUntil. */
function withinValidity(key: Pick<AuditPublicKeyInfo, 'validFrom' | 'validUntil'>, at: string): boolean {
  const ms = Date.parse(at);
  return ms >= Date.parse(key.validFrom) && (key.validUntil === null || ms < Date.parse(key.validUntil));
}

function base64urlJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function parseJsonObject(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

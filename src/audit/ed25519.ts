/**
 * Ed25519 public keys in the forms the audit formats use: raw (32 bytes, what a signing key reports), a JWK
 * (kty OKP, crv Ed25519), its RFC 7638 thumbprint (the key id, a JWS `kid`), a SubjectPublicKeyInfo PEM for
 * openssl, and a node:crypto key object to verify raw signatures with.
 */
import { createHash, createPrivateKey, createPublicKey, randomBytes, verify, type KeyObject } from 'node:crypto';

export const ED25519_PUBLIC_KEY_BYTES = 32;
export const ED25519_SIGNATURE_BYTES = 64;

/** The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): the raw key follows it. */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
/** The DER prefix of an Ed25519 PKCS #8 private key (RFC 8410): the 32-byte private key (the seed) follows it. */
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * A new Ed25519 private key: 32 random bytes (RFC 8032, 5.1.5), made a key object with createPrivateKey, not
 * with generateKeyPair(Sync). In Node.js 20 a key that generateKeyPair made can hang the process for good when
 * it is exported: the JWK export holds the key's lock while it allocates, a garbage collection meanwhile
 * destroys the finished generation job, and the job's destructor takes the same lock (a test process hung so in
 * CI, 2026-12-07: KeyGenJob's destructor under ExportJWKEdKey). A key made from bytes has no generation job.
 */
export function newEd25519PrivateKey(): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, randomBytes(32)]), format: 'der', type: 'pkcs8' });
}

export interface Ed25519Jwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
}

export function jwkOf(publicKey: Uint8Array): Ed25519Jwk {
  assertRawPublicKey(publicKey);
  return { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') };
}

/** The raw key of an Ed25519 JWK; throws on anything else. */
export function rawOfJwk(jwk: unknown): Uint8Array {
  const candidate = jwk as Partial<Ed25519Jwk> | null;
  if (candidate?.kty !== 'OKP' || candidate.crv !== 'Ed25519' || typeof candidate.x !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(candidate.x)) {
    throw new TypeError('not an Ed25519 public JWK (kty OKP, crv Ed25519, x)');
  }
  return new Uint8Array(Buffer.from(candidate.x, 'base64url'));
}

/** RFC 7638: base64url(SHA-256 of {"crv","kty","x"} in that order, no whitespace). */
export function keyIdOf(publicKey: Uint8Array): string {
  const { crv, kty, x } = jwkOf(publicKey);
  return createHash('sha256').update(JSON.stringify({ crv, kty, x })).digest('base64url');
}

export function publicKeyObject(publicKey: Uint8Array): KeyObject {
  assertRawPublicKey(publicKey);
  return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
}

/** `-----BEGIN PUBLIC KEY-----` (SubjectPublicKeyInfo): what `openssl pkeyutl -verify -pubin -inkey` reads. */
export function publicKeyPem(publicKey: Uint8Array): string {
  return publicKeyObject(publicKey).export({ format: 'pem', type: 'spki' }).toString();
}

/** The raw key of a node:crypto Ed25519 key object (public or private). */
export function rawPublicKeyOf(key: KeyObject): Uint8Array {
  const der = createPublicKey(key).export({ format: 'der', type: 'spki' });
  if (der.length !== SPKI_PREFIX.length + ED25519_PUBLIC_KEY_BYTES || !der.subarray(0, SPKI_PREFIX.length).equals(SPKI_PREFIX)) {
    throw new TypeError('not an Ed25519 key');
  }
  return new Uint8Array(der.subarray(SPKI_PREFIX.length));
}

export function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== ED25519_SIGNATURE_BYTES) return false;
  return verify(null, message, publicKeyObject(publicKey), signature);
}

function assertRawPublicKey(publicKey: Uint8Array): void {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== ED25519_PUBLIC_KEY_BYTES) throw new TypeError(`an Ed25519 public key is ${ED25519_PUBLIC_KEY_BYTES} bytes`);
}

/**
 * The C2SP signed-note form of an audit public key (https://c2sp.org/signed-note, as golang.org/x/mod/sumdb/note
 * reads it): the verifier key `<name>+<key hash>+<base64(0x01 || public key)>`, where 0x01 is the Ed25519
 * algorithm byte and the key hash is the first four bytes of SHA-256(name || "\n" || 0x01 || public key), in
 * hex. The name is the log's origin (./log-origin.ts): the name that signs its checkpoints.
 */
import { createHash } from 'node:crypto';

const ED25519_ALGORITHM = 0x01;

/** A key name a note accepts: non-empty, no Unicode spaces, no "+". */
export function isNoteKeyName(name: string): boolean {
  return name.length > 0 && !/[\s+]/u.test(name) && !/\p{Zs}/u.test(name);
}

/** The four-byte key hash that names the key in a signature line, as a number. */
export function noteKeyHash(name: string, publicKey: Uint8Array): number {
  assertName(name);
  const digest = createHash('sha256').update(`${name}\n`).update(encodedKey(publicKey)).digest();
  return digest.readUInt32BE(0);
}

/** The verifier key: `<name>+<8 hex digits>+<base64 of 0x01 || key>`. */
export function noteVerifierKey(name: string, publicKey: Uint8Array): string {
  const hash = noteKeyHash(name, publicKey).toString(16).padStart(8, '0');
  return `${name}+${hash}+${encodedKey(publicKey).toString('base64')}`;
}

function encodedKey(publicKey: Uint8Array): Buffer {
  if (publicKey.length !== 32) throw new TypeError('an Ed25519 public key is 32 bytes');
  return Buffer.concat([Buffer.of(ED25519_ALGORITHM), publicKey]);
}

function assertName(name: string): void {
  if (!isNoteKeyName(name)) throw new TypeError(`not a signed-note key name (non-empty, no spaces, no "+"): ${JSON.stringify(name)}`);
}

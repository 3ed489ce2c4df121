/**
 * `annals audit public-key`: what an operator gives auditors (and witnesses) once, and again after each
 * rotation: every audit key with its validity, as a JWK, as a SubjectPublicKeyInfo PEM (for openssl) and as
 * a C2SP signed-note verifier key, with the key chain that vouches for the list. An auditor's verifier
 * trusts the list from its first key and checks each later key's announcement by the key before it.
 */
import type { AuditPublicKeyInfo } from './audit-keys.ts';
import { jwkOf, publicKeyPem, type Ed25519Jwk } from './ed25519.ts';
import type { KeyAnnouncement, KeyChain } from './key-chain.ts';
import { noteVerifierKey } from './note-key.ts';

export const AUDIT_KEY_LIST_FORMAT = 'annals-audit-keys';

export interface AuditKeyListing {
  format: typeof AUDIT_KEY_LIST_FORMAT;
  version: 1;
  /** The log's name in signed notes: the name in each `vkey`. */
  origin: string;
  /** The current key, also at the top level for verifiers that read one key ({keyId, jwk}). */
  keyId: string;
  jwk: Ed25519Jwk;
  keys: Array<{
    keyId: string;
    status: 'current' | 'retired' | 'announced';
    validFrom: string;
    validUntil: string | null;
    jwk: Ed25519Jwk;
    vkey: string;
    pem: string;
  }>;
  keyChain: KeyAnnouncement[];
}

export function auditKeyListing(chain: KeyChain, origin: string, now: Date): AuditKeyListing {
  const keys = chain.publicKeys().map((key) => ({
    keyId: key.keyId,
    status: status(key, now),
    validFrom: key.validFrom,
    validUntil: key.validUntil,
    jwk: jwkOf(key.publicKey),
    vkey: noteVerifierKey(origin, key.publicKey),
    pem: publicKeyPem(key.publicKey),
  }));
  const current = chain.signingAt(now) ?? chain.first;
  return { format: AUDIT_KEY_LIST_FORMAT, version: 1, origin, keyId: current.statement.keyId, jwk: jwkOf(current.publicKey), keys, keyChain: chain.announcements() };
}

function status(key: AuditPublicKeyInfo, now: Date): 'current' | 'retired' | 'announced' {
  if (Date.parse(key.validFrom) > now.getTime()) return 'announced';
  return key.validUntil !== null && Date.parse(key.validUntil) <= now.getTime() ? 'retired' : 'current';
}

/**
 * The audit key chain: the list of every key that ever signed for this log, with its validity, in a form no
 * one can extend without a key of the chain. Each key is announced once, in order:
 *
 * - the first (sequence 0, the genesis) is signed by the key itself;
 * - every later one names the key before it and the digest of that key's announcement, and is signed by that
 *   previous key (which vouches for its successor) and by the new key (which proves it holds it).
 *
 * A key signs from its announcement's `validFrom` until the next key's `validFrom` (the current key: until a
 * successor is announced). So a key of one's own cannot be added to the list, nor backdated, without the
 * private half of the key before it; and whoever holds the first key an auditor was given can check the
 * whole list. Validity starts strictly later at each step and a key is announced at most once (a retired
 * key never signs again).
 *
 * Each announcement is a JWS in the General JSON Serialization (RFC 7515 section 7.2.1): {payload,
 * signatures: [{protected, signature}]}, the payload the statement's JSON, each protected header
 * {"alg":"EdDSA","kid":<key id>}, each signature Ed25519 over `protected.payload` (ASCII), as a compact JWS
 * would be: verifiable with `openssl pkeyutl -verify -rawin` (see docs/audit.md). The chain lives in a file
 * outside DATA_DIR (./key-chain-file.ts) and each announcement is also recorded in the log
 * (./key-announcement-log.ts).
 */
import { createHash } from 'node:crypto';
import type { AuditPublicKeyInfo, AuditSigningKey } from './audit-keys.ts';
import { jwkOf, keyIdOf, rawOfJwk, verifyEd25519, type Ed25519Jwk } from './ed25519.ts';

export const KEY_ANNOUNCEMENT_KIND = 'annals-audit-key-announcement';

/** What an announcement states (its JWS payload). */
export interface KeyAnnouncementStatement {
  kind: typeof KEY_ANNOUNCEMENT_KIND;
  version: 1;
  /** Its place in the chain, from 0. */
  sequence: number;
  keyId: string;
  publicKey: Ed25519Jwk;
  /** ISO 8601 UTC with milliseconds: the key signs from this instant; its predecessor signs until it. */
  validFrom: string;
  /** The key before it and the digest of its announcement; null for the first key. */
  previous: { keyId: string; announcement: string } | null;
}

/** One announcement as stored: a JWS, General JSON Serialization. */
export interface KeyAnnouncement {
  payload: string;
  signatures: Array<{ protected: string; signature: string }>;
}

export interface KeyChainEntry {
  announcement: KeyAnnouncement;
  statement: KeyAnnouncementStatement;
  /** `sha256:<hex>` of the statement's bytes (the decoded payload): what the next announcement names. */
  digest: string;
  publicKey: Uint8Array;
  validUntil: string | null;
}

/** The chain does not verify; the message names the announcement (from 1) and what is wrong with it. */
export class KeyChainError extends Error {
  override name = 'KeyChainError';
}

const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export class KeyChain {
  private constructor(readonly entries: readonly KeyChainEntry[]) {}

  /** Verifies every announcement in order (see the module comment); KeyChainError at the first that fails. */
  static verify(announcements: readonly unknown[]): KeyChain {
    if (announcements.length === 0) throw new KeyChainError('the key chain is empty: it needs at least the first key\'s announcement');
    const entries: KeyChainEntry[] = [];
    for (const [index, announcement] of announcements.entries()) entries.push(verifyAnnouncement(announcement, index, entries));
    return new KeyChain(withValidity(entries));
  }

  /** The last key: the one that signs (from its validFrom). */
  get current(): KeyChainEntry {
    return this.entries[this.entries.length - 1]!;
  }

  get first(): KeyChainEntry {
    return this.entries[0]!;
  }

  entry(keyId: string): KeyChainEntry | undefined {
    return this.entries.find((e) => e.statement.keyId === keyId);
  }

  /** The key that signs at `at`: the last one whose validity has begun, or undefined before the first. */
  signingAt(at: Date): KeyChainEntry | undefined {
    let found: KeyChainEntry | undefined;
    for (const entry of this.entries) if (Date.parse(entry.statement.validFrom) <= at.getTime()) found = entry;
    return found;
  }

  publicKeys(): AuditPublicKeyInfo[] {
    return this.entries.map((e) => ({ keyId: e.statement.keyId, publicKey: e.publicKey, validFrom: e.statement.validFrom, validUntil: e.validUntil }));
  }

  announcements(): KeyAnnouncement[] {
    return this.entries.map((e) => e.announcement);
  }

  /** This chain with one more announcement, verified against it. */
  extendedWith(announcement: KeyAnnouncement): KeyChain {
    return KeyChain.verify([...this.announcements(), announcement]);
  }

  /** Whether `other` begins with this chain's announcements (the same statements, in the same order). */
  isPrefixOf(other: KeyChain): boolean {
    return this.entries.length <= other.entries.length && this.entries.every((e, i) => e.digest === other.entries[i]!.digest);
  }
}

/**
 * Announces `key`: as the first key of a new chain (`chain` null; signed by the key itself), or as the
 * successor of the chain's current key, signed by `previous` (which must be that key) and by `key`.
 */
export async function announceKey(options: { chain: KeyChain | null; previous?: AuditSigningKey; key: AuditSigningKey; validFrom: Date }): Promise<KeyAnnouncement> {
  const { chain, previous, key } = options;
  const last = chain?.current;
  if (last && previous?.keyId !== last.statement.keyId) throw new KeyChainError(`a new key is announced by the chain's current key ${last.statement.keyId}, not by ${previous?.keyId ?? 'no key'}`);
  const statement: KeyAnnouncementStatement = {
    kind: KEY_ANNOUNCEMENT_KIND,
    version: 1,
    sequence: chain ? chain.entries.length : 0,
    keyId: key.keyId,
    publicKey: jwkOf(key.publicKey),
    validFrom: options.validFrom.toISOString(),
    previous: last ? { keyId: last.statement.keyId, announcement: last.digest } : null,
  };
  const payload = Buffer.from(JSON.stringify(statement)).toString('base64url');
  const signers = last ? [previous!, key] : [key];
  const signatures = [];
  for (const signer of signers) {
    const header = Buffer.from(JSON.stringify({ alg: 'EdDSA', kid: signer.keyId })).toString('base64url');
    const signature = await signer.sign(Buffer.from(`${header}.${payload}`, 'ascii'));
    signatures.push({ protected: header, signature: Buffer.from(signature).toString('base64url') });
  }
  const announcement: KeyAnnouncement = { payload, signatures };
  // Checked as any reader will: a signer that is not the key it claims fails here, not later.
  if (chain) chain.extendedWith(announcement);
  else KeyChain.verify([announcement]);
  return announcement;
}

function verifyAnnouncement(raw: unknown, index: number, before: readonly KeyChainEntry[]): KeyChainEntry {
  const where = `key announcement ${index + 1}`;
  const fail = (message: string): never => {
    throw new KeyChainError(`${where}: ${message}`);
  };
  const candidate = raw as Partial<KeyAnnouncement> | null;
  if (!candidate || typeof candidate.payload !== 'string' || !Array.isArray(candidate.signatures) || candidate.signatures.length === 0) {
    fail('not a JWS in the General JSON Serialization ({payload, signatures})');
  }
  const announcement = candidate as KeyAnnouncement;
  const bytes = decodeBase64url(announcement.payload) ?? fail('its payload is not base64url');
  let statement: KeyAnnouncementStatement;
  try {
    statement = JSON.parse(bytes.toString('utf8')) as KeyAnnouncementStatement;
  } catch {
    return fail('its payload is not JSON');
  }
  if (statement?.kind !== KEY_ANNOUNCEMENT_KIND || statement.version !== 1) fail(`not an ${KEY_ANNOUNCEMENT_KIND} (version 1)`);
  if (statement.sequence !== index) fail(`it says it is number ${Number(statement.sequence) + 1} of the chain: announcements were removed, added or reordered`);
  let publicKey: Uint8Array;
  try {
    publicKey = rawOfJwk(statement.publicKey);
  } catch (error) {
    return fail((error as Error).message);
  }
  if (statement.keyId !== keyIdOf(publicKey)) fail(`its key id ${JSON.stringify(statement.keyId)} is not the thumbprint of its public key`);
  if (typeof statement.validFrom !== 'string' || !INSTANT.test(statement.validFrom) || Number.isNaN(Date.parse(statement.validFrom))) fail('validFrom is not an ISO 8601 UTC instant with milliseconds');
  const prior = before[index - 1];
  if (!prior) {
    if (statement.previous !== null) fail('the first key names a previous key');
  } else {
    if (!statement.previous || statement.previous.keyId !== prior.statement.keyId || statement.previous.announcement !== prior.digest) {
      fail(`it does not continue from the announcement of key ${prior.statement.keyId} before it`);
    }
    if (Date.parse(statement.validFrom) <= Date.parse(prior.statement.validFrom)) fail(`its validity (${statement.validFrom}) does not start after that of key ${prior.statement.keyId} (${prior.statement.validFrom}): a key cannot be backdated before its predecessor`);
    if (before.some((e) => e.statement.keyId === statement.keyId)) fail(`key ${statement.keyId} was announced before: a retired key never signs again`);
  }
  const required = prior ? [{ keyId: prior.statement.keyId, publicKey: prior.publicKey, role: 'the previous key' }, { keyId: statement.keyId, publicKey, role: 'the announced key itself' }] : [{ keyId: statement.keyId, publicKey, role: 'the key itself' }];
  for (const signer of required) {
    const signed = announcement.signatures.some((s) => {
      const header = typeof s?.protected === 'string' ? parseJson(decodeBase64url(s.protected)) : undefined;
      if (header?.['alg'] !== 'EdDSA' || header['kid'] !== signer.keyId || typeof s.signature !== 'string') return false;
      const signature = decodeBase64url(s.signature);
      return signature !== undefined && verifyEd25519(signer.publicKey, Buffer.from(`${s.protected}.${announcement.payload}`, 'ascii'), signature);
    });
    if (!signed) fail(`no valid signature by ${signer.role} (${signer.keyId}): ${prior ? 'a key is added to the chain only by a signature of the key before it' : 'the first key signs its own announcement'}`);
  }
  return { announcement, statement, digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}`, publicKey, validUntil: null };
}

function withValidity(entries: KeyChainEntry[]): KeyChainEntry[] {
  return entries.map((entry, i) => ({ ...entry, validUntil: entries[i + 1]?.statement.validFrom ?? null }));
}

function decodeBase64url(text: string): Buffer | undefined {
  return /^[A-Za-z0-9_-]*$/.test(text) ? Buffer.from(text, 'base64url') : undefined;
}

function parseJson(bytes: Buffer | undefined): Record<string, unknown> | undefined {
  if (!bytes) return undefined;
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

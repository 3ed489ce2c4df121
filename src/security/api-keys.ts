import { createHash, randomBytes } from 'node:crypto';

/**
 * API key material (spec section 5). A key is shown once, at creation; only its SHA-256 hash and a short
 * display prefix are stored. Keys carry 256 random bits, so a plain (unsalted, fast) hash is enough: the
 * key cannot be guessed, and the hash is the lookup index.
 *
 *   agent key:  sk-agent-<32 random bytes, base64url>      (52 characters)
 *   public key: service_pub_<32 random bytes, base64url>   (55 characters)
 */
export const AGENT_KEY_PREFIX = 'sk-agent-';
export const PUBLIC_KEY_PREFIX = 'service_pub_';

/** Characters of a key shown in lists: 'sk-agent-' plus 3 random characters. */
export const AGENT_KEY_DISPLAY_LENGTH = 12;
/** 'service_pub_' alone is already 12 characters, so public keys show 4 random characters more. */
export const PUBLIC_KEY_DISPLAY_LENGTH = 16;

const RANDOM_BYTES = 32;
const BODY = `[A-Za-z0-9_-]{${Math.ceil((RANDOM_BYTES * 4) / 3)}}`;
const AGENT_KEY_PATTERN = new RegExp(`^${AGENT_KEY_PREFIX}${BODY}$`);
const PUBLIC_KEY_PATTERN = new RegExp(`^${PUBLIC_KEY_PREFIX}${BODY}$`);

export type ApiKeyKind = 'agent' | 'public';

/** A freshly generated key: give `key` to the caller once, store `prefix` and `hash`. */
export interface ApiKeyMaterial {
  key: string;
  prefix: string;
  hash: string;
}

export function generateAgentKey(): string {
  return AGENT_KEY_PREFIX + randomBytes(RANDOM_BYTES).toString('base64url');
}

export function generatePublicKey(): string {
  return PUBLIC_KEY_PREFIX + randomBytes(RANDOM_BYTES).toString('base64url');
}

/** Generates a key of the kind and derives what is stored about it. */
export function newApiKey(kind: ApiKeyKind): ApiKeyMaterial {
  const key = kind === 'agent' ? generateAgentKey() : generatePublicKey();
  return { key, prefix: keyPrefix(key), hash: hashApiKey(key) };
}

/** SHA-256 of the whole key, lowercase hex: what is stored and looked up. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** The part of a key shown in lists (12 characters for agent keys, 16 for public keys). */
export function keyPrefix(key: string): string {
  return key.slice(0, key.startsWith(PUBLIC_KEY_PREFIX) ? PUBLIC_KEY_DISPLAY_LENGTH : AGENT_KEY_DISPLAY_LENGTH);
}

/** Format check before any lookup: a value that fails it is refused without touching a store. */
export function looksLikeAgentKey(value: unknown): value is string {
  return typeof value === 'string' && AGENT_KEY_PATTERN.test(value);
}

export function looksLikePublicKey(value: unknown): value is string {
  return typeof value === 'string' && PUBLIC_KEY_PATTERN.test(value);
}

/** Which kind of key the value looks like, or null for neither. */
export function apiKeyKind(value: unknown): ApiKeyKind | null {
  if (looksLikeAgentKey(value)) return 'agent';
  if (looksLikePublicKey(value)) return 'public';
  return null;
}

/** A stored key hash: 64 lowercase hex digits. */
export const API_KEY_HASH_PATTERN = /^[0-9a-f]{64}$/;

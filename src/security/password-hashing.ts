import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Console passwords, hashed with scrypt (node:crypto), a memory-hard slow KDF.
 *
 * Stored form, self-describing so parameters can be raised later without breaking old hashes:
 *   scrypt$<N>$<r>$<p>$<salt, base64url>$<derived key, base64url>
 *
 * Default parameters N = 2^15, r = 8, p = 1, a 16-byte salt and a 32-byte key: 32 MiB of memory and
 * about 97 ms per hash on this machine (2 cores, Node 20; measured median of 7 runs; 2^14 took 38 ms,
 * 2^16 took 195 ms). OWASP's current scrypt floor is about three times that work; raise
 * DEFAULT_SCRYPT_PARAMS when the hardware allows and `needsRehash` tells the login flow to re-hash the
 * password it has just verified.
 *
 * Passwords are NFKC-normalised before hashing so the same password typed on different keyboards (or
 * with composed and decomposed accents) matches.
 */
export interface ScryptParams {
  /** CPU/memory cost, a power of two. */
  N: number;
  /** Block size. */
  r: number;
  /** Parallelisation. */
  p: number;
}

export const DEFAULT_SCRYPT_PARAMS: Readonly<ScryptParams> = Object.freeze({ N: 2 ** 15, r: 8, p: 1 });

const SALT_BYTES = 16;
const KEY_BYTES = 32;
/** Bounds accepted when reading a stored hash, so a corrupt or hostile record cannot ask for gigabytes. */
const MAX_N = 2 ** 20;
const MAX_R = 32;
const MAX_P = 16;

/** Length limits checked by `passwordProblem`; the upper one keeps hashing cost bounded. */
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 1024;

const HASH_PATTERN = /^scrypt\$(\d{1,8})\$(\d{1,3})\$(\d{1,3})\$([A-Za-z0-9_-]{16,})\$([A-Za-z0-9_-]{43,})$/;

/** A caller-facing reason the password is unacceptable, or null when it is fine. */
export function passwordProblem(password: string): string | null {
  const length = [...password.normalize('NFKC')].length;
  if (length < PASSWORD_MIN_LENGTH) return `password must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (length > PASSWORD_MAX_LENGTH) return `password must be at most ${PASSWORD_MAX_LENGTH} characters`;
  return null;
}

export async function hashPassword(password: string, params: ScryptParams = DEFAULT_SCRYPT_PARAMS): Promise<string> {
  checkParams(params);
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, params, KEY_BYTES);
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/**
 * True when the password matches the stored hash. The derived keys are compared with timingSafeEqual.
 * A malformed stored hash is false, never an exception (the caller answers "email or password is incorrect").
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parsePasswordHash(stored);
  if (!parsed) return false;
  const key = await derive(password, parsed.salt, parsed.params, parsed.key.length);
  return key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
}

/**
 * Spends the same time as a real verification and answers false. Call it when the e-mail is unknown or
 * the account has no hash, so response times do not reveal which e-mails are registered.
 */
export async function verifyPasswordAgainstNothing(password: string): Promise<false> {
  await derive(password, DUMMY_SALT, DEFAULT_SCRYPT_PARAMS, KEY_BYTES);
  return false;
}
const DUMMY_SALT = Buffer.alloc(SALT_BYTES, 0x5a);

/** True when the stored hash was made with other parameters than `params` (or cannot be read). */
export function needsRehash(stored: string, params: ScryptParams = DEFAULT_SCRYPT_PARAMS): boolean {
  const parsed = parsePasswordHash(stored);
  if (!parsed) return true;
  return parsed.params.N !== params.N || parsed.params.r !== params.r || parsed.params.p !== params.p || parsed.key.length !== KEY_BYTES;
}

/** Format check: is this a hash string this module produced (and never a clear password)? */
export function isPasswordHash(value: string): boolean {
  return parsePasswordHash(value) !== null;
}

interface ParsedHash {
  params: ScryptParams;
  salt: Buffer;
  key: Buffer;
}

function parsePasswordHash(stored: string): ParsedHash | null {
  const match = HASH_PATTERN.exec(stored);
  if (!match) return null;
  const params = { N: Number(match[1]), r: Number(match[2]), p: Number(match[3]) };
  if (!validParams(params)) return null;
  const salt = Buffer.from(match[4]!, 'base64url');
  const key = Buffer.from(match[5]!, 'base64url');
  if (salt.length < 16 || key.length < KEY_BYTES || key.length > 64) return null;
  return { params, salt, key };
}

function validParams({ N, r, p }: ScryptParams): boolean {
  const powerOfTwo = Number.isInteger(N) && N >= 2 && (N & (N - 1)) === 0;
  return powerOfTwo && N <= MAX_N && Number.isInteger(r) && r >= 1 && r <= MAX_R && Number.isInteger(p) && p >= 1 && p <= MAX_P;
}

function checkParams(params: ScryptParams): void {
  if (!validParams(params)) throw new RangeError(`invalid scrypt parameters N=${params.N} r=${params.r} p=${params.p}`);
}

function derive(password: string, salt: Buffer, { N, r, p }: ScryptParams, keyLength: number): Promise<Buffer> {
  // scrypt needs 128 * N * r * p bytes; node's default maxmem (32 MiB) is exactly N = 2^15, r = 8, so leave headroom.
  const options: ScryptOptions = { N, r, p, maxmem: 128 * N * r * p + 16 * 1024 * 1024 };
  return new Promise((resolve, reject) => {
    scryptCallback(password.normalize('NFKC'), salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock.ts';

/**
 * The hosted contact page's bot challenge: proof of work, no third-party service.
 *
 * The server issues a token `v1.<payload>.<mac>`: the payload (base64url JSON) names the form it is for,
 * a random nonce, when it was issued, when it expires and the difficulty d; the mac is HMAC-SHA256 over
 * the payload with a server key (derived from the session secret, so every instance shares it). The page's
 * inline script finds a decimal counter c such that SHA-256("<token>:<c>") starts with d zero bits (about
 * 2^d hashes) and sends it as `_pow`. The server checks the mac, the form, the expiry and the work, and a
 * token is spent when its submission is saved: a nonce is used once (remembered in memory until the
 * token expires: per process, best effort, as the rate limits are).
 *
 * Without JavaScript no work arrives; such a post is accepted only when the token is at least
 * `noJsMinMs` old (a person takes that long to fill a form; a bot that waits is slowed to the same pace),
 * and refused altogether when `noJsMinMs` is 0. The honeypot and the per-IP rate limit apply to both paths.
 */
export interface ChallengeOptions {
  /** The HMAC key. */
  key: Buffer;
  /** Leading zero bits asked for (CONTACT_POW_DIFFICULTY). */
  difficulty: number;
  /** How long a token is valid. */
  ttlMs: number;
  /** CONTACT_NOJS_MIN_SECONDS in ms; 0 refuses posts without the work. */
  noJsMinMs: number;
  clock: Clock;
  /** Spent nonces remembered at most (the oldest are forgotten first). */
  maxRemembered?: number;
}

export interface IssuedChallenge {
  token: string;
  difficulty: number;
}

export type ChallengeVerdict =
  | { ok: true; nonce: string; expiresAt: number }
  | { ok: false; reason: 'invalid' | 'expired' | 'spent' | 'unsolved' | 'too-early' | 'javascript-required'; retryAfterSeconds?: number };

interface Payload {
  s: string;
  n: string;
  iat: number;
  exp: number;
  d: number;
}

export class PowChallenges {
  readonly #spent = new Map<string, number>();

  constructor(private readonly options: ChallengeOptions) {
    if (options.key.length < 16) throw new RangeError('the challenge key must be at least 16 bytes');
  }

  get difficulty(): number {
    return this.options.difficulty;
  }

  /** A fresh token for a form (`scope`: project and form ids). */
  issue(scope: string): IssuedChallenge {
    const now = this.options.clock.now().getTime();
    const payload: Payload = { s: scope, n: randomBytes(16).toString('base64url'), iat: now, exp: now + this.options.ttlMs, d: this.options.difficulty };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return { token: `v1.${body}.${this.#mac(body)}`, difficulty: payload.d };
  }

  /** Checks a token and its work (or, without work, its age) for a form; spends nothing. */
  check(token: unknown, solution: unknown, scope: string): ChallengeVerdict {
    if (typeof token !== 'string' || token.length > 1000) return { ok: false, reason: 'invalid' };
    const parts = token.split('.');
    if (parts.length !== 3 || parts[0] !== 'v1') return { ok: false, reason: 'invalid' };
    const [, body, mac] = parts as [string, string, string];
    const expected = Buffer.from(this.#mac(body));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { ok: false, reason: 'invalid' };
    let payload: Payload;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Payload;
    } catch {
      return { ok: false, reason: 'invalid' };
    }
    if (payload.s !== scope) return { ok: false, reason: 'invalid' };
    const now = this.options.clock.now().getTime();
    if (now > payload.exp) return { ok: false, reason: 'expired' };
    this.#sweep(now);
    if (this.#spent.has(payload.n)) return { ok: false, reason: 'spent' };
    if (typeof solution === 'string' && solution !== '') {
      if (!/^\d{1,16}$/.test(solution) || leadingZeroBits(createHash('sha256').update(`${token}:${solution}`).digest()) < payload.d) return { ok: false, reason: 'unsolved' };
      return { ok: true, nonce: payload.n, expiresAt: payload.exp };
    }
    if (this.options.noJsMinMs === 0) return { ok: false, reason: 'javascript-required' };
    const age = now - payload.iat;
    if (age < this.options.noJsMinMs) return { ok: false, reason: 'too-early', retryAfterSeconds: Math.ceil((this.options.noJsMinMs - age) / 1000) };
    return { ok: true, nonce: payload.n, expiresAt: payload.exp };
  }

  /** Spends a checked token; false when it was spent meanwhile (two posts of one page at once). */
  spend(verdict: { nonce: string; expiresAt: number }): boolean {
    if (this.#spent.has(verdict.nonce)) return false;
    this.#spent.set(verdict.nonce, verdict.expiresAt);
    const max = this.options.maxRemembered ?? 100_000;
    while (this.#spent.size > max) this.#spent.delete(this.#spent.keys().next().value as string);
    return true;
  }

  /** Gives a spent token back (its submission was refused after all: the form comes back with errors). */
  unspend(verdict: { nonce: string }): void {
    this.#spent.delete(verdict.nonce);
  }

  #mac(body: string): string {
    return createHmac('sha256', this.options.key).update(body).digest('base64url');
  }

  #sweep(now: number): void {
    for (const [nonce, expiresAt] of this.#spent) {
      if (expiresAt >= now) break;
      this.#spent.delete(nonce);
    }
  }
}

export function leadingZeroBits(bytes: Uint8Array): number {
  let bits = 0;
  for (const byte of bytes) {
    if (byte === 0) {
      bits += 8;
      continue;
    }
    bits += Math.clz32(byte) - 24;
    break;
  }
  return bits;
}

/** Finds a solution (tests and tools; the page does the same in its inline script). */
export function solveChallenge(token: string, difficulty: number): string {
  for (let counter = 0; ; counter++) {
    if (leadingZeroBits(createHash('sha256').update(`${token}:${counter}`).digest()) >= difficulty) return String(counter);
  }
}

import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { jwtVerify, SignJWT, type JWTPayload } from 'jose';
import type { Clock } from '../clock.ts';
import type { UserRole } from '../domain/principal.ts';

/**
 * Signed JWTs (jose, HS256) for the two token-carried credentials of spec section 5:
 * - console sessions: sub = userId, tid = tenantId, role, iat, exp (12 hours by default);
 * - preview tokens: pid = projectId, rid = revisionId, sub = the user who asked, exp 15 minutes.
 *
 * The two differ in audience ('annals:console' / 'annals:preview') and in the `typ` header
 * ('session+jwt' / 'preview+jwt'), and each verifier demands its own, so a preview link cannot be used as a
 * session and a session cannot open a preview. Both are signed with one secret (at least 32 bytes, from
 * settings); the algorithm is pinned to HS256 on verification, so 'none' and key-confusion tricks fail.
 *
 * A console session kept in a cookie has a CSRF token (csrfToken): an HMAC of the session's id under the same
 * secret, which the console sends back in a header on every write (the synchronizer token pattern, without
 * a table of tokens: it is derived, so every instance checks it and it ends with the session).
 *
 * Time comes from the injected Clock, for signing and (through jose's `currentDate`) for verification.
 * Every failure is one TokenError whose reason is 'expired' or 'invalid' and whose message says nothing
 * more: no claim names, no library messages.
 */
export const SESSION_TTL_SECONDS = 12 * 60 * 60;
export const PREVIEW_TTL_SECONDS = 15 * 60;
export const MIN_SECRET_BYTES = 32;

const ISSUER = 'annals';
const SESSION_AUDIENCE = 'annals:console';
const PREVIEW_AUDIENCE = 'annals:preview';
const SESSION_TYP = 'session+jwt';
const PREVIEW_TYP = 'preview+jwt';
const ALGORITHM = 'HS256';

export type TokenFailure = 'expired' | 'invalid';

export class TokenError extends Error {
  override name = 'TokenError';
  constructor(readonly reason: TokenFailure) {
    super(reason === 'expired' ? 'token expired' : 'token invalid');
  }
}

export interface SessionSubject {
  userId: string;
  tenantId: string;
  role: UserRole;
}

export interface SessionClaims extends SessionSubject {
  /** The token's id (jti), for audit lines and a future deny-list. */
  sessionId: string;
  issuedAt: Date;
  expiresAt: Date;
}

export interface PreviewSubject {
  projectId: string;
  revisionId: string;
  /** The console user who asked for the preview link. */
  userId: string;
}

export interface PreviewClaims extends PreviewSubject {
  issuedAt: Date;
  expiresAt: Date;
}

export interface SessionTokensOptions {
  /** The signing secret from settings: at least 32 bytes (a string is taken as UTF-8). */
  secret: string | Uint8Array;
  clock: Clock;
  sessionTtlSeconds?: number;
  previewTtlSeconds?: number;
}

export class SessionTokens {
  readonly #key: Uint8Array;
  readonly #clock: Clock;
  readonly #sessionTtl: number;
  readonly #previewTtl: number;
  /**
   * Tokens this process has verified, by audience and token, with their claims: the console sends its session's
   * token with every request, and a verification by jose (an HMAC through WebCrypto, a job handed to another
   * thread) cost ~60 µs of CPU. Only a token whose signature and claims were checked is kept, so nobody can
   * fill it with tokens of their own; a kept token is checked again for expiry at each use (the clock). At most
   * VERIFIED_TOKENS_KEPT, the oldest dropped first. A revoked session is refused after this, by its record.
   */
  readonly #verified = new Map<string, JWTPayload>();

  constructor(options: SessionTokensOptions) {
    const key = typeof options.secret === 'string' ? new TextEncoder().encode(options.secret) : new Uint8Array(options.secret);
    if (key.byteLength < MIN_SECRET_BYTES) throw new RangeError(`the session signing secret must be at least ${MIN_SECRET_BYTES} bytes`);
    this.#key = key;
    this.#clock = options.clock;
    this.#sessionTtl = positiveSeconds(options.sessionTtlSeconds ?? SESSION_TTL_SECONDS, 'sessionTtlSeconds');
    this.#previewTtl = positiveSeconds(options.previewTtlSeconds ?? PREVIEW_TTL_SECONDS, 'previewTtlSeconds');
  }

  /** A console session token for a signed-in user. */
  async issueSession(subject: SessionSubject): Promise<{ token: string; claims: SessionClaims }> {
    const { iat, exp } = this.#window(this.#sessionTtl);
    const sessionId = randomUUID();
    const token = await new SignJWT({ tid: subject.tenantId, role: subject.role })
      .setProtectedHeader({ alg: ALGORITHM, typ: SESSION_TYP })
      .setIssuer(ISSUER)
      .setAudience(SESSION_AUDIENCE)
      .setSubject(subject.userId)
      .setJti(sessionId)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(this.#key);
    return { token, claims: { ...subject, sessionId, issuedAt: new Date(iat * 1000), expiresAt: new Date(exp * 1000) } };
  }

  /** The claims of a valid, unexpired session token; TokenError otherwise. */
  async verifySession(token: string): Promise<SessionClaims> {
    const payload = await this.#verify(token, SESSION_AUDIENCE, SESSION_TYP);
    const { sub, tid, role, jti } = payload;
    if (!nonEmpty(sub) || !nonEmpty(tid) || !nonEmpty(jti) || (role !== 'tenant_admin' && role !== 'tenant_user')) throw new TokenError('invalid');
    return { userId: sub, tenantId: tid, role, sessionId: jti, issuedAt: new Date(payload.iat! * 1000), expiresAt: new Date(payload.exp! * 1000) };
  }

  /** The CSRF token of a session: base64url HMAC-SHA256 of its id; the same on every instance sharing the secret. */
  csrfToken(sessionId: string): string {
    return createHmac('sha256', this.#key).update(`annals:csrf:${sessionId}`).digest('base64url');
  }

  /** Whether `given` is the session's CSRF token (compared in constant time). */
  isCsrfToken(sessionId: string, given: string | undefined): boolean {
    if (typeof given !== 'string' || given.length === 0 || given.length > 200) return false;
    const expected = Buffer.from(this.csrfToken(sessionId));
    const actual = Buffer.from(given);
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  }

  /** A preview token for one revision of one project, valid 15 minutes by default. */
  /**
   * With `issuedAt` (a replay of an idempotent request), the token of that moment: HS256 makes the same claims
   * the same token, so nothing of it needs keeping.
   */
  async issuePreview(subject: PreviewSubject, options: { issuedAt?: Date } = {}): Promise<{ token: string; claims: PreviewClaims }> {
    const { iat, exp } = this.#window(this.#previewTtl, options.issuedAt);
    const token = await new SignJWT({ pid: subject.projectId, rid: subject.revisionId })
      .setProtectedHeader({ alg: ALGORITHM, typ: PREVIEW_TYP })
      .setIssuer(ISSUER)
      .setAudience(PREVIEW_AUDIENCE)
      .setSubject(subject.userId)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(this.#key);
    return { token, claims: { ...subject, issuedAt: new Date(iat * 1000), expiresAt: new Date(exp * 1000) } };
  }

  /**
   * The claims of a valid, unexpired preview token. With `projectId`, a token for another project is
   * 'invalid' (the project-pinned base names the project; a token must not open another one's drafts).
   */
  async verifyPreview(token: string, expected: { projectId?: string } = {}): Promise<PreviewClaims> {
    const payload = await this.#verify(token, PREVIEW_AUDIENCE, PREVIEW_TYP);
    const { sub, pid, rid } = payload;
    if (!nonEmpty(sub) || !nonEmpty(pid) || !nonEmpty(rid)) throw new TokenError('invalid');
    if (expected.projectId !== undefined && pid !== expected.projectId) throw new TokenError('invalid');
    return { userId: sub, projectId: pid, revisionId: rid, issuedAt: new Date(payload.iat! * 1000), expiresAt: new Date(payload.exp! * 1000) };
  }

  #remember(key: string, payload: JWTPayload): void {
    if (this.#verified.size >= VERIFIED_TOKENS_KEPT) this.#verified.delete(this.#verified.keys().next().value!);
    this.#verified.set(key, payload);
  }

  #window(ttlSeconds: number, at: Date = this.#clock.now()): { iat: number; exp: number } {
    const iat = Math.floor(at.getTime() / 1000);
    return { iat, exp: iat + ttlSeconds };
  }

  async #verify(token: string, audience: string, typ: string): Promise<JWTPayload> {
    if (typeof token !== 'string' || token.length === 0 || token.length > 4096) throw new TokenError('invalid');
    const key = `${audience}\n${token}`;
    const known = this.#verified.get(key);
    if (known) {
      // Verified before: only the time has moved on. Expired as jose has it (exp <= now, in whole seconds).
      if (known.exp! > Math.floor(this.#clock.now().getTime() / 1000)) return known;
      this.#verified.delete(key);
      throw new TokenError('expired');
    }
    try {
      const { payload } = await jwtVerify(token, this.#key, {
        algorithms: [ALGORITHM],
        issuer: ISSUER,
        audience,
        typ,
        currentDate: this.#clock.now(),
        requiredClaims: ['iss', 'aud', 'sub', 'iat', 'exp'],
      });
      this.#remember(key, Object.freeze(payload));
      return payload;
    } catch (error) {
      // jose's JWTExpired is only raised after the signature has been checked, so 'expired' is never
      // reported for a forged token.
      throw new TokenError((error as { code?: unknown }).code === 'ERR_JWT_EXPIRED' ? 'expired' : 'invalid');
    }
  }
}

/** How many verified tokens a process keeps (see SessionTokens.#verified): ~0.5 KB each. */
export const VERIFIED_TOKENS_KEPT = 10_000;

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function positiveSeconds(value: number, name: string): number {
  if (!Number.isInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive whole number of seconds`);
  return value;
}

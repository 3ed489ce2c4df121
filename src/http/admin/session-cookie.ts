import type { Context } from 'koa';
import { forbidden } from '../errors/error-factory.ts';

/**
 * The console's session cookie and the checks a cookie-authenticated write must pass (DESIGN: the session kept
 * where injected script cannot read it and where it survives a reload).
 *
 * The cookie holds the session token (the same signed JWT a bearer token is): HttpOnly, so no script reads it;
 * SameSite=Strict, so no other site's page sends it (the console's own requests carry it after a link from an
 * e-mail too: they are made by the console's page, on its own site); Path=/ and no Domain; Max-Age = the
 * session's lifetime, so it survives reloads, new tabs and a browser restart until it expires or is signed out.
 * Over HTTPS (as the request arrives, or as a trusted proxy says with TRUST_PROXY) it is Secure and named
 * `__Host-annals-session`: the prefix makes browsers refuse one set without Secure, from another host or for a
 * narrower path, so nothing on plain HTTP or on a sibling domain can plant one; over HTTPS only that name is
 * read. Over plain HTTP (`npm start` at http://localhost) it is `annals-session`, without Secure, which a
 * browser would not keep there.
 *
 * Writes (any method but GET, HEAD and OPTIONS) authenticated by the cookie must prove they come from the
 * console's page: the X-CSRF-Token header must hold the session's CSRF token (the synchronizer token pattern,
 * OWASP's primary defence for cookie sessions: it does not depend on headers a proxy or an old browser may
 * drop), and, as defence in depth, a request whose Sec-Fetch-Site says it is not same-origin, or whose Origin
 * is another origin, is refused even with it. Requests with an Authorization header never read the cookie and
 * need neither (a browser never adds that header by itself): bearer tokens for API clients and the MCP server
 * work as before.
 */
export const SECURE_COOKIE = '__Host-annals-session';
export const PLAIN_COOKIE = 'annals-session';
export const CSRF_HEADER = 'X-CSRF-Token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function cookieName(ctx: Context): string {
  return ctx.secure ? SECURE_COOKIE : PLAIN_COOKIE;
}

/** The session token of the request's cookie, if it has one (only the Secure one over HTTPS). */
export function sessionCookieOf(ctx: Context): string | undefined {
  return ctx.cookies.get(cookieName(ctx)) || undefined;
}

function cookieHeader(ctx: Context, value: string, maxAgeSeconds: number): string {
  const attributes = [`${cookieName(ctx)}=${value}`, 'Path=/', `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Strict'];
  if (ctx.secure) attributes.push('Secure');
  return attributes.join('; ');
}

/** Sets the session cookie, valid until the session expires. */
export function setSessionCookie(ctx: Context, token: string, expiresAt: Date, now: Date): void {
  ctx.append('Set-Cookie', cookieHeader(ctx, token, Math.max(0, Math.ceil((expiresAt.getTime() - now.getTime()) / 1000))));
}

/** The Set-Cookie header value that makes the browser forget the session cookie. */
export function clearedSessionCookie(ctx: Context): string {
  return cookieHeader(ctx, '', 0);
}

export function isWrite(ctx: Context): boolean {
  return !SAFE_METHODS.has(ctx.method);
}

/**
 * Refuses a request that a browser says comes from another origin: Sec-Fetch-Site other than same-origin, or an
 * Origin that is not the service's own (as the request reached it, or as a trusted proxy forwards it). A request
 * with neither header (not from a browser, or an old one) passes this check; the CSRF token is then what counts.
 */
export function assertSameOrigin(ctx: Context): void {
  const site = ctx.get('Sec-Fetch-Site');
  if (site && site !== 'same-origin') throw crossOrigin(`the browser says it comes from a ${site} page`);
  const origin = ctx.get('Origin');
  const own = `${ctx.protocol}://${ctx.host}`;
  if (origin && origin.toLowerCase() !== own.toLowerCase()) throw crossOrigin(`it comes from ${origin.slice(0, 200)}, not ${own}`);
}

function crossOrigin(why: string) {
  return forbidden(`A request signed in with the console's session cookie must come from the console's own page: ${why}.`, {
    hint: 'API clients send Authorization: Bearer <token> instead of the cookie.',
  });
}

export function missingCsrfToken() {
  return forbidden(`A write signed in with the console's session cookie needs the session's CSRF token in the ${CSRF_HEADER} header.`, {
    hint: `GET /admin/v1/auth/session answers the token (csrfToken); API clients send Authorization: Bearer <token> instead of the cookie.`,
  });
}

import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { newRouter } from '../router.ts';
import type { ApiRegistry } from './api-registry.ts';
import type { AdminDeps } from './admin-context.ts';
import { isUuid } from './request-body.ts';
import { setSessionCookie } from './session-cookie.ts';
import { domainErrorToHttp } from '../errors/domain-error-to-http.ts';
import { toHttpError } from '../errors/to-http-error.ts';
import { HttpError } from '../errors/http-error.ts';
import { unavailable, validationError } from '../errors/error-factory.ts';
import { OidcError } from '../../sign-in/oidc-relying-party.ts';
import type { OidcSignIn, OidcTestResult } from '../../sign-in/oidc-sign-in.ts';
import { FLOW_TTL_MS } from '../../sign-in/oidc-sign-in.ts';
import { escapeHtml } from '../../html-escape.ts';

/**
 * The console's sign-in through the tenant's OpenID Connect provider: which ways a project's login page offers,
 * the start (a redirect to the provider) and the callback (the provider's redirect back, which ends in the
 * console with a session cookie). The flow's state, nonce and PKCE verifier ride in a cookie sealed with the
 * secrets key, scoped to these routes' path, HttpOnly and SameSite=Lax (the provider's redirect back is a
 * top-level navigation from its site, which Lax lets the cookie follow and Strict would not).
 *
 * The callback is a page a browser lands on: a refusal answers a short HTML page that says why (or the error
 * envelope to a client that does not ask for HTML), never a redirect that carries a message in its URL.
 */
export const OIDC_PATH = '/admin/v1/auth/oidc';
const FLOW_COOKIE = 'annals-oidc-flow';
const CONSOLE_PATH = '/console/';

const backchannelLogoutBody = z.object({ logout_token: z.string().min(1).max(8192).describe("The provider's signed logout token (a JWT)") });
const signInOptionsQuery = z.object({ projectId: z.string().max(100) });
const startQuery = signInOptionsQuery.extend({ test: z.enum(['true', 'false']).optional().describe("true: a test of the settings (the console's Test sign-in): the callback shows what the provider sent and what a sign-in would do, signs nobody in and records nothing") });
const signInOptionsSchema = z
  .object({
    password: z.boolean().describe('Whether e-mail and password sign in here (false when the organisation signs in with single sign-on only).'),
    oidc: z.object({ startUrl: z.string().describe('Where the login page sends the browser to sign in with the organisation\'s identity provider.') }).nullable(),
  })
  .meta({ id: 'SignInOptions' });

/** Where the provider sends the browser back: this service's callback, as the request reached it (TRUST_PROXY decides what a proxy may say). */
export function oidcRedirectUri(ctx: Context): string {
  return `${ctx.protocol}://${ctx.host}${OIDC_PATH}/callback`;
}

/** Where the provider posts its logout tokens for the tenant's sessions. */
export function oidcBackchannelLogoutUri(ctx: Context, tenantId: string): string {
  return `${ctx.protocol}://${ctx.host}${OIDC_PATH}/backchannel-logout/${tenantId}`;
}

/** The flow cookie's name: over HTTPS with the __Secure- prefix, which browsers refuse to take without Secure (nothing on plain HTTP can plant one). */
function flowCookieName(ctx: Context): string {
  return ctx.secure ? `__Secure-${FLOW_COOKIE}` : FLOW_COOKIE;
}

function flowCookie(ctx: Context, value: string, maxAgeSeconds: number): string {
  const attributes = [`${flowCookieName(ctx)}=${value}`, `Path=${OIDC_PATH}/`, `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Lax'];
  if (ctx.secure) attributes.push('Secure');
  return attributes.join('; ');
}

/** The refusal of a sign-in as the spec's envelope would say it: the provider's trouble is 503 (retryable), its refusals 401. */
function signInError(error: unknown): HttpError {
  if (error instanceof OidcError) {
    if (error.failure === 'provider-unreachable') return unavailable(error.message, { retryAfterSeconds: 30 });
    return new HttpError({ status: 401, code: 'UNAUTHORIZED', message: error.message, hint: 'Start again from the login page; if it keeps failing, ask your administrator to check the single sign-on settings.', retryable: false });
  }
  return domainErrorToHttp(error) ?? toHttpError(error);
}

/** Answers a refused sign-in: a page for a browser, the envelope for anything else; the provider's words go to the log. */
function answerRefusal(ctx: Context, deps: AdminDeps, error: unknown): void {
  const http = signInError(error);
  if (http.status >= 500 && !(error instanceof OidcError)) throw error;
  if (error instanceof OidcError) deps.logger.warn({ failure: error.failure, detail: error.detail, requestId: ctx.state.requestId }, 'single sign-on refused');
  ctx.status = http.status;
  ctx.set('Cache-Control', 'no-store');
  for (const [name, value] of Object.entries(http.headers)) ctx.set(name, value);
  if (ctx.accepts('json', 'html') === 'html') {
    sendPage(ctx, 'Sign-in failed', `<p>${escapeHtml(http.message)}</p>${http.hint ? `<p>${escapeHtml(http.hint)}</p>` : ''}<p><a href="${CONSOLE_PATH}">Back to the login page</a></p>`);
    return;
  }
  ctx.body = { error: { code: http.code, message: http.message, ...(http.hint ? { hint: http.hint } : {}), retryable: http.retryable ?? false } };
}

/** The page a test of the settings ends on: what the provider sent, and what a sign-in would have done. */
function answerTest(ctx: Context, result: OidcTestResult): void {
  const outcome =
    result.outcome === 'refused'
      ? `A sign-in would be refused: ${result.refusal ?? ''}`
      : `A sign-in would ${result.outcome === 'provision' ? 'create a new user' : result.outcome === 'link' ? 'link the existing user with this address' : 'sign in the user linked to this person'}, as ${result.role}.`;
  const rows: Array<[string, string]> = [
    ['Subject (sub)', result.subject],
    ['E-mail', result.email === null ? '(none sent)' : `${result.email} (${result.emailVerified ? 'verified' : 'not said to be verified'})`],
    [`Groups (claim "${result.groupsClaim}")`, result.groups === null ? '(none sent)' : JSON.stringify(result.groups)],
  ];
  ctx.status = 200;
  ctx.set('Cache-Control', 'no-store');
  sendPage(ctx, 'Single sign-on test', `<p>The identity provider signed you in. Nobody was signed in here and nothing was recorded.</p><table>${rows.map(([name, value]) => `<tr><th scope="row">${escapeHtml(name)}</th><td>${escapeHtml(value)}</td></tr>`).join('')}</table><p><strong>${escapeHtml(outcome)}</strong></p><p><a href="${CONSOLE_PATH}p/${encodeURIComponent(result.projectId)}/people">Back to the settings</a></p>`);
}

/** A page a sign-in ends on outside the console: `title` as its heading over `body` (HTML, escaped by the caller); no script may run on it. */
function sendPage(ctx: Context, title: string, body: string): void {
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
  ctx.body = `<!doctype html><html lang="en"><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#1f2933}th{text-align:left;padding-right:1rem;vertical-align:top}a{color:#1d4ed8}</style><h1>${escapeHtml(title)}</h1>${body}</html>`;
}

export function oidcRoutes(deps: AdminDeps & { oidc: OidcSignIn }, api: ApiRegistry): Router {
  const router = newRouter();
  const { oidc } = deps;

  api.add(router, { method: 'get', path: '/auth/sign-in-options', operationId: 'getSignInOptions', permission: 'none', auth: 'none', summary: "The ways a project's console login page signs people in: password, and the organisation's identity provider when single sign-on is set up", tag: 'Sessions', query: signInOptionsQuery, responses: { 200: { description: 'The sign-in options', schema: signInOptionsSchema } }, errors: { 400: ['VALIDATION_ERROR'] } }, async (ctx, { query }) => {
    if (!isUuid(query.projectId)) throw validationError('projectId must be a project id (a UUID).');
    const found = await oidc.settingsForProject(query.projectId);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { password: !found?.settings.ssoOnly, oidc: found ? { startUrl: `${OIDC_PATH}/start?projectId=${encodeURIComponent(query.projectId)}` } : null } satisfies z.input<typeof signInOptionsSchema>;
  });

  api.add(router, { method: 'get', path: '/auth/oidc/start', operationId: 'startOidcSignIn', permission: 'none', auth: 'none', summary: "Start signing in with the organisation's OpenID Connect provider: a redirect to it (authorization code flow with PKCE, state and nonce), with the flow kept in a sealed cookie for the callback", tag: 'Sessions', query: startQuery, responses: { 302: { description: "To the identity provider's authorization endpoint", empty: true, headers: { Location: "The provider's authorization request" } } }, errors: { 400: ['VALIDATION_ERROR'], 401: ['UNAUTHORIZED'], 404: ['NOT_FOUND'], 503: ['SERVICE_UNAVAILABLE'] } }, async (ctx, { query }) => {
    try {
      if (!isUuid(query.projectId)) throw validationError('projectId must be a project id (a UUID).');
      const { location, flow } = await oidc.start(query.projectId, oidcRedirectUri(ctx), { test: query.test === 'true' });
      ctx.append('Set-Cookie', flowCookie(ctx, flow, Math.floor(FLOW_TTL_MS / 1000)));
      ctx.set('Cache-Control', 'no-store');
      ctx.redirect(location);
    } catch (error) {
      answerRefusal(ctx, deps, error);
    }
  });

  api.add(router, { method: 'get', path: '/auth/oidc/callback', operationId: 'finishOidcSignIn', permission: 'none', auth: 'none', summary: "Where the identity provider sends the browser back: the code is redeemed and the ID token checked, the person signed in (provisioned on first sign-in, with the role the provider's groups give) and sent to the console with its session cookie (recorded as user.signed-in). A refusal answers a page that says why.", tag: 'Sessions', responses: { 200: { description: 'A test of the settings (started with test=true): a page saying what the provider sent and what a sign-in would do', schema: z.string(), mediaType: 'text/html' }, 302: { description: "To the console's page of the project the sign-in started from, signed in", empty: true, headers: { Location: 'The console', 'Set-Cookie': 'The console session cookie' } } }, errors: { 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'], 503: ['SERVICE_UNAVAILABLE'] } }, async (ctx) => {
    // The flow is spent whatever happens next: a callback is answered once.
    const sealedFlow = ctx.cookies.get(flowCookieName(ctx)) || undefined;
    ctx.append('Set-Cookie', flowCookie(ctx, '', 0));
    try {
      const signedIn = await oidc.finish(new URL(ctx.href), oidcRedirectUri(ctx), sealedFlow, ctx.ip);
      if ('test' in signedIn) {
        answerTest(ctx, signedIn);
        return;
      }
      const subject = { userId: signedIn.userId, tenantId: signedIn.tenantId, role: signedIn.role };
      const { token, claims } = await deps.sessions.issueSession(subject);
      const caller = { kind: 'user' as const, ...subject };
      const { position } = await deps.access.signIn.recordSignIn(caller, { userId: signedIn.userId, sessionId: claims.sessionId, issuer: signedIn.issuer, ...(signedIn.idpSessionId ? { idpSessionId: signedIn.idpSessionId } : {}), expiresAt: claims.expiresAt, projectId: signedIn.projectId });
      await deps.watermark.waitFor(position, 2_000);
      setSessionCookie(ctx, token, claims.expiresAt, deps.clock.now());
      ctx.set('Cache-Control', 'no-store');
      // Back to the project whose login page the sign-in started from.
      ctx.redirect(`${CONSOLE_PATH}p/${signedIn.projectId}/`);
    } catch (error) {
      answerRefusal(ctx, deps, error);
    }
  });
  api.add(router, { method: 'post', path: '/auth/oidc/backchannel-logout/:tenantId', operationId: 'oidcBackchannelLogout', permission: 'none', auth: 'none', summary: "The identity provider's back-channel logout (OpenID Connect Back-Channel Logout 1.0; register this URL with the tenant's id at the provider): the sessions begun in the provider's session the logout token names (sid), or all of the person's (sub), end as a sign-out would (user.session-revoked). 400 for a token that does not pass the checks.", tag: 'Sessions', body: backchannelLogoutBody, bodyMediaType: 'application/x-www-form-urlencoded', bodyLimitBytes: 16 * 1024, responses: { 200: { description: 'Done (also when the token named nobody here)', schema: z.object({ ended: z.number().int().describe('How many sessions ended') }).meta({ id: 'BackchannelLogoutResult' }) } }, errors: { 400: ['VALIDATION_ERROR'], 503: ['SERVICE_UNAVAILABLE'] } }, async (ctx, { body }) => {
    const tenantId = ctx.params['tenantId']!;
    ctx.set('Cache-Control', 'no-store');
    try {
      if (!isUuid(tenantId)) throw validationError('tenantId must be a tenant id (a UUID).');
      ctx.body = await oidc.logout(tenantId, body.logout_token);
    } catch (error) {
      if (error instanceof OidcError && error.failure !== 'provider-unreachable') {
        deps.logger.warn({ failure: error.failure, detail: error.detail ?? error.message, tenantId }, 'back-channel logout refused');
        throw validationError(error.message);
      }
      throw signInError(error);
    }
  });
  return router;
}

import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { newRouter } from '../router.ts';
import type { ApiRegistry } from './api-registry.ts';
import type { AdminDeps } from './admin-context.ts';
import { isUuid } from './request-body.ts';
import { validationError } from '../errors/error-factory.ts';
import { OidcError } from '../../sign-in/oidc-relying-party.ts';
import type { OidcSignIn } from '../../sign-in/oidc-sign-in.ts';
import { FLOW_TTL_MS } from '../../sign-in/oidc-sign-in.ts';
import type { SamlSignIn } from '../../sign-in/saml-sign-in.ts';
import { answerRefusal, answerSsoFinish, signInError } from './sso-pages.ts';
import { SAML_PATH } from './saml-routes.ts';

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

const backchannelLogoutBody = z.object({ logout_token: z.string().min(1).max(8192).describe("The provider's signed logout token (a JWT)") });
const signInOptionsQuery = z.object({ projectId: z.string().max(100) });
const startQuery = signInOptionsQuery.extend({ test: z.enum(['true', 'false']).optional().describe("true: a test of the settings (the console's Test sign-in): the callback shows what the provider sent and what a sign-in would do, signs nobody in and records nothing") });
const signInOptionsSchema = z
  .object({
    password: z.boolean().describe('Whether e-mail and password sign in here (false when the organisation signs in with single sign-on only).'),
    oidc: z.object({ startUrl: z.string().describe('Where the login page sends the browser to sign in with the organisation\'s identity provider.') }).nullable(),
    saml: z.object({ startUrl: z.string().describe("Where the login page sends the browser to sign in with the organisation's SAML identity provider.") }).nullable(),
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

export function oidcRoutes(deps: AdminDeps & { oidc: OidcSignIn; saml?: SamlSignIn }, api: ApiRegistry): Router {
  const router = newRouter();
  const { oidc } = deps;

  api.add(router, { method: 'get', path: '/auth/sign-in-options', operationId: 'getSignInOptions', permission: 'none', auth: 'none', summary: "The ways a project's console login page signs people in: password, and the organisation's identity provider (OpenID Connect or SAML) when single sign-on is set up", tag: 'Sessions', query: signInOptionsQuery, responses: { 200: { description: 'The sign-in options', schema: signInOptionsSchema } }, errors: { 400: ['VALIDATION_ERROR'] } }, async (ctx, { query }) => {
    if (!isUuid(query.projectId)) throw validationError('projectId must be a project id (a UUID).');
    const [found, saml] = await Promise.all([oidc.settingsForProject(query.projectId), deps.saml?.settingsForProject(query.projectId) ?? null]);
    const start = (path: string) => ({ startUrl: `${path}/start?projectId=${encodeURIComponent(query.projectId)}` });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { password: !found?.settings.ssoOnly && !saml?.settings.ssoOnly, oidc: found ? start(OIDC_PATH) : null, saml: saml ? start(SAML_PATH) : null } satisfies z.input<typeof signInOptionsSchema>;
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
    await answerSsoFinish(ctx, deps, () => oidc.finish(new URL(ctx.href), oidcRedirectUri(ctx), sealedFlow, ctx.ip));
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

import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { newRouter } from '../router.ts';
import type { ApiRegistry } from './api-registry.ts';
import type { AdminDeps } from './admin-context.ts';
import { isUuid } from './request-body.ts';
import { notFound, validationError } from '../errors/error-factory.ts';
import { SAML_FLOW_TTL_MS, type SamlSignIn, type ServiceProvider } from '../../sign-in/saml-sign-in.ts';
import { accessQueries } from '../../../projections/access-queries.ts';
import { answerRefusal, answerSsoFinish } from './sso-pages.ts';

/**
 * The console's sign-in through the tenant's SAML 2.0 provider: the start (a redirect to the provider with the
 * AuthnRequest), the assertion consumer service (the provider's form post back, which ends in the console with a
 * session cookie), and this service's metadata for the tenant, to register at the provider. The flow (the
 * request's ID and RelayState) rides in a cookie sealed with the secrets key, scoped to these routes. The provider
 * posts its answer from its own site: over HTTPS the cookie is SameSite=None (and Secure), so that the browser
 * sends it with that post; over plain HTTP (a provider on this machine) it is Lax.
 */
export const SAML_PATH = '/admin/v1/auth/saml';
const FLOW_COOKIE = 'annals-saml-flow';

const startQuery = z.object({
  projectId: z.string().max(100),
  test: z.enum(['true', 'false']).optional().describe("true: a test of the settings (the console's Test sign-in): the answer is shown, nobody is signed in, nothing recorded"),
});
const acsBody = z.object({
  SAMLResponse: z.string().min(1).max(512 * 1024).describe("The provider's answer (base64 of a samlp:Response)"),
  RelayState: z.string().max(1024).optional(),
});

/** This service as the tenant's service provider, as the request reached it (TRUST_PROXY decides what a proxy may say). */
export function serviceProviderOf(ctx: Context, tenantId: string): ServiceProvider {
  const base = `${ctx.protocol}://${ctx.host}${SAML_PATH}`;
  return { entityId: `${base}/metadata/${tenantId}`, acsUrl: `${base}/acs`, sloUrl: `${base}/slo/${tenantId}` };
}

function flowCookieName(ctx: Context): string {
  return ctx.secure ? `__Secure-${FLOW_COOKIE}` : FLOW_COOKIE;
}

function flowCookie(ctx: Context, value: string, maxAgeSeconds: number): string {
  const attributes = [`${flowCookieName(ctx)}=${value}`, `Path=${SAML_PATH}/`, `Max-Age=${maxAgeSeconds}`, 'HttpOnly'];
  attributes.push(ctx.secure ? 'SameSite=None' : 'SameSite=Lax');
  if (ctx.secure) attributes.push('Secure');
  return attributes.join('; ');
}

export function samlRoutes(deps: AdminDeps & { saml: SamlSignIn }, api: ApiRegistry): Router {
  const router = newRouter();
  const { saml } = deps;
  const accessModel = accessQueries(deps.reader);

  api.add(router, { method: 'get', path: '/auth/saml/start', operationId: 'startSamlSignIn', permission: 'none', auth: 'none', summary: "Start signing in with the organisation's SAML identity provider: a redirect to its single sign-on service with an AuthnRequest (HTTP-Redirect binding), the flow kept in a sealed cookie for the answer", tag: 'Sessions', query: startQuery, responses: { 302: { description: "To the identity provider's single sign-on service", empty: true, headers: { Location: "The provider's SSO URL with the SAMLRequest and RelayState" } } }, errors: { 400: ['VALIDATION_ERROR'], 401: ['UNAUTHORIZED'], 404: ['NOT_FOUND'] } }, async (ctx, { query }) => {
    try {
      if (!isUuid(query.projectId)) throw validationError('projectId must be a project id (a UUID).');
      const project = await accessModel.project(query.projectId);
      if (!project) throw notFound(`No project ${query.projectId}.`);
      const { location, flow } = await saml.start(query.projectId, serviceProviderOf(ctx, project.tenantId), { test: query.test === 'true' });
      ctx.append('Set-Cookie', flowCookie(ctx, flow, Math.floor(SAML_FLOW_TTL_MS / 1000)));
      ctx.set('Cache-Control', 'no-store');
      ctx.redirect(location);
    } catch (error) {
      answerRefusal(ctx, deps, error);
    }
  });

  api.add(router, { method: 'post', path: '/auth/saml/acs', operationId: 'samlAssertionConsumer', permission: 'none', auth: 'none', summary: "The assertion consumer service: the provider posts its signed answer here; the assertion is checked (signed by the provider's certificate, its issuer, this service as audience, its time window, in answer to this browser's request), the person signed in (provisioned on first sign-in, with the role the groups attribute gives) and sent to the console with its session cookie (recorded as user.signed-in, method saml). A refusal answers a page that says why.", tag: 'Sessions', body: acsBody, bodyMediaType: 'application/x-www-form-urlencoded', bodyLimitBytes: 600 * 1024, responses: { 200: { description: 'A test of the settings: a page saying what the provider sent and what a sign-in would do', schema: z.string(), mediaType: 'text/html' }, 302: { description: "To the console's page of the project the sign-in started from, signed in", empty: true, headers: { Location: 'The console', 'Set-Cookie': 'The console session cookie' } } }, errors: { 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'] } }, async (ctx, { body }) => {
    // The flow is spent whatever happens next: an answer is taken once.
    const sealedFlow = ctx.cookies.get(flowCookieName(ctx)) || undefined;
    ctx.append('Set-Cookie', flowCookie(ctx, '', 0));
    await answerSsoFinish(ctx, deps, () => saml.finish(body, (tenantId) => serviceProviderOf(ctx, tenantId), sealedFlow, ctx.ip));
  });

  api.add(router, { method: 'get', path: '/auth/saml/slo/:tenantId', operationId: 'samlSingleLogout', permission: 'none', auth: 'none', summary: "The tenant's single logout service (HTTP-Redirect binding; register it at the provider): the provider's signed LogoutRequest ends the console sessions begun in the provider session it names (SessionIndex), or all of the person's begun through it (NameID), as a sign-out would (user.session-revoked), and the browser goes back to the provider with the LogoutResponse. An unsigned or foreign request ends nothing (401).", tag: 'Sessions', query: z.object({ SAMLRequest: z.string().max(64 * 1024), RelayState: z.string().max(1024).optional(), SigAlg: z.string().max(200).optional(), Signature: z.string().max(4096).optional() }), responses: { 302: { description: "Back to the provider's single logout service with the LogoutResponse", empty: true, headers: { Location: "The provider's SLO URL with the SAMLResponse" } } }, errors: { 400: ['VALIDATION_ERROR'], 401: ['UNAUTHORIZED'] } }, async (ctx, { query }) => {
    const tenantId = ctx.params['tenantId'] ?? '';
    try {
      if (!isUuid(tenantId)) throw validationError('tenantId must be a tenant id (a UUID).');
      const { location, ended } = await saml.logout(tenantId, query as Record<string, string>, ctx.querystring, serviceProviderOf(ctx, tenantId));
      deps.logger.info({ tenantId, ended }, 'SAML single logout');
      ctx.set('Cache-Control', 'no-store');
      ctx.redirect(location);
    } catch (error) {
      answerRefusal(ctx, deps, error);
    }
  });

  api.add(router, { method: 'get', path: '/auth/saml/metadata/:tenantId', operationId: 'getSamlServiceProviderMetadata', permission: 'none', auth: 'none', summary: "This service's SAML service provider metadata for a tenant (its entity ID, which is this URL, its assertion consumer and single logout services, and once SAML is set up its certificate for signing and encryption), to register at the identity provider", tag: 'Sessions', responses: { 200: { description: 'The SP metadata', schema: z.string(), mediaType: 'application/samlmetadata+xml' } }, errors: { 404: ['NOT_FOUND'] } }, async (ctx) => {
    const tenantId = ctx.params['tenantId'] ?? '';
    const tenant = isUuid(tenantId) ? await accessModel.tenant(tenantId) : null;
    if (!tenant) throw notFound(`No tenant ${tenantId}.`);
    ctx.type = 'application/samlmetadata+xml';
    ctx.body = saml.metadata(serviceProviderOf(ctx, tenantId), tenant.saml ? { tenantId, settings: tenant.saml } : undefined);
  });
  return router;
}

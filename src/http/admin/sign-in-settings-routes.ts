import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { newRouter } from '../router.ts';
import { wrote, type ApiRegistry } from './api-registry.ts';
import { actingProject, principalOf, type AdminDeps } from './admin-context.ts';
import { forbidden, notFound, validationError } from '../errors/error-factory.ts';
import { DEFAULT_GROUPS_CLAIM, issuerValue, MAX_ROLE_GROUPS, oidcSecretContext, type OidcSettings } from '../../domain/access/oidc-settings.ts';
import { OidcError, type OidcRelyingParty } from '../../sign-in/oidc-relying-party.ts';
import { SecretBoxError, type SecretBox } from '../../security/secret-box.ts';
import { accessQueries } from '../../../projections/access-queries.ts';
import { oidcBackchannelLogoutUri, oidcRedirectUri } from './oidc-routes.ts';

/** The groups whose members sign in with one of the organisation's own roles, in settings bodies and answers (OpenID Connect and SAML). */
export const roleGroupsField = z
  .array(z.object({ group: z.string().min(1).max(500), roleId: z.uuid().describe("One of the organisation's custom roles (GET /roles)") }))
  .max(MAX_ROLE_GROUPS)
  .describe("Members of these groups sign in as tenant_user with the group's custom role (the first group that matches; admin groups first). When any group is given one, the provider decides custom roles: someone in none of these groups holds none.");

const oidcSettingsBody = z.object({
  issuer: z.string().min(1).max(2000).describe("The provider's issuer identifier (https; its /.well-known/openid-configuration is read)"),
  clientId: z.string().min(1).max(500),
  clientSecret: z.string().min(1).max(2000).optional().describe('The client secret; required the first time and when the issuer or client id changes, else kept. Stored sealed, never answered.'),
  allowedEmailDomains: z.array(z.string().max(253)).min(1).max(50).describe('Only people whose verified e-mail address is at one of these domains sign in'),
  groupsClaim: z.string().max(200).optional().describe(`The ID token claim that lists the person's groups (default ${DEFAULT_GROUPS_CLAIM})`),
  adminGroups: z.array(z.string().max(500)).min(1).max(100).describe('Members of any of these groups sign in as tenant_admin'),
  userGroups: z.array(z.string().max(500)).max(100).optional().describe('Members of any of these sign in as tenant_user; empty or absent: every other person of an allowed domain'),
  roleGroups: roleGroupsField.optional(),
  ssoOnly: z.boolean().optional().describe("Refuse passwords for the tenant's users (default false). Turning it on needs a session of someone who has signed in through this provider."),
});

const oidcSettingsSchema = z
  .object({
    issuer: z.string(),
    clientId: z.string(),
    clientSecretSet: z.literal(true),
    allowedEmailDomains: z.array(z.string()),
    groupsClaim: z.string(),
    adminGroups: z.array(z.string()),
    userGroups: z.array(z.string()),
    roleGroups: roleGroupsField,
    ssoOnly: z.boolean(),
    redirectUri: z.string().describe('The redirect URI to register with the provider for this client'),
    backchannelLogoutUri: z.string().describe("The back-channel logout URI to register with the provider, so that sessions end with the provider's"),
  })
  .meta({ id: 'OidcSettings' });

/** GET, PUT and DELETE /sign-in/oidc: the tenant's OpenID Connect sign-in (tenant_admin sessions only). */
export function signInSettingsRoutes(deps: AdminDeps & { box: SecretBox; relyingParty: OidcRelyingParty }, api: ApiRegistry): Router {
  const router = newRouter();
  const accessModel = accessQueries(deps.reader);
  const answer = (settings: OidcSettings, ctx: Context, tenantId: string): z.input<typeof oidcSettingsSchema> => ({
    issuer: settings.issuer,
    clientId: settings.clientId,
    clientSecretSet: true,
    allowedEmailDomains: settings.allowedEmailDomains,
    groupsClaim: settings.groupsClaim,
    adminGroups: settings.adminGroups,
    userGroups: settings.userGroups,
    roleGroups: settings.roleGroups ?? [],
    ssoOnly: settings.ssoOnly,
    redirectUri: oidcRedirectUri(ctx),
    backchannelLogoutUri: oidcBackchannelLogoutUri(ctx, tenantId),
  });

  api.add(router, { method: 'get', path: '/sign-in/oidc', operationId: 'getOidcSettings', permission: 'sign-in.read', summary: "The tenant's OpenID Connect sign-in (the client secret is never answered), with the redirect URI to register at the provider", tag: 'Single sign-on', responses: { 200: { description: 'The settings', schema: oidcSettingsSchema } }, errors: { 404: ['NOT_FOUND'] } }, async (ctx) => {
    const tenant = await accessModel.tenant(principalOf(ctx).tenantId);
    if (!tenant?.oidc) throw notFound('Single sign-on is not set up for this organisation.', { hint: 'PUT /admin/v1/sign-in/oidc sets it up.' });
    ctx.body = answer(tenant.oidc, ctx, tenant.tenantId);
  });

  api.add(router, { method: 'put', path: '/sign-in/oidc', operationId: 'setOidcSettings', permission: 'sign-in.manage', summary: "Set up or change the tenant's OpenID Connect sign-in as a whole; the provider's discovery document is read first (400 when it cannot be used). Recorded as tenant.oidc-configured, the secret sealed.", tag: 'Single sign-on', body: oidcSettingsBody, bodyLimitBytes: 64 * 1024, responses: { 200: { description: 'The settings as set', schema: oidcSettingsSchema } }, errors: { 400: ['VALIDATION_ERROR'], 403: ['FORBIDDEN'] } }, async (ctx, { body }) => {
    const caller = principalOf(ctx);
    const tenantId = caller.tenantId;
    const tenant = await accessModel.tenant(tenantId);
    if (!tenant) throw notFound('tenant not found');
    const issuer = issuerValue(body.issuer);
    const previous = tenant.oidc ?? null;
    const sameClient = previous !== null && previous.issuer === issuer && previous.clientId === body.clientId.trim();
    if (body.clientSecret === undefined && !sameClient) throw validationError('clientSecret is required when single sign-on is set up, or its issuer or client id changes.');
    const previousSecret = previous ? openedSecret(deps.box, previous, tenantId) : null;
    const clientSecret = body.clientSecret ?? previousSecret;
    if (clientSecret === null) throw validationError("clientSecret is required: the one recorded does not open with this service's SECRETS_KEY.");
    if (body.ssoOnly === true && caller.kind === 'user') {
      // Nobody locks the organisation out of passwords without having signed in through the provider themselves.
      const user = await accessModel.user(caller.userId);
      if (!user?.identities?.[issuer]) throw forbidden('Turning on single sign-on only needs you to have signed in through this identity provider first.', { hint: 'Save the settings with ssoOnly false, sign in with the provider, then turn it on.' });
    }
    try {
      await deps.relyingParty.check({ issuer, clientId: body.clientId.trim(), clientSecret });
    } catch (error) {
      if (error instanceof OidcError) throw validationError(`issuer: ${error.message}`, { hint: 'Check the issuer URL (its /.well-known/openid-configuration must answer) and that OUTBOUND_ALLOWLIST lets this service reach it.' });
      throw error;
    }
    const settings: OidcSettings = {
      issuer,
      clientId: body.clientId,
      // The recorded secret kept when it is the same, so that saving unchanged settings records nothing.
      sealedClientSecret: previous && previousSecret === clientSecret ? previous.sealedClientSecret : deps.box.seal(clientSecret, oidcSecretContext(tenantId)),
      allowedEmailDomains: body.allowedEmailDomains,
      groupsClaim: body.groupsClaim ?? DEFAULT_GROUPS_CLAIM,
      adminGroups: body.adminGroups,
      userGroups: body.userGroups ?? [],
      roleGroups: body.roleGroups ?? [],
      ssoOnly: body.ssoOnly ?? false,
    };
    const result = await deps.access.signIn.configureOidc(caller, tenantId, settings, actingProject(ctx));
    wrote(ctx, result.position, ['access']);
    ctx.body = answer(result.settings, ctx, tenantId);
  });

  api.add(router, { method: 'delete', path: '/sign-in/oidc', operationId: 'removeOidcSettings', permission: 'sign-in.manage', summary: "Remove the tenant's OpenID Connect sign-in: people sign in with passwords again (recorded as tenant.oidc-removed)", tag: 'Single sign-on', responses: { 204: { description: 'Removed (or there was none)', empty: true } }, errors: {} }, async (ctx) => {
    const caller = principalOf(ctx);
    const result = await deps.access.signIn.removeOidc(caller, caller.tenantId, actingProject(ctx));
    wrote(ctx, result.position, ['access']);
    ctx.status = 204;
  });
  return router;
}


/** The recorded client secret in clear, or null when it does not open (sealed under another SECRETS_KEY). */
function openedSecret(box: SecretBox, settings: OidcSettings, tenantId: string): string | null {
  try {
    return box.open(settings.sealedClientSecret, oidcSecretContext(tenantId));
  } catch (error) {
    if (error instanceof SecretBoxError) return null;
    throw error;
  }
}

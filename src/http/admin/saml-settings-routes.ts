import { X509Certificate } from 'node:crypto';
import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { newRouter } from '../router.ts';
import { wrote, type ApiRegistry } from './api-registry.ts';
import { actingProject, principalOf, type AdminDeps } from './admin-context.ts';
import { forbidden, notFound, validationError } from '../errors/error-factory.ts';
import { DEFAULT_SAML_EMAIL_ATTRIBUTE, DEFAULT_SAML_GROUPS_ATTRIBUTE, type SamlSettings } from '../../domain/access/saml-settings.ts';
import { accessQueries } from '../../../projections/access-queries.ts';
import { serviceProviderOf, SAML_PATH } from './saml-routes.ts';
import { roleGroupsField } from './sign-in-settings-routes.ts';
import { newServiceProviderKeys } from '../../sign-in/saml-sp-keys.ts';
import type { SecretBox } from '../../security/secret-box.ts';

const samlSettingsBody = z.object({
  idpEntityId: z.string().min(1).max(1024).describe("The identity provider's entity ID (the Issuer of its answers)"),
  ssoUrl: z.string().min(1).max(2000).describe("The provider's single sign-on service URL for the HTTP-Redirect binding (https)"),
  sloUrl: z.string().max(2000).nullable().optional().describe("The provider's single logout service (HTTP-Redirect), where this service answers its logout requests; absent or null: the SSO URL"),
  idpCertificates: z.array(z.string().max(16_384)).min(1).max(3).describe("The provider's signing certificates (PEM); two while it rotates its key. Assertions must be signed by one of them."),
  allowedEmailDomains: z.array(z.string().max(253)).min(1).max(50).describe('Only people whose e-mail address is at one of these domains sign in'),
  emailAttribute: z.string().max(500).optional().describe(`The attribute that holds the e-mail address (default ${DEFAULT_SAML_EMAIL_ATTRIBUTE}); empty: the NameID, when its format is emailAddress`),
  groupsAttribute: z.string().max(500).optional().describe(`The attribute that lists the person's groups (default ${DEFAULT_SAML_GROUPS_ATTRIBUTE})`),
  adminGroups: z.array(z.string().max(500)).min(1).max(100).describe('Members of any of these groups sign in as tenant_admin'),
  userGroups: z.array(z.string().max(500)).max(100).optional().describe('Members of any of these sign in as tenant_user; empty or absent: every other person of an allowed domain'),
  roleGroups: roleGroupsField.optional(),
  ssoOnly: z.boolean().optional().describe("Refuse passwords for the tenant's users (default false). Turning it on needs a session of someone who has signed in through this provider."),
  wantAssertionsEncrypted: z.boolean().optional().describe('Refuse answers whose assertion is not encrypted to this service\'s certificate (spCertificate; default false). Register the certificate at the provider first.'),
  newSpCertificate: z.boolean().optional().describe("Make this service a new key pair for the tenant (default false: the one made when SAML was set up is kept). The provider must be given the new certificate: requests are signed with it from now on."),
});

const certificateSchema = z.object({ subject: z.string(), validFrom: z.string(), validTo: z.string(), fingerprint256: z.string() });
const samlSettingsSchema = z
  .object({
    idpEntityId: z.string(),
    ssoUrl: z.string(),
    sloUrl: z.string().nullable(),
    idpCertificates: z.array(certificateSchema).describe('The certificates as recorded, with what they say (check validTo: a provider that signs with another key is refused)'),
    allowedEmailDomains: z.array(z.string()),
    emailAttribute: z.string(),
    groupsAttribute: z.string(),
    adminGroups: z.array(z.string()),
    userGroups: z.array(z.string()),
    roleGroups: roleGroupsField,
    ssoOnly: z.boolean(),
    wantAssertionsEncrypted: z.boolean(),
    spCertificate: certificateSchema
      .extend({ pem: z.string() })
      .nullable()
      .describe("This service's certificate for the tenant (its private key is never answered): register it at the provider to check the signed authentication and logout requests and to encrypt assertions. null on settings saved before the service had one: save them again."),
    spEntityId: z.string().describe("This service's entity ID for the tenant (the audience the provider must name), also its metadata URL"),
    acsUrl: z.string().describe('The assertion consumer service URL to register at the provider (HTTP-POST binding)'),
    sloServiceUrl: z.string().describe("This service's single logout service to register at the provider (HTTP-Redirect binding): the provider's signed logout requests end the sessions begun through it"),
  })
  .meta({ id: 'SamlSettings' });

/** What a PEM certificate says, or 400 naming the one that is not a certificate. */
function certificateOf(pem: string, index: number): z.input<typeof certificateSchema> {
  try {
    const certificate = new X509Certificate(pem);
    return { subject: certificate.subject, validFrom: new Date(certificate.validFrom).toISOString(), validTo: new Date(certificate.validTo).toISOString(), fingerprint256: certificate.fingerprint256 };
  } catch {
    throw validationError(`idpCertificates[${index}] is not an X.509 certificate in PEM.`, { hint: "Paste the provider's signing certificate, from -----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----." });
  }
}

/** GET, PUT and DELETE /sign-in/saml: the tenant's SAML 2.0 sign-in (tenant_admin sessions only). */
export function samlSettingsRoutes(deps: AdminDeps & { box: SecretBox }, api: ApiRegistry): Router {
  const router = newRouter();
  const accessModel = accessQueries(deps.reader);
  const answer = (settings: SamlSettings, ctx: Context, tenantId: string): z.input<typeof samlSettingsSchema> => {
    const sp = serviceProviderOf(ctx, tenantId);
    const { sealedSpKey: _never, spCertificate, wantAssertionsEncrypted, ...shown } = settings;
    return {
      ...shown,
      roleGroups: settings.roleGroups ?? [],
      idpCertificates: settings.idpCertificates.map(certificateOf),
      wantAssertionsEncrypted: wantAssertionsEncrypted ?? false,
      spCertificate: spCertificate ? { ...certificateOf(spCertificate, 0), pem: spCertificate } : null,
      spEntityId: sp.entityId,
      acsUrl: sp.acsUrl,
      sloServiceUrl: sp.sloUrl,
    };
  };

  api.add(router, { method: 'get', path: '/sign-in/saml', operationId: 'getSamlSettings', permission: 'sign-in.read', summary: `The tenant's SAML 2.0 sign-in, with the entity ID and assertion consumer service URL to register at the provider (also as metadata at ${SAML_PATH}/metadata/{tenantId})`, tag: 'Single sign-on', responses: { 200: { description: 'The settings', schema: samlSettingsSchema } }, errors: { 404: ['NOT_FOUND'] } }, async (ctx) => {
    const tenant = await accessModel.tenant(principalOf(ctx).tenantId);
    if (!tenant?.saml) throw notFound('SAML sign-in is not set up for this organisation.', { hint: 'PUT /admin/v1/sign-in/saml sets it up.' });
    ctx.body = answer(tenant.saml, ctx, tenant.tenantId);
  });

  api.add(router, { method: 'put', path: '/sign-in/saml', operationId: 'setSamlSettings', permission: 'sign-in.manage', summary: "Set up or change the tenant's SAML 2.0 sign-in as a whole (recorded as tenant.saml-configured). 409 while OpenID Connect is set up: one provider per organisation.", tag: 'Single sign-on', body: samlSettingsBody, bodyLimitBytes: 128 * 1024, responses: { 200: { description: 'The settings as set', schema: samlSettingsSchema } }, errors: { 400: ['VALIDATION_ERROR'], 403: ['FORBIDDEN'], 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const caller = principalOf(ctx);
    const tenantId = caller.tenantId;
    body.idpCertificates.forEach(certificateOf);
    const idpEntityId = body.idpEntityId.trim();
    if (body.ssoOnly === true && caller.kind === 'user') {
      // Nobody locks the organisation out of passwords without having signed in through the provider themselves.
      const user = await accessModel.user(caller.userId);
      if (!user?.identities?.[idpEntityId]) throw forbidden('Turning on single sign-on only needs you to have signed in through this identity provider first.', { hint: 'Save the settings with ssoOnly false, sign in with the provider, then turn it on.' });
    }
    // The service's key pair for the tenant: made when SAML is set up (or asked for anew), then kept.
    const previous = (await accessModel.tenant(tenantId))?.saml;
    const keys = previous?.spCertificate && previous.sealedSpKey && !body.newSpCertificate ? { spCertificate: previous.spCertificate, sealedSpKey: previous.sealedSpKey } : await newServiceProviderKeys(tenantId, deps.box, deps.clock);
    const settings: SamlSettings = {
      idpEntityId,
      ssoUrl: body.ssoUrl,
      sloUrl: body.sloUrl ?? null,
      idpCertificates: body.idpCertificates,
      allowedEmailDomains: body.allowedEmailDomains,
      emailAttribute: body.emailAttribute ?? DEFAULT_SAML_EMAIL_ATTRIBUTE,
      groupsAttribute: body.groupsAttribute ?? DEFAULT_SAML_GROUPS_ATTRIBUTE,
      adminGroups: body.adminGroups,
      userGroups: body.userGroups ?? [],
      roleGroups: body.roleGroups ?? [],
      ssoOnly: body.ssoOnly ?? false,
      ...keys,
      wantAssertionsEncrypted: body.wantAssertionsEncrypted ?? false,
    };
    const result = await deps.access.signIn.configureSaml(caller, tenantId, settings, actingProject(ctx));
    wrote(ctx, result.position, ['access']);
    ctx.body = answer(result.settings, ctx, tenantId);
  });

  api.add(router, { method: 'delete', path: '/sign-in/saml', operationId: 'removeSamlSettings', permission: 'sign-in.manage', summary: "Remove the tenant's SAML sign-in: people sign in with passwords again (recorded as tenant.saml-removed)", tag: 'Single sign-on', responses: { 204: { description: 'Removed (or there was none)', empty: true } }, errors: {} }, async (ctx) => {
    const caller = principalOf(ctx);
    const result = await deps.access.signIn.removeSaml(caller, caller.tenantId, actingProject(ctx));
    wrote(ctx, result.position, ['access']);
    ctx.status = 204;
  });
  return router;
}

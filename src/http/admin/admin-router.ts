import type { LogTreeRuntime } from '../../audit/log-tree-runtime.ts';
import { auditRoutes } from './audit-routes.ts';
import type { Router } from '@koa/router';
import { newRouter } from '../router.ts';
import type { AdminDeps } from './admin-context.ts';
import { authRoutes } from './auth-routes.ts';
import { sessionRoutes } from './session-routes.ts';
import { authenticate } from './authenticate.ts';
import { contentRoutes } from './content-routes.ts';
import { ApiRegistry, openApiDocument } from './api-registry.ts';
import { entryRoutes } from './entry-routes.ts';
import { schemaRoutes } from './schema-routes.ts';
import { projectRoutes } from './project-routes.ts';
import { previewRoutes } from './preview-routes.ts';
import { webhookRoutes } from './webhook-routes.ts';
import type { WebhookService } from '../../webhooks/webhook-service.ts';
import { mediaRoutes, type MediaAdminDeps } from './media-routes.ts';
import { contactFormRoutes } from './contact-form-routes.ts';
import type { ContactForms } from '../../contact-forms/contact-forms.ts';
import { translationRoutes } from './translation-routes.ts';
import { workingCopyRoutes } from './working-copy-routes.ts';
import { invitationRoutes, type InvitationMail } from './invitation-routes.ts';
import type { TranslationProvider } from '../../translation/translation-provider.ts';
import { asOfRoutes } from './as-of-routes.ts';
import { reviewNoticeRoutes } from './review-notice-routes.ts';
import { operationsRoutes } from './operations-routes.ts';
import { recordRefusedWrite } from './refusal-audit.ts';
import { READ_YOUR_WRITES_MS } from '../../application/project-writes.ts';
import type { OperationsOverviewService } from '../../application/operations-overview.ts';
import type { AuditExportSigning } from '../../audit/audit-export.ts';
import { auditExportRoutes } from './audit-export-routes.ts';
import { oidcRoutes } from './oidc-routes.ts';
import { signInSettingsRoutes } from './sign-in-settings-routes.ts';
import { secondFactorRoutes } from './second-factor-routes.ts';
import { samlRoutes } from './saml-routes.ts';
import { samlSettingsRoutes } from './saml-settings-routes.ts';
import { roleRoutes } from './role-routes.ts';
import type { SignInServices } from '../../sign-in/sign-in-setup.ts';

/** The admin/agent API at /admin/v1: sign-in is open, everything else authenticated. */
export function adminRouter(
  deps: AdminDeps,
  services: {
    webhooks?: WebhookService;
    media?: MediaAdminDeps;
    contactForms?: ContactForms;
    translation?: TranslationProvider;
    operations?: OperationsOverviewService;
    logTree?: LogTreeRuntime;
    auditExports?: AuditExportSigning;
    invitations?: InvitationMail;
    /** Single sign-on (OpenID Connect): the login page's provider button, its callback and the tenant's settings. */
    signIn?: SignInServices;
    /** The MCP tool server's endpoint (src/mcp/mcp-http-route.ts), mounted by the layer above that has it: the MCP server is a client of this API. */
    mcp?: (deps: AdminDeps, api: ApiRegistry, options: { mediaMaxBytes?: number | undefined }) => Router;
  } = {},
): Router {
  const router = newRouter({ prefix: '/admin/v1' });
  // Refused writes (403 by role, key scope or approval policy) are recorded in the audit trail.
  const api = new ApiRegistry({
    onWriteError: (ctx, operationId, error) => recordRefusedWrite(deps, ctx, operationId, error),
    // Read your writes for the routes that report a position (wrote): bounded, as every write path waits.
    settle: async (position, projections) => {
      await deps.watermark.waitFor(position, READ_YOUR_WRITES_MS, projections);
    },
  });
  const open = authRoutes(deps, api, services.signIn?.secondFactor);
  const sso = services.signIn
    ? { open: oidcRoutes({ ...deps, oidc: services.signIn.oidc, saml: services.signIn.saml }, api), saml: samlRoutes({ ...deps, saml: services.signIn.saml }, api), settings: signInSettingsRoutes({ ...deps, ...services.signIn }, api), samlSettings: samlSettingsRoutes({ ...deps, box: services.signIn.box }, api) }
    : undefined;
  const secondFactor = services.signIn ? secondFactorRoutes(deps, api, services.signIn) : undefined;
  const session = sessionRoutes(deps, api);
  const roles = roleRoutes(deps, api);
  const invitations = invitationRoutes(deps, api, services.invitations);
  const content = contentRoutes(deps, api);
  const entries = entryRoutes(deps, api);
  const workingCopies = workingCopyRoutes(deps, api);
  const asOf = asOfRoutes(deps, api);
  const auditExports = auditExportRoutes(deps, api, services.auditExports);
  const schema = schemaRoutes(deps, api);
  const project = projectRoutes(deps, api, { translationProvider: services.translation !== undefined });
  const preview = previewRoutes(deps, api);
  const hooks = webhookRoutes(deps, api, services.webhooks);
  const media = services.media ? [mediaRoutes(deps, api, services.media)] : [];
  const contact = contactFormRoutes(deps, api, services.contactForms);
  const notices = reviewNoticeRoutes(deps, api, services.contactForms);
  const translation = translationRoutes(deps, api, services.translation);
  const operations = operationsRoutes(deps, api, services.operations);
  const audit = auditRoutes(deps, api, services.logTree);
  const mcp = services.mcp?.(deps, api, { mediaMaxBytes: services.media?.maxBytes }) ?? newRouter();
  // Built once all routes are registered; served without credentials.
  const document = openApiDocument(api, { version: '1.0.0' });
  open.get('/openapi.json', (ctx) => {
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = document;
  });
  // Every answer of an operation (sign-in tokens, one-time keys, lists of keys, content not yet public):
  // no cache, shared or private, may keep it. Errors say the same (the error envelope sets it too).
  router.use(async (ctx, next) => {
    ctx.set('Cache-Control', 'no-store');
    await next();
  });
  // Open routes answer before authentication; it then runs once for every other admin request.
  router.use(open.routes(), open.allowedMethods());
  router.use(invitations.open.routes(), invitations.open.allowedMethods());
  if (sso) router.use(sso.open.routes(), sso.open.allowedMethods(), sso.saml.routes(), sso.saml.allowedMethods());
  if (secondFactor) router.use(secondFactor.open.routes(), secondFactor.open.allowedMethods());
  router.use(authenticate(deps));
  for (const group of [...(sso ? [sso.settings, sso.samlSettings] : []), ...(secondFactor ? [secondFactor.authenticated] : []), session, roles, invitations.authenticated, content, entries, workingCopies, asOf, auditExports, schema, project, preview, hooks, ...media, contact, notices, translation, operations, audit, mcp]) router.use(group.routes(), group.allowedMethods());
  return router;
}

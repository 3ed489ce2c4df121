import type { Router } from '@koa/router';
import { z } from 'zod';
import { newRouter } from '../router.ts';
import type { ApiRegistry } from './api-registry.ts';
import type { AdminDeps, AdminState } from './admin-context.ts';
import { principalOf } from './admin-context.ts';
import { forbidden, unauthorized } from '../errors/error-factory.ts';
import { READ_YOUR_WRITES_MS } from '../../application/project-writes.ts';
import { sessionUserSchema } from './auth-routes.ts';
import { clearedSessionCookie } from './session-cookie.ts';
import { accessQueries } from '../../../projections/access-queries.ts';
import { CAPABILITIES } from '../../domain/capabilities.ts';
import { grantsOf, type Principal } from '../../domain/principal.ts';
import { can } from '../../domain/access/permissions.ts';

const currentSessionSchema = z.object({
  expiresAt: z.iso.datetime(),
  user: sessionUserSchema,
  cookie: z.boolean().describe('Whether the request was signed in with the session cookie (else a bearer token).'),
  grants: z
    .object({
      roleId: z.uuid().nullable().describe("The organisation's custom role the user holds (GET /roles); null: none"),
      roleName: z.string().nullable().describe("That role's name; null: none"),
      capabilities: z.array(z.enum(CAPABILITIES)).describe('What the user may do beyond reading, as of this request'),
      formSetIds: z.array(z.uuid()).nullable().describe('The form sets the content capabilities are limited to; null: every form set'),
      manageRoles: z.boolean().describe('Whether the user defines roles and sign-in (a tenant_admin)'),
    })
    .describe("What the session's user may do now: the console shows what they may do, the API enforces it"),
  csrfToken: z.string().optional().describe('A cookie session\'s CSRF token: send it as X-CSRF-Token with every write made with the cookie.'),
}).meta({ id: 'CurrentSession' });

/** GET /auth/session: the session the request is made with; POST /auth/logout: signs it out (authenticated). */
export function sessionRoutes(deps: AdminDeps, api: ApiRegistry): Router {
  const router = newRouter();
  const accessModel = accessQueries(deps.reader);
  const consoleSession = (ctx: Parameters<Parameters<ApiRegistry['add']>[2]>[0]) => {
    const principal = principalOf(ctx);
    const session = (ctx.state as AdminState).session;
    if (principal.kind !== 'user' || !session) throw forbidden('Only a console session has one.', { hint: 'An agent key is revoked instead: npm run cli -- keys revoke.' });
    return { principal, session };
  };

  // The console asks at start (a reload, a new tab, a deep link): a cookie session goes on where it was.
  api.add(router, { method: 'get', path: '/auth/session', operationId: 'getSession', permission: 'none', summary: 'The console session this request is made with: its user, expiry and, for the session cookie, the CSRF token writes send (agent keys: 403)', tag: 'Sessions', responses: { 200: { description: 'The current session', schema: currentSessionSchema } }, errors: { 403: ['FORBIDDEN'] } }, async (ctx) => {
    const { principal, session } = consoleSession(ctx);
    const user = await accessModel.user(principal.userId);
    if (!user) throw unauthorized('The session is no longer valid: sign in again.');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      expiresAt: session.expiresAt.toISOString(),
      user: { id: user.userId, tenantId: user.tenantId, email: user.email, role: user.role },
      cookie: session.cookie,
      grants: await grantsAnswer(principal),
      ...(session.cookie ? { csrfToken: deps.sessions.csrfToken(session.sessionId) } : {}),
    } satisfies z.input<typeof currentSessionSchema>;
  });

  api.add(router, { method: 'post', path: '/auth/logout', operationId: 'logout', permission: 'none', summary: 'Sign out: the session of this request (its token, or the session cookie, which is cleared) is refused from now on, by every instance and after restarts (recorded as user.session-revoked). Console sessions only; agent keys are revoked instead (403).', tag: 'Sessions', responses: { 204: { description: 'Signed out', empty: true } }, errors: { 403: ['FORBIDDEN'] } }, async (ctx) => {
    const { principal, session } = consoleSession(ctx);
    const { position } = await deps.access.signOut(principal, session);
    await deps.watermark.waitFor(position, READ_YOUR_WRITES_MS);
    if (session.cookie) ctx.append('Set-Cookie', clearedSessionCookie(ctx));
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 204;
  });
  return router;

  async function grantsAnswer(principal: Extract<Principal, { kind: 'user' }>): Promise<z.input<typeof currentSessionSchema>['grants']> {
    const grants = grantsOf(principal);
    const roleName = grants.roleId === null ? null : ((await accessModel.tenant(principal.tenantId))?.roles?.find((role) => role.roleId === grants.roleId)?.name ?? null);
    return { roleId: grants.roleId, roleName, capabilities: [...grants.capabilities], formSetIds: grants.formSetIds ? [...grants.formSetIds] : null, manageRoles: can(principal, 'roles.manage') };
  }
}

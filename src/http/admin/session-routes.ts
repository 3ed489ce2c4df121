import type { Router } from '@koa/router';
import { newRouter } from '../router.ts';
import type { ApiRegistry } from './api-registry.ts';
import type { AdminDeps, AdminState } from './admin-context.ts';
import { principalOf } from './admin-context.ts';
import { forbidden } from '../errors/error-factory.ts';
import { READ_YOUR_WRITES_MS } from '../../application/project-writes.ts';

/** POST /auth/logout: signs out the console session the request is made with (authenticated). */
export function sessionRoutes(deps: AdminDeps, api: ApiRegistry): Router {
  const router = newRouter();
  api.add(router, { method: 'post', path: '/auth/logout', operationId: 'logout', summary: 'Sign out: the session token of this request is refused from now on, by every instance and after restarts (recorded as user.session-revoked). Console sessions only; agent keys are revoked instead (403).', tag: 'Sessions', responses: { 204: { description: 'Signed out', empty: true } }, errors: { 403: ['FORBIDDEN'] } }, async (ctx) => {
    const principal = principalOf(ctx);
    const session = (ctx.state as AdminState).session;
    if (principal.kind !== 'user' || !session) throw forbidden('Only a console session signs out.', { hint: 'An agent key is revoked instead: npm run cli -- keys revoke.' });
    const { position } = await deps.access.signOut(principal, session);
    await deps.watermark.waitFor(position, READ_YOUR_WRITES_MS);
    ctx.status = 204;
  });
  return router;
}

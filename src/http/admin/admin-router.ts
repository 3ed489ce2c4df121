import { Router } from '@koa/router';
import type { AdminDeps } from './admin-context.ts';
import { authRoutes } from './auth-routes.ts';
import { authenticate } from './authenticate.ts';
import { contentRoutes } from './content-routes.ts';

/** The admin/agent API at /admin/v1: sign-in is open, everything else authenticated. */
export function adminRouter(deps: AdminDeps): Router {
  const router = new Router({ prefix: '/admin/v1' });
  const open = authRoutes(deps);
  router.use(open.routes(), open.allowedMethods());
  const content = contentRoutes(deps);
  router.use(authenticate(deps), content.routes(), content.allowedMethods());
  return router;
}

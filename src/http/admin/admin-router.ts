import { Router } from '@koa/router';
import type { AdminDeps } from './admin-context.ts';
import { authRoutes } from './auth-routes.ts';
import { authenticate } from './authenticate.ts';
import { contentRoutes } from './content-routes.ts';
import { ApiRegistry, openApiDocument } from './api-registry.ts';

/** The admin/agent API at /admin/v1: sign-in is open, everything else authenticated. */
export function adminRouter(deps: AdminDeps): Router {
  const router = new Router({ prefix: '/admin/v1' });
  const api = new ApiRegistry();
  const open = authRoutes(deps, api);
  const content = contentRoutes(deps, api);
  // Built once all routes are registered; served without credentials.
  const document = openApiDocument(api, { version: '1.0.0' });
  open.get('/openapi.json', (ctx) => {
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = document;
  });
  router.use(open.routes(), open.allowedMethods());
  router.use(authenticate(deps), content.routes(), content.allowedMethods());
  return router;
}

import { Router } from '@koa/router';
import type { AdminDeps } from './admin-context.ts';
import { authRoutes } from './auth-routes.ts';
import { authenticate } from './authenticate.ts';
import { contentRoutes } from './content-routes.ts';
import { ApiRegistry, openApiDocument } from './api-registry.ts';
import { entryRoutes } from './entry-routes.ts';
import { schemaRoutes } from './schema-routes.ts';
import { projectRoutes } from './project-routes.ts';

/** The admin/agent API at /admin/v1: sign-in is open, everything else authenticated. */
export function adminRouter(deps: AdminDeps): Router {
  const router = new Router({ prefix: '/admin/v1' });
  const api = new ApiRegistry();
  const open = authRoutes(deps, api);
  const content = contentRoutes(deps, api);
  const entries = entryRoutes(deps, api);
  const schema = schemaRoutes(deps, api);
  const project = projectRoutes(deps, api);
  // Built once all routes are registered; served without credentials.
  const document = openApiDocument(api, { version: '1.0.0' });
  open.get('/openapi.json', (ctx) => {
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = document;
  });
  // Open routes answer before authentication; it then runs once for every other admin request.
  router.use(open.routes(), open.allowedMethods());
  router.use(authenticate(deps));
  for (const group of [content, entries, schema, project]) router.use(group.routes(), group.allowedMethods());
  return router;
}

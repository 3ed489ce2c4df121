import type { Router } from '@koa/router';
import { newRouter } from '../router.ts';
import type { Middleware } from 'koa';
import { type AccessLookups, HOST_BASE, PINNED_BASE, resolveHostProject, resolvePinnedProject } from './project-resolution.ts';
import { publicConditional } from './public-http-manners.ts';

/** A group of public routes, registered with paths relative to the base (e.g. `/media/:assetId`). */
export type PublicRoutes = (router: Router) => void;

export interface PublicRouterDeps {
  /** The project lookups, cached per access read-model version; the same instance the fast reads use. */
  access: AccessLookups;
  /** PUBLIC_CACHE_MAX_AGE. */
  cacheMaxAgeSeconds: number;
}

/**
 * The public read API on both bases (spec section 4.1): every group is mounted on the project-pinned base
 * `/public/p/{projectId}/v1` and on the host-resolved base `/public/v1`, behind the middleware that resolves
 * the project. `open` routes (the OpenAPI document) answer on `/public/v1` without a project.
 */
export function publicRouter(deps: PublicRouterDeps, groups: readonly PublicRoutes[], open: readonly PublicRoutes[] = []): Router {
  const root = newRouter();
  const conditional = publicConditional({ maxAgeSeconds: deps.cacheMaxAgeSeconds });
  const { access } = deps;
  const unresolved = newRouter({ prefix: HOST_BASE });
  unresolved.use(conditional);
  for (const group of open) group(unresolved);
  root.use(unresolved.routes(), unresolved.allowedMethods());
  for (const [prefix, resolve] of [
    [PINNED_BASE, resolvePinnedProject(access)],
    [HOST_BASE, resolveHostProject(access)],
  ] as Array<[string, Middleware]>) {
    const base = newRouter({ prefix });
    base.use(conditional);
    base.use(resolve);
    for (const group of groups) group(base);
    root.use(base.routes(), base.allowedMethods());
  }
  return root;
}

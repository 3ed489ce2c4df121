import { Router, type RouterOptions } from '@koa/router';

/**
 * Every router of the service: paths match case-sensitively. @koa/router matches routes case-insensitively by
 * default but a router's `use()` middleware case-sensitively, so `/ADMIN/V1/...` reached route handlers past
 * the authentication mounted with `use()`. With every router sensitive, routes and their middleware agree, and
 * a path is either spelled as documented or not a route at all.
 */
export function newRouter(options: Omit<RouterOptions, 'sensitive'> = {}): Router {
  return new Router({ ...options, sensitive: true });
}

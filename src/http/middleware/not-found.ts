import type { Middleware } from 'koa';
import { notFound as notFoundError } from '../errors/error-factory.ts';

/**
 * Unknown routes answer 404 NOT_FOUND in the error envelope. Mount it right after the error envelope (before
 * the routers): once the rest of the stack has run, a response still at Koa's default (404, no body) means no
 * route handled the request. A handler that sets `ctx.respond = false` or a body of its own is left alone.
 */
export function notFound(): Middleware {
  return async function notFoundMiddleware(ctx, next) {
    await next();
    if (ctx.respond === false || ctx.headerSent) return;
    if (ctx.status === 404 && ctx.body == null) {
      throw notFoundError(`No route for ${ctx.method} ${ctx.path}.`);
    }
  };
}

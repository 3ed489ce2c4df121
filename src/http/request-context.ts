import type { Context } from 'koa';
import type { Logger } from '../logging/logger.ts';

/**
 * Typed access to what the HTTP foundation keeps in `ctx.state` (Koa types it as `any`):
 * - `requestId`: set by the request logger (from X-Request-Id or generated);
 * - `log`: a child logger bound to the request id, set by the request logger;
 * - `errorCode`: the envelope's error code, set by the error envelope, read by the request logger.
 */
interface FoundationState {
  requestId?: string;
  log?: Logger;
  errorCode?: string;
}

function stateOf(ctx: Pick<Context, 'state'>): FoundationState {
  return ctx.state as FoundationState;
}

/** The request id, or undefined when the request logger is not mounted. */
export function requestIdOf(ctx: Pick<Context, 'state'>): string | undefined {
  return stateOf(ctx).requestId;
}

/** The request's logger (bound to its request id), else `fallback`. */
export function requestLoggerOf(ctx: Pick<Context, 'state'>, fallback: Logger): Logger {
  return stateOf(ctx).log ?? fallback;
}

export function setRequestContext(ctx: Pick<Context, 'state'>, requestId: string, log: Logger): void {
  const state = stateOf(ctx);
  state.requestId = requestId;
  state.log = log;
}

export function setErrorCode(ctx: Pick<Context, 'state'>, code: string): void {
  stateOf(ctx).errorCode = code;
}

export function errorCodeOf(ctx: Pick<Context, 'state'>): string | undefined {
  return stateOf(ctx).errorCode;
}

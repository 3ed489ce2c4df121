import type { Context } from 'koa';
import { validationError } from '../errors/error-factory.ts';

interface QueryState {
  queryParamsRead?: Set<string>;
}

/** Records that the request's handling looked at query parameter `name` (see unreadQueryParams). */
export function noteQueryParamRead(ctx: Pick<Context, 'state'>, name: string): void {
  const state = ctx.state as QueryState;
  (state.queryParamsRead ??= new Set()).add(name);
}

/**
 * Query parameters the request carried that nothing in its handling looked at: parameters the route does not
 * know. The public response cache does not keep such responses, so made-up parameters (`?n=1`, `?n=2`, ...)
 * cannot fill it with copies of one answer.
 */
export function unreadQueryParams(ctx: Pick<Context, 'state' | 'query'>): string[] {
  const read = (ctx.state as QueryState).queryParamsRead;
  return Object.keys(ctx.query).filter((name) => !read?.has(name));
}

/** The longest slug a query parameter names (a form set's or an entry's). */
export const SLUG_PARAM_MAX = 200;

/**
 * Query parameters of public requests, read one at a time so that every 400 names the parameter and the
 * rule it broke. A parameter sent twice is refused rather than silently picking one.
 */
export class QueryParams {
  /** A Koa context, or what a request answered before Koa has of one: its query (as Koa parses it) and state. */
  constructor(private readonly ctx: Pick<Context, 'query' | 'state'>) {}

  /** The raw value, undefined when absent or empty. */
  string(name: string, options: { required?: boolean; maxLength?: number } = {}): string | undefined {
    noteQueryParamRead(this.ctx, name);
    const raw = this.ctx.query[name];
    if (Array.isArray(raw)) throw validationError(`${name}: sent more than once; send it once.`);
    if (raw === undefined || raw === '') {
      if (options.required) throw validationError(`${name}: required.`, { hint: `Add the ${name} query parameter.` });
      return undefined;
    }
    if (options.maxLength !== undefined && raw.length > options.maxLength) {
      throw validationError(`${name}: at most ${options.maxLength} characters (got ${raw.length}).`);
    }
    return raw;
  }

  requiredString(name: string, options: { maxLength?: number } = {}): string {
    return this.string(name, { ...options, required: true })!;
  }

  integer(name: string, options: { min: number; max?: number }): number | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    if (!/^-?\d{1,15}$/.test(raw)) throw validationError(`${name}: must be a whole number (got ${JSON.stringify(raw.slice(0, 40))}).`);
    const value = Number(raw);
    if (value < options.min) throw validationError(`${name}: must be at least ${options.min} (got ${value}).`);
    if (options.max !== undefined && value > options.max) throw validationError(`${name}: must be at most ${options.max} (got ${value}).`);
    return value;
  }

  boolean(name: string): boolean | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    throw validationError(`${name}: must be true or false (got ${JSON.stringify(raw.slice(0, 40))}).`);
  }
}

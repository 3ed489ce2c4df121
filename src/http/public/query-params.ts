import type { Context } from 'koa';
import { validationError } from '../errors/error-factory.ts';

/**
 * Query parameters of public requests, read one at a time so that every 400 names the parameter and the
 * rule it broke. A parameter sent twice is refused rather than silently picking one.
 */
export class QueryParams {
  constructor(private readonly ctx: Context) {}

  /** The raw value, undefined when absent or empty. */
  string(name: string, options: { required?: boolean; maxLength?: number } = {}): string | undefined {
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

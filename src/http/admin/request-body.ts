import type { Context } from 'koa';
import type { z } from 'zod';
import { validationError } from '../errors/error-factory.ts';

/** Parses the JSON body with a zod schema; the first problem is named in a 400 VALIDATION_ERROR. */
export function parseBody<S extends z.ZodType>(ctx: Context, schema: S): z.output<S> {
  const result = schema.safeParse((ctx.request as { body?: unknown }).body ?? {});
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const field = issue.path.map(String).join('.') || 'body';
    throw validationError(`${field}: ${issue.message}`);
  }
  return result.data;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A path id that is not a UUID names nothing: 404, like an unknown one. */
export function isUuid(value: string | undefined): value is string {
  return value !== undefined && UUID.test(value);
}

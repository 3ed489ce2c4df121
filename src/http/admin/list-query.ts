import { z } from 'zod';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../application/keyset-page.ts';

/**
 * The query of a paged admin list: its own parameters plus `limit` (1 to 100, default 20) and `cursor` (the
 * `nextCursor` of the previous page). Strict: a parameter the list does not know is a 400 naming it,
 * never silently ignored.
 */
export function listQuery<Shape extends z.ZodRawShape>(shape: Shape) {
  const full = {
    ...shape,
    limit: z.coerce
      .number({ error: 'must be a whole number' })
      .int('must be a whole number')
      .min(1, 'must be 1 or more')
      .max(MAX_PAGE_SIZE, `must be at most ${MAX_PAGE_SIZE}`)
      .default(DEFAULT_PAGE_SIZE)
      .describe(`Items per page, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}).`),
    cursor: z
      .string()
      .min(1, 'must not be empty')
      .optional()
      .describe('The nextCursor of the previous page, as given (opaque). Absent: the first page. Only valid with the same filters and sort.'),
  };
  return strictQuery(full);
}

/** A query that takes exactly these parameters: another one is a 400 naming it and listing those it takes. */
export function strictQuery<Shape extends z.ZodRawShape>(shape: Shape) {
  const allowed = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) => (issue.code === 'unrecognized_keys' ? `unknown parameter ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}; this route takes ${allowed}` : undefined),
  });
}

/** A query parameter holding an ISO 8601 date-time with an offset, normalised to UTC. */
export const instant = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time with an offset (Z or +09:00)' }).transform((value) => new Date(value).toISOString());

/** A page of a list, as every paged admin list answers: `items`, and `nextCursor` (null on the last page). */
export function pageSchema(item: z.ZodType, extra: z.ZodRawShape = {}) {
  return z.object({
    ...extra,
    items: z.array(item),
    nextCursor: z.string().nullable().describe('Send as `cursor` for the next page; null on the last page.'),
  });
}

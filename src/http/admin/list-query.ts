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
  const allowed = Object.keys(full).join(', ');
  return z.strictObject(full, {
    error: (issue) => (issue.code === 'unrecognized_keys' ? `unknown parameter ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}; this list takes ${allowed}` : undefined),
  });
}

/** A page of a list, as every paged admin list answers: `items`, and `nextCursor` (null on the last page). */
export function pageSchema(item: z.ZodType, extra: z.ZodRawShape = {}) {
  return z.object({
    ...extra,
    items: z.array(item),
    nextCursor: z.string().nullable().describe('Send as `cursor` for the next page; null on the last page.'),
  });
}

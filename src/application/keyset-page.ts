import { createHash } from 'node:crypto';
import { invalid } from '../domain/domain-error.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import type { Document, Query } from '../read-models/read-model-store.ts';

/**
 * One paging scheme for every admin list: the caller sends `limit` (bounded) and the `cursor` of the page
 * before, and gets `items` and `nextCursor` (null on the last page). A cursor is opaque: base64url of the
 * sort values and id of the last item (a keyset, see Query.after) and a fingerprint of the list it belongs
 * to (its scope, filters and sort). So a page starts right after the last item seen, however many items
 * were added or removed before it meanwhile: walking a list whose sort keys do not change (revision
 * numbers, log positions, creation and submission times) returns every item that existed throughout the
 * walk exactly once, and never one item twice. A cursor sent with other filters or another sort, or one
 * that is not a cursor at all, is a 400 naming `cursor`.
 */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface PageRequest {
  limit: number;
  cursor?: string | undefined;
}

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

interface CursorBody {
  /** Fingerprint of the list (scope, filters, sort). */
  l: string;
  /** Sort values of the last item. */
  v: Array<string | number | null>;
  /** Its id. */
  i: string;
}

/** A cursor's fingerprint of what it pages: anything that changes which items or in what order. */
export function listFingerprint(list: unknown): string {
  return createHash('sha256').update(JSON.stringify(list)).digest('base64url').slice(0, 12);
}

export function encodeCursor(fingerprint: string, values: Array<string | number | null>, id: string): string {
  return Buffer.from(JSON.stringify({ l: fingerprint, v: values, i: id } satisfies CursorBody)).toString('base64url');
}

/** The keyset in a cursor; VALIDATION_ERROR naming `cursor` when it is malformed or from another list. */
export function decodeCursor(cursor: string, fingerprint: string, keys: number): { values: Array<string | number | null>; id: string } {
  let body: unknown;
  try {
    if (cursor.length > 2000 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('not base64url');
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid('cursor: not a cursor of this API; send the nextCursor of the previous page as it was given, or no cursor for the first page.');
  }
  const b = body as Partial<CursorBody> | null;
  const valid =
    b !== null &&
    typeof b === 'object' &&
    typeof b.l === 'string' &&
    typeof b.i === 'string' &&
    Array.isArray(b.v) &&
    b.v.length === keys &&
    b.v.every((v) => v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)));
  if (!valid) throw invalid('cursor: not a cursor of this API; send the nextCursor of the previous page as it was given, or no cursor for the first page.');
  if (b.l !== fingerprint) {
    throw invalid('cursor: it belongs to another list (other filters or another sort); send the same filters and sort as for the first page, or start again without a cursor.');
  }
  return { values: b.v!, id: b.i! };
}

/**
 * One page of a read-model collection in the query's order. `list` is everything the page depends on
 * besides the cursor (scope, filters, sort), for the cursor's fingerprint. A page may come back shorter
 * than `limit` with a nextCursor only when `keep` drops documents (a condition the read models cannot
 * express); the walk then goes on from the last document read.
 */
export async function keysetPage<T>(
  reader: ReadModelReader,
  where: { projection: string; collection: string },
  query: Pick<Query, 'filter' | 'sort' | 'text'>,
  request: PageRequest,
  list: unknown,
  map: (doc: Document) => T | Promise<T>,
  keep?: (doc: Document) => boolean,
): Promise<Page<T>> {
  const fingerprint = listFingerprint({ list, sort: query.sort ?? [] });
  const keys = query.sort?.length ?? 0;
  const keyset = (entry: { id: string; doc: Document }) => ({ values: (query.sort ?? []).map(([field]) => sortValue(entry.doc, field)), id: entry.id });
  let after = request.cursor === undefined ? undefined : decodeCursor(request.cursor, fingerprint, keys);
  // Without `keep`, one read of limit + 1 documents tells whether there is a next page. With it, reads go on
  // until the page is full, the collection ends, or SCAN_BUDGET documents were read.
  const batch = keep ? SCAN_BATCH : request.limit + 1;
  const items: Document[] = [];
  let last: { id: string; doc: Document } | undefined;
  let scanned = 0;
  let more = false;
  for (;;) {
    const entries = await reader.findWithIds(where.projection, where.collection, { ...query, limit: batch, ...(after ? { after } : {}) });
    for (const entry of entries) {
      if (items.length === request.limit) {
        more = true;
        break;
      }
      last = entry;
      scanned++;
      if (!keep || keep(entry.doc)) items.push(entry.doc);
    }
    if (more || entries.length < batch || last === undefined) break;
    if (scanned >= SCAN_BUDGET) {
      more = true;
      break;
    }
    after = keyset(last);
  }
  const next = more && last ? keyset(last) : undefined;
  return { items: await Promise.all(items.map(map)), nextCursor: next ? encodeCursor(fingerprint, next.values, next.id) : null };
}

/** Documents read per batch, and at most per page, when a page filters with `keep`. */
const SCAN_BATCH = 200;
const SCAN_BUDGET = 2000;

function sortValue(doc: Document, field: string): string | number | null {
  let value: unknown = doc;
  for (const key of field.split('.')) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) ? value : null;
}

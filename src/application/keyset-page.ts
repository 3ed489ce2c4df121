import { createHash } from 'node:crypto';
import { invalid } from '../domain/domain-error.ts';
import { encodePosition } from '../event-store/position.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import { keysetValue, type Document, type FieldCondition, type Query } from '../read-models/read-model-store.ts';

/**
 * One paging scheme for every admin list: the caller sends `limit` (bounded) and the `cursor` of the page
 * before, and gets `items` and `nextCursor` (null on the last page). A cursor is opaque: base64url of the
 * sort values and id of the last item (a keyset, see Query.after) and a fingerprint of the list it belongs
 * to (its scope, filters and sort). So a page starts right after the last item seen, however many items
 * were added or removed before it meanwhile: walking a list whose sort keys do not change (revision
 * numbers, log positions, creation and submission times) returns every item that existed throughout the
 * walk exactly once, and never one item twice. A cursor sent with other filters or another sort, or one
 * that is not a cursor at all, is a 400 naming `cursor`.
 *
 * A list sorted by values that change (an entry's updated time, title or publish time) is walked pinned
 * (`pin`): see PinnedWalk.
 */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** A page of a pinned walk: the position it lists as of, and which part of the walk the page is in. */
export interface PinnedPage<T> extends Page<T> {
  /** The log position (20 digits) the walk lists its items as of: fixed by its first page. */
  asOf: string;
  /** false: items as they were at asOf, in the requested order; true: items changed after asOf, in the order of their last change. */
  changed: boolean;
}

export interface PageRequest {
  limit: number;
  cursor?: string | undefined;
}

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/**
 * A walk pinned to the read model's position when its first page is read (asOf), for a list whose sort
 * values change as its items do. Every document records the log position of its last change (`field`,
 * 20-digit strings). The walk first lists, in the requested order, the documents not changed since asOf:
 * their sort values are the ones they had at asOf, so each of them appears exactly once, however the
 * others move meanwhile. Then it lists the documents created or changed after asOf that match the filters
 * now, in the order of their last change (a document changed again while that part is walked comes again,
 * later). So nothing is skipped: an item changed during the walk appears in the second part with its new
 * values, and also in the first if it was listed before it changed (the last occurrence of an id is the
 * newest).
 */
export interface PinnedWalk {
  field: string;
  /** The position the read model has folded the log to (null: nothing yet). */
  position(): Promise<bigint | null>;
}

/**
 * One list of a read-model collection, paged by keyset; its items made of each document (map) or of a page's
 * documents at once, with their ids (mapPage: a list that reads something else by them, such as the log by position).
 */
export type KeysetList<T> = KeysetListOf & ({ map: (doc: Document) => T | Promise<T>; mapPage?: never } | { mapPage: (entries: ReadonlyArray<{ id: string; doc: Document }>) => Promise<T[]>; map?: never });

interface KeysetListOf {
  projection: string;
  collection: string;
  filter?: Record<string, FieldCondition>;
  /** The order; the document id breaks ties (see Query.sort). */
  sort: NonNullable<Query['sort']>;
  text?: Query['text'];
  /** Everything besides the cursor that decides which items and in what order (scope, filters, sort): the cursor's fingerprint. */
  identity: unknown;
  /**
   * A condition the read models cannot express. A page may then come back shorter than `limit` with a
   * nextCursor (reads stop after SCAN_BUDGET documents); the walk goes on from the last document read.
   */
  keep?: (doc: Document) => boolean;
}

interface CursorBody {
  /** Fingerprint of the list (scope, filters, sort). */
  l: string;
  /** Sort values of the last item; empty with an empty id: the start of the part. */
  v: Array<string | number | null>;
  /** Its id. */
  i: string;
  /** Pinned walks: the position listed as of, and whether the walk is in its part of changed items. */
  p?: string;
  c?: boolean;
}

interface Keyset {
  values: Array<string | number | null>;
  id: string;
}

const NOT_A_CURSOR = 'cursor: not a cursor of this API; send the nextCursor of the previous page as it was given, or no cursor for the first page.';

/** A cursor's fingerprint of what it pages: anything that changes which items or in what order. */
export function listFingerprint(list: unknown): string {
  return createHash('sha256').update(JSON.stringify(list)).digest('base64url').slice(0, 12);
}

function encodeCursor(body: CursorBody): string {
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

/** The cursor's content; VALIDATION_ERROR naming `cursor` when it is malformed or from another list. */
function decodeCursor(cursor: string, fingerprint: string): CursorBody {
  let body: unknown;
  try {
    if (cursor.length > 2000 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('not base64url');
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid(NOT_A_CURSOR);
  }
  const b = body as Partial<CursorBody> | null;
  const valid =
    b !== null &&
    typeof b === 'object' &&
    typeof b.l === 'string' &&
    typeof b.i === 'string' &&
    Array.isArray(b.v) &&
    b.v.every((v) => v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) &&
    (b.p === undefined || (typeof b.p === 'string' && /^\d{20}$/.test(b.p))) &&
    (b.c === undefined || typeof b.c === 'boolean');
  if (!valid) throw invalid(NOT_A_CURSOR);
  if (b.l !== fingerprint) {
    throw invalid('cursor: it belongs to another list (other filters or another sort); send the same filters and sort as for the first page, or start again without a cursor.');
  }
  return b as CursorBody;
}

/** The keyset a cursor continues after (none at the start of a part); checked against the sort it pages. */
function keysetOf(body: CursorBody, keys: number): Keyset | undefined {
  if (body.v.length === 0 && body.i === '') return undefined;
  if (body.v.length !== keys) throw invalid(NOT_A_CURSOR);
  return { values: body.v, id: body.i };
}

/** One page of the list in its order, after the cursor's item. */
export async function keysetPage<T>(reader: ReadModelReader, list: KeysetList<T>, request: PageRequest): Promise<Page<T>> {
  const fingerprint = listFingerprint({ list: list.identity, sort: list.sort });
  const cursor = request.cursor === undefined ? undefined : decodeCursor(request.cursor, fingerprint);
  if (cursor?.p !== undefined) throw invalid(NOT_A_CURSOR);
  const after = cursor === undefined ? undefined : keysetOf(cursor, list.sort.length);
  const { docs, next } = await readPage(reader, list, list.filter ?? {}, list.sort, after, request.limit);
  return { items: await itemsOf(list, docs), nextCursor: next ? encodeCursor({ l: fingerprint, v: next.values, i: next.id }) : null };
}

/** One page of a pinned walk (see PinnedWalk). */
export async function pinnedPage<T>(reader: ReadModelReader, list: KeysetList<T>, pin: PinnedWalk, request: PageRequest): Promise<PinnedPage<T>> {
  const fingerprint = listFingerprint({ list: list.identity, sort: list.sort, pinnedBy: pin.field });
  const cursor = request.cursor === undefined ? undefined : decodeCursor(request.cursor, fingerprint);
  if (cursor !== undefined && cursor.p === undefined) throw invalid(NOT_A_CURSOR);
  const asOf = cursor?.p ?? encodePosition((await pin.position()) ?? 0n);
  const changed = cursor?.c === true;
  const changedOrder: NonNullable<Query['sort']> = [[pin.field, 'asc']];
  const sort = changed ? changedOrder : list.sort;
  const filter = { ...(list.filter ?? {}), [pin.field]: changed ? { $gt: asOf } : { $lte: asOf } };
  const after = cursor === undefined ? undefined : keysetOf(cursor, sort.length);
  const { docs, next } = await readPage(reader, list, filter, sort, after, request.limit);
  let nextCursor: string | null = next ? encodeCursor({ l: fingerprint, v: next.values, i: next.id, p: asOf, c: changed }) : null;
  if (nextCursor === null && !changed) {
    // The first part is done: on to the items changed since asOf, if there are any.
    const since = await reader.findWithIds(list.projection, list.collection, { filter: { ...(list.filter ?? {}), [pin.field]: { $gt: asOf } }, sort: changedOrder, limit: 1, ...(list.text === undefined ? {} : { text: list.text }) });
    if (since.length > 0) nextCursor = encodeCursor({ l: fingerprint, v: [], i: '', p: asOf, c: true });
  }
  return { items: await itemsOf(list, docs), nextCursor, asOf, changed };
}

function itemsOf<T>(list: KeysetList<T>, entries: ReadonlyArray<{ id: string; doc: Document }>): Promise<T[]> {
  if (list.mapPage) return list.mapPage(entries);
  const map = list.map!;
  return Promise.all(entries.map((entry) => map(entry.doc)));
}

/**
 * Reads the documents after `after` in `sort` order: limit + 1 to tell whether there is a next page or,
 * with `keep`, batches until the page is full, the collection ends, or SCAN_BUDGET documents were read.
 */
async function readPage<T>(
  reader: ReadModelReader,
  list: KeysetList<T>,
  filter: Record<string, FieldCondition>,
  sort: NonNullable<Query['sort']>,
  from: Keyset | undefined,
  limit: number,
): Promise<{ docs: Array<{ id: string; doc: Document }>; next: Keyset | undefined }> {
  const keyset = (entry: { id: string; doc: Document }): Keyset => ({ values: sort.map(([field]) => keysetValue(entry.doc, field)), id: entry.id });
  const batch = list.keep ? SCAN_BATCH : limit + 1;
  const docs: Array<{ id: string; doc: Document }> = [];
  let after = from;
  let last: { id: string; doc: Document } | undefined;
  let scanned = 0;
  let more = false;
  for (;;) {
    const query: Query = { filter, sort, limit: batch, ...(list.text === undefined ? {} : { text: list.text }), ...(after ? { after } : {}) };
    const entries = await reader.findWithIds(list.projection, list.collection, query);
    for (const entry of entries) {
      if (docs.length === limit) {
        more = true;
        break;
      }
      last = entry;
      scanned++;
      if (!list.keep || list.keep(entry.doc)) docs.push(entry);
    }
    if (more || entries.length < batch || last === undefined) break;
    if (scanned >= SCAN_BUDGET) {
      more = true;
      break;
    }
    after = keyset(last);
  }
  return { docs, next: more && last ? keyset(last) : undefined };
}

/** Documents read per batch, and at most per page, when a page filters with `keep`. */
const SCAN_BATCH = 200;
const SCAN_BUDGET = 2000;


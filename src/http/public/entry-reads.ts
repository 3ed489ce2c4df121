import { hash } from 'node:crypto';
import type { Query } from '../../read-models/read-model-store.ts';
import { planAtLeast } from '../../domain/plans.ts';
import { entryListJson, entryViewOf, listItem, serialiseEntry, singleEntryJson, snapshotItemJson } from '../../public-content/public-json.ts';
import { queryTokens } from '../../search/search-tokens.ts';
import { ENTRY_VIEW_SORT_FIELDS, publicContent, type EntryViewDoc, type PublicFormSetDoc } from '../../../projections/public-content.ts';
import type { PublicContentQueries } from '../../../projections/public-content-queries.ts';
import { isSortableField, type EntryView } from '../../public-content/entry-view.ts';
import { planRequired, validationError } from '../errors/error-factory.ts';
import { formerSlug, liveEntryView, requestedLocale, type EntryLookup } from './entry-lookup.ts';
import type { PublicProject } from './public-context.ts';
import type { QueryParams } from './query-params.ts';

export const MAX_LIMIT = 100;
export const DEFAULT_LIMIT = 20;
export const MAX_QUERY_LENGTH = 200;
/** Offsets beyond this are refused: deep pages are what search and sort are for. */
export const MAX_OFFSET = 100_000;

/** What a single-entry read needs of an entry view: its serialised parts and media ids. */
const SINGLE_ENTRY_FIELDS = ['jsonHead', 'jsonTail', 'media', 'entryId'];
/** What a list page reads of each entry view without the snapshot: its item, serialised at projection time (findStrings). */
export const LIST_ITEM_FIELD = 'jsonItem';
/** What a list page with include_snapshot reads of each entry view: its item, its head (which holds the data) and media ids. */
const SNAPSHOT_ITEM_FIELDS = ['jsonItem', 'jsonHead', 'media'];
/** What makes a list item of a document without jsonItem (an older generation's, while the rebuild after an upgrade runs). */
const LIST_ITEM_SOURCE_FIELDS = ['jsonItem', 'entryId', 'slug', 'revision'];

/**
 * The single-entry response (GET /form-sets/{formSetSlug}/entries/{entrySlug}) of a live entry by slug: its
 * serialised bytes with mediaUrls on the request's base; or the current slug of a renamed entry; or missing.
 */
export async function singleEntryResponse(queries: PublicContentQueries, formSetId: string, slug: string, locale: string, baseUrl: string): Promise<{ kind: 'found'; json: string; entryId: string } | Exclude<EntryLookup, { kind: 'found' }>> {
  const live = await liveEntryResponse(queries, formSetId, slug, locale, baseUrl);
  return live ? { kind: 'found', ...live } : formerSlug(queries, formSetId, slug, locale);
}

/**
 * The single-entry response of the live entry that has this slug now, or undefined when none has (a former
 * slug, see singleEntryResponse): one index lookup that reads the entry's serialised parts.
 */
export async function liveEntryResponse(queries: PublicContentQueries, formSetId: string, slug: string, locale: string, baseUrl: string): Promise<{ json: string; entryId: string } | undefined> {
  const view = await liveEntryView(queries, formSetId, slug, locale, SINGLE_ENTRY_FIELDS);
  if (!view) return undefined;
  if (view.jsonHead !== undefined) return { json: singleEntryJson(view as Required<EntryViewDoc>, view.media, baseUrl), entryId: view.entryId };
  // A document of an older generation, without the serialised parts (while the rebuild after an upgrade runs).
  const whole = await liveEntryView(queries, formSetId, slug, locale);
  return whole ? { json: entryJson(whole, baseUrl), entryId: whole.entryId } : undefined;
}

/** The single-entry response of a whole entry view (by path, by slug, by external id). */
export function entryJson(view: EntryViewDoc, baseUrl: string): string {
  return singleEntryJson(view.jsonHead !== undefined && view.jsonTail !== undefined ? { jsonHead: view.jsonHead, jsonTail: view.jsonTail } : serialiseEntry(entryViewOf(view)), view.media, baseUrl);
}

export interface EntryListRequest {
  formSet: PublicFormSetDoc;
  locale: string;
  limit: number;
  offset: number;
  sort: { field: string; direction: 'asc' | 'desc' } | undefined;
  /** Search tokens of q; undefined without q. */
  text: string[] | undefined;
  includeSnapshot: boolean;
}

/** The parameters of GET /form-sets/{formSetSlug}/entries, checked: 400 naming the parameter, 403 for q below Business. */
export function entryListRequest(params: QueryParams, target: PublicProject, formSet: PublicFormSetDoc): EntryListRequest {
  const locale = requestedLocale(params, target);
  const limit = params.integer('limit', { min: 1, max: MAX_LIMIT }) ?? DEFAULT_LIMIT;
  const page = params.integer('page', { min: 1, max: MAX_OFFSET }) ?? 1;
  const offsetParam = params.integer('offset', { min: 0, max: MAX_OFFSET });
  const includeSnapshot = params.boolean('include_snapshot') ?? false;
  const sortParam = params.string('sort', { maxLength: 100 });
  const q = params.string('q', { maxLength: MAX_QUERY_LENGTH })?.trim();
  const sort = parseSort(sortParam, formSet);
  // Documented in the OpenAPI: offset, when sent, wins over page.
  const offset = offsetParam ?? (page - 1) * limit;
  if (offset > MAX_OFFSET) throw validationError(`page: pages beyond offset ${MAX_OFFSET} are not served (page ${page} with limit ${limit}).`, { hint: 'Narrow the list with q or sort instead.' });
  let text: string[] | undefined;
  if (q !== undefined && q !== '') {
    if (!planAtLeast(target.project.plan, 'business')) {
      throw planRequired('Full-text search (q) requires the Business plan or above.', { requiredPlan: 'Business' });
    }
    text = queryTokens(q);
  }
  return { formSet, locale, limit, offset, sort, text, includeSnapshot };
}

/**
 * The find of a list page's entry views: a range of the sort's index (the newest first without sort or q,
 * relevance with q alone). Without include_snapshot the page reads each view's item (findStrings of
 * LIST_ITEM_FIELD, which the published orders' indexes hold); with it, the item, head and media ids.
 */
export function entryListQuery(request: EntryListRequest): Query & { filter: Record<string, string> } {
  const { formSet, locale, limit, offset, sort, text, includeSnapshot } = request;
  // Ties are broken by the view's id (Query.sort), the entry id within a locale: the list's index ends with it.
  const order: Array<[string, 'asc' | 'desc']> | undefined = sort
    ? [[sort.field, sort.direction]]
    : text === undefined
      ? [['publishedAt', 'desc']]
      : undefined; // relevance
  return { filter: { formSetId: formSet.formSetId, locale }, ...(order ? { sort: order } : {}), limit, offset, ...(text ? { text } : {}), ...(includeSnapshot ? { fields: SNAPSHOT_ITEM_FIELDS } : {}) };
}

/**
 * How a list page's bytes are made at request time (entryListJson, formSetSummary, snapshotItemJson and the
 * media URLs), as the ETags listEtag makes stand for it: raise it with any change to those, so that an ETag
 * never names two different pages. A test pins a page's bytes to it.
 */
export const LIST_PAGE_FORMAT = 1;

/** A list page: its bytes, and its ETag when the list's last change is known (undefined: hash the bytes). */
export interface EntryListPage {
  etag: string | undefined;
  /** Undefined when `unchanged` said the client holds the page already (a 304): the items were not read. */
  json: string | undefined;
}

/**
 * A list page's bytes: a range of the sort's index, each entry's item as serialised at projection time, and
 * its ETag made from the list's last change (FormSetListDoc) and the request, so that no request hashes the
 * page it sends (20 KB at limit=100). The change is read before the items: a page read across a later change
 * holds newer items under the older change's ETag, which is never made again, so no client is told a stale
 * page is current. With `unchanged`, a page whose ETag it accepts is not read at all.
 */
export async function entryListResponse(queries: PublicContentQueries, request: EntryListRequest, baseUrl: string, unchanged?: (etag: string) => boolean): Promise<EntryListPage> {
  const { formSet, limit, offset, text, includeSnapshot } = request;
  const summary = JSON.stringify(formSetSummary(formSet));
  if (text !== undefined && text.length === 0) return { etag: undefined, json: entryListJson(summary, 0, limit, offset, []) };
  const list = await queries.formSetList(formSet.formSetId);
  const etag = list?.eventId === undefined ? undefined : listEtag(list.eventId, summary, request, baseUrl);
  if (etag !== undefined && unchanged?.(etag)) return { etag, json: undefined };
  const query = entryListQuery(request);
  const items = await listItemsJson(queries, query, includeSnapshot, baseUrl);
  const total = text === undefined ? (list?.liveEntries ?? 0) : await queries.countEntryViews(query.filter, text);
  return { etag, json: entryListJson(summary, total, limit, offset, items) };
}

/**
 * The strong ETag of a list page: a digest of everything its bytes are made of, the list's last change (by
 * event id: a position may name another event in a log restored from an older backup), the projection's
 * version, LIST_PAGE_FORMAT, the form set as the page shows it (read apart, and maybe from a cache a moment
 * older), the request's parameters and the base URL of media URLs.
 */
export function listEtag(eventId: string, summary: string, request: EntryListRequest, baseUrl: string): string {
  const { locale, limit, offset, sort, text, includeSnapshot } = request;
  const key = `${LIST_PAGE_FORMAT}\n${publicContent.version}\n${eventId}\n${summary}\n${locale}\n${limit}\n${offset}\n${sort ? `${sort.field}:${sort.direction}` : ''}\n${text?.join(' ') ?? ''}\n${includeSnapshot}\n${baseUrl}`;
  return `"${hash('sha1', key, 'base64url')}"`;
}

/** The items of a list page, each as serialised at projection time (with include_snapshot: with its data and media URLs). */
async function listItemsJson(queries: PublicContentQueries, query: Query, includeSnapshot: boolean, baseUrl: string): Promise<string[]> {
  if (includeSnapshot) {
    const views = await queries.entryViewPage(query);
    if (views.every((view) => view.jsonItem !== undefined && view.jsonHead !== undefined)) return views.map((view) => snapshotItemJson(view as Required<EntryViewDoc>, view.media, baseUrl));
    // Whole documents of an older generation, without the serialised parts (read again, as below).
    const { fields: _, ...wholeViews } = query;
    const whole = await queries.entryViewPage(wholeViews);
    return whole.map((view) => JSON.stringify(listItem(entryViewOf(view), { baseUrl })));
  }
  const items = await queries.entryViewPageField(query, LIST_ITEM_FIELD);
  if (items.every((item) => item !== null)) return items as string[];
  // Documents of an older generation without their item. Read again with what an item is made of: the page is
  // the same unless a write came in between, as with any two reads.
  const views = await queries.entryViewPage({ ...query, fields: LIST_ITEM_SOURCE_FIELDS });
  return views.map((view) => view.jsonItem ?? JSON.stringify(listItem(view as Pick<EntryView, 'entryId' | 'slug' | 'revision'>)));
}

export function formSetSummary(formSet: PublicFormSetDoc): { id: string; slug: string; name: string; description: string | null } {
  return { id: formSet.formSetId, slug: formSet.slug, name: formSet.name, description: formSet.description };
}

const SORT_PATTERN = /^([a-z][a-z0-9_]{0,63}):(asc|desc)$/;

/** `sort=<key>:<asc|desc>`: a built-in key or a scalar field of the form set. */
export function parseSort(value: string | undefined, formSet: PublicFormSetDoc): { field: string; direction: 'asc' | 'desc' } | undefined {
  if (value === undefined) return undefined;
  const builtIn = Object.keys(ENTRY_VIEW_SORT_FIELDS);
  const allowed = () => `Sort keys: ${[...builtIn, ...formSet.definition.fields.filter((f) => isSortableField(formSet.definition, f.key)).map((f) => f.key)].join(', ')}.`;
  const match = SORT_PATTERN.exec(value);
  if (!match) throw validationError(`sort: must be <key>:<asc|desc>, e.g. published_date:desc (got ${JSON.stringify(value.slice(0, 60))}).`, { hint: allowed() });
  const [, key, direction] = match as unknown as [string, string, 'asc' | 'desc'];
  if (key in ENTRY_VIEW_SORT_FIELDS) return { field: ENTRY_VIEW_SORT_FIELDS[key as keyof typeof ENTRY_VIEW_SORT_FIELDS], direction };
  if (isSortableField(formSet.definition, key)) {
    // A field with a sort slot is read from the slot's index; another (or any, on a generation before slots) from sortValues.
    const slot = formSet.sortSlots?.[key];
    return { field: slot === undefined ? `sortValues.${key}` : `sortSlots.${slot}`, direction };
  }
  throw validationError(`sort: unknown sort key ${JSON.stringify(key)} for form set ${JSON.stringify(formSet.slug)}.`, { hint: allowed() });
}

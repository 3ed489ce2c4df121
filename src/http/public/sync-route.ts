import type { Router } from '@koa/router';
import type { Context } from 'koa';
import type { PublicContentQueries } from '../../../projections/public-content-queries.ts';
import type { EntryViewDoc, SyncLogDoc } from '../../../projections/public-content.ts';
import type { Doc } from '../../read-models/read-model-store.ts';
import { validationError } from '../errors/error-factory.ts';
import { entryJson } from './entry-reads.ts';
import { requestedLocale } from './entry-lookup.ts';
import { publicProjectOf, type PublicProject } from './public-context.ts';
import type { PublicContentDeps } from './public-content-deps.ts';
import { QueryParams, SLUG_PARAM_MAX } from './query-params.ts';

export const SYNC_DEFAULT_LIMIT = 50;
export const SYNC_MAX_LIMIT = 100;
const CURSOR_VERSION = 'v1';
/** `${encodePosition(position)}:${uuid}` (SyncLogDoc.seq). */
const SEQ = /^\d{20}:[0-9a-f-]{36}$/;

/**
 * GET /sync: what a site must apply to be up to date, in the log's order, since its cursor (from the start
 * without one): each entry's last change (its public JSON in the locale asked for, or its removal) and each
 * published master's, read from the public-content read model's sync_log (SyncLogDoc), a page at a time. A page
 * answers the cursor to ask with next; `hasMore` says whether to ask at once. Keep the cursor: it stays valid
 * for as long as the log does (it is a log position), across restarts and rebuilds of the read models.
 *
 * A change is never skipped: the feed is read in log order, and a later change of an entry already delivered
 * moves it forward, to be delivered again after the cursor. A site that applies each item (upsert an entry,
 * delete a removed one, redirect its previous slugs) and keeps the cursor holds what the public API serves.
 */
export function syncRoute(router: Router, deps: PublicContentDeps): void {
  const { publicContent } = deps;
  router.get('/sync', async (ctx) => {
    const limit = new QueryParams(ctx).integer('limit', { min: 1, max: SYNC_MAX_LIMIT }) ?? SYNC_DEFAULT_LIMIT;
    const { target, locale, scope, after } = await syncRequest(ctx, deps, undefined);
    const changes = await publicContent.syncPage(scope, after, limit);
    const items = (await syncItemsOf(publicContent, target, locale, changes)).map((item) => item.json);
    const last = changes.at(-1)?.seq ?? after;
    ctx.type = 'application/json; charset=utf-8';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = `{"items":[${items.join(',')}],"cursor":${last === null ? 'null' : JSON.stringify(cursorOf(last))},"hasMore":${changes.length === limit}}`;
  });
}

/**
 * What a site is told of each change, in order: its type and its JSON (the entry's public JSON in `locale`, or its
 * removal; a master's records). The live entries' views are read in one go.
 */
export async function syncItemsOf(publicContent: PublicContentQueries, target: PublicProject, locale: string, changes: readonly Doc<SyncLogDoc>[]): Promise<Array<{ type: SyncItemType; json: string }>> {
  const live = changes.filter((change) => change.kind === 'entry' && !change.removed).map((change) => change.entryId!);
  const views = live.length > 0 ? await publicContent.entryViews(live, locale) : new Map<string, Doc<EntryViewDoc>>();
  const items: Array<{ type: SyncItemType; json: string }> = [];
  for (const change of changes) items.push(await syncItemOf(publicContent, target, locale, change, views));
  return items;
}

async function syncItemOf(publicContent: PublicContentQueries, target: PublicProject, locale: string, change: Doc<SyncLogDoc>, views: ReadonlyMap<string, Doc<EntryViewDoc>>): Promise<{ type: SyncItemType; json: string }> {
  if (change.kind === 'entry') {
    const identity = { id: change.entryId, formSet: change.formSetSlug ?? null, slug: change.slug ?? null, previousSlugs: change.previousSlugs ?? [] };
    const view = change.removed ? undefined : views.get(change.entryId!);
    if (!view) return { type: 'entry.removed', json: JSON.stringify({ type: 'entry.removed', ...identity }) };
    return { type: 'entry', json: `{"type":"entry",${JSON.stringify(identity).slice(1, -1)},"entry":${entryJson(view, target.mediaBaseUrl)}}` };
  }
  const [view] = change.removed ? [] : await publicContent.masterViewWithKey(target.projectId, locale, change.key!);
  if (!view?.published) return { type: 'master.removed', json: JSON.stringify({ type: 'master.removed', key: change.key }) };
  return { type: 'master', json: JSON.stringify({ type: 'master', key: change.key, master: { masterEntity: view.entity, locale, total: view.records.length, items: view.records } }) };
}

export type SyncItemType = 'entry' | 'entry.removed' | 'master' | 'master.removed';

/** The request's feed: its locale, the form set it keeps to (or the whole project), and the position it starts after. */
export async function syncRequest(ctx: Context, deps: PublicContentDeps, cursor: string | undefined): Promise<{ target: PublicProject; locale: string; scope: { projectId: string } | { formSetId: string }; after: string | null }> {
  const target = publicProjectOf(ctx);
  const params = new QueryParams(ctx);
  const locale = requestedLocale(params, target);
  const after = seqOfCursor(cursor ?? params.string('cursor', { maxLength: 200 }));
  const formSetSlug = params.string('form_set', { maxLength: SLUG_PARAM_MAX });
  const scope = formSetSlug === undefined ? { projectId: target.projectId } : { formSetId: (await deps.formSets.bySlug(target.projectId, formSetSlug)).formSetId };
  return { target, locale, scope, after };
}

/** The opaque cursor of a position in the feed. */
export function cursorOf(seq: string): string {
  return Buffer.from(`${CURSOR_VERSION}:${seq}`).toString('base64url');
}

/** The position a cursor names (null: none given, from the start); 400 for one this service did not make. */
export function seqOfCursor(cursor: string | undefined): string | null {
  if (cursor === undefined || cursor === '') return null;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const seq = text.startsWith(`${CURSOR_VERSION}:`) ? text.slice(CURSOR_VERSION.length + 1) : '';
  if (!SEQ.test(seq)) throw validationError('cursor: not a cursor of this feed.', { hint: 'Send the cursor a /sync answer gave, as it was, or none to start from the beginning.' });
  return seq;
}

import type { Router } from '@koa/router';
import type { ReadModelReader } from '../../read-models/read-model-reader.ts';
import { EXTERNAL_ID_MAX, ENTITY_TYPE_MAX, IMPORT_PATH_MAX, SOURCE_TYPE_MAX } from '../../domain/content/entry/import-metadata.ts';
import { planAtLeast } from '../../domain/plans.ts';
import { isSortableField, mediaUrls, type EntryView } from '../../public-content/entry-view.ts';
import { queryTokens } from '../../search/search-tokens.ts';
import { ENTRY_VIEW_SORT_FIELDS, type LiveCountDoc, type MasterViewDoc, type PublicFormSetDoc } from '../../../projections/public-content.ts';
import { notFound, planRequired, validationError } from '../errors/error-factory.ts';
import { publicProjectOf } from './public-context.ts';
import type { PublicRoutes } from './public-router.ts';
import { QueryParams } from './query-params.ts';
import { entryBySlug, entryNotFound, PUBLIC_CONTENT, requestedLocale } from './entry-lookup.ts';
import { entryOrRedirect, movedPermanently, singleEntryBody } from './entry-responses.ts';
import type { PublicContentDeps } from './public-content-deps.ts';
import { previewRoute } from './preview-route.ts';
import { seoRoutes } from './seo-routes.ts';

type Doc<T> = T & Record<string, unknown>;

export const MAX_LIMIT = 100;
export const DEFAULT_LIMIT = 20;
export const MAX_QUERY_LENGTH = 200;
/** Offsets beyond this are refused: deep pages are what search and sort are for. */
export const MAX_OFFSET = 100_000;
export const SLUG_PARAM_MAX = 200;

/** Entries, form sets, content lookups, masters, preview and SEO outputs (spec section 4.1, all but media). */
export function publicContentRoutes(deps: PublicContentDeps): PublicRoutes {
  const { reader } = deps;
  return (router: Router) => {
    router.get('/form-sets/:slug', async (ctx) => {
      const target = publicProjectOf(ctx);
      const locale = requestedLocale(new QueryParams(ctx), target);
      const formSet = await deps.formSets.bySlug(target.projectId, ctx.params.slug!);
      const view = await primaryEntry(reader, formSet, locale);
      if (!view) throw notFound(`Form set ${JSON.stringify(formSet.slug)} has no published entry.`);
      ctx.body = {
        formSet: formSetSummary(formSet),
        entry: { id: view.entryId, slug: view.slug },
        revision: view.revision,
        data: view.data,
        mediaUrls: mediaUrls(view.media, target.mediaBaseUrl),
      };
    });

    router.get('/form-sets/:formSetSlug/entries', async (ctx) => {
      const target = publicProjectOf(ctx);
      const params = new QueryParams(ctx);
      const locale = requestedLocale(params, target);
      const limit = params.integer('limit', { min: 1, max: MAX_LIMIT }) ?? DEFAULT_LIMIT;
      const page = params.integer('page', { min: 1, max: MAX_OFFSET }) ?? 1;
      const offsetParam = params.integer('offset', { min: 0, max: MAX_OFFSET });
      const includeSnapshot = params.boolean('include_snapshot') ?? false;
      const sortParam = params.string('sort', { maxLength: 100 });
      const q = params.string('q', { maxLength: MAX_QUERY_LENGTH })?.trim();
      const formSet = await deps.formSets.bySlug(target.projectId, ctx.params.formSetSlug!);
      const sort = parseSort(sortParam, formSet);
      // Documented in the OpenAPI: offset, when sent, wins over page.
      const offset = offsetParam ?? (page - 1) * limit;
      if (offset > MAX_OFFSET) throw validationError(`page: pages beyond offset ${MAX_OFFSET} are not served (page ${page} with limit ${limit}).`, { hint: 'Narrow the list with q or sort instead.' });

      const filter = { formSetId: formSet.formSetId, locale };
      let text: string[] | undefined;
      if (q !== undefined && q !== '') {
        if (!planAtLeast(target.project.plan, 'business')) {
          throw planRequired('Full-text search (q) requires the Business plan or above.', { requiredPlan: 'Business' });
        }
        text = queryTokens(q);
      }
      const order: Array<[string, 'asc' | 'desc']> | undefined = sort
        ? [[sort.field, sort.direction], ['entryId', sort.direction]]
        : text === undefined
          ? [['publishedAt', 'desc'], ['entryId', 'desc']]
          : undefined; // relevance
      const [items, total] =
        text !== undefined && text.length === 0
          ? [[], 0]
          : await Promise.all([
              reader.find<Doc<EntryView>>(PUBLIC_CONTENT, 'entry_views', { filter, ...(order ? { sort: order } : {}), limit, offset, ...(text ? { text } : {}) }),
              text === undefined
                ? reader.get<Doc<LiveCountDoc>>(PUBLIC_CONTENT, 'live_counts', formSet.formSetId).then((doc) => doc?.liveEntries ?? 0)
                : reader.count(PUBLIC_CONTENT, 'entry_views', filter, text),
            ]);
      ctx.body = {
        formSet: formSetSummary(formSet),
        total,
        limit,
        offset,
        items: items.map((view) => ({
          entry: { id: view.entryId, slug: view.slug },
          published: {
            revisionId: view.revision.id,
            revision: view.revision.revision,
            updatedAt: view.revision.updatedAt,
            ...(includeSnapshot ? { snapshot: view.data, mediaUrls: mediaUrls(view.media, target.mediaBaseUrl) } : {}),
          },
        })),
      };
    });

    router.get('/form-sets/:formSetSlug/entries/:entrySlug', async (ctx) => {
      const target = publicProjectOf(ctx);
      const found = await entryOrRedirect(ctx, deps, target, '');
      if (found) ctx.body = singleEntryBody(found.view, target.mediaBaseUrl);
    });

    router.get('/content/by-path', async (ctx) => {
      const target = publicProjectOf(ctx);
      const params = new QueryParams(ctx);
      const path = params.requiredString('path', { maxLength: IMPORT_PATH_MAX });
      const locale = requestedLocale(params, target);
      const [view] = await reader.find<Doc<EntryView>>(PUBLIC_CONTENT, 'entry_views', {
        filter: { projectId: target.projectId, locale, importPath: path },
        sort: [['createdAt', 'asc'], ['entryId', 'asc']],
        limit: 1,
      });
      if (!view) throw notFound(`No published entry with import path ${JSON.stringify(path.slice(0, 200))}.`);
      ctx.body = singleEntryBody(view, target.mediaBaseUrl);
    });

    router.get('/content/by-slug', async (ctx) => {
      const target = publicProjectOf(ctx);
      const params = new QueryParams(ctx);
      const formSetSlug = params.requiredString('formSetSlug', { maxLength: SLUG_PARAM_MAX });
      const slug = params.requiredString('slug', { maxLength: SLUG_PARAM_MAX });
      const locale = requestedLocale(params, target);
      const formSet = await deps.formSets.bySlug(target.projectId, formSetSlug);
      const found = await entryBySlug(reader, formSet.formSetId, slug, locale);
      if (found.kind === 'missing') throw entryNotFound(formSetSlug, slug);
      if (found.kind === 'moved') {
        const query = new URLSearchParams(ctx.querystring);
        query.set('slug', found.slug);
        return movedPermanently(ctx, `${target.baseUrl}/content/by-slug?${query.toString()}`);
      }
      ctx.body = singleEntryBody(found.view, target.mediaBaseUrl);
    });

    router.get('/content/by-external-id', async (ctx) => {
      const target = publicProjectOf(ctx);
      const params = new QueryParams(ctx);
      const sourceType = params.string('sourceType', { maxLength: SOURCE_TYPE_MAX });
      const entityType = params.string('entityType', { maxLength: ENTITY_TYPE_MAX });
      const externalId = params.requiredString('externalId', { maxLength: EXTERNAL_ID_MAX });
      const locale = requestedLocale(params, target);
      // sourceType and entityType narrow the match when sent; without them any identity with the id matches
      // (the oldest entry first), as the OpenAPI document says.
      const [view] = await reader.find<Doc<EntryView>>(PUBLIC_CONTENT, 'entry_views', {
        filter: {
          projectId: target.projectId,
          locale,
          'external.externalId': externalId,
          ...(sourceType === undefined ? {} : { 'external.sourceType': sourceType }),
          ...(entityType === undefined ? {} : { 'external.entityType': entityType }),
        },
        sort: [['createdAt', 'asc'], ['entryId', 'asc']],
        limit: 1,
      });
      if (!view) throw notFound(`No published entry with external id ${JSON.stringify(externalId.slice(0, 200))}.`);
      ctx.body = singleEntryBody(view, target.mediaBaseUrl);
    });

    router.get('/master-entities', async (ctx) => {
      const target = publicProjectOf(ctx);
      const locale = requestedLocale(new QueryParams(ctx), target);
      const views = await reader.find<Doc<MasterViewDoc>>(PUBLIC_CONTENT, 'master_views', {
        filter: { projectId: target.projectId, locale, published: true },
        sort: [['key', 'asc']],
      });
      ctx.body = { total: views.length, items: views.map((v) => v.entity) };
    });

    router.get('/master-entities/:key/records', async (ctx) => {
      const target = publicProjectOf(ctx);
      const locale = requestedLocale(new QueryParams(ctx), target);
      const key = ctx.params.key!;
      const [view] = await reader.find<Doc<MasterViewDoc>>(PUBLIC_CONTENT, 'master_views', { filter: { projectId: target.projectId, locale, key }, limit: 1 });
      if (!view || !view.published) throw notFound(`No published master entity with key ${JSON.stringify(key.slice(0, 100))}.`);
      ctx.body = { masterEntity: view.entity, locale, total: view.records.length, items: view.records };
    });

    previewRoute(router, deps);
    seoRoutes(router, deps);
  };
}

function formSetSummary(formSet: PublicFormSetDoc): { id: string; slug: string; name: string; description: string | null } {
  return { id: formSet.formSetId, slug: formSet.slug, name: formSet.name, description: formSet.description };
}

/** Spec section 2: the entry with slug main, else _legacy, else the oldest entry. */
async function primaryEntry(reader: ReadModelReader, formSet: PublicFormSetDoc, locale: string): Promise<Doc<EntryView> | undefined> {
  for (const slug of ['main', '_legacy']) {
    const [view] = await reader.find<Doc<EntryView>>(PUBLIC_CONTENT, 'entry_views', { filter: { formSetId: formSet.formSetId, locale, slug }, limit: 1 });
    if (view) return view;
  }
  const [oldest] = await reader.find<Doc<EntryView>>(PUBLIC_CONTENT, 'entry_views', {
    filter: { formSetId: formSet.formSetId, locale },
    sort: [['createdAt', 'asc'], ['entryId', 'asc']],
    limit: 1,
  });
  return oldest;
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
  if (isSortableField(formSet.definition, key)) return { field: `sortValues.${key}`, direction };
  throw validationError(`sort: unknown sort key ${JSON.stringify(key)} for form set ${JSON.stringify(formSet.slug)}.`, { hint: allowed() });
}

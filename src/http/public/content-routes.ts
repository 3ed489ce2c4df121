import type { Context } from 'koa';
import type { Router } from '@koa/router';
import { EXTERNAL_ID_MAX, ENTITY_TYPE_MAX, IMPORT_PATH_MAX, SOURCE_TYPE_MAX } from '../../domain/content/entry/import-metadata.ts';
import { mediaUrls } from '../../public-content/entry-view.ts';
import { entryViewOf } from '../../public-content/public-json.ts';
import type { EntryViewDoc, PublicFormSetDoc } from '../../../projections/public-content.ts';
import type { PublicContentQueries } from '../../../projections/public-content-queries.ts';
import { notFound } from '../errors/error-factory.ts';
import { publicProjectOf, setCacheScopes } from './public-context.ts';
import type { PublicRoutes } from './public-router.ts';
import { QueryParams, SLUG_PARAM_MAX } from './query-params.ts';
import { entryBySlug, entryNotFound, requestedLocale } from './entry-lookup.ts';
import { answerFormerSlug, movedPermanently } from './entry-responses.ts';
import { entryJson, entryListRequest, entryListResponse, formSetSummary, singleEntryResponse } from './entry-reads.ts';
import type { PublicContentDeps } from './public-content-deps.ts';
import { previewRoute } from './preview-route.ts';
import { seoRoutes } from './seo-routes.ts';
import { syncRoute } from './sync-route.ts';
import { syncEventsRoute } from './sync-events-route.ts';
import type { Doc } from '../../read-models/read-model-store.ts';

export { DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET, MAX_QUERY_LENGTH } from './entry-reads.ts';



/** Entries, form sets, content lookups, masters, preview and SEO outputs (spec section 4.1, all but media). */
export function publicContentRoutes(deps: PublicContentDeps): PublicRoutes {
  const { publicContent } = deps;
  return (router: Router) => {
    router.get('/form-sets/:slug', async (ctx) => {
      const target = publicProjectOf(ctx);
      const locale = requestedLocale(new QueryParams(ctx), target);
      const formSet = await deps.formSets.bySlug(target.projectId, ctx.params.slug!);
      const found = await primaryEntry(publicContent, formSet, locale);
      if (!found) throw notFound(`Form set ${JSON.stringify(formSet.slug)} has no published entry.`);
      const view = entryViewOf(found);
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
      const formSet = await deps.formSets.bySlug(target.projectId, ctx.params.formSetSlug!);
      const page = await entryListResponse(publicContent, entryListRequest(params, target, formSet), target.baseUrl);
      // The ETag of the list's last change, as the fast lane sends it (without one, the conditional middleware hashes the bytes).
      if (page.etag !== undefined) ctx.set('ETag', page.etag);
      sendJson(ctx, page.json!);
      setCacheScopes(ctx, [`form-set:${formSet.formSetId}`]);
    });

    router.get('/form-sets/:formSetSlug/entries/:entrySlug', async (ctx) => {
      const target = publicProjectOf(ctx);
      const locale = requestedLocale(new QueryParams(ctx), target);
      const { formSetSlug, entrySlug } = ctx.params as { formSetSlug: string; entrySlug: string };
      const formSet = await deps.formSets.bySlug(target.projectId, formSetSlug);
      const found = await singleEntryResponse(publicContent, formSet.formSetId, entrySlug, locale, target.mediaBaseUrl);
      if (found.kind !== 'found') return answerFormerSlug(ctx, target, formSet, entrySlug, found);
      sendJson(ctx, found.json);
      setCacheScopes(ctx, [`entry:${found.entryId}`]);
    });

    router.get('/content/by-path', async (ctx) => {
      const target = publicProjectOf(ctx);
      const params = new QueryParams(ctx);
      const path = params.requiredString('path', { maxLength: IMPORT_PATH_MAX });
      const locale = requestedLocale(params, target);
      const [view] = await publicContent.entryViewWithImportPath(target.projectId, locale, path);
      if (!view) throw notFound(`No published entry with import path ${JSON.stringify(path.slice(0, 200))}.`);
      sendJson(ctx, entryJson(view, target.mediaBaseUrl));
    });

    router.get('/content/by-slug', async (ctx) => {
      const target = publicProjectOf(ctx);
      const params = new QueryParams(ctx);
      const formSetSlug = params.requiredString('formSetSlug', { maxLength: SLUG_PARAM_MAX });
      const slug = params.requiredString('slug', { maxLength: SLUG_PARAM_MAX });
      const locale = requestedLocale(params, target);
      const formSet = await deps.formSets.bySlug(target.projectId, formSetSlug);
      const found = await entryBySlug(publicContent, formSet.formSetId, slug, locale);
      if (found.kind === 'missing') throw entryNotFound(formSetSlug, slug);
      if (found.kind === 'moved') {
        const query = new URLSearchParams(ctx.querystring);
        query.set('slug', found.slug);
        return movedPermanently(ctx, `${target.baseUrl}/content/by-slug?${query.toString()}`);
      }
      sendJson(ctx, entryJson(found.view, target.mediaBaseUrl));
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
      const [view] = await publicContent.entryViewWithExternalId(target.projectId, locale, externalId, sourceType, entityType);
      if (!view) throw notFound(`No published entry with external id ${JSON.stringify(externalId.slice(0, 200))}.`);
      sendJson(ctx, entryJson(view, target.mediaBaseUrl));
    });

    router.get('/master-entities', async (ctx) => {
      const target = publicProjectOf(ctx);
      const locale = requestedLocale(new QueryParams(ctx), target);
      const views = await publicContent.publishedMasterViews(target.projectId, locale);
      ctx.body = { total: views.length, items: views.map((v) => v.entity) };
    });

    router.get('/master-entities/:key/records', async (ctx) => {
      const target = publicProjectOf(ctx);
      const locale = requestedLocale(new QueryParams(ctx), target);
      const key = ctx.params.key!;
      const [view] = await publicContent.masterViewWithKey(target.projectId, locale, key);
      if (!view?.published) throw notFound(`No published master entity with key ${JSON.stringify(key.slice(0, 100))}.`);
      ctx.body = { masterEntity: view.entity, locale, total: view.records.length, items: view.records };
    });

    previewRoute(router, deps);
    seoRoutes(router, deps);
    syncRoute(router, deps);
    syncEventsRoute(router, deps);
  };
}

/** Spec section 2: the entry with slug main, else _legacy, else the oldest entry. */
async function primaryEntry(publicContent: PublicContentQueries, formSet: PublicFormSetDoc, locale: string): Promise<Doc<EntryViewDoc> | undefined> {
  for (const slug of ['main', '_legacy']) {
    const [view] = await publicContent.entryViewWithSlug(formSet.formSetId, slug, locale);
    if (view) return view;
  }
  const [oldest] = await publicContent.oldestEntryView(formSet.formSetId, locale);
  return oldest;
}

/** A body serialised already: sent as JSON (the public conditional middleware adds its ETag). */
function sendJson(ctx: Context, json: string): void {
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = json;
}

import type { Context } from 'koa';
import type { EntryViewDoc } from '../../../projections/public-content.ts';
import type { PublicFormSetDoc } from '../../../projections/public-content.ts';
import { entryBySlug, entryNotFound, requestedLocale, type EntryLookup } from './entry-lookup.ts';
import type { PublicContentDeps } from './public-content-deps.ts';
import type { PublicProject } from './public-context.ts';
import { QueryParams } from './query-params.ts';
import type { Doc } from '../../read-models/read-model-store.ts';


/**
 * The live entry a /form-sets/{formSetSlug}/entries/{entrySlug}[suffix] request names, with its form set,
 * or undefined after answering 301 to its current slug (query string kept).
 */
export async function entryOrRedirect(
  ctx: Context,
  deps: PublicContentDeps,
  target: PublicProject,
  suffix: string,
): Promise<{ view: Doc<EntryViewDoc>; formSet: Doc<PublicFormSetDoc> } | undefined> {
  const locale = requestedLocale(new QueryParams(ctx), target);
  const formSetSlug = ctx.params.formSetSlug!;
  const slug = ctx.params.entrySlug!;
  const formSet = await deps.formSets.bySlug(target.projectId, formSetSlug);
  const found = await entryBySlug(deps.publicContent, formSet.formSetId, slug, locale);
  if (found.kind !== 'found') {
    answerFormerSlug(ctx, target, formSet, slug, found, suffix);
    return undefined;
  }
  return { view: found.view, formSet };
}

/**
 * Answers a /form-sets/{formSetSlug}/entries/{entrySlug}[suffix] request whose slug no live entry has: 301 to
 * the entry's current slug (suffix and query string kept), or 404.
 */
export function answerFormerSlug(ctx: Context, target: PublicProject, formSet: PublicFormSetDoc, slug: string, lookup: Exclude<EntryLookup, { kind: 'found' }>, suffix = ''): void {
  if (lookup.kind === 'missing') throw entryNotFound(formSet.slug, slug);
  const search = ctx.querystring ? `?${ctx.querystring}` : '';
  movedPermanently(ctx, `${target.baseUrl}/form-sets/${encodeURIComponent(formSet.slug)}/entries/${encodeURIComponent(lookup.slug)}${suffix}${search}`);
}


export function movedPermanently(ctx: Context, location: string): void {
  ctx.status = 301;
  ctx.set('Location', location);
  ctx.set('Cache-Control', 'public, max-age=300');
  ctx.body = { moved: location };
}

import type { Context } from 'koa';
import type { Router } from '@koa/router';
import type { PublicFormSetDoc, SiteIndexDoc } from '../../../projections/public-content.ts';
import { articleJsonLd, openGraph, type SeoContext } from '../../public-content/seo-documents.ts';
import { sitemapIndexXml, storedFragmentCurrent, urlFragment, urlsetOfFragments } from '../../public-content/sitemap-xml.ts';
import { llmsTxt } from '../../public-content/llms-txt.ts';
import { htmlSafeJson } from '../../public-content/html-safe-json.ts';
import { expandUrlPattern } from '../../public-content/url-pattern.ts';
import { seoValuesOf, type EntryView, type SeoValues } from '../../public-content/entry-view.ts';
import { entryViewOf } from '../../public-content/public-json.ts';
import { notFound } from '../errors/error-factory.ts';
import { entryOrRedirect } from './entry-responses.ts';
import type { PublicContentDeps } from './public-content-deps.ts';
import { publicProjectOf, setCacheScopes, type PublicProject } from './public-context.ts';
import { encodedOutput, SiteOutputCache } from './site-output-cache.ts';
import { VARY_ENCODING_MIN_BYTES } from './public-http-manners.ts';
import type { Doc } from '../../read-models/read-model-store.ts';


/** What sitemaps are sent in to clients that take it (see below), best first. */
const SITEMAP_ENCODINGS = ['br', 'gzip'] as const;

/**
 * SEO outputs (spec 4.1): sitemaps (sitemaps.org 0.9; an index of numbered parts beyond the per-file limit),
 * schema.org JSON-LD and Open Graph per entry, and llms.txt. Sitemaps and llms.txt are built from the small
 * `site_index` rows (all of them, page by page) and cached per project/form-set version (the position of the
 * last change), so a repeat request costs one lookup and a conditional one a 304; one that is slow to build
 * is rebuilt in the background while its content keeps changing (SiteOutputCache). No robots.txt and no
 * llms-full.txt: those paths 404.
 */
export function seoRoutes(router: Router, deps: PublicContentDeps): void {
  const cache = new SiteOutputCache({ onBuildFailed: (error) => deps.logger.warn({ err: error }, 'building a sitemap or llms.txt in the background failed; the last one built is served meanwhile') });
  const { publicContent } = deps;

  const sitemap = (scope: 'project' | 'form-set') => async (ctx: Context) => {
    const target = publicProjectOf(ctx);
    const formSet = scope === 'form-set' ? await deps.formSets.bySlug(target.projectId, ctx.params.slug!) : undefined;
    const part = ctx.params.part === undefined ? undefined : partNumber(ctx.params.part);
    const versionId = formSet?.formSetId ?? target.projectId;
    const version = (await publicContent.siteVersion(versionId))?.version ?? 'empty';
    const site = siteOf(target);
    const family = JSON.stringify(['sitemap', versionId, part ?? 0, target.baseUrl, site.url, deps.sitemapUrlsPerFile]);
    const output = await cache.get(family, version, async () => {
      // A range of the index reading only the serialised <url>s (rows of an older generation: their paths).
      const rows = await publicContent.sitemapRows(target.projectId, formSet?.formSetId);
      const urls: Array<{ xml: string; lastmod: string }> = [];
      for (const row of rows) {
        row.paths.forEach(({ path }, i) => {
          const stored = storedFragmentCurrent(path) ? row.urlXml?.[i] : undefined;
          urls.push({ xml: stored ?? urlFragment({ path, lastmod: row.lastmod, changefreq: row.changefreq, priority: row.priority }), lastmod: row.lastmod });
        });
      }
      const urlset = (list: typeof urls) => urlsetOfFragments(site.url, list.map((url) => url.xml));
      const perFile = deps.sitemapUrlsPerFile;
      const parts = Math.max(1, Math.ceil(urls.length / perFile));
      if (part === undefined) {
        if (parts === 1) return urlset(urls);
        const prefix = formSet ? `${target.baseUrl}/form-sets/${encodeURIComponent(formSet.slug)}` : target.baseUrl;
        return sitemapIndexXml(
          Array.from({ length: parts }, (_, i) => ({ loc: `${prefix}/sitemap-${i + 1}.xml`, lastmod: latest(urls.slice(i * perFile, (i + 1) * perFile)) })),
        );
      }
      if (part > parts || (parts === 1 && part !== 1)) return undefined;
      return urlset(urls.slice((part - 1) * perFile, part * perFile));
    }, { encodings: SITEMAP_ENCODINGS });
    if (output === undefined) throw notFound(`No sitemap part ${part}.`);
    setCacheScopes(ctx, [formSet ? `form-set:${formSet.formSetId}` : `project:${target.projectId}`]);
    ctx.type = 'application/xml; charset=utf-8';
    // Compressed when the client takes br or gzip (a 10,000-URL sitemap shrinks ~20x), made once per version;
    // below VARY_ENCODING_MIN_BYTES it would save nothing (the response cache keeps the same threshold).
    ctx.vary('Accept-Encoding');
    const encoding = ctx.acceptsEncodings(...SITEMAP_ENCODINGS, 'identity');
    if ((encoding === 'br' || encoding === 'gzip') && output.body.length >= VARY_ENCODING_MIN_BYTES) {
      ctx.set('Content-Encoding', encoding);
      ctx.set('ETag', `"${output.etag}-${encoding}"`);
      ctx.body = await encodedOutput(output, encoding);
      return;
    }
    ctx.set('ETag', `"${output.etag}"`);
    ctx.body = output.body;
  };

  router.get('/sitemap.xml', sitemap('project'));
  router.get('/sitemap-:part.xml', sitemap('project'));
  router.get('/form-sets/:slug/sitemap.xml', sitemap('form-set'));
  router.get('/form-sets/:slug/sitemap-:part.xml', sitemap('form-set'));

  for (const kind of ['schema.json', 'ogp.json'] as const) {
    router.get(`/form-sets/:formSetSlug/entries/:entrySlug/${kind}`, async (ctx) => {
      const target = publicProjectOf(ctx);
      const found = await entryOrRedirect(ctx, deps, target, `/${kind}`);
      if (!found) return;
      const { view, formSet } = found;
      // Views folded before version 13 of public-content hold their SEO values; later ones are made from the data.
      const stored = view as Partial<Pick<EntryView, 'seo'>>;
      const seo = stored.seo ?? seoValuesOf(formSet.definition, entryViewOf(view));
      const context = seoContext(target, formSet, view, seo);
      // JSON-LD is JSON: spec section 1 lists the public responses that are not application/json, and this is not one.
      // Both are meant for pages (a script tag, meta tags): written so that the text can be pasted into HTML.
      ctx.type = 'application/json; charset=utf-8';
      ctx.body = htmlSafeJson(kind === 'schema.json' ? articleJsonLd(seo, context) : openGraph(seo, context));
    });
  }

  router.get('/llms.txt', async (ctx) => {
    const target = publicProjectOf(ctx);
    const version = (await publicContent.siteVersion(target.projectId))?.version ?? 'empty';
    const site = siteOf(target);
    const { siteSettings } = target.project;
    const family = JSON.stringify(['llms', target.projectId, target.baseUrl, site.url, site.name, siteSettings.description]);
    const output = await cache.get(family, version, async () => {
      const [formSets, rows] = await Promise.all([
        publicContent.formSetsOfProject(target.projectId),
        publicContent.siteIndexOfProject(target.projectId),
      ]);
      const byFormSet = new Map<string, Array<Doc<SiteIndexDoc>>>();
      for (const row of rows) {
        const list = byFormSet.get(row.formSetId);
        if (list) list.push(row);
        else byFormSet.set(row.formSetId, [row]);
      }
      return llmsTxt({
        name: site.name,
        summary: siteSettings.description ?? `Published content of ${site.name}, from its content API.`,
        sections: formSets.map((formSet) => ({
          name: formSet.name,
          links: (byFormSet.get(formSet.formSetId) ?? []).map((row) => ({
            title: row.title,
            // The page on the site when the project has a site URL; the entry in this API otherwise.
            url: site.configured ? `${site.url}${row.paths[0]!.path}` : `${target.baseUrl}/form-sets/${encodeURIComponent(row.formSetSlug)}/entries/${encodeURIComponent(row.slug)}`,
            description: row.description,
          })),
        })),
      });
    });
    setCacheScopes(ctx, [`project:${target.projectId}`]);
    ctx.type = 'text/markdown; charset=utf-8';
    ctx.set('ETag', `"${output!.etag}"`);
    ctx.body = output!.body;
  });
}

/** The project's site: its configured URL and name, else the request's origin and the project's name. */
function siteOf(target: PublicProject): { url: string; name: string; configured: boolean } {
  const { siteUrl, siteName } = target.project.siteSettings;
  return { url: siteUrl ?? new URL(target.baseUrl).origin, name: siteName ?? target.project.name, configured: siteUrl !== null };
}

function seoContext(target: PublicProject, formSet: PublicFormSetDoc, view: Pick<EntryView, 'slug' | 'formSetSlug' | 'entryId' | 'locale'>, seo: SeoValues): SeoContext {
  const site = siteOf(target);
  const path = expandUrlPattern(formSet.definition.sitemap.urlPattern, { slug: view.slug, formSetSlug: view.formSetSlug, entryId: view.entryId, locale: view.locale });
  return {
    siteName: site.name,
    pageUrl: site.configured ? `${site.url}${path}` : `${target.baseUrl}/form-sets/${encodeURIComponent(view.formSetSlug)}/entries/${encodeURIComponent(view.slug)}`,
    imageUrl: seo.imageAssetId === null ? null : `${target.mediaBaseUrl}/media/${seo.imageAssetId}`,
    logoUrl: target.project.loginBranding.logoUrl,
    locale: view.locale,
    slug: view.slug,
  };
}

function partNumber(raw: string): number {
  if (!/^[1-9]\d{0,5}$/.test(raw)) throw notFound(`No sitemap part ${JSON.stringify(raw.slice(0, 20))}.`);
  return Number(raw);
}

function latest(urls: ReadonlyArray<{ lastmod: string }>): string | null {
  let max: string | null = null;
  for (const url of urls) if (max === null || url.lastmod > max) max = url.lastmod;
  return max;
}


import type { Article, WithContext } from 'schema-dts';
import type { SeoValues } from './entry-view.ts';

/** What SEO documents need beyond the entry view: the site, the page, resolved URLs. */
export interface SeoContext {
  siteName: string;
  /** The entry's page: on the project's site when it has a site URL. */
  pageUrl: string;
  /** The SEO image's media URL, null without one. */
  imageUrl: string | null;
  /** The project's logo (login branding), null without one. */
  logoUrl: string | null;
  locale: string;
  /** The entry's slug: the headline when it has no title. */
  slug: string;
}

/** schema.org Article JSON-LD (spec 4.1 schema.json). Unknown values are left out rather than null. */
export function articleJsonLd(seo: SeoValues, context: SeoContext): WithContext<Article> {
  const article: WithContext<Article> = {
    '@context': 'https://schema.org',
    '@type': 'Article',
    headline: seo.title ?? context.slug,
    ...(seo.description === null ? {} : { description: seo.description }),
    ...(context.imageUrl === null ? {} : { image: context.imageUrl }),
    datePublished: seo.datePublished,
    dateModified: seo.dateModified,
    author: seo.author === null ? { '@type': 'Organization', name: context.siteName } : { '@type': 'Person', name: seo.author },
    publisher: {
      '@type': 'Organization',
      name: context.siteName,
      ...(context.logoUrl === null ? {} : { logo: { '@type': 'ImageObject', url: context.logoUrl } }),
    },
    mainEntityOfPage: context.pageUrl,
    url: context.pageUrl,
    inLanguage: context.locale,
  };
  return article;
}

export type OpenGraph = Record<'og:title' | 'og:description' | 'og:image' | 'og:url' | 'og:type' | 'og:site_name' | 'twitter:card', string | null>;

/** Open Graph and Twitter card values (spec 4.1 ogp.json): every key present, null when unknown. */
export function openGraph(seo: SeoValues, context: SeoContext): OpenGraph {
  return {
    'og:title': seo.title ?? context.slug,
    'og:description': seo.description,
    'og:image': context.imageUrl,
    'og:url': context.pageUrl,
    'og:type': 'article',
    'og:site_name': context.siteName,
    'twitter:card': context.imageUrl === null ? 'summary' : 'summary_large_image',
  };
}

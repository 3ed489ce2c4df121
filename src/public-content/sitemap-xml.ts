import { create } from 'xmlbuilder2';
import { urlText } from './url-pattern.ts';
import { w3cDatetime, xmlText, type SitemapUrl } from './sitemap-fragments.ts';

export { storedFragmentCurrent, urlFragment, type SitemapUrl } from './sitemap-fragments.ts';

/** The sitemaps.org 0.9 namespace (https://www.sitemaps.org/protocol.html). */
export const SITEMAP_NAMESPACE = 'http://www.sitemaps.org/schemas/sitemap/0.9';
/** The protocol's limit of URLs per sitemap file. */
export const SITEMAP_MAX_URLS = 50_000;

/** A `<urlset>` document. Every value is escaped (xmlbuilder2, after strictAmpersands). */
export function urlsetXml(urls: readonly SitemapUrl[]): string {
  const root = create({ version: '1.0', encoding: 'UTF-8' }).ele(SITEMAP_NAMESPACE, 'urlset');
  for (const url of urls) {
    const node = root.ele('url');
    node.ele('loc').txt(strictAmpersands(urlText(url.loc)));
    node.ele('lastmod').txt(strictAmpersands(w3cDatetime(url.lastmod)));
    node.ele('changefreq').txt(strictAmpersands(url.changefreq));
    node.ele('priority').txt(url.priority.toFixed(1));
  }
  return root.end({ prettyPrint: false });
}

/**
 * For xmlbuilder2's txt(): it escapes '&' only where it does not already start something that looks like an
 * entity or character reference (so `&lt;` in a value would be read back as `<`). With every '&' written as
 * `&amp;` first, which it leaves as it is, the document holds the value exactly.
 */
function strictAmpersands(value: string): string {
  return value.replace(/&/g, '&amp;');
}

const URL_OPENING = '<url><loc>';

/** The `<urlset>` of these fragments (urlFragment) on the site URL: byte for byte what urlsetXml writes. */
export function urlsetOfFragments(siteUrl: string, fragments: readonly string[]): string {
  if (fragments.length === 0) return urlsetXml([]);
  const opening = `${URL_OPENING}${xmlText(urlText(siteUrl))}`;
  return `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="${SITEMAP_NAMESPACE}">${opening}${fragments.join(opening)}</urlset>`;
}

/** A `<sitemapindex>` document listing the parts of a sitemap too large for one file. */
export function sitemapIndexXml(parts: ReadonlyArray<{ loc: string; lastmod: string | null }>): string {
  const root = create({ version: '1.0', encoding: 'UTF-8' }).ele(SITEMAP_NAMESPACE, 'sitemapindex');
  for (const part of parts) {
    const node = root.ele('sitemap');
    node.ele('loc').txt(strictAmpersands(urlText(part.loc)));
    if (part.lastmod !== null) node.ele('lastmod').txt(strictAmpersands(w3cDatetime(part.lastmod)));
  }
  return root.end({ prettyPrint: false });
}

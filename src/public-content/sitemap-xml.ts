import { create } from 'xmlbuilder2';
import { urlText } from './url-pattern.ts';

/** The sitemaps.org 0.9 namespace (https://www.sitemaps.org/protocol.html). */
export const SITEMAP_NAMESPACE = 'http://www.sitemaps.org/schemas/sitemap/0.9';
/** The protocol's limit of URLs per sitemap file. */
export const SITEMAP_MAX_URLS = 50_000;

export interface SitemapUrl {
  loc: string;
  /** ISO 8601. */
  lastmod: string;
  changefreq: string;
  priority: number;
}

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
 * One `<url>` of a urlset without its opening `<url><loc>` and the site URL: the site path onward, serialised
 * once (at projection time, for every live entry: a rebuild spent a seventh of its time building these with
 * xmlbuilder2) so that a sitemap is these fragments joined (urlsetOfFragments), not a document built per
 * request. Byte for byte what urlsetXml writes for the same elements (xmlText).
 */
export function urlFragment(url: Omit<SitemapUrl, 'loc'> & { path: string }): string {
  return (
    `${xmlText(urlText(url.path))}</loc><lastmod>${xmlText(w3cDatetime(url.lastmod))}</lastmod>` +
    `<changefreq>${xmlText(url.changefreq)}</changefreq><priority>${url.priority.toFixed(1)}</priority></url>`
  );
}

/**
 * Whether a fragment stored by an older projection (urlFragment before issue 41, which left `&name;` as
 * written, as xmlbuilder2 does, and wrote characters a URL cannot hold as they were) is what urlFragment writes
 * today for this path: true for a path of URL characters and escapes without `&`, that is every path a sitemap URL pattern
 * of the usual kind makes. Any other is serialised again when served.
 */
export function storedFragmentCurrent(path: string): boolean {
  return /^(?:[A-Za-z0-9\-._~!$'()*+,;=:@/]|%[0-9A-Fa-f]{2})*$/.test(path);
}

/** A text node's content: '&', '<' and '>' escaped, every '&' (an `&lt;` in a value stays the text `&lt;`). */
function xmlText(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
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

/** W3C Datetime to the second, in UTC (2026-11-22T10:15:30Z), the form every sitemap reader accepts. */
function w3cDatetime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * The parts of a sitemap that are plain text: the `<url>` fragments the public-content projection stores for
 * every live entry, and their escaping. Apart from sitemap-xml.ts (which builds whole documents with
 * xmlbuilder2) so that folding the log, in the service and in the operator commands, does not load the XML
 * builder (~0.25 s of CPU).
 */
import { urlText } from './url-pattern.ts';

export interface SitemapUrl {
  loc: string;
  /** ISO 8601. */
  lastmod: string;
  changefreq: string;
  priority: number;
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
export function xmlText(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** W3C Datetime to the second, in UTC (2026-11-22T10:15:30Z), the form every sitemap reader accepts. */
export function w3cDatetime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** What a sitemap URL pattern's placeholders stand for (see sitemapSettingsSchema). */
export interface UrlPatternValues {
  slug: string;
  formSetSlug: string;
  entryId: string;
  locale: string;
}

/**
 * The pattern with every placeholder replaced by its URL-encoded value, as a URL path (urlText): the pattern's
 * own characters that a URL cannot hold as they are percent-encoded too.
 */
export function expandUrlPattern(pattern: string, values: UrlPatternValues): string {
  return urlText(pattern.replace(/\{(slug|formSetSlug|entryId|locale)\}/g, (_match, name: keyof UrlPatternValues) => encodeURIComponent(values[name])));
}

/**
 * `url` with every character a URL cannot hold as it is (controls, spaces, `"<>\^`{|}`, DEL, anything beyond
 * ASCII) percent-encoded as UTF-8 (a lone surrogate as U+FFFD), and a `%` that starts no escape written `%25`:
 * a valid URL (RFC 3986) for sitemaps, JSON-LD and Open Graph, unchanged when it already is one.
 */
export function urlText(url: string): string {
  return url.replace(/%(?![0-9A-Fa-f]{2})|[^A-Za-z0-9\-._~!$&'()*+,;=:@/?#%[\]]/gu, (c) =>
    [...Buffer.from(c, 'utf8')].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  );
}

export function patternUsesLocale(pattern: string): boolean {
  return pattern.includes('{locale}');
}

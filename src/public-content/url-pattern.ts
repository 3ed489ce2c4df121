/** What a sitemap URL pattern's placeholders stand for (see sitemapSettingsSchema). */
export interface UrlPatternValues {
  slug: string;
  formSetSlug: string;
  entryId: string;
  locale: string;
}

/** The pattern with every placeholder replaced by its URL-encoded value. */
export function expandUrlPattern(pattern: string, values: UrlPatternValues): string {
  return pattern.replace(/\{(slug|formSetSlug|entryId|locale)\}/g, (_match, name: keyof UrlPatternValues) => encodeURIComponent(values[name]));
}

export function patternUsesLocale(pattern: string): boolean {
  return pattern.includes('{locale}');
}

import { expect } from 'chai';
import { urlFragment, urlsetOfFragments, urlsetXml } from '../../src/public-content/sitemap-xml.ts';

describe('sitemaps joined from URL fragments serialised at projection time', () => {
  it('writes byte for byte the urlset xmlbuilder2 builds, escapes included, empty or not', () => {
    const urls = [
      { path: '/blog/a&b<c>', lastmod: '2026-11-22T10:15:30.123Z', changefreq: 'daily', priority: 0.8 },
      { path: "/ja/記事/\"quoted\"'", lastmod: '2026-01-02T00:00:00.000Z', changefreq: 'weekly', priority: 0.5 },
      { path: '/plain', lastmod: 'not a date', changefreq: 'never', priority: 1 },
      { path: '/x&amp;y&#38;z&#x26;&;]]>\u0001\t\r\n\u{1F600}', lastmod: '2026-01-02T00:00:00Z', changefreq: 'a&b<c>', priority: 0.25 },
    ];
    for (const siteUrl of ['https://example.com', 'http://127.0.0.1:8080/site?a=1&b=<2>', 'https://example.com/x&amp;y&#38;z&;>']) {
      const expected = urlsetXml(urls.map(({ path, ...rest }) => ({ loc: `${siteUrl}${path}`, ...rest })));
      expect(urlsetOfFragments(siteUrl, urls.map(urlFragment))).to.equal(expected);
      expect(urlsetOfFragments(siteUrl, [urlFragment(urls[0]!)])).to.equal(urlsetXml([{ ...urls[0]!, loc: `${siteUrl}${urls[0]!.path}` }]));
    }
    expect(urlsetOfFragments('https://example.com', [])).to.equal(urlsetXml([]));
  });
});

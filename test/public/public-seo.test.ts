import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { marked, type Token, type Tokens } from 'marked';
import { tempDir } from '../support/temp-dir.ts';
import { needing, requireProgram, xmllint } from '../support/system-program.ts';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import http from 'node:http';
import { assetId, blogFormSet, getWithHost, startPublicFixture, type PublicFixture } from './support.ts';
import { plainText } from './markdown.ts';

const run = promisify(execFile);

/** A GET with exactly these headers (fetch adds Accept-Encoding and decompresses), its body as bytes. */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}
/**
 * The sitemaps.org schemas: the urlset schema as the `sitemap` package ships it, the sitemap-index schema
 * (which that package lacks) from this suite's fixtures.
 */
const SCHEMAS = {
  'sitemap.xsd': path.join(path.dirname(createRequire(import.meta.url).resolve('sitemap/package.json')), 'schema', 'sitemap.xsd'),
  'siteindex.xsd': path.join(import.meta.dirname, 'fixtures', 'siteindex.xsd'),
};

/** Validates XML against a sitemaps.org XSD with xmllint (exit 0 valid, 3 invalid). */
async function assertValid(xml: string, schema: keyof typeof SCHEMAS): Promise<void> {
  const file = path.join(tempDir(), 'doc.xml');
  writeFileSync(file, xml);
  try {
    await run('xmllint', ['--nonet', '--noout', '--schema', SCHEMAS[schema], file]);
  } catch (error) {
    const failure = error as { code?: number; stderr?: string };
    expect.fail(`xmllint (${schema}) exit ${failure.code}: ${failure.stderr}\n${xml.slice(0, 2000)}`);
  }
}

function locs(xml: string): string[] {
  return [...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => m[1]!.replace(/&amp;/g, '&'));
}

/** Every URL of a sitemap, following an index to its parts. */
async function sitemapLocs(f: PublicFixture, path: string): Promise<string[]> {
  const xml = (await f.get(path)).text;
  if (!xml.includes('<sitemapindex')) return locs(xml);
  const all: string[] = [];
  for (const part of locs(xml)) all.push(...locs(await (await fetch(part)).text()));
  return all;
}

describe('public API: sitemaps, JSON-LD, Open Graph and llms.txt', function () {
  this.timeout(60_000);
  let f: PublicFixture;
  let blogId: string;
  const image = assetId();

  before(async () => {
    // Two URLs per sitemap file, so that the index and its parts can be checked with a handful of entries.
    f = await startPublicFixture({ env: { SITEMAP_URLS_PER_FILE: '2' } });
    const session = await f.sessionToken();
    const settings = await f.call('PUT', '/project/site-settings', {
      token: session,
      headers: { 'X-Project-Id': f.project.projectId },
      body: { siteUrl: 'https://www.example.com', siteName: 'Example News', description: 'News & notes from Example.' },
    });
    expect(settings.status, JSON.stringify(settings.body)).to.equal(200);
    const blog = await f.call('POST', '/form-sets', { body: blogFormSet() });
    expect(blog.status, JSON.stringify(blog.body)).to.equal(201);
    blogId = blog.body.id;
    const faq = await f.call('POST', '/form-sets', {
      body: {
        slug: 'faq',
        name: 'FAQ',
        fields: [
          { key: 'question', type: 'text', label: 'Question', required: true },
          { key: 'answer', type: 'textarea', label: 'Answer' },
        ],
        seoRoles: { title: 'question', description: 'answer' },
        sitemap: { urlPattern: '/{locale}/faq/{slug}', changefreq: 'monthly', priority: 0.3 },
      },
    });
    expect(faq.status, JSON.stringify(faq.body)).to.equal(201);
    await f.publish(blogId, 'launch', {
      title: { en: 'We launched', ja: 'ローンチしました' },
      meta_description: { en: 'The <launch> & what comes next' },
      published_date: '2026-02-03',
      og_image: image,
    });
    await f.publish(blogId, 'plain', { title: { en: 'Plain [post]' }, body: { en: '<p>Body <b>only</b> text.</p>' } });
    await f.publish(faq.body.id, 'shipping', { question: { en: 'How long does shipping take?' }, answer: { en: 'Two days.' } });
  });
  after(() => f.stop());

  it(needing(xmllint, 'serves a form set sitemap valid against the sitemaps.org XSD, with loc from the site URL and URL pattern'), async function () {
    requireProgram(this, xmllint);
    const response = await f.get('/form-sets/blog/sitemap.xml');
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.match(/^application\/xml/);
    await assertValid(response.text, 'sitemap.xsd');
    expect(locs(response.text)).to.deep.equal(['https://www.example.com/blog/launch', 'https://www.example.com/blog/plain']);
    expect(response.text).to.include('<changefreq>daily</changefreq>').and.include('<priority>0.8</priority>');
    expect(response.text).to.match(/<lastmod>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ<\/lastmod>/);
    const faq = await f.get('/form-sets/faq/sitemap.xml');
    await assertValid(faq.text, 'sitemap.xsd');
    // {locale} in the pattern: one URL per content locale.
    expect(locs(faq.text)).to.deep.equal(['https://www.example.com/en/faq/shipping', 'https://www.example.com/ja/faq/shipping']);
  });

  it(needing(xmllint, 'becomes a sitemap index of numbered parts beyond the URLs-per-file limit'), async function () {
    requireProgram(this, xmllint);
    const index = await f.get('/sitemap.xml');
    expect(index.status).to.equal(200);
    await assertValid(index.text, 'siteindex.xsd');
    const parts = locs(index.text);
    expect(parts).to.deep.equal([`${f.pinnedBase}/sitemap-1.xml`, `${f.pinnedBase}/sitemap-2.xml`]);
    const all: string[] = [];
    for (const part of parts) {
      const response = await fetch(part);
      expect(response.status, part).to.equal(200);
      const xml = await response.text();
      await assertValid(xml, 'sitemap.xsd');
      all.push(...locs(xml));
    }
    expect(all).to.have.members([
      'https://www.example.com/blog/launch',
      'https://www.example.com/blog/plain',
      'https://www.example.com/en/faq/shipping',
      'https://www.example.com/ja/faq/shipping',
    ]);
    expect((await f.get('/sitemap-3.xml')).status).to.equal(404);
    expect((await f.get('/sitemap-0.xml')).status).to.equal(404);
  });

  it('answers 304 to a sitemap request whose ETag still matches', async () => {
    const host = new URL(f.service.url).host;
    for (const encoding of [undefined, 'gzip', 'br']) {
      const headers: Record<string, string> = encoding ? { 'accept-encoding': encoding } : {};
      const first = await getWithHost(`${f.pinnedBase}/form-sets/blog/sitemap.xml`, host, headers);
      const etag = first.headers['etag']!;
      expect(etag).to.match(/^".+"$/);
      const again = await getWithHost(`${f.pinnedBase}/form-sets/blog/sitemap.xml`, host, { ...headers, 'if-none-match': etag });
      expect(again.status, encoding).to.equal(304);
    }
  });

  it('serves schema.org Article JSON-LD from the SEO roles, inferred from field names where unmapped', async () => {
    const response = await f.get('/form-sets/blog/entries/launch/schema.json');
    expect(response.status).to.equal(200);
    // Spec section 1: public responses are application/json but for media, XML and llms.txt (issue 12).
    expect(response.headers.get('content-type')).to.match(/^application\/json; charset=utf-8$/);
    const doc = JSON.parse(response.text);
    expect(doc).to.include({
      '@context': 'https://schema.org',
      '@type': 'Article',
      headline: 'We launched',
      description: 'The <launch> & what comes next',
      image: `${f.pinnedBase}/media/${image}`,
      datePublished: '2026-02-03',
      url: 'https://www.example.com/blog/launch',
    });
    expect(doc.dateModified).to.match(/^\d{4}-\d\d-\d\dT/);
    expect(doc.author).to.deep.equal({ '@type': 'Organization', name: 'Example News' });
    expect(doc.publisher).to.deep.include({ '@type': 'Organization', name: 'Example News' });
    const ja = JSON.parse((await f.get('/form-sets/blog/entries/launch/schema.json?locale=ja')).text);
    expect(ja.headline).to.equal('ローンチしました');
    expect(ja.inLanguage).to.equal('ja');
    // Mapped roles: question is the title, answer the description.
    const faq = JSON.parse((await f.get('/form-sets/faq/entries/shipping/schema.json')).text);
    expect(faq).to.include({ headline: 'How long does shipping take?', description: 'Two days.' });
    expect(faq).to.not.have.property('image');
    // On the key-resolved base the image is on the project-pinned base, which a browser loads without a key.
    const byKey = JSON.parse((await f.get('/form-sets/blog/entries/launch/schema.json', { 'X-Service-Public-Api-Key': f.project.publicKey.key }, `${f.service.url}/public/v1`)).text);
    expect(byKey.image).to.equal(`${f.pinnedBase}/media/${image}`);
  });

  it('serves Open Graph values with every key of the spec', async () => {
    const response = await f.get('/form-sets/blog/entries/launch/ogp.json');
    expect(response.status).to.equal(200);
    expect(response.body).to.deep.equal({
      'og:title': 'We launched',
      'og:description': 'The <launch> & what comes next',
      'og:image': `${f.pinnedBase}/media/${image}`,
      'og:url': 'https://www.example.com/blog/launch',
      'og:type': 'article',
      'og:site_name': 'Example News',
      'twitter:card': 'summary_large_image',
    });
    const plain = await f.get('/form-sets/blog/entries/plain/ogp.json');
    expect(plain.body).to.include({ 'og:title': 'Plain [post]', 'og:image': null, 'twitter:card': 'summary' });
    // No description role mapped or named: the rich-text body is the fallback, as plain text.
    expect(plain.body['og:description']).to.equal('Body only text.');
  });

  it('serves llms.txt in the llmstxt.org structure on both bases', async () => {
    for (const [label, response] of [
      ['pinned', await f.get('/llms.txt')],
      ['host', await f.get('/llms.txt', { 'X-Service-Public-Api-Key': f.project.publicKey.key }, `${f.service.url}/public/v1`)],
    ] as const) {
      expect(response.status, label).to.equal(200);
      expect(response.headers.get('content-type'), label).to.match(/^text\/markdown/);
      const tokens = marked.lexer(response.text).filter((t) => t.type !== 'space');
      const [h1, quote, ...rest] = tokens as Token[];
      expect(h1).to.include({ type: 'heading', depth: 1, text: 'Example News' });
      expect(quote!.type).to.equal('blockquote');
      expect(plainText((quote as Tokens.Blockquote).tokens)).to.equal('News & notes from Example.');
      const sections = rest.filter((t) => t.type === 'heading') as Tokens.Heading[];
      expect(sections.map((s) => [s.depth, plainText(s.tokens)])).to.deep.equal([
        [2, 'Blog'],
        [2, 'FAQ'],
      ]);
      const lists = rest.filter((t) => t.type === 'list') as Tokens.List[];
      expect(lists).to.have.length(2);
      const links = lists.flatMap((list) => list.items.map((item) => (item.tokens[0] as Tokens.Text).tokens!.find((t) => t.type === 'link') as Tokens.Link));
      expect(links.map((l) => [plainText(l.tokens), l.href])).to.deep.equal([
        ['We launched', 'https://www.example.com/blog/launch'],
        ['Plain [post]', 'https://www.example.com/blog/plain'],
        ['How long does shipping take?', 'https://www.example.com/en/faq/shipping'],
      ]);
      expect(plainText(lists[0]!.items[0]!.tokens)).to.match(/: The <launch> & what comes next$/);
    }
  });

  it('serves no robots.txt and no llms-full.txt', async () => {
    for (const file of ['/robots.txt', '/llms-full.txt']) {
      const response = await f.get(file);
      expect(response.status, file).to.equal(404);
      expect(response.body.error.code).to.equal('NOT_FOUND');
    }
  });

  it('drops a deleted entry from lookups, lists, sitemaps and llms.txt', async () => {
    const doomed = await f.publish(blogId, 'doomed', { title: { en: 'Doomed post' } });
    expect(await sitemapLocs(f, '/form-sets/blog/sitemap.xml')).to.include('https://www.example.com/blog/doomed');
    expect((await f.get('/llms.txt')).text).to.include('Doomed post');
    const deleted = await f.call('DELETE', `/entries/${doomed.entryId}`);
    expect(deleted.status, JSON.stringify(deleted.body)).to.equal(204);
    await f.settle();
    for (const locale of ['en', 'ja']) {
      expect((await f.get(`/form-sets/blog/entries/doomed?locale=${locale}`)).status).to.equal(404);
      expect((await f.get(`/form-sets/blog/entries/doomed/schema.json?locale=${locale}`)).status).to.equal(404);
    }
    expect((await f.get('/content/by-slug?formSetSlug=blog&slug=doomed')).status).to.equal(404);
    const list = await f.get('/form-sets/blog/entries?limit=100');
    expect(list.body.items.map((i: any) => i.entry.slug)).to.not.include('doomed');
    expect(await sitemapLocs(f, '/form-sets/blog/sitemap.xml')).to.not.include('https://www.example.com/blog/doomed');
    expect((await f.get('/llms.txt')).text).to.not.include('Doomed post');
  });

  it('sends sitemaps of 1 KB or more br- or gzip-compressed when the client accepts it, the same XML once decompressed', async () => {
    const news = await f.call('POST', '/form-sets', { body: blogFormSet('news') });
    expect(news.status, JSON.stringify(news.body)).to.equal(201);
    for (let i = 0; i < 16; i++) await f.publish(news.body.id, `a-rather-long-slug-for-news-article-number-${i}`, { title: { en: `News ${i}` } });
    const url = `${f.pinnedBase}/form-sets/news/sitemap.xml`;
    // Compressed by the route (and kept by the response cache for clients sending the same Accept-Encoding):
    // the same negotiation, ETags and XML for every way of asking, from the route or from the cache.
    const early = { br: await rawGet(url, { 'accept-encoding': 'br' }), gzip: await rawGet(url, { 'accept-encoding': 'gzip' }) };
    const plain = await rawGet(url, {});
    expect(plain.body.length).to.be.greaterThan(1024);
    expect(plain.headers['content-encoding']).to.equal(undefined);
    expect(plain.headers['vary']).to.match(/Accept-Encoding/i);
    const xml = plain.body.toString('utf8');
    expect(xml).to.match(/^<\?xml .*<(urlset|sitemapindex) /s);
    expect(brotliDecompressSync(early.br.body).toString('utf8')).to.equal(xml);
    expect(gunzipSync(early.gzip.body).toString('utf8')).to.equal(xml);
    for (const [accept, encoding, decode] of [
      ['gzip, deflate', 'gzip', gunzipSync],
      ['br', 'br', brotliDecompressSync],
      ['gzip;q=0.5, br', 'br', brotliDecompressSync],
      ['br;q=0, gzip', 'gzip', gunzipSync],
    ] as const) {
      const response = await rawGet(url, { 'accept-encoding': accept });
      expect(response.headers['content-encoding'], accept).to.equal(encoding);
      expect(response.headers['vary']).to.match(/Accept-Encoding/i);
      expect(response.headers['etag'], accept).to.equal(early[encoding].headers['etag']);
      expect(response.headers['etag']).to.not.equal(plain.headers['etag']);
      expect(decode(response.body).toString('utf8'), accept).to.equal(xml);
    }
    const identity = await rawGet(url, { 'accept-encoding': 'identity' });
    expect(identity.headers['content-encoding']).to.equal(undefined);
    // Below 1 KB compressing saves nothing: sent as it is, as the response cache does.
    const small = await rawGet(`${f.pinnedBase}/form-sets/faq/sitemap.xml`, { 'accept-encoding': 'br' });
    expect(small.body.length).to.be.lessThan(1024);
    expect(small.headers['content-encoding']).to.equal(undefined);
  });
});

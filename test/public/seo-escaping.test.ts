import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { marked, type Token, type Tokens } from 'marked';
import { chromium as playwright, type Browser } from 'playwright-core';
import { chromium, needing, requireProgram, xmllint } from '../support/system-program.ts';
import { tempDir } from '../support/temp-dir.ts';
import { blogFormSet, startPublicFixture, type PublicFixture } from './support.ts';
import { allTokens, plainText } from './markdown.ts';

const run = promisify(execFile);

/** The payloads of issue 41: HTML, a javascript: and a data: link, a script end, forged lines. */
const PAYLOADS = {
  html: '<img src=x onerror=alert(1)>',
  link: '[x](javascript:alert(1))',
  dataLink: '![y](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
  escapedLink: '\\[z\\](javascript:alert(1)) <javascript:alert(1)>',
  scriptEnd: '</script><script>window.pwned=1</script><!--<script>',
  lines: 'first\n# forged\r\n- forged item\u2028## forged too\n\n> forged quote',
};
/** What a reader sees of a text written on one line: every run of white space one space. */
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

const SITE_NAME = `Example ${PAYLOADS.html} ${PAYLOADS.scriptEnd} #`;
const SITE_DESCRIPTION = `About ${PAYLOADS.link} ${PAYLOADS.dataLink} ${PAYLOADS.lines}`;
const FORM_SET_NAME = `Blog ${PAYLOADS.escapedLink} ${PAYLOADS.lines}`;
const TITLE = `Title ${PAYLOADS.html} ${PAYLOADS.link} ${PAYLOADS.scriptEnd} ${PAYLOADS.lines} \u2029end`;
/** Within the 160 characters a description keeps. */
const DESCRIPTION = `${PAYLOADS.html} ${PAYLOADS.scriptEnd} ${PAYLOADS.lines}`;
/** A sitemap URL pattern may hold what XML escapes and what no URL may hold as it is. */
const URL_PATTERN = '/a&lt;b&amp;/<x>/"q\'/\u0001/{slug}';

/**
 * Issue 41 items 2 and 3: every text the SEO outputs carry (titles, descriptions, the site's and the form set's
 * names, URLs) is written for the format its readers render: llms.txt as Markdown (read here with marked), the
 * JSON-LD and Open Graph JSON for pasting into HTML (in a script tag, in headless Chromium), sitemaps as XML
 * with URL-escaped locations (xmllint against the sitemaps.org schema). The values are published through the
 * admin API with the payloads of the issue in them.
 */
describe('SEO outputs: hostile titles, descriptions and names are escaped for each format', function () {
  this.timeout(60_000);
  let f: PublicFixture;

  before(async () => {
    f = await startPublicFixture();
    const session = await f.sessionToken();
    const settings = await f.call('PUT', '/project/site-settings', { token: session, headers: { 'X-Project-Id': f.project.projectId }, body: { siteUrl: 'https://www.example.com', siteName: SITE_NAME, description: SITE_DESCRIPTION } });
    expect(settings.status, JSON.stringify(settings.body)).to.equal(200);
    const blog = await f.call('POST', '/form-sets', { body: { ...blogFormSet(), name: FORM_SET_NAME, sitemap: { urlPattern: URL_PATTERN, changefreq: 'daily', priority: 0.8 } } });
    expect(blog.status, JSON.stringify(blog.body)).to.equal(201);
    await f.publish(blog.body.id, 'hostile', { title: { en: TITLE }, meta_description: { en: DESCRIPTION } });
    await f.publish(blog.body.id, 'plain', { title: { en: 'Plain' } });
  });
  after(() => f?.stop());

  describe('llms.txt, read as Markdown by marked', () => {
    let tokens: Token[];
    before(async () => {
      const response = await f.get('/llms.txt');
      expect(response.status).to.equal(200);
      tokens = marked.lexer(response.text).filter((t) => t.type !== 'space');
    });

    it('has the llmstxt.org structure and nothing more: one H1, one quote, one H2, one list of the two entries', () => {
      expect(tokens.map((t) => (t.type === 'heading' ? `h${(t as Tokens.Heading).depth}` : t.type))).to.deep.equal(['h1', 'blockquote', 'h2', 'list']);
      expect((tokens[3] as Tokens.List).items).to.have.length(2);
    });

    it('shows every text exactly as written, on its one line', () => {
      expect(plainText((tokens[0] as Tokens.Heading).tokens)).to.equal(oneLine(SITE_NAME));
      expect(plainText((tokens[1] as Tokens.Blockquote).tokens)).to.equal(oneLine(SITE_DESCRIPTION));
      expect(plainText((tokens[2] as Tokens.Heading).tokens)).to.equal(oneLine(FORM_SET_NAME));
      const [hostile] = (tokens[3] as Tokens.List).items;
      expect(plainText(hostile!.tokens)).to.equal(`${oneLine(TITLE)}: ${oneLine(DESCRIPTION)}`);
    });

    it('holds no HTML and no link or image but the entries\' own http(s) links', () => {
      const all = [...allTokens(tokens)];
      expect(all.filter((t) => t.type === 'html').map((t) => t.raw)).to.deep.equal([]);
      expect(all.filter((t) => t.type === 'image').map((t) => t.raw)).to.deep.equal([]);
      const links = all.filter((t): t is Tokens.Link => t.type === 'link');
      expect(links.map((l) => l.href)).to.deep.equal(['https://www.example.com/a&lt;b&amp;/%3Cx%3E/%22q%27/%01/hostile', 'https://www.example.com/a&lt;b&amp;/%3Cx%3E/%22q%27/%01/plain']);
      const html = marked.parse(tokens.map((t) => t.raw).join('\n\n'), { async: false });
      expect(html).to.not.match(/<img|<script|href="(?:javascript|data):/i);
    });
  });

  describe(needing(chromium, 'JSON-LD and Open Graph, pasted into a page in headless Chromium'), () => {
    let browser: Browser;
    before(async function () {
      const executablePath = requireProgram(this, chromium);
      browser = await playwright.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
    });
    after(() => browser?.close());

    it('escapes <, >, & and U+2028/9 as \\u escapes, in JSON that parses back to the values', async () => {
      for (const kind of ['schema.json', 'ogp.json']) {
        const response = await f.get(`/form-sets/blog/entries/hostile/${kind}`);
        expect(response.status, kind).to.equal(200);
        expect(response.text, kind).to.not.match(/[<>&\u2028\u2029]/);
        expect(response.text, kind).to.include('\\u003c/script\\u003e').and.include('\\u2028');
      }
      const jsonLd = JSON.parse((await f.get('/form-sets/blog/entries/hostile/schema.json')).text);
      expect(jsonLd).to.include({ headline: TITLE, description: oneLine(DESCRIPTION) });
      expect(jsonLd.publisher.name).to.equal(SITE_NAME);
      const og = JSON.parse((await f.get('/form-sets/blog/entries/hostile/ogp.json')).text);
      expect(og).to.include({ 'og:title': TITLE, 'og:description': oneLine(DESCRIPTION), 'og:site_name': SITE_NAME });
    });

    it('stays inside its script tag: no injected script runs, no element is added, and the page reads the values back', async () => {
      const jsonLd = (await f.get('/form-sets/blog/entries/hostile/schema.json')).text;
      const og = (await f.get('/form-sets/blog/entries/hostile/ogp.json')).text;
      const page = await browser.newPage();
      const dialogs: string[] = [];
      page.on('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      try {
        await page.setContent(
          `<!doctype html><html><head><meta charset="utf-8"><title>Entry</title>` +
            `<script type="application/ld+json" id="ld">${jsonLd}</script>` +
            `<script type="application/json" id="og">${og}</script>` +
            `</head><body><p id="after">after the data</p></body></html>`,
        );
        const seen = await page.evaluate<{ pwned: unknown; scripts: number; images: number; after: string | null; ld: Record<string, unknown>; og: Record<string, unknown> }>(`({
          pwned: window.pwned ?? null,
          scripts: document.scripts.length,
          images: document.images.length,
          after: document.getElementById('after')?.textContent ?? null,
          ld: JSON.parse(document.getElementById('ld').textContent),
          og: JSON.parse(document.getElementById('og').textContent),
        })`);
        expect(seen.pwned).to.equal(null);
        expect(dialogs).to.deep.equal([]);
        expect(seen.scripts).to.equal(2);
        expect(seen.images).to.equal(0);
        expect(seen.after).to.equal('after the data');
        expect(seen.ld).to.deep.equal(JSON.parse(jsonLd));
        expect(seen.ld).to.include({ headline: TITLE, description: oneLine(DESCRIPTION) });
        expect(seen.og).to.deep.equal(JSON.parse(og));
        expect(seen.og).to.include({ 'og:title': TITLE, 'og:site_name': SITE_NAME });
      } finally {
        await page.close();
      }
    });
  });

  it(needing(xmllint, 'writes sitemap locations URL-escaped and XML-escaped, valid against the sitemaps.org schema'), async function () {
    requireProgram(this, xmllint);
    const xml = (await f.get('/form-sets/blog/sitemap.xml')).text;
    const file = path.join(tempDir(), 'sitemap.xml');
    writeFileSync(file, xml);
    const schema = path.join(path.dirname(createRequire(import.meta.url).resolve('sitemap/package.json')), 'schema', 'sitemap.xsd');
    await run('xmllint', ['--nonet', '--noout', '--schema', schema, file]).catch((error: { stderr?: string }) => expect.fail(`xmllint: ${error.stderr}\n${xml}`));
    // What an XML reader gets: the text of each <loc> with the five predefined entities decoded.
    const locs = [...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => m[1]!.replace(/&(lt|gt|quot|apos|amp);/g, (_all, name: string) => ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[name]!));
    expect(locs).to.deep.equal(['https://www.example.com/a&lt;b&amp;/%3Cx%3E/%22q\'/%01/hostile', 'https://www.example.com/a&lt;b&amp;/%3Cx%3E/%22q\'/%01/plain']);
  });
});

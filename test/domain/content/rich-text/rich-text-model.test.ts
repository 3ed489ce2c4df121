import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import {
  checkHtmlTree,
  checkRichText,
  embedPlayerUrl,
  formatPath,
  HTML_ELEMENTS,
  HTML_OF_MODEL,
  isSafeHref,
  MARK_TYPES,
  NODE_TYPES,
  RICH_TEXT_LIMITS,
  sanitiseRichText,
  UNSUPPORTED_NODE,
  withoutUnsupportedBlocks,
  withUnsupportedBlocks,
  type HtmlTreeAdapter,
} from '../../../../src/domain/content/rich-text/index.ts';
import { PACKAGE_ROOT } from '../../../../src/package-root.ts';
import { crashingBodies, everyNodeDocument } from '../../../support/rich-text-documents.ts';

const ASSET = '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d';
const problemsOf = (doc: unknown) => checkRichText(doc).map((p) => `${formatPath(p.path)}: ${p.problem}`);
const paragraph = (...content: unknown[]) => ({ type: 'paragraph', content });
const text = (t: string, marks?: unknown[]) => ({ type: 'text', text: t, ...(marks ? { marks } : {}) });
const doc = (...content: unknown[]) => ({ type: 'doc', content });
const link = (href: string) => ({ type: 'link', attrs: { href } });

describe('rich-text model', () => {
  describe('checkRichText', () => {
    it('accepts a document with every node type, mark and attribute, and the empty document', () => {
      expect(problemsOf(everyNodeDocument(ASSET))).to.deep.equal([]);
      expect(problemsOf({ type: 'doc' })).to.deep.equal([]);
      expect(problemsOf(doc(paragraph()))).to.deep.equal([]);
    });

    it('the shapes that crashed the console: a link, a quote with a code block, an image from the library and a table fit; an unknown mark is named by its path', () => {
      const bodies = crashingBodies(ASSET);
      for (const [name, { body, fitsModel }] of Object.entries(bodies)) expect(problemsOf(body).length === 0, name).to.equal(fitsModel);
      expect(problemsOf(bodies['unknownMark']!.body)).to.deep.equal(['content[0].content[0].marks[0]: mark "highlight" is not part of the rich-text model (marks: bold, italic, strike, underline, code, link)']);
      // An image as an HTML-minded client writes it: by URL, not from the media library.
      expect(problemsOf(doc({ type: 'image', attrs: { src: 'https://cdn.example/x.png' } }))).to.deep.equal([
        'content[0].attrs.src: is not an attribute of node "image" (its attributes: assetId, alt, title)',
        'content[0].attrs.assetId: is required',
      ]);
    });

    it('names the offending node by its path: unknown nodes, attributes and properties, bad values, misplaced nodes', () => {
      expect(problemsOf(doc(paragraph(text('a')), { type: 'callout', content: [] }))).to.deep.equal([
        'content[1]: node type "callout" is not part of the rich-text model (node types: paragraph, heading, bulletList, orderedList, listItem, blockquote, codeBlock, horizontalRule, image, embed, table, tableRow, tableCell, tableHeader, text, hardBreak)',
      ]);
      expect(problemsOf(doc({ type: 'heading', attrs: { level: 7 }, content: [text('x')] }))).to.deep.equal(['content[0].attrs.level: must be a whole number from 1 to 6']);
      expect(problemsOf(doc({ type: 'paragraph', attrs: { style: 'color:red' }, id: 3, content: [text('x')] }))).to.deep.equal([
        'content[0].id: is not a property of a rich-text node (type, attrs, content, marks, text)',
        'content[0].attrs.style: is not an attribute of node "paragraph" (it has none)',
      ]);
      expect(problemsOf(doc(text('loose text')))).to.deep.equal([
        'content[0]: node "text" cannot stand in a doc: a doc holds any blocks (paragraph, heading, bulletList, orderedList, blockquote, codeBlock, horizontalRule, image, table, embed)',
      ]);
      expect(problemsOf(doc({ type: 'bulletList', content: [] }))).to.deep.equal(['content[0].content: a bulletList holds one or more listItem']);
      expect(problemsOf(doc({ type: 'bulletList', content: [{ type: 'listItem', content: [{ type: 'codeBlock' }] }] }))).to.deep.equal(['content[0].content[0].content[0]: a listItem holds a paragraph first, then any blocks']);
      expect(problemsOf(doc({ type: 'codeBlock', content: [text('x', [{ type: 'bold' }])] }))).to.deep.equal(['content[0].content[0].marks: are not allowed inside a codeBlock']);
      expect(problemsOf(doc(paragraph({ type: 'text', text: '' })))).to.deep.equal(['content[0].content[0].text: must be a non-empty string']);
      expect(problemsOf(doc(paragraph(text('x', [{ type: 'code' }, { type: 'bold' }]))))).to.deep.equal(['content[0].content[0].marks[0]: mark "code" cannot be combined with other marks']);
      expect(problemsOf(doc({ type: 'embed', attrs: { src: 'https://evil.example/video' } }))).to.deep.equal(['content[0].attrs.src: must be a YouTube or Vimeo video address']);
      expect(problemsOf({ type: 'paragraph' })).to.deep.equal([': must be a rich-text document: an object {"type": "doc", "content": [...]}']);
      expect(problemsOf('<p>html</p>')).to.have.length(1);
    });

    it('links: http(s), mailto:, tel: and relative targets only; javascript: and other schemes refused wherever the link is', () => {
      for (const href of ['https://example.org/a?b#c', 'http://localhost:3000/', 'mailto:a@example.org', 'tel:+81-3-1234-5678', '/about', 'about/team', '#top', '?page=2']) {
        expect(problemsOf(doc(paragraph(text('x', [link(href)])))), href).to.deep.equal([]);
      }
      for (const href of ['javascript:alert(1)', 'JavaScript:alert(1)', ' javascript:alert(1)', 'java\tscript:alert(1)', 'data:text/html,<script>alert(1)</script>', 'vbscript:msgbox', 'file:///etc/passwd', '//evil.example/x', '/\\evil.example', 'https://', '']) {
        expect(isSafeHref(href), JSON.stringify(href)).to.equal(false);
      }
      const nested = doc({ type: 'table', content: [{ type: 'tableRow', content: [{ type: 'tableCell', content: [paragraph(text('a')), paragraph(text('go', [{ type: 'bold' }, link('javascript:alert(document.cookie)')]))] }] }] });
      expect(problemsOf(nested)).to.deep.equal([
        'content[0].content[0].content[0].content[1].content[0].marks[1].attrs.href: must be an http or https address, a mailto: or tel: address, or a relative reference (/path, #anchor); other schemes (javascript:, data:, ...) are not allowed',
      ]);
    });

    it('limits: depth, node count and text length', () => {
      let deep: unknown = paragraph(text('deep'));
      for (let i = 0; i < RICH_TEXT_LIMITS.maxDepth; i++) deep = { type: 'blockquote', content: [deep] };
      const [depth] = checkRichText(doc(deep));
      expect([depth!.problem, depth!.limit]).to.deep.equal([`is nested more than ${RICH_TEXT_LIMITS.maxDepth} levels deep`, true]);
      const many = doc(...Array.from({ length: RICH_TEXT_LIMITS.maxNodes / 2 }, () => paragraph(text('x'))));
      expect(checkRichText(many).map((p) => p.problem)).to.deep.equal([`the document has more than ${RICH_TEXT_LIMITS.maxNodes} nodes`]);
      const long = doc(paragraph(text('x'.repeat(RICH_TEXT_LIMITS.maxTextLength))), paragraph(text('y')));
      expect(problemsOf(long)).to.deep.equal([`content[1].content[0].text: the document's text is longer than ${RICH_TEXT_LIMITS.maxTextLength} characters`]);
    });

    it('reports at most 20 problems and never throws on odd values', () => {
      const bad = doc(...Array.from({ length: 50 }, () => ({ type: 'nope' })));
      expect(checkRichText(bad)).to.have.length(20);
      for (const odd of [null, 5, [], { type: 'doc', content: 'x' }, { type: 'doc', content: [null, 3, [], { type: 5 }] }, { type: 'doc', attrs: [] }]) expect(() => checkRichText(odd)).not.to.throw();
    });
  });

  describe('sanitiseRichText (the public API on the way out)', () => {
    it('keeps a valid document as it is', () => {
      expect(sanitiseRichText(everyNodeDocument(ASSET))).to.deep.equal(everyNodeDocument(ASSET));
    });

    it('drops what the model does not allow: a javascript: link leaves its text, unknown nodes, marks and attributes go', () => {
      const stored = doc(
        { type: 'paragraph', attrs: { onclick: 'x' }, content: [text('click', [link('javascript:alert(1)'), { type: 'bold' }]), text(' me', [{ type: 'highlight' }])] },
        { type: 'script', content: [text('alert(1)')] },
        { type: 'image', attrs: { src: 'https://tracker.example/p.gif' } },
        { type: 'bulletList', content: [{ type: 'listItem', content: [{ type: 'heading', attrs: { level: 2 }, content: [text('h')] }] }, { type: 'mystery' }] },
        { type: 'table', content: [{ type: 'tableRow', content: [{ type: 'tableCell', content: [{ type: 'iframe' }] }] }] },
        { type: 'blockquote', content: [{ type: 'unknown' }] },
      );
      expect(sanitiseRichText(stored)).to.deep.equal(
        doc(
          paragraph(text('click', [{ type: 'bold' }]), text(' me')),
          { type: 'bulletList', content: [{ type: 'listItem', content: [{ type: 'paragraph' }, { type: 'heading', attrs: { level: 2 }, content: [text('h')] }] }] },
          { type: 'table', content: [{ type: 'tableRow', content: [{ type: 'tableCell', content: [{ type: 'paragraph' }] }] }] },
        ),
      );
      expect(sanitiseRichText('<p>x</p>')).to.equal(null);
      expect(sanitiseRichText({ type: 'paragraph' })).to.equal(null);
    });

    it('what comes out always passes the check, whatever went in', () => {
      const rng = mulberry32(44);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;
      const types = [...NODE_TYPES, 'doc', 'script', 'callout', 5, null];
      const randomNode = (depth: number): unknown => {
        if (rng() < 0.1) return pick([null, 'x', 7, [], {}]);
        const node: Record<string, unknown> = { type: pick(types) };
        if (rng() < 0.5) node['attrs'] = pick([{ level: pick([0, 2, 9, 'x']) }, { href: pick(['javascript:x', 'https://a.example', 3]) }, { assetId: pick([ASSET, 'nope']) }, { colspan: pick([1, 0, 'x']) }, { start: 3, type: 'q' }, null]);
        if (rng() < 0.4) node['text'] = pick(['', 'word', 5]);
        if (rng() < 0.3) node['marks'] = [pick([{ type: 'bold' }, { type: 'code' }, link(pick(['/a', 'javascript:b'])), { type: 'glow' }, 'x'])];
        if (depth < 6 && rng() < 0.7) node['content'] = Array.from({ length: Math.floor(rng() * 4) }, () => randomNode(depth + 1));
        return node;
      };
      for (let i = 0; i < 2000; i++) {
        const input = { type: 'doc', content: Array.from({ length: 1 + Math.floor(rng() * 4) }, () => randomNode(1)) };
        const out = sanitiseRichText(input);
        expect(checkRichText(out), JSON.stringify(input)).to.deep.equal([]);
      }
      const long = doc(...Array.from({ length: 3 }, () => paragraph(text('x'.repeat(RICH_TEXT_LIMITS.maxTextLength / 2)))));
      expect(checkRichText(sanitiseRichText(long))).to.deep.equal([]);
    });
  });

  describe('unsupported blocks (the console)', () => {
    it('replaces the smallest block that breaks the model, and gives back exactly what was stored', () => {
      const badParagraph = paragraph(text('Highlighted', [{ type: 'highlight' }]));
      const callout = { type: 'callout', attrs: { tone: 'warn' }, content: [paragraph(text('Careful'))] };
      const badList = { type: 'bulletList', content: [{ type: 'listItem', content: [paragraph(text('ok'))] }, { type: 'listItem', content: [paragraph(text('x', [link('javascript:alert(1)')]))] }] };
      const stored = doc(paragraph(text('Fine')), { type: 'blockquote', content: [paragraph(text('kept')), badParagraph] }, callout, badList);
      const { doc: shown, count } = withUnsupportedBlocks(stored);
      expect(count).to.equal(3);
      const stand = (original: unknown) => ({ type: UNSUPPORTED_NODE, attrs: { original } });
      expect(shown).to.deep.equal(doc(paragraph(text('Fine')), { type: 'blockquote', content: [paragraph(text('kept')), stand(badParagraph)] }, stand(callout), stand(badList)));
      expect(withoutUnsupportedBlocks(shown)).to.deep.equal(stored);
    });

    it('a value that is no document is one unsupported block, saved back as it was; a valid document has none', () => {
      for (const value of ['<p>Hello <b>there</b></p>', { type: 'paragraph' }, 42, { type: 'doc', content: 'x' }]) {
        const { doc: shown, count } = withUnsupportedBlocks(value);
        expect(count).to.equal(1);
        expect(withoutUnsupportedBlocks(shown)).to.deep.equal(value);
      }
      const every = everyNodeDocument(ASSET);
      expect(withUnsupportedBlocks(every)).to.deep.equal({ doc: every, count: 0 });
    });
  });

  describe('HTML form', () => {
    it('every node and mark of the model has its element, and every element stands for one', () => {
      expect(Object.keys(HTML_OF_MODEL).sort()).to.deep.equal([...NODE_TYPES.filter((t) => t !== 'doc' && t !== 'text'), ...MARK_TYPES].sort());
      expect([...new Set(Object.values(HTML_OF_MODEL).flat())].sort()).to.deep.equal(Object.keys(HTML_ELEMENTS).sort());
    });

    it('names elements and attributes outside the model with where they are', () => {
      type Tree = { name?: string; attrs?: Record<string, string>; children?: Tree[]; text?: string };
      const adapter: HtmlTreeAdapter<Tree> = { children: (n) => n.children ?? [], element: (n) => (n.name ? { name: n.name, attrs: n.attrs ?? {} } : null) };
      const el = (name: string, attrs: Record<string, string> = {}, ...children: Tree[]): Tree => ({ name, attrs, children });
      const tree = el(
        'body',
        {},
        el('p', {}, { text: 'Hi ' }, el('a', { href: 'javascript:alert(1)' }, { text: 'x' }), el('a', { href: '/ok', onclick: 'x' })),
        el('div', {}, el('script', {}, { text: 'alert(1)' })),
        el('img', { src: `https://cms.example/public/p/1/v1/media/${ASSET}`, alt: 'ok' }),
        el('img', { src: 'https://tracker.example/p.gif' }),
        el('iframe', { src: 'https://www.youtube-nocookie.com/embed/aqz-KE-bpKQ', allowfullscreen: '' }),
        el('pre', {}, el('code', { class: 'language-ts' })),
        el('code', { class: 'language-ts' }),
      );
      expect(checkHtmlTree(tree, adapter).map((p) => `${p.path}: ${p.problem}`)).to.deep.equal([
        'p[0] > a[0]: attribute "href" of <a> must be an http or https address, a mailto: or tel: address, or a relative reference; other schemes (javascript:, data:, ...) are not allowed',
        'p[0] > a[1]: attribute "onclick" of <a> is not allowed (its attributes: href, target, rel, title)',
        'div[0]: element <div> is not part of the rich-text model (elements: p, h1, h2, h3, h4, h5, h6, ul, ol, li, blockquote, pre, hr, br, img, iframe, table, thead, tbody, tfoot, tr, th, td, strong, b, em, i, s, strike, del, u, code, a)',
        'div[0] > script[0]: element <script> is not part of the rich-text model (elements: p, h1, h2, h3, h4, h5, h6, ul, ol, li, blockquote, pre, hr, br, img, iframe, table, thead, tbody, tfoot, tr, th, td, strong, b, em, i, s, strike, del, u, code, a)',
        'img[1]: attribute "src" of <img> must be the URL of a media library asset ({base}/media/{assetId})',
        'code[0]: attribute "class" of <code> is only allowed as language-<name> on the <code> of a <pre>',
      ]);
    });
  });

  it('embeds: YouTube and Vimeo addresses as the video_embed field takes them', () => {
    expect(['https://www.youtube.com/watch?v=aqz-KE-bpKQ', 'https://youtu.be/aqz-KE-bpKQ', 'https://youtube.com/shorts/aqz-KE-bpKQ', 'https://www.youtube-nocookie.com/embed/aqz-KE-bpKQ'].map(embedPlayerUrl)).to.deep.equal(
      Array(4).fill('https://www.youtube-nocookie.com/embed/aqz-KE-bpKQ'),
    );
    expect(['https://vimeo.com/76979871', 'https://player.vimeo.com/video/76979871'].map(embedPlayerUrl)).to.deep.equal(Array(2).fill('https://player.vimeo.com/video/76979871'));
    expect(['https://evil.example/watch?v=x', 'javascript:alert(1)', 'https://www.youtube.com/watch?v=<script>', 'https://vimeo.com/channels/x', 'not a url'].map(embedPlayerUrl)).to.deep.equal(Array(5).fill(undefined));
  });

  it('the folder imports nothing from outside itself but the HTML parser, which runs in browsers too (the console bundles it)', () => {
    const folder = path.join(PACKAGE_ROOT, 'src', 'domain', 'content', 'rich-text');
    for (const file of fs.readdirSync(folder)) {
      const source = fs.readFileSync(path.join(folder, file), 'utf8');
      const imports = [...source.matchAll(/from '([^']+)'/g)].map((m) => m[1]!);
      const allowed = file === 'rich-text-html-parse.ts' ? ['htmlparser2', 'domhandler', 'dom-serializer'] : [];
      expect(imports.filter((i) => !/^\.\/[\w-]+\.ts$/.test(i) && !allowed.includes(i)), file).to.deep.equal([]);
    }
    expect(fs.readFileSync(path.join(folder, 'index.ts'), 'utf8'), 'index.ts leaves the parser out').not.to.include('rich-text-html-parse');
  });
});

/** A small seeded generator, so the generated documents are the same on every run. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

import { embedPlayerUrl } from './embed-url.ts';
import { isSafeHref } from './safe-href.ts';

/**
 * The HTML form of a rich-text value (spec section 2: a tiptap value is a document or an HTML string): the
 * elements and attributes that stand for the model's nodes and marks, as TipTap reads and writes them. An HTML
 * value may hold these and nothing else; the public API keeps only these on the way out. Structure (what
 * nests in what) is not checked in HTML: the editor reads HTML leniently into the model.
 *
 * paragraph <p>; heading <h1>-<h6>; bulletList <ul>; orderedList <ol start type>; listItem <li>; blockquote
 * <blockquote>; codeBlock <pre> (with <code class="language-x">); horizontalRule <hr>; hardBreak <br>;
 * image <img src=".../media/{assetId}" alt title>; embed <iframe src="{YouTube or Vimeo player}" title ...>;
 * table <table> (<thead>, <tbody>, <tfoot>), tableRow <tr>, tableHeader <th colspan rowspan>, tableCell <td
 * colspan rowspan>; marks <strong>/<b>, <em>/<i>, <s>/<strike>/<del>, <u>, <code>, <a href target rel title>.
 */

type AttrCheck = (value: string, element: string, parent: string | undefined) => string | null;

const integer = (min: number, max: number): AttrCheck => (value) => (/^\d{1,7}$/.test(value) && Number(value) >= min && Number(value) <= max ? null : `must be a whole number from ${min} to ${max}`);
const text = (maxLength: number): AttrCheck => (value) => (value.length <= maxLength ? null : `must be at most ${maxLength} characters`);
const oneOf = (...values: string[]): AttrCheck => (value) => (values.includes(value) ? null : `must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}`);
const anything: AttrCheck = () => null;

const MEDIA_SRC = /(?:^|\/)media\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:[?#].*)?$/i;

/** The asset id of an image's src: a media URL of the service (any base: `{base}/media/{assetId}`). */
export function assetIdOfMediaUrl(src: string): string | undefined {
  if (src.startsWith('/') || /^https?:\/\//i.test(src)) return MEDIA_SRC.exec(src)?.[1]?.toLowerCase();
  return undefined;
}

const HEADING = {};
const CELL = { colspan: integer(1, 100), rowspan: integer(1, 1000), align: oneOf('left', 'center', 'right') };

/** Allowed elements with their allowed attributes and how each value is checked. */
export const HTML_ELEMENTS: Readonly<Record<string, Readonly<Record<string, AttrCheck>>>> = {
  p: {},
  h1: HEADING,
  h2: HEADING,
  h3: HEADING,
  h4: HEADING,
  h5: HEADING,
  h6: HEADING,
  ul: {},
  ol: { start: integer(0, 1_000_000), type: oneOf('1', 'a', 'A', 'i', 'I') },
  li: {},
  blockquote: {},
  pre: {},
  hr: {},
  br: {},
  img: {
    src: (value) => (assetIdOfMediaUrl(value) ? null : 'must be the URL of a media library asset ({base}/media/{assetId})'),
    alt: text(1000),
    title: text(1000),
  },
  iframe: {
    src: (value) => (embedPlayerUrl(value) ? null : 'must be a YouTube or Vimeo player address'),
    title: text(1000),
    width: integer(1, 10_000),
    height: integer(1, 10_000),
    allowfullscreen: anything,
    allow: text(500),
    frameborder: oneOf('0', '1'),
    loading: oneOf('lazy', 'eager'),
    referrerpolicy: text(100),
  },
  table: {},
  thead: {},
  tbody: {},
  tfoot: {},
  tr: {},
  th: CELL,
  td: CELL,
  strong: {},
  b: {},
  em: {},
  i: {},
  s: {},
  strike: {},
  del: {},
  u: {},
  code: { class: (value, _element, parent) => (parent === 'pre' && /^language-[A-Za-z0-9_+#.-]{1,40}$/.test(value) ? null : 'is only allowed as language-<name> on the <code> of a <pre>') },
  a: {
    href: (value) => (isSafeHref(value) ? null : 'must be an http or https address, a mailto: or tel: address, or a relative reference; other schemes (javascript:, data:, ...) are not allowed'),
    target: oneOf('_blank', '_self'),
    rel: (value) => (/^(?:noopener|noreferrer|nofollow|ugc|sponsored|external)(?: (?:noopener|noreferrer|nofollow|ugc|sponsored|external))*$/.test(value) ? null : 'must be space-separated link types of noopener, noreferrer, nofollow, ugc, sponsored, external'),
    title: text(1000),
  },
};

/** The elements of each node and mark of the model (rich-text-model.ts): every one has its element, and every element stands for one. */
export const HTML_OF_MODEL: Readonly<Record<string, readonly string[]>> = {
  paragraph: ['p'],
  heading: ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'],
  bulletList: ['ul'],
  orderedList: ['ol'],
  listItem: ['li'],
  blockquote: ['blockquote'],
  codeBlock: ['pre'],
  horizontalRule: ['hr'],
  hardBreak: ['br'],
  image: ['img'],
  embed: ['iframe'],
  table: ['table', 'thead', 'tbody', 'tfoot'],
  tableRow: ['tr'],
  tableHeader: ['th'],
  tableCell: ['td'],
  bold: ['strong', 'b'],
  italic: ['em', 'i'],
  strike: ['s', 'strike', 'del'],
  underline: ['u'],
  code: ['code'],
  link: ['a'],
};

/** Attributes an element cannot do without: a link without its target, an image without its asset, a frame without its player. */
const REQUIRED_ATTRS: Readonly<Record<string, string>> = { a: 'href', img: 'src', iframe: 'src' };

/** Elements whose content goes with them when the public API drops them (script, style, frames, forms' widgets, ...). */
export const HTML_DROPPED_WITH_CONTENT: ReadonlySet<string> = new Set([
  'script', 'style', 'template', 'noscript', 'frame', 'frameset', 'object', 'embed', 'applet', 'svg', 'math',
  'textarea', 'select', 'option', 'button', 'input', 'head', 'title', 'meta', 'link', 'base', 'video', 'audio', 'canvas', 'picture', 'source',
]);

/** What becomes of one element: kept with these attributes, or left out with (unwrap) or without (drop) its content. */
export type HtmlVerdict =
  | { action: 'keep'; attrs: Record<string, string>; problems: string[] }
  | { action: 'unwrap' | 'drop'; problems: string[] };

const ELEMENT_LIST = Object.keys(HTML_ELEMENTS).join(', ');

/** The verdict on an element `name` (lower case) with `attrs`, inside a `parent` element (lower case; undefined at the top). */
export function htmlElementVerdict(name: string, attrs: Readonly<Record<string, string>>, parent: string | undefined): HtmlVerdict {
  const rules = Object.hasOwn(HTML_ELEMENTS, name) ? HTML_ELEMENTS[name]! : undefined;
  if (rules === undefined) {
    const problem = `element <${name}> is not part of the rich-text model (elements: ${ELEMENT_LIST})`;
    return { action: HTML_DROPPED_WITH_CONTENT.has(name) ? 'drop' : 'unwrap', problems: [problem] };
  }
  const kept: Record<string, string> = {};
  const problems: string[] = [];
  for (const [attr, value] of Object.entries(attrs)) {
    const lower = attr.toLowerCase();
    const check = Object.hasOwn(rules, lower) ? rules[lower]! : undefined;
    if (check === undefined) {
      problems.push(`attribute "${lower}" of <${name}> is not allowed${Object.keys(rules).length > 0 ? ` (its attributes: ${Object.keys(rules).join(', ')})` : ' (it takes none)'}`);
      continue;
    }
    const problem = check(value, name, parent);
    if (problem === null) kept[lower] = value;
    else problems.push(`attribute "${lower}" of <${name}> ${problem}`);
  }
  const required = REQUIRED_ATTRS[name];
  if (required !== undefined && kept[required] === undefined) {
    if (attrs[required] === undefined) problems.push(`<${name}> needs a ${required} attribute`);
    return { action: name === 'a' ? 'unwrap' : 'drop', problems };
  }
  return { action: 'keep', attrs: kept, problems };
}

/** How the walk reads a parsed HTML tree: the server's parser and the browser's DOM each have an adapter. */
export interface HtmlTreeAdapter<N> {
  children(node: N): readonly N[];
  /** The element's lower-case name and attributes, or null for text, comments and the like. */
  element(node: N): { name: string; attrs: Record<string, string> } | null;
}

/** Every problem of an HTML value's tree: elements and attributes outside the model, each with where it is (`p[2] > a[0]`). */
export function checkHtmlTree<N>(root: N, adapter: HtmlTreeAdapter<N>, maxProblems = 20): Array<{ path: string; problem: string }> {
  const problems: Array<{ path: string; problem: string }> = [];
  const walk = (node: N, path: string, parent: string | undefined) => {
    const counts: Record<string, number> = {};
    for (const child of adapter.children(node)) {
      if (problems.length >= maxProblems) return;
      const element = adapter.element(child);
      if (element === null) continue;
      const index = (counts[element.name] = (counts[element.name] ?? -1) + 1);
      const at = `${path ? `${path} > ` : ''}${element.name}[${index}]`;
      const verdict = htmlElementVerdict(element.name, element.attrs, parent);
      for (const problem of verdict.problems) problems.push({ path: at, problem });
      if (verdict.action !== 'drop') walk(child, at, element.name);
    }
  };
  walk(root, '', undefined);
  return problems.slice(0, maxProblems);
}

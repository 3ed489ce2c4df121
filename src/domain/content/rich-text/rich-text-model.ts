import { embedPlayerUrl } from './embed-url.ts';
import { isSafeHref } from './safe-href.ts';

/**
 * The rich-text model: what a rich-text (`tiptap`) field's document may hold. The one definition, read by
 * the admin API's validation (rich-text-check.ts), the public API's sanitising (rich-text-sanitise.ts), the
 * HTML form's allowlist (rich-text-html.ts), the JSON Schema published for agents (rich-text-json-schema.ts)
 * and the console's editor, which imports this folder: everything here is pure TypeScript without imports
 * from outside the folder.
 *
 * A document is TipTap's (ProseMirror's) JSON: `{type: 'doc', content: [...]}`, each node `{type, attrs?,
 * content?, marks?, text?}`. The node and mark names, their attributes and what may nest in what are those of
 * the TipTap extensions the console's editor runs (StarterKit, tables, and the console's image and embed
 * nodes), so a document the API accepts is one the editor shows in full, and what the editor writes is
 * accepted.
 */

/** A document's size limits: past them the admin API refuses it (400). */
export const RICH_TEXT_LIMITS = {
  /**
   * Nesting depth: the doc is at depth 0, its blocks at 1; a cell's paragraph in a table in a quote is at 5.
   * Each level is two levels of JSON (a node and its content array), and a request body may nest 64 levels.
   */
  maxDepth: 24,
  /** Nodes in a document, text nodes included. */
  maxNodes: 20_000,
  /** Characters (UTF-16 code units) of text in a document, code blocks included. */
  maxTextLength: 500_000,
} as const;

/** How an attribute's value is checked. Every attribute may be absent (then its default applies). */
export type AttrRule =
  | { kind: 'integer'; min: number; max: number; default: number | null }
  | { kind: 'text'; maxLength: number; pattern?: RegExp; default: null; describe: string }
  | { kind: 'choice'; values: readonly (string | null)[]; default: string | null }
  /** A link target: http(s), mailto:, tel: or a relative reference (safe-href.ts). */
  | { kind: 'href'; required: true }
  /** A media library asset id. */
  | { kind: 'assetId'; required: true }
  /** A YouTube or Vimeo address (embed-url.ts). */
  | { kind: 'embedUrl'; required: true }
  /** Column widths of a table cell: null, or one positive whole number of pixels per column it spans. */
  | { kind: 'widths'; default: null };

/** What a node's content may be: the node types allowed as children, at least `min` of them, the first one (when given) of `first`. */
export interface ContentRule {
  allowed: readonly string[];
  min: 0 | 1;
  first?: string;
}

export interface NodeRule {
  /** Where the node may stand: a block (in a document, quote, list item or table cell), inline (in a paragraph or heading), or only in its one parent. */
  role: 'root' | 'block' | 'inline' | 'part';
  attrs: Readonly<Record<string, AttrRule>>;
  /** Children; absent for a leaf (no `content`). */
  content?: ContentRule;
  /** Marks on its inline children (text, hard breaks): false in code blocks. */
  marksInside?: boolean;
  /** A text node: a non-empty `text` string. */
  text?: boolean;
}

export interface MarkRule {
  attrs: Readonly<Record<string, AttrRule>>;
  /** A mark that may not be combined with any other on the same text (inline code). */
  exclusive?: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The block node types: what a document, a quote, a list item and a table cell hold. */
export const BLOCK_TYPES = ['paragraph', 'heading', 'bulletList', 'orderedList', 'blockquote', 'codeBlock', 'horizontalRule', 'image', 'table', 'embed'] as const;
/** The inline node types: what a paragraph and a heading hold. */
export const INLINE_TYPES = ['text', 'hardBreak'] as const;

const blocks = (min: 0 | 1, first?: string): ContentRule => ({ allowed: BLOCK_TYPES, min, ...(first ? { first } : {}) });
const inline: ContentRule = { allowed: INLINE_TYPES, min: 0 };
const optionalText = (maxLength: number, describe: string): AttrRule => ({ kind: 'text', maxLength, default: null, describe });
const cellAttrs: Record<string, AttrRule> = {
  colspan: { kind: 'integer', min: 1, max: 100, default: 1 },
  rowspan: { kind: 'integer', min: 1, max: 1000, default: 1 },
  colwidth: { kind: 'widths', default: null },
  align: { kind: 'choice', values: [null, 'left', 'center', 'right'], default: null },
};

/** Every node type of the model. */
export const NODE_RULES: Readonly<Record<string, NodeRule>> = {
  doc: { role: 'root', attrs: {}, content: blocks(0) },
  paragraph: { role: 'block', attrs: {}, content: inline, marksInside: true },
  heading: { role: 'block', attrs: { level: { kind: 'integer', min: 1, max: 6, default: 1 } }, content: inline, marksInside: true },
  bulletList: { role: 'block', attrs: {}, content: { allowed: ['listItem'], min: 1 } },
  orderedList: {
    role: 'block',
    attrs: { start: { kind: 'integer', min: 0, max: 1_000_000, default: 1 }, type: { kind: 'choice', values: [null, '1', 'a', 'A', 'i', 'I'], default: null } },
    content: { allowed: ['listItem'], min: 1 },
  },
  listItem: { role: 'part', attrs: {}, content: blocks(1, 'paragraph') },
  blockquote: { role: 'block', attrs: {}, content: blocks(1) },
  codeBlock: {
    role: 'block',
    attrs: { language: { kind: 'text', maxLength: 40, pattern: /^[A-Za-z0-9_+#.-]+$/, default: null, describe: 'a language name of letters, digits and _+#.-' } },
    content: { allowed: ['text'], min: 0 },
    marksInside: false,
  },
  horizontalRule: { role: 'block', attrs: {} },
  image: { role: 'block', attrs: { assetId: { kind: 'assetId', required: true }, alt: optionalText(1000, 'a text'), title: optionalText(1000, 'a text') } },
  embed: { role: 'block', attrs: { src: { kind: 'embedUrl', required: true }, title: optionalText(1000, 'a text') } },
  table: { role: 'block', attrs: {}, content: { allowed: ['tableRow'], min: 1 } },
  tableRow: { role: 'part', attrs: {}, content: { allowed: ['tableCell', 'tableHeader'], min: 1 } },
  tableCell: { role: 'part', attrs: cellAttrs, content: blocks(1) },
  tableHeader: { role: 'part', attrs: cellAttrs, content: blocks(1) },
  text: { role: 'inline', attrs: {}, text: true },
  hardBreak: { role: 'inline', attrs: {} },
};

/** Every mark of the model. */
export const MARK_RULES: Readonly<Record<string, MarkRule>> = {
  bold: { attrs: {} },
  italic: { attrs: {} },
  strike: { attrs: {} },
  underline: { attrs: {} },
  code: { attrs: {}, exclusive: true },
  link: {
    attrs: {
      href: { kind: 'href', required: true },
      target: { kind: 'choice', values: [null, '_blank', '_self'], default: null },
      rel: { kind: 'text', maxLength: 100, pattern: /^(?:noopener|noreferrer|nofollow|ugc|sponsored|external)(?: (?:noopener|noreferrer|nofollow|ugc|sponsored|external))*$/, default: null, describe: 'space-separated link types of noopener, noreferrer, nofollow, ugc, sponsored, external' },
      // TipTap writes `class: null` on every link; a class of content's own is not part of the model.
      class: { kind: 'choice', values: [null], default: null },
      title: optionalText(1000, 'a text'),
    },
  },
};

export const NODE_TYPES = Object.keys(NODE_RULES);
export const MARK_TYPES = Object.keys(MARK_RULES);

/** Why a value does not fit an attribute rule, or null when it does. */
export function attrProblem(rule: AttrRule, value: unknown): string | null {
  if (value === undefined) return 'required' in rule ? 'is required' : null;
  if (value === null) {
    if ('required' in rule) return 'is required';
    if (rule.kind === 'choice') return rule.values.includes(null) ? null : `must be one of ${rule.values.map((v) => JSON.stringify(v)).join(', ')}`;
    if (rule.default === null) return null;
  }
  switch (rule.kind) {
    case 'integer':
      return Number.isInteger(value) && (value as number) >= rule.min && (value as number) <= rule.max ? null : `must be a whole number from ${rule.min} to ${rule.max}`;
    case 'text':
      if (typeof value !== 'string') return `must be ${rule.describe}`;
      if (value.length > rule.maxLength) return `must be at most ${rule.maxLength} characters`;
      return rule.pattern && !rule.pattern.test(value) ? `must be ${rule.describe}` : null;
    case 'choice':
      return rule.values.includes(value as string) ? null : `must be one of ${rule.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'href':
      return typeof value === 'string' && isSafeHref(value) ? null : 'must be an http or https address, a mailto: or tel: address, or a relative reference (/path, #anchor); other schemes (javascript:, data:, ...) are not allowed';
    case 'assetId':
      return typeof value === 'string' && UUID.test(value) ? null : 'must be a media library asset id (UUID)';
    case 'embedUrl':
      return typeof value === 'string' && value.length <= 2048 && embedPlayerUrl(value) !== undefined ? null : 'must be a YouTube or Vimeo video address';
    case 'widths':
      return Array.isArray(value) && value.length <= 100 && value.every((w) => w === null || (Number.isInteger(w) && w > 0 && w <= 10_000)) ? null : 'must be null or an array of widths in pixels';
  }
}

/** The value an attribute takes when absent. */
export function attrDefault(rule: AttrRule): unknown {
  return 'default' in rule ? rule.default : undefined;
}

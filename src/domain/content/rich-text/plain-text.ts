/**
 * Plain text of a tiptap value (spec section 2: a rich-text document as JSON, or an HTML string), for search
 * and for descriptions. Block nodes are separated by a newline; marks and attributes are dropped.
 */
export function plainText(value: unknown): string {
  if (typeof value === 'string') return htmlToText(value);
  const parts: string[] = [];
  collect(value, parts, 0);
  return parts.join('').replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
}

/** Nesting deeper than this is not followed (documents are validated, but stay safe on odd input). */
const MAX_DEPTH = 64;
const BLOCK_TYPES = new Set(['paragraph', 'heading', 'blockquote', 'listItem', 'codeBlock', 'tableRow', 'horizontalRule']);

function collect(node: unknown, parts: string[], depth: number): void {
  if (depth > MAX_DEPTH || node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const child of node) collect(child, parts, depth + 1);
    return;
  }
  const n = node as { type?: unknown; text?: unknown; content?: unknown };
  if (typeof n.text === 'string') parts.push(n.text);
  if (n.type === 'hardBreak') parts.push('\n');
  if (Array.isArray(n.content)) collect(n.content, parts, depth + 1);
  if (typeof n.type === 'string' && BLOCK_TYPES.has(n.type)) parts.push('\n');
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Text content of an HTML fragment: tags removed (block tags become line breaks), entities decoded. */
export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, '')
    .replace(/<\/?(p|div|h[1-6]|li|ul|ol|blockquote|pre|tr|br|hr)\b[^>]*>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (match, code: string) => {
      if (code[0] === '#') {
        const point = code[1] === 'x' || code[1] === 'X' ? Number.parseInt(code.slice(2), 16) : Number.parseInt(code.slice(1), 10);
        return Number.isInteger(point) && point > 0 && point <= 0x10ffff ? String.fromCodePoint(point) : match;
      }
      return ENTITIES[code.toLowerCase()] ?? match;
    })
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** The first `max` characters of a text on a word boundary where one is near, with an ellipsis when cut. */
export function excerpt(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

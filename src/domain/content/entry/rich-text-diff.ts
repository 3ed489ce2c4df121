import { diffArrays, diffWords } from 'diff';
import { plainText } from '../rich-text/plain-text.ts';

/**
 * Rich text (a tiptap document) compared the way a reader sees it: block by block (paragraphs, headings,
 * lists, quotes, ...), each block by its text and its structure, instead of as one JSON value. Pure.
 *
 * Blocks are aligned with a longest-common-subsequence diff (Myers, from the `diff` package), so an
 * inserted paragraph shows as one added block rather than as every later block changed. A removed block
 * followed by an added one at the same place is one changed block; its `differences` say what changed:
 * - `text`: the words (with `words`, a word-level diff of the block's text);
 * - `type`: the kind of block (paragraph → heading, or the heading level);
 * - `format`: marks (bold, links, ...) or other attributes, with the same text.
 */
export interface BlockChange {
  kind: 'added' | 'removed' | 'changed';
  /** Position among the top-level blocks of the document before (removed, changed) and after (added, changed). */
  beforeIndex?: number;
  afterIndex?: number;
  before?: BlockSummary;
  after?: BlockSummary;
  differences?: Array<'text' | 'type' | 'format'>;
  /** With a text difference: the block's words, unchanged (`=`), removed (`-`) and added (`+`). */
  words?: Array<{ op: '=' | '-' | '+'; text: string }>;
}

export interface BlockSummary {
  /** The node type, with the heading level where there is one: paragraph, heading:2, bulletList, ... */
  type: string;
  text: string;
}

interface Block {
  node: Record<string, unknown>;
  type: string;
  text: string;
  /** The whole block as JSON, keys sorted: equal blocks have equal keys. */
  key: string;
}

/** Whether a value is a tiptap document ({type: 'doc', content: [...]}) rather than HTML or a plain value. */
export function isRichTextDocument(value: unknown): value is { type: 'doc'; content?: unknown[] } {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && (value as { type?: unknown }).type === 'doc';
}

/** The block changes from one document to the other (either may be absent: every block added or removed). */
export function diffRichText(before: unknown, after: unknown): BlockChange[] {
  const a = blocksOf(before);
  const b = blocksOf(after);
  const parts = diffArrays(a, b, { comparator: (x: Block, y: Block) => x.key === y.key });
  const changes: BlockChange[] = [];
  let ai = 0;
  let bi = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (!part.added && !part.removed) {
      ai += part.count ?? part.value.length;
      bi += part.count ?? part.value.length;
      continue;
    }
    const next = parts[i + 1];
    if (part.removed && next?.added) {
      // Removed then added at the same place: pair them up as changed blocks, the rest added or removed.
      const removed = part.value;
      const added = next.value;
      const paired = Math.min(removed.length, added.length);
      for (let k = 0; k < paired; k++) changes.push(changed(removed[k]!, ai + k, added[k]!, bi + k));
      for (let k = paired; k < removed.length; k++) changes.push({ kind: 'removed', beforeIndex: ai + k, before: summary(removed[k]!) });
      for (let k = paired; k < added.length; k++) changes.push({ kind: 'added', afterIndex: bi + k, after: summary(added[k]!) });
      ai += removed.length;
      bi += added.length;
      i++;
      continue;
    }
    if (part.removed) {
      for (const [k, block] of part.value.entries()) changes.push({ kind: 'removed', beforeIndex: ai + k, before: summary(block) });
      ai += part.value.length;
    } else {
      for (const [k, block] of part.value.entries()) changes.push({ kind: 'added', afterIndex: bi + k, after: summary(block) });
      bi += part.value.length;
    }
  }
  return changes;
}

function changed(a: Block, ai: number, b: Block, bi: number): BlockChange {
  const differences: Array<'text' | 'type' | 'format'> = [];
  if (a.text !== b.text) differences.push('text');
  if (a.type !== b.type) differences.push('type');
  if (formatKey(a.node) !== formatKey(b.node)) differences.push('format');
  const change: BlockChange = { kind: 'changed', beforeIndex: ai, afterIndex: bi, before: summary(a), after: summary(b), differences };
  if (a.text !== b.text) {
    change.words = diffWords(a.text, b.text).map((p) => ({ op: p.added ? '+' : p.removed ? '-' : '=', text: p.value }));
  }
  return change;
}

function summary(block: Block): BlockSummary {
  return { type: block.type, text: block.text };
}

function blocksOf(value: unknown): Block[] {
  if (!isRichTextDocument(value) || !Array.isArray(value.content)) return [];
  return value.content
    .filter((node): node is Record<string, unknown> => node !== null && typeof node === 'object' && !Array.isArray(node))
    .map((node) => ({ node, type: typeName(node), text: plainText(node), key: stableKey(node) }));
}

function typeName(node: Record<string, unknown>): string {
  const type = typeof node['type'] === 'string' ? node['type'] : 'unknown';
  const attrs = node['attrs'] as { level?: unknown } | undefined;
  return type === 'heading' && typeof attrs?.level === 'number' ? `heading:${attrs.level}` : type;
}

/** Everything but the text and the block's own type: marks, attributes and the shape of nested nodes. */
function formatKey(node: unknown, top = true): string {
  if (Array.isArray(node)) return `[${node.map((n) => formatKey(n, false)).join(',')}]`;
  if (node === null || typeof node !== 'object') return '';
  const { text: _text, ...rest } = node as Record<string, unknown>;
  if (top) {
    delete rest['type'];
    if (rest['attrs'] && typeof rest['attrs'] === 'object') {
      const { level: _level, ...attrs } = rest['attrs'] as Record<string, unknown>;
      if (Object.keys(attrs).length > 0) rest['attrs'] = attrs;
      else delete rest['attrs'];
    }
  }
  return stableKey(Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, k === 'content' ? formatKey(v, false) : v])));
}

function stableKey(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableKey).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableKey((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

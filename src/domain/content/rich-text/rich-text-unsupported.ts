import { isValidShell } from './rich-text-check.ts';
import { BLOCK_TYPES, NODE_RULES } from './rich-text-model.ts';
import type { RichTextNode } from './rich-text-sanitise.ts';

/**
 * The console's stand-in for content the editor cannot show: a block holding, untouched, what was stored
 * (a block of a document written before the rule, or a whole value that is no document). It is never part of
 * the model: the admin API refuses a document holding one, so it cannot leak into stored content.
 */
export const UNSUPPORTED_NODE = 'annalsUnsupported';

export interface UnsupportedAttrs {
  /** The stored block (or the whole stored value), exactly as it was. */
  original: unknown;
  /** The original is the whole stored value (one that is no document the editor can open), not a block of it. */
  whole?: true;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const unsupported = (original: unknown, whole = false): RichTextNode => ({ type: UNSUPPORTED_NODE, attrs: { original, ...(whole ? { whole } : {}) } satisfies UnsupportedAttrs });
const holdsBlocks = (type: string) => NODE_RULES[type]?.content?.allowed === BLOCK_TYPES;

/**
 * A stored rich-text value as the editor can show it: a document in which every block that breaks the model
 * (with all it holds, down to the smallest block that does: a paragraph with an unknown mark, not the quote
 * around it) is an unsupported block holding the original; a value that is no document is one unsupported
 * block. `count` says how many there are. withoutUnsupportedBlocks gives back exactly what was stored.
 */
export function withUnsupportedBlocks(value: unknown): { doc: RichTextNode; count: number } {
  const doc = isObject(value) && value['type'] === 'doc' ? prepare(value, null, 0) : null;
  if (doc === null) return { doc: { type: 'doc', content: [unsupported(value, true)] }, count: 1 };
  return { doc, count: countUnsupported(doc) };
}

function countUnsupported(node: RichTextNode): number {
  return node.type === UNSUPPORTED_NODE ? 1 : (node.content ?? []).reduce((sum, child) => sum + countUnsupported(child), 0);
}

/** The node with its content prepared, or null when it cannot be shown (its holder then stands for it). */
function prepare(node: unknown, parentType: string | null, depth: number): RichTextNode | null {
  if (!isValidShell(node, parentType, depth)) return null;
  const shell = node as unknown as RichTextNode;
  const rule = NODE_RULES[shell.type]!;
  if (rule.content === undefined || shell.content === undefined) return shell;
  if (!Array.isArray(shell.content)) return null;
  const content: RichTextNode[] = [];
  for (const child of shell.content) {
    const childType = isObject(child) ? child['type'] : undefined;
    const fits = typeof childType === 'string' && rule.content.allowed.includes(childType);
    const prepared = fits ? prepare(child, shell.type, depth + 1) : null;
    if (prepared !== null) content.push(prepared);
    else if (holdsBlocks(shell.type)) content.push(unsupported(child));
    else return null;
  }
  if (content.length < rule.content.min) return null;
  if (rule.content.first !== undefined && content[0]?.type !== rule.content.first) return null;
  return { ...shell, content };
}

/** The value to save: every unsupported block replaced by what it holds (a document that was one, by the original value). */
export function withoutUnsupportedBlocks(doc: RichTextNode): unknown {
  const only = doc.content?.length === 1 ? doc.content[0] : undefined;
  const attrs = only?.type === UNSUPPORTED_NODE ? (only.attrs as unknown as UnsupportedAttrs) : undefined;
  if (attrs?.whole) return attrs.original;
  return restore(doc);
}

function restore(node: RichTextNode): RichTextNode {
  if (node.type === UNSUPPORTED_NODE) return (node.attrs as unknown as UnsupportedAttrs).original as RichTextNode;
  return node.content === undefined ? node : { ...node, content: node.content.map(restore) };
}

/** Whether a document holds unsupported blocks. */
export function hasUnsupportedBlocks(doc: RichTextNode): boolean {
  return doc.type === UNSUPPORTED_NODE || (doc.content ?? []).some(hasUnsupportedBlocks);
}

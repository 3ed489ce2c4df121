import stringify from 'safe-stable-stringify';
import { checkRichText, formatPath, sanitiseRichText, type RichTextProblem } from './rich-text/index.ts';
import { checkHtmlValue, sanitiseHtmlValue } from './rich-text/rich-text-html-parse.ts';

/**
 * A rich-text (`tiptap`) field's value, as spec section 2 has it: a document (JSON) or an HTML string, each
 * held to the one model of ./rich-text/. The admin API checks values on the way in (checkRichTextValue); the
 * public API sanitises them on the way out (sanitiseRichTextValue). HTML is read as the console reads it
 * (./rich-text/rich-text-html-parse.ts).
 */

export interface RichTextValueProblem {
  /** Where in the value: `content[3].content[0].marks[1]`, or ` (HTML p[2] > a[0])`; '' for the whole value. */
  where: string;
  problem: string;
}

/**
 * Every way a value breaks the model, each with where it is. What was stored before the rule may stay as it
 * was: a value equal to `previous` (the same field and locale of the revision the save replaces) is not
 * checked, and a node of a document that breaks the model is let through when it, or a node holding it, is in
 * `previous` unchanged. So the console can save an entry holding an unsupported block it kept as it was, and an
 * API client can save back what it read; anything new or changed must fit, and the size limits hold for any
 * document that changed.
 */
export function checkRichTextValue(value: unknown, previous?: unknown): RichTextValueProblem[] {
  if (previous !== undefined && sameJson(value, previous)) return [];
  if (typeof value === 'string') return checkHtmlValue(value).map((p) => ({ where: ` (HTML ${p.path})`, problem: p.problem }));
  const problems = checkRichText(value);
  if (problems.length === 0 || previous === undefined) return problems.map(toValueProblem);
  const carried = nodesOf(previous);
  return problems.filter((p) => p.limit || !heldUnchanged(value, p, carried)).map(toValueProblem);
}

/** A value as the public API serves it: a document or HTML holding only what the model allows; null when nothing is left. */
export function sanitiseRichTextValue(value: unknown): unknown {
  if (typeof value === 'string') return sanitiseHtmlValue(value);
  return sanitiseRichText(value);
}

function toValueProblem(p: RichTextProblem): RichTextValueProblem {
  const path = formatPath(p.path);
  return { where: path === '' ? '' : path.startsWith('[') ? path : `.${path}`, problem: p.problem };
}

function sameJson(a: unknown, b: unknown): boolean {
  return stringify(a) === stringify(b);
}

/** The canonical JSON of every node of a stored value. */
function nodesOf(value: unknown): Set<string> {
  const nodes = new Set<string>();
  const walk = (node: unknown, depth: number) => {
    if (depth > 64 || typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) {
      for (const child of node) walk(child, depth + 1);
      return;
    }
    nodes.add(stringify(node) ?? '');
    const content = (node as { content?: unknown }).content;
    if (Array.isArray(content)) walk(content, depth + 1);
  };
  walk(value, 0);
  return nodes;
}

/** Whether the node at the problem's path, or one holding it (the document itself aside), is among the stored nodes. */
function heldUnchanged(doc: unknown, problem: RichTextProblem, carried: ReadonlySet<string>): boolean {
  let node: unknown = doc;
  for (let i = 0; i < problem.path.length; i++) {
    const part = problem.path[i]!;
    node = typeof node === 'object' && node !== null ? (node as Record<string | number, unknown>)[part] : undefined;
    if (part === 'content' || node === undefined) continue;
    // Each node along the way (problem.path[i] an index into a content array).
    if (problem.path[i - 1] === 'content' && carried.has(stringify(node) ?? '')) return true;
  }
  return false;
}

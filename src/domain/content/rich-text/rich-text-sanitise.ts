import { attrDefault, attrProblem, MARK_RULES, NODE_RULES, RICH_TEXT_LIMITS, type AttrRule, type NodeRule } from './rich-text-model.ts';

/** A node of a rich-text document, as TipTap writes it. */
export interface RichTextNode {
  type: string;
  attrs?: Record<string, unknown>;
  content?: RichTextNode[];
  marks?: Array<{ type: string; attrs?: Record<string, unknown> }>;
  text?: string;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A copy of a rich-text document holding only what the model allows, for the public API's output of documents
 * stored before the rule (or by any other way round it): unknown nodes are dropped with what they hold, unknown
 * marks and attributes dropped, a mark or attribute with a bad value dropped (a `javascript:` link leaves its
 * text unlinked; an image without a valid asset id goes), a required part made up where a structure needs one
 * (an empty paragraph in an empty table cell or at the start of a list item), a container left empty dropped,
 * and past the size limits the rest left out. What comes out passes checkRichText. null for a value that is no
 * document at all.
 */
export function sanitiseRichText(value: unknown): RichTextNode | null {
  if (!isObject(value) || value['type'] !== 'doc') return null;
  const budget = { nodes: RICH_TEXT_LIMITS.maxNodes, text: RICH_TEXT_LIMITS.maxTextLength };
  return sanitiseNode(value, 'doc', 0, budget, true) ?? { type: 'doc', content: [] };
}

function sanitiseNode(node: Record<string, unknown>, type: string, depth: number, budget: { nodes: number; text: number }, marksAllowed: boolean): RichTextNode | null {
  const rule = NODE_RULES[type]!;
  if (depth > RICH_TEXT_LIMITS.maxDepth || budget.nodes <= 0) return null;
  budget.nodes--;
  const out: RichTextNode = { type };
  const attrs = sanitiseAttrs(node['attrs'], rule.attrs);
  if (attrs === null) return null;
  if (Object.keys(attrs).length > 0) out.attrs = attrs;
  if (rule.text) {
    const text = typeof node['text'] === 'string' ? node['text'].slice(0, Math.max(0, budget.text)) : '';
    if (text.length === 0) return null;
    budget.text -= text.length;
    out.text = text;
  }
  if (rule.role === 'inline' && marksAllowed) {
    const marks = sanitiseMarks(node['marks']);
    if (marks.length > 0) out.marks = marks;
  }
  if (rule.content !== undefined) {
    const content = sanitiseContent(node['content'], type, rule, depth, budget);
    if (content === null) return null;
    if (content.length > 0 || type === 'doc') out.content = content;
  }
  return out;
}

function sanitiseContent(value: unknown, type: string, rule: NodeRule, depth: number, budget: { nodes: number; text: number }): RichTextNode[] | null {
  const allowed = rule.content!;
  const children: RichTextNode[] = [];
  for (const child of Array.isArray(value) ? value : []) {
    if (!isObject(child) || typeof child['type'] !== 'string' || !allowed.allowed.includes(child['type'])) continue;
    const clean = sanitiseNode(child, child['type'], depth + 1, budget, rule.marksInside !== false);
    if (clean) children.push(clean);
  }
  // A list item starts with a paragraph, and an empty table cell holds one (the table keeps its shape); any
  // other container left empty goes. A made-up paragraph counts against the node limit like any other.
  const madeUp = allowed.first ?? (type === 'tableCell' || type === 'tableHeader' ? 'paragraph' : undefined);
  if (madeUp !== undefined && (allowed.first !== undefined ? children[0]?.type !== allowed.first : children.length === 0)) {
    if (budget.nodes <= 0) return null;
    budget.nodes--;
    children.unshift({ type: madeUp });
  }
  return children.length < allowed.min ? null : children;
}

/** The attributes that fit their rules (defaults for the rest are implied); null when a required one does not. */
function sanitiseAttrs(value: unknown, rules: Readonly<Record<string, AttrRule>>): Record<string, unknown> | null {
  const attrs = isObject(value) ? value : {};
  const out: Record<string, unknown> = {};
  for (const [name, rule] of Object.entries(rules)) {
    const given = Object.hasOwn(attrs, name) ? attrs[name] : undefined;
    if (given !== undefined && attrProblem(rule, given) === null) out[name] = given;
    else if ('required' in rule) return null;
    else if (given !== undefined) out[name] = attrDefault(rule);
  }
  return out;
}

function sanitiseMarks(value: unknown): Array<{ type: string; attrs?: Record<string, unknown> }> {
  const marks: Array<{ type: string; attrs?: Record<string, unknown> }> = [];
  for (const mark of Array.isArray(value) ? value : []) {
    if (!isObject(mark) || typeof mark['type'] !== 'string' || !Object.hasOwn(MARK_RULES, mark['type'])) continue;
    const type = mark['type'];
    if (marks.some((m) => m.type === type)) continue;
    const attrs = sanitiseAttrs(mark['attrs'], MARK_RULES[type]!.attrs);
    if (attrs === null) continue;
    marks.push(Object.keys(attrs).length > 0 ? { type, attrs } : { type });
  }
  // Inline code stands alone.
  const exclusive = marks.find((m) => MARK_RULES[m.type]!.exclusive);
  return exclusive ? [exclusive] : marks;
}

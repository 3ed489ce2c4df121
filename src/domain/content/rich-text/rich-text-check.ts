import { attrProblem, BLOCK_TYPES, MARK_RULES, MARK_TYPES, NODE_RULES, NODE_TYPES, RICH_TEXT_LIMITS, type ContentRule, type NodeRule } from './rich-text-model.ts';

/** Where in a document: the keys and indexes from the doc down, e.g. ['content', 3, 'content', 0, 'marks', 1]. */
export type RichTextPath = ReadonlyArray<string | number>;

export interface RichTextProblem {
  /** From the document down to the offending node, mark or attribute. */
  path: RichTextPath;
  /** What is wrong, as a clause: `mark "highlight" is not part of the rich-text model (...)`. */
  problem: string;
  /** A problem of the whole document (a size limit), not of one node. */
  limit?: boolean;
}

/** `content[3].content[0].marks[1]` ('' for the document itself). */
export function formatPath(path: RichTextPath): string {
  return path.map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? part : `.${part}`)).join('');
}

/** How many problems a check reports at most: enough to fix a document, never a flood. */
export const MAX_PROBLEMS = 20;

const NODE_LIST = NODE_TYPES.filter((t) => t !== 'doc').join(', ');
const MARK_LIST = MARK_TYPES.join(', ');
const NODE_KEYS = new Set(['type', 'attrs', 'content', 'marks', 'text']);
const MARK_KEYS = new Set(['type', 'attrs']);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Every way a rich-text document breaks the model (rich-text-model.ts), each with its path: unknown node
 * types, marks and attributes, attribute values (link schemes above all), what nests in what, and the size
 * limits. An empty list: the document is one the model allows. Never throws, whatever the value.
 */
export function checkRichText(doc: unknown): RichTextProblem[] {
  const walk = new Walk();
  if (!isObject(doc) || doc['type'] !== 'doc') {
    walk.report([], 'must be a rich-text document: an object {"type": "doc", "content": [...]}');
    return walk.problems;
  }
  walk.node(doc, [], 0, null);
  return walk.problems;
}

/**
 * Whether a node (and everything in it) fits the model as a block: in a document, a quote, a list item or a
 * table cell, at `depth`. The console shows a block that does not as an unsupported block.
 */
export function isValidBlock(node: unknown, depth = 1): boolean {
  if (!isObject(node) || !(BLOCK_TYPES as readonly unknown[]).includes(node['type'])) return false;
  const walk = new Walk(1);
  walk.node(node, [], depth, 'blockquote');
  return walk.problems.length === 0;
}

/**
 * Whether a node itself fits the model where a node of `parentType` holds it: its type, attributes, text and
 * marks, and its depth, whatever it holds (the console checks what it holds child by child).
 */
export function isValidShell(node: unknown, parentType: string | null, depth: number): boolean {
  const walk = new Walk(1, true);
  walk.node(node, [], depth, parentType);
  return walk.problems.length === 0;
}

class Walk {
  readonly problems: RichTextProblem[] = [];
  #nodes = 0;
  #textLength = 0;
  #reportedLimits = new Set<string>();

  constructor(
    readonly maxProblems = MAX_PROBLEMS,
    /** Only the node itself: its type, attributes, text and marks, not what it holds. */
    readonly shallow = false,
  ) {}

  get full(): boolean {
    return this.problems.length >= this.maxProblems;
  }

  report(path: RichTextPath, problem: string, limit = false): void {
    if (!this.full) this.problems.push({ path, problem, ...(limit ? { limit } : {}) });
  }

  /** Checks a node; `parentType` null for the document itself. */
  node(node: unknown, path: RichTextPath, depth: number, parentType: string | null): void {
    if (this.full) return;
    if (!isObject(node)) {
      this.report(path, 'must be a node: an object with a "type"');
      return;
    }
    const type = node['type'];
    if (typeof type !== 'string') {
      this.report(path, 'must have a "type" naming its node type');
      return;
    }
    const rule = Object.hasOwn(NODE_RULES, type) ? NODE_RULES[type]! : undefined;
    if (rule === undefined || (type === 'doc') !== (parentType === null)) {
      this.report(path, `node type ${JSON.stringify(type.slice(0, 100))} is not part of the rich-text model (node types: ${NODE_LIST})`);
      return;
    }
    if (++this.#nodes > RICH_TEXT_LIMITS.maxNodes && !this.#reportedLimits.has('nodes')) {
      this.#reportedLimits.add('nodes');
      this.report(path, `the document has more than ${RICH_TEXT_LIMITS.maxNodes} nodes`, true);
    }
    if (depth > RICH_TEXT_LIMITS.maxDepth) {
      if (!this.#reportedLimits.has('depth')) this.report(path, `is nested more than ${RICH_TEXT_LIMITS.maxDepth} levels deep`, true);
      this.#reportedLimits.add('depth');
      return;
    }
    for (const key of Object.keys(node)) if (!NODE_KEYS.has(key)) this.report([...path, key], `is not a property of a rich-text node (type, attrs, content, marks, text)`);
    this.#attrs(node['attrs'], rule.attrs, [...path, 'attrs'], `node "${type}"`);
    this.#textOf(node, rule, path, type);
    this.#marks(node, rule, path, parentType);
    if (!this.shallow) this.#content(node, rule, path, depth, type);
  }

  #attrs(attrs: unknown, rules: NodeRule['attrs'], path: RichTextPath, owner: string): void {
    if (attrs === undefined) {
      for (const [name, rule] of Object.entries(rules)) if ('required' in rule) this.report([...path, name], 'is required');
      return;
    }
    if (!isObject(attrs)) {
      this.report(path, 'must be an object of attributes');
      return;
    }
    for (const [name, value] of Object.entries(attrs)) {
      const rule = Object.hasOwn(rules, name) ? rules[name] : undefined;
      if (rule === undefined) {
        const known = Object.keys(rules);
        this.report([...path, name], `is not an attribute of ${owner} (${known.length > 0 ? `its attributes: ${known.join(', ')}` : 'it has none'})`);
        continue;
      }
      const problem = attrProblem(rule, value);
      if (problem) this.report([...path, name], problem);
    }
    for (const [name, rule] of Object.entries(rules)) if ('required' in rule && !Object.hasOwn(attrs, name)) this.report([...path, name], 'is required');
  }

  #textOf(node: Record<string, unknown>, rule: NodeRule, path: RichTextPath, type: string): void {
    const text = node['text'];
    if (!rule.text) {
      if (text !== undefined) this.report([...path, 'text'], `is not allowed on node "${type}": only text nodes have text`);
      return;
    }
    if (typeof text !== 'string' || text.length === 0) {
      this.report([...path, 'text'], 'must be a non-empty string');
      return;
    }
    this.#textLength += text.length;
    if (this.#textLength > RICH_TEXT_LIMITS.maxTextLength && !this.#reportedLimits.has('text')) {
      this.#reportedLimits.add('text');
      this.report([...path, 'text'], `the document's text is longer than ${RICH_TEXT_LIMITS.maxTextLength} characters`, true);
    }
  }

  #marks(node: Record<string, unknown>, rule: NodeRule, path: RichTextPath, parentType: string | null): void {
    const marks = node['marks'];
    if (marks === undefined) return;
    if (rule.role !== 'inline') {
      this.report([...path, 'marks'], `are only allowed on text and hard breaks`);
      return;
    }
    if (parentType !== null && NODE_RULES[parentType]?.marksInside === false) {
      this.report([...path, 'marks'], `are not allowed inside a ${parentType}`);
      return;
    }
    if (!Array.isArray(marks)) {
      this.report([...path, 'marks'], 'must be an array of marks');
      return;
    }
    const seen = new Set<string>();
    marks.forEach((mark, i) => {
      const at = [...path, 'marks', i];
      if (!isObject(mark) || typeof mark['type'] !== 'string') {
        this.report(at, 'must be a mark: an object with a "type"');
        return;
      }
      const type = mark['type'];
      const markRule = Object.hasOwn(MARK_RULES, type) ? MARK_RULES[type]! : undefined;
      if (markRule === undefined) {
        this.report(at, `mark ${JSON.stringify(type.slice(0, 100))} is not part of the rich-text model (marks: ${MARK_LIST})`);
        return;
      }
      for (const key of Object.keys(mark)) if (!MARK_KEYS.has(key)) this.report([...at, key], 'is not a property of a mark (type, attrs)');
      if (seen.has(type)) this.report(at, `mark "${type}" is given twice`);
      seen.add(type);
      if (markRule.exclusive && marks.length > 1) this.report(at, `mark "${type}" cannot be combined with other marks`);
      this.#attrs(mark['attrs'], markRule.attrs, [...at, 'attrs'], `mark "${type}"`);
    });
  }

  #content(node: Record<string, unknown>, rule: NodeRule, path: RichTextPath, depth: number, type: string): void {
    const content = node['content'];
    if (rule.content === undefined) {
      if (content !== undefined) this.report([...path, 'content'], `is not allowed: node "${type}" holds no content`);
      return;
    }
    if (content === undefined) {
      if (rule.content.min > 0) this.report([...path, 'content'], contentRuleText(type, rule.content));
      return;
    }
    if (!Array.isArray(content)) {
      this.report([...path, 'content'], 'must be an array of nodes');
      return;
    }
    if (content.length < rule.content.min) this.report([...path, 'content'], contentRuleText(type, rule.content));
    content.forEach((child, i) => {
      if (this.full) return;
      const at = [...path, 'content', i];
      const childType = isObject(child) ? child['type'] : undefined;
      if (typeof childType === 'string' && Object.hasOwn(NODE_RULES, childType) && childType !== 'doc') {
        if (!rule.content!.allowed.includes(childType)) {
          this.report(at, `node "${childType}" cannot stand in a ${type}: ${contentRuleText(type, rule.content!)}`);
          return;
        }
        if (i === 0 && rule.content!.first !== undefined && childType !== rule.content!.first) {
          this.report(at, contentRuleText(type, rule.content!));
          return;
        }
      }
      this.node(child, at, depth + 1, type);
    });
  }
}

function contentRuleText(type: string, rule: ContentRule): string {
  const what = rule.allowed.length > 4 ? (rule.allowed.includes('paragraph') ? 'blocks' : 'inline nodes') : rule.allowed.join(' or ');
  if (rule.first) return `a ${type} holds a ${rule.first} first, then any ${what}`;
  return `a ${type} holds ${rule.min > 0 ? 'one or more' : 'any'} ${what}${rule.allowed.length > 4 ? ` (${rule.allowed.join(', ')})` : ''}`;
}

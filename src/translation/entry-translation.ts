import { isLocalizedField, type FieldType } from '../domain/content/form-set/field-types.ts';
import type { ContentLocales } from '../domain/content/form-set/locale-code.ts';
import { invalid } from '../domain/domain-error.ts';

/**
 * Which locale values of an entry to fill by machine translation, and how to put the translations back.
 * Pure. A value is translated when its field is localized (text, textarea, tiptap, not locale_shared),
 * the target locale has no value (absent, an empty string, or a rich-text document without text), and
 * the source locale has one. Existing values are never overwritten.
 *
 * - text and textarea: the string is one segment.
 * - tiptap as an HTML string: one segment, translated as HTML (tags kept by the provider).
 * - tiptap as a document: every text node is a segment, in document order; the structure, marks and
 *   attributes are copied unchanged. Text in code blocks and in code marks is not translated.
 * Leading and trailing whitespace of a segment is kept as it was and not sent.
 */

export interface TranslatableFieldDefinition {
  key: string;
  type: FieldType;
  locale_shared?: boolean | undefined;
}

export type SegmentKind = 'plain' | 'html';

/** One value to fill: a field in a target locale, from the source locale's value. */
export interface TranslationUnit {
  field: string;
  targetLocale: string;
  kind: SegmentKind;
  /** The source value: a string, or a rich-text document. */
  source: unknown;
  /** What is sent for translation (whitespace-trimmed), one per segment. */
  segments: string[];
}

export interface TranslationPlan {
  sourceLocale: string;
  targetLocales: string[];
  units: TranslationUnit[];
  /** Values left as they are, and why: already filled, or no source value. */
  skipped: Array<{ field: string; targetLocale: string; reason: 'has-value' | 'no-source-value' }>;
}

export interface PlanInput {
  fields: readonly TranslatableFieldDefinition[];
  /** The latest revision's snapshot: localized fields are {locale: value}. */
  snapshot: Record<string, unknown>;
  locales: ContentLocales;
  /** Default: the default locale. */
  sourceLocale?: string | undefined;
  /** Default: every other content locale. */
  targetLocales?: readonly string[] | undefined;
}

/** Plans the translation; VALIDATION_ERROR for locales that are not content locales, or nothing to translate into. */
export function planEntryTranslation(input: PlanInput): TranslationPlan {
  const { locales } = input;
  const sourceLocale = input.sourceLocale ?? locales.defaultLocale;
  if (!locales.locales.includes(sourceLocale)) {
    throw invalid(`sourceLocale: ${JSON.stringify(sourceLocale)} is not a content locale of this project (${locales.locales.join(', ')}).`);
  }
  if (locales.locales.length < 2) {
    throw invalid(`The project has one content locale (${sourceLocale}): there is no other locale to translate into.`, 'Add content locales first (patch_project_content_locales, a tenant_admin session).');
  }
  const requested = input.targetLocales ?? locales.locales.filter((l) => l !== sourceLocale);
  const targetLocales = [...new Set(requested)];
  if (targetLocales.length === 0) throw invalid('targetLocales: name at least one locale to translate into.');
  for (const target of targetLocales) {
    if (!locales.locales.includes(target)) throw invalid(`targetLocales: ${JSON.stringify(target)} is not a content locale of this project (${locales.locales.join(', ')}).`);
    if (target === sourceLocale) throw invalid(`targetLocales: ${target} is the source locale.`);
  }
  const units: TranslationUnit[] = [];
  const skipped: TranslationPlan['skipped'] = [];
  for (const field of input.fields) {
    if (!isLocalizedField(field)) continue;
    const value = input.snapshot[field.key];
    const map = isRecord(value) && !Object.hasOwn(value, 'type') ? value : {};
    const source = map[sourceLocale];
    for (const targetLocale of targetLocales) {
      if (!isEmptyValue(map[targetLocale])) {
        skipped.push({ field: field.key, targetLocale, reason: 'has-value' });
        continue;
      }
      if (isEmptyValue(source)) {
        skipped.push({ field: field.key, targetLocale, reason: 'no-source-value' });
        continue;
      }
      const kind: SegmentKind = field.type === 'tiptap' && typeof source === 'string' ? 'html' : 'plain';
      const segments = typeof source === 'string' ? [core(source)] : textNodes(source).map((n) => core(n.text));
      units.push({ field: field.key, targetLocale, kind, source, segments });
    }
  }
  return { sourceLocale, targetLocales, units, skipped };
}

/**
 * The snapshot with every unit's translations filled in (`translations[i]` holds unit i's segments,
 * translated, in order). Values not in the plan are copied unchanged.
 */
export function applyEntryTranslation(snapshot: Record<string, unknown>, plan: TranslationPlan, translations: readonly string[][]): Record<string, unknown> {
  const result: Record<string, unknown> = structuredClone(snapshot);
  plan.units.forEach((unit, index) => {
    const translated = translations[index];
    if (!translated || translated.length !== unit.segments.length) throw new Error(`translation of ${unit.field}.${unit.targetLocale}: expected ${unit.segments.length} segments`);
    let value: unknown;
    if (typeof unit.source === 'string') {
      value = withSpacing(unit.source, translated[0]!);
    } else {
      const document = structuredClone(unit.source);
      textNodes(document).forEach((node, i) => {
        node.text = withSpacing(node.text, translated[i]!);
      });
      value = document;
    }
    const current = result[unit.field];
    // Snapshots hold localized values as {locale: value}; no locale code can be `type` (a document's key).
    const map = isRecord(current) && !Object.hasOwn(current, 'type') ? current : {};
    result[unit.field] = { ...map, [unit.targetLocale]: value };
  });
  return result;
}

/** Segments to translate in total, and their characters (what providers bill). */
export function planSize(plan: TranslationPlan): { segments: number; characters: number } {
  let segments = 0;
  let characters = 0;
  for (const unit of plan.units) {
    segments += unit.segments.length;
    for (const s of unit.segments) characters += s.length;
  }
  return { segments, characters };
}

interface TextNode {
  type: 'text';
  text: string;
  marks?: unknown;
}

const MAX_DEPTH = 64;

/** The text nodes worth translating of a rich-text document, in document order (not in code blocks or code marks, not blank). */
export function textNodes(document: unknown): TextNode[] {
  const found: TextNode[] = [];
  const walk = (node: unknown, depth: number): void => {
    if (depth > MAX_DEPTH || !isRecord(node)) return;
    if (node['type'] === 'codeBlock') return;
    if (node['type'] === 'text' && typeof node['text'] === 'string') {
      const marks = Array.isArray(node['marks']) ? node['marks'] : [];
      if (node['text'].trim() !== '' && !marks.some((m) => isRecord(m) && m['type'] === 'code')) found.push(node as unknown as TextNode);
      return;
    }
    if (Array.isArray(node['content'])) for (const child of node['content']) walk(child, depth + 1);
  };
  walk(document, 0);
  return found;
}

function isEmptyValue(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === 'string') return value.trim() === '';
  if (isRecord(value) && value['type'] !== undefined) return textNodes(value).length === 0;
  return false;
}

/** The text without its leading and trailing whitespace (which is kept apart and put back). */
function core(text: string): string {
  return text.trim();
}

/** The translation with the original's leading and trailing whitespace. */
function withSpacing(original: string, translated: string): string {
  const leading = /^\s*/.exec(original)![0];
  const trailing = /\s*$/.exec(original)![0];
  return `${leading}${translated.trim()}${original.trim() === '' ? '' : trailing}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

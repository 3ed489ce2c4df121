import type { Snapshot } from './entry-events.ts';
import { diffRichText, isRichTextDocument, type BlockChange } from './rich-text-diff.ts';

/**
 * Field-level differences between two snapshots, for the audit history (diff between any two revisions).
 * Pure; values are compared as JSON (object key order does not matter, array order does). Rich text
 * (tiptap documents) is compared block by block by its text and structure (see rich-text-diff.ts).
 */
export interface FieldChange {
  field: string;
  /** Set when the field holds one value per locale and this change is that locale's value. */
  locale?: string;
  kind: 'added' | 'removed' | 'changed';
  /** Absent for added, and for rich text (see blocks). */
  before?: unknown;
  /** Absent for removed, and for rich text (see blocks). */
  after?: unknown;
  /** Rich text: the changed blocks (added, removed, changed by text, type or format), instead of before and after. */
  blocks?: BlockChange[];
}

export interface DiffOptions {
  /**
   * Fields known to hold one value per locale (text, textarea and tiptap fields not marked
   * locale_shared, when site locales are on). Without it, a field is compared per locale when its
   * value on both sides (or the one side that has it) is a non-empty object whose keys are all locale
   * tags (en, ja, en-US, zh-Hant-TW, ...).
   */
  localizedFields?: Iterable<string>;
  /**
   * Fields of type tiptap. A value of such a field (or of any field, when both sides are tiptap documents)
   * that is a tiptap document is compared block by block; an HTML string is compared as a string.
   */
  richTextFields?: Iterable<string>;
}

/** A BCP 47 language tag of the shapes content locales take: language, optional script, optional region. */
const LOCALE_TAG = /^[a-z]{2,3}(?:-[A-Z][a-z]{3})?(?:-(?:[A-Z]{2}|\d{3}))?$/;

/**
 * Changes from `before` to `after`, fields in the order they first appear (before's keys, then keys new
 * in after), locales likewise. A per-locale field yields one change per changed locale. A field that
 * switched between a single value and per-locale values is one whole-field change.
 */
export function diffSnapshots(before: Snapshot, after: Snapshot, options: DiffOptions = {}): FieldChange[] {
  const localized = options.localizedFields === undefined ? null : new Set(options.localizedFields);
  const richText = new Set(options.richTextFields ?? []);
  const compare = (field: string, a: Slot, b: Slot, locale: string | undefined) => compareValues(field, a, b, locale, richText.has(field));
  const changes: FieldChange[] = [];
  for (const field of unionKeys(before, after)) {
    const a = own(before, field);
    const b = own(after, field);
    if (a.present && b.present && jsonEqual(a.value, b.value)) continue;
    const perLocale = localized ? localized.has(field) && isLocaleMapOrAbsent(a, true) && isLocaleMapOrAbsent(b, true) : isPerLocale(a, b);
    if (perLocale) {
      const ma = (a.present ? a.value : {}) as Record<string, unknown>;
      const mb = (b.present ? b.value : {}) as Record<string, unknown>;
      for (const locale of unionKeys(ma, mb)) {
        const change = compare(field, own(ma, locale), own(mb, locale), locale);
        if (change) changes.push(change);
      }
    } else {
      const change = compare(field, a, b, undefined);
      if (change) changes.push(change);
    }
  }
  return changes;
}

type Slot = { present: true; value: unknown } | { present: false };

function own(record: Record<string, unknown>, key: string): Slot {
  return Object.hasOwn(record, key) && record[key] !== undefined ? { present: true, value: record[key] } : { present: false };
}

function compareValues(field: string, a: Slot, b: Slot, locale: string | undefined, richTextField: boolean): FieldChange | null {
  const where = locale === undefined ? { field } : { field, locale };
  if (!a.present && !b.present) return null;
  const docA = a.present && isRichTextDocument(a.value);
  const docB = b.present && isRichTextDocument(b.value);
  // A tiptap field's documents, or documents on both sides of any field: block by block.
  if ((richTextField && (docA || docB) && (!a.present || docA) && (!b.present || docB)) || (docA && docB)) {
    if (a.present && b.present && jsonEqual(a.value, b.value)) return null;
    const kind = !a.present ? 'added' : !b.present ? 'removed' : 'changed';
    return { ...where, kind, blocks: diffRichText(a.present ? a.value : null, b.present ? b.value : null) };
  }
  if (!a.present) return { ...where, kind: 'added', after: (b as { value: unknown }).value };
  if (!b.present) return { ...where, kind: 'removed', before: a.value };
  if (jsonEqual(a.value, b.value)) return null;
  return { ...where, kind: 'changed', before: a.value, after: b.value };
}

function unionKeys(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isLocaleMap(value: unknown, allowEmpty: boolean): boolean {
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  return (allowEmpty || keys.length > 0) && keys.every((k) => LOCALE_TAG.test(k));
}

function isLocaleMapOrAbsent(slot: Slot, allowEmpty: boolean): boolean {
  return !slot.present || isLocaleMap(slot.value, allowEmpty);
}

function isPerLocale(a: Slot, b: Slot): boolean {
  if (!a.present && !b.present) return false;
  return isLocaleMapOrAbsent(a, false) && isLocaleMapOrAbsent(b, false);
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  if (isPlainObject(a)) {
    if (!isPlainObject(b) || Array.isArray(b)) return false;
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

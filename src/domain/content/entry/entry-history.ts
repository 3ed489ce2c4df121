import { notFound } from '../../domain-error.ts';
import type { Snapshot } from './entry-events.ts';
import { findRevision, type EntryState } from './entry-decider.ts';

/**
 * Field-level differences between two snapshots, for the audit history (diff between any two revisions).
 * Pure; values are compared as JSON (object key order does not matter, array order does).
 */
export interface FieldChange {
  field: string;
  /** Set when the field holds one value per locale and this change is that locale's value. */
  locale?: string;
  kind: 'added' | 'removed' | 'changed';
  /** Absent for added. */
  before?: unknown;
  /** Absent for removed. */
  after?: unknown;
}

export interface DiffOptions {
  /**
   * Fields known to hold one value per locale (text, textarea and tiptap fields not marked
   * locale_shared, when site locales are on). Without it, a field is compared per locale when its
   * value on both sides (or the one side that has it) is a non-empty object whose keys are all locale
   * tags (en, ja, en-US, zh-Hant-TW, ...).
   */
  localizedFields?: Iterable<string>;
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

/** Diff between two revisions of an entry; NOT_FOUND when either does not belong to it. */
export function diffRevisions(state: EntryState, fromRevisionId: string, toRevisionId: string, options: DiffOptions = {}): FieldChange[] {
  const from = findRevision(state, fromRevisionId);
  const to = findRevision(state, toRevisionId);
  if (!state.exists || state.deleted || !from || !to) {
    throw notFound(`Revision ${!from ? fromRevisionId : toRevisionId} does not belong to this entry.`);
  }
  return diffSnapshots(from.snapshot, to.snapshot, options);
}

type Slot = { present: true; value: unknown } | { present: false };

function own(record: Record<string, unknown>, key: string): Slot {
  return Object.hasOwn(record, key) && record[key] !== undefined ? { present: true, value: record[key] } : { present: false };
}

function compare(field: string, a: Slot, b: Slot, locale: string | undefined): FieldChange | null {
  const where = locale === undefined ? { field } : { field, locale };
  if (!a.present && !b.present) return null;
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

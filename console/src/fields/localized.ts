import type { FieldDefinition } from '../api/shapes.ts';

/** text, textarea and tiptap hold one value per content locale unless locale_shared (spec section 2). */
export function isLocalized(field: FieldDefinition): boolean {
  return (field.type === 'text' || field.type === 'textarea' || field.type === 'tiptap') && !field.locale_shared;
}

/** A rich-text document: what TipTap edits and the API stores. */
export function isRichTextDocument(value: unknown): value is { type: 'doc'; content?: unknown[] } {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'doc';
}

/** The value of a localized field in one locale (a plain stored value counts for the default locale). */
export function localeValue(value: unknown, locale: string, defaultLocale: string): unknown {
  if (value && typeof value === 'object' && !Array.isArray(value) && !isRichTextDocument(value)) return (value as Record<string, unknown>)[locale];
  return locale === defaultLocale ? value : undefined;
}

export function withLocaleValue(value: unknown, locale: string, defaultLocale: string, next: unknown): Record<string, unknown> {
  const map: Record<string, unknown> =
    value && typeof value === 'object' && !Array.isArray(value) && !isRichTextDocument(value) ? { ...(value as Record<string, unknown>) } : value === undefined || value === null ? {} : { [defaultLocale]: value };
  if (next === undefined || next === null || next === '') delete map[locale];
  else map[locale] = next;
  return map;
}

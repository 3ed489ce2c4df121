import { localeValue } from './localized.ts';
import type { FormSet } from '../api/shapes.ts';

const SLUG_MAX_LENGTH = 200;
/** The field names the service takes as a title when no role names one (SEO_ROLE_INFERENCE.title). */
const TITLE_NAMES = ['title', 'name', 'headline'];

/** The key of the field that holds an entry's title: the widget or SEO title role, else a field named like one. */
export function titleFieldKey(formSet: FormSet): string | undefined {
  const { definition } = formSet;
  const mapped = definition.widgetRoles?.title ?? definition.seoRoles?.title;
  if (mapped) return mapped;
  return TITLE_NAMES.find((name) => definition.fields.some((field) => field.key === name && (field.type === 'text' || field.type === 'textarea')));
}

/**
 * A slug proposed from a title: lower-cased, accents dropped, every run of other characters one hyphen, at
 * most 200 characters (the service's slug rule). Empty when nothing Latin or numeric is left (a Japanese title).
 */
export function slugFromTitle(title: string): string {
  return title
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, SLUG_MAX_LENGTH)
    .replace(/-+$/, '');
}

/** The slug proposed for values typed into a new entry of `formSet` ('' when there is no title to go by). */
export function proposedSlug(formSet: FormSet, values: Record<string, unknown>, defaultLocale: string): string {
  const key = titleFieldKey(formSet);
  const title = key === undefined ? undefined : localeValue(values[key], defaultLocale, defaultLocale);
  return typeof title === 'string' ? slugFromTitle(title) : '';
}

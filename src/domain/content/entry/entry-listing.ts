import { plainText } from '../rich-text/plain-text.ts';
import { indexText } from '../../../search/search-tokens.ts';
import type { FormSetDefinition } from '../form-set/form-set-definition.ts';
import { resolveSeoRoles } from '../form-set/roles.ts';
import type { Snapshot } from './entry-events.ts';

/** What lists of entries show and search of a revision: its title and the tokens of its text. */
export interface EntryListing {
  /** The title field's value in the default locale (else its first one), as plain text; '' without one. */
  title: string;
  /** The title folded for ordering: lower case, so that "apple" and "Banana" sort as a reader expects. */
  titleSort: string;
  /** Search tokens (src/search) of the title and every text, textarea and rich-text value, in every locale. */
  search: string;
  /**
   * The content locales with a value in a localized field (a text, textarea or rich-text value given per
   * locale), sorted; a plain value counts for the default locale. The console's "locale coverage".
   */
  locales: string[];
}

const TEXT_TYPES = new Set(['text', 'textarea', 'tiptap']);

/** A project's default content locale: the one listings read titles in. */
export interface ListingLocale {
  projectId: string;
  defaultLocale: string;
}

/** The project events that set the default content locale (projections that keep ListingLocale follow them). */
export const LISTING_LOCALE_EVENTS: readonly string[] = ['project.created', 'project.content-locales-changed'];

/** The default locale one of LISTING_LOCALE_EVENTS sets. */
export function listingLocaleOf(event: { type: string; data: unknown }): ListingLocale {
  const d = event.data as { projectId: string; defaultLocale?: string; contentLocales?: { defaultLocale: string } };
  return { projectId: d.projectId, defaultLocale: d.contentLocales?.defaultLocale ?? d.defaultLocale! };
}

/**
 * The listing of a revision's snapshot, with the form set as it is when the revision is saved: the title is
 * the field with the widget or SEO title role (mapped, else inferred from field names such as `title`).
 */
export function entryListing(definition: Pick<FormSetDefinition, 'fields' | 'seoRoles' | 'widgetRoles'> | null, snapshot: Snapshot, defaultLocale: string | null): EntryListing {
  const title = entryTitle(definition, snapshot, defaultLocale);
  const texts: string[] = [];
  const locales = new Set<string>();
  const keys = definition ? definition.fields.filter((f) => TEXT_TYPES.has(f.type)).map((f) => f.key) : Object.keys(snapshot);
  for (const key of keys) {
    const value = snapshot[key];
    if (value === undefined || value === null) continue;
    if (isLocaleMap(value)) {
      for (const [locale, localized] of Object.entries(value)) {
        const text = textOf(localized);
        texts.push(text);
        if (text.trim() !== '') locales.add(locale);
      }
    } else {
      const text = textOf(value);
      texts.push(text);
      if (text.trim() !== '' && defaultLocale !== null) locales.add(defaultLocale);
    }
  }
  return { title, titleSort: title.toLowerCase(), search: indexText(title, ...texts), locales: [...locales].sort() };
}

/** EntryListing.title alone, without tokenising every text (what a read model that shows only the title needs). */
export function entryTitle(definition: Pick<FormSetDefinition, 'fields' | 'seoRoles' | 'widgetRoles'> | null, snapshot: Snapshot, defaultLocale: string | null): string {
  const titleKey = definition ? (definition.widgetRoles?.title ?? resolveSeoRoles(definition).title) : snapshot['title'] !== undefined ? 'title' : undefined;
  return titleKey === undefined ? '' : textIn(snapshot[titleKey], defaultLocale).slice(0, 500);
}

function textIn(value: unknown, locale: string | null): string {
  if (isLocaleMap(value)) {
    const localized = (locale !== null ? value[locale] : undefined) ?? Object.values(value)[0];
    return textOf(localized);
  }
  return textOf(value);
}

function textOf(value: unknown): string {
  if (typeof value === 'string') return value.includes('<') ? plainText(value) : value;
  if (value !== null && typeof value === 'object') return plainText(value);
  return '';
}

function isLocaleMap(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && (value as { type?: unknown }).type !== 'doc';
}

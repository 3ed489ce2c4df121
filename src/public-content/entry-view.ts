import type { Snapshot, ExternalIdentity } from '../domain/content/entry/entry-events.ts';
import { isLocalizedField, type FieldType } from '../domain/content/form-set/field-types.ts';
import type { FieldDefinition, FormSetDefinition } from '../domain/content/form-set/form-set-definition.ts';
import { SEO_ROLE_FIELD_TYPES, SEO_ROLE_INFERENCE, widgetRolesByField, type SeoRole, type WidgetRole } from '../domain/content/form-set/roles.ts';
import { indexTokens } from '../search/search-tokens.ts';
import { excerpt, plainText } from '../domain/content/rich-text/plain-text.ts';
import { sanitiseRichTextValue } from '../domain/content/rich-text-value.ts';

/**
 * One published entry shaped for the public API in one locale, at projection time: a request for an entry,
 * a list page or an SEO document is a lookup of this document plus string formatting. Pure.
 */
export interface EntryView {
  projectId: string;
  formSetId: string;
  formSetSlug: string;
  entryId: string;
  slug: string;
  locale: string;
  importPath: string | null;
  /** Flattened so each part can be indexed; sourceType/entityType null when the identity has none. */
  external: { sourceType: string | null; entityType: string | null; externalId: string } | null;
  /** When the entry was created. */
  createdAt: string;
  /** When the entry first went live. */
  publishedAt: string;
  /** When the live revision went live. */
  updatedAt: string;
  /** The value of the form set's date field (widget or SEO date role), as an ISO string; null without one. */
  publishedDate: string | null;
  /**
   * Values in this locale of the scalar fields the list may sort by that have no sort slot (sortSlotsOf): a
   * sort by one of them reads every view of the form set and locale. Text is kept to its first
   * SORT_KEY_LENGTH characters (sortKey).
   */
  sortValues: Record<string, string | number | boolean | null>;
  /** Values in this locale of the fields with a sort slot, by slot (s0 to s3): each slot has an index. Text as in sortValues. */
  sortSlots: Partial<Record<SortSlot, string | number | boolean | null>>;
  formSet: { id: string; slug: string; name: string };
  revision: { id: string; revision: number; updatedAt: string };
  /** Field values in this locale (default locale's where this one has none). */
  data: Record<string, unknown>;
  widgetRoles: Record<string, WidgetRole>;
  /** image and file fields: field key → asset id; image_gallery: field key → asset ids. */
  media: Record<string, string | string[]>;
  seo: SeoValues;
  /** Search tokens of the text, textarea and tiptap values in this locale (src/search/search-tokens.ts). */
  search: string;
}

export interface SeoValues {
  title: string | null;
  description: string | null;
  imageAssetId: string | null;
  /** The date role's value, else when the entry first went live. */
  datePublished: string;
  dateModified: string;
  author: string | null;
}

export interface EntryViewInput {
  projectId: string;
  formSet: { formSetId: string; slug: string; name: string; definition: FormSetDefinition };
  entry: { entryId: string; slug: string; createdAt: string; publishedAt: string; importPath: string | null; external: ExternalIdentity | null };
  revision: { revisionId: string; revision: number; updatedAt: string; snapshot: Snapshot };
  locale: string;
  defaultLocale: string;
}

/** Field types whose values can be sort keys (one scalar per entry). */
const SCALAR_TYPES: ReadonlySet<FieldType> = new Set(['text', 'url', 'textarea', 'number', 'boolean', 'date', 'select', 'radio', 'video_embed', 'entry_ref']);
const TEXT_TYPES: ReadonlySet<FieldType> = new Set(['text', 'textarea', 'tiptap']);
const DESCRIPTION_MAX = 160;

export function shapeEntryView(input: EntryViewInput): EntryView {
  const { definition } = input.formSet;
  const data = localizedData(definition.fields, input.revision.snapshot, input.locale, input.defaultLocale);
  const media = mediaIds(definition.fields, data);
  const publishedDate = publishedDateOf(definition, data);

  const searchable: string[] = [];
  for (const field of definition.fields) {
    if (!TEXT_TYPES.has(field.type)) continue;
    const value = data[field.key];
    if (value === undefined || value === null) continue;
    searchable.push(field.type === 'tiptap' ? plainText(value) : String(value));
  }

  return {
    projectId: input.projectId,
    formSetId: input.formSet.formSetId,
    formSetSlug: input.formSet.slug,
    entryId: input.entry.entryId,
    slug: input.entry.slug,
    locale: input.locale,
    importPath: input.entry.importPath,
    external: input.entry.external
      ? { sourceType: input.entry.external.sourceType ?? null, entityType: input.entry.external.entityType ?? null, externalId: input.entry.external.externalId }
      : null,
    createdAt: input.entry.createdAt,
    publishedAt: input.entry.publishedAt,
    updatedAt: input.revision.updatedAt,
    publishedDate,
    ...sortKeys(definition.fields, data),
    formSet: { id: input.formSet.formSetId, slug: input.formSet.slug, name: input.formSet.name },
    revision: { id: input.revision.revisionId, revision: input.revision.revision, updatedAt: input.revision.updatedAt },
    data,
    widgetRoles: widgetRolesByField(definition.widgetRoles),
    media,
    seo: seoValuesOf(definition, { data, media, publishedDate, publishedAt: input.entry.publishedAt, updatedAt: input.revision.updatedAt }),
    search: indexTokens(searchable.join('\n')).join(' '),
  };
}

/**
 * The SEO values of a view (its data, media and dates in one locale) under the form set's definition (pure): what
 * the JSON-LD and Open Graph documents and the site index say of it. Made when a view is shaped and, from a
 * stored view (which does not keep them: version 13), when a document is asked for.
 */
export function seoValuesOf(definition: FormSetDefinition, view: Pick<EntryView, 'data' | 'media' | 'publishedDate' | 'publishedAt' | 'updatedAt'>): SeoValues {
  const { data, media } = view;
  const text = textOf(definition, data);
  const firstImage = (key: string): string | null => {
    const ids = media[key];
    return (Array.isArray(ids) ? ids[0] : ids) ?? null;
  };
  const description = firstOf(seoCandidates(definition, 'description', [definition.widgetRoles.description]), text);
  return {
    title: firstOf(seoCandidates(definition, 'title', [definition.widgetRoles.title]), text),
    description: description === null ? null : excerpt(description, DESCRIPTION_MAX),
    imageAssetId: firstOf(seoCandidates(definition, 'image', [definition.widgetRoles.thumbnail]), firstImage),
    datePublished: view.publishedDate ?? view.publishedAt,
    dateModified: view.updatedAt,
    author: firstOf(seoCandidates(definition, 'author'), text),
  };
}

/** The value of the form set's date field (widget or SEO date role) in the data, as an ISO string; null without one. */
function publishedDateOf(definition: FormSetDefinition, data: Record<string, unknown>): string | null {
  const dateKey = definition.widgetRoles.date ?? seoCandidates(definition, 'date')[0];
  return dateKey === undefined ? null : dateValue(data[dateKey]);
}

/** A field's value as plain text (rich text flattened), null when it has none. */
function textOf(definition: FormSetDefinition, data: Record<string, unknown>): (key: string) => string | null {
  return (key) => {
    const field = definition.fields.find((f) => f.key === key);
    const value = data[key];
    if (field === undefined || value === undefined || value === null) return null;
    const plain = field.type === 'tiptap' ? plainText(value) : typeof value === 'string' ? value : String(value);
    return plain.trim() === '' ? null : plain;
  };
}

/** The fields an SEO role reads, in order: a mapped role its field; an unmapped one `extra`, then the fields named as usual for it. */
function seoCandidates(definition: FormSetDefinition, role: SeoRole, extra: Array<string | undefined> = []): string[] {
  const mapped = definition.seoRoles[role];
  if (mapped !== undefined) return [mapped];
  const inferred = SEO_ROLE_INFERENCE[role].filter((key) => {
    const field = definition.fields.find((f) => f.key === key);
    return field !== undefined && SEO_ROLE_FIELD_TYPES[role].includes(field.type);
  });
  return [...new Set([...extra.filter((k): k is string => k !== undefined), ...inferred])];
}

function firstOf<T>(keys: readonly string[], read: (key: string) => T | null): T | null {
  for (const key of keys) {
    const value = read(key);
    if (value !== null) return value;
  }
  return null;
}

/**
 * The snapshot's values in `locale`: a localized field's value in that locale, else in the default locale;
 * every other field as stored. Fields the definition no longer has are left out; so are missing values. Rich
 * text holds only what the rich-text model allows (sanitiseRichTextValue): a value stored before the model, or
 * round it, loses what the model does not allow (a javascript: link, a script element) here, before any
 * public output is shaped from it.
 */
export function localizedData(fields: readonly FieldDefinition[], snapshot: Snapshot, locale: string, defaultLocale: string): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const field of fields) {
    const stored = snapshot[field.key];
    if (stored === undefined) continue;
    const inThisLocale = isLocalizedField(field) ? inLocale(stored, locale, defaultLocale, field.type) : stored;
    const value = field.type === 'tiptap' && inThisLocale !== undefined && inThisLocale !== null ? (sanitiseRichTextValue(inThisLocale) ?? undefined) : inThisLocale;
    if (value !== undefined) data[field.key] = value;
  }
  return data;
}

function inLocale(stored: unknown, locale: string, defaultLocale: string, type: FieldType): unknown {
  if (!isLocaleMap(stored, type)) return stored;
  const own = stored[locale];
  if (own !== undefined && own !== null && own !== '') return own;
  return stored[defaultLocale] ?? undefined;
}

/** A {locale: value} map, as snapshots store localized fields (a tiptap document has a `type` key instead). */
function isLocaleMap(value: unknown, type: FieldType): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  return !(type === 'tiptap' && 'type' in value);
}

function dateValue(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object' && typeof (value as { from?: unknown }).from === 'string') return (value as { from: string }).from;
  return null;
}

/** The sort slots of an entry view: each holds one field's sort value, with an index per slot. */
export const SORT_SLOTS = ['s0', 's1', 's2', 's3'] as const;
export type SortSlot = (typeof SORT_SLOTS)[number];

/** Short scalar types, the ones that take a sort slot: a textarea or a video embed is long and rarely sorted by. */
const SLOTTED_TYPES: ReadonlySet<FieldType> = new Set(['text', 'url', 'number', 'boolean', 'date', 'select', 'radio', 'entry_ref']);

/**
 * The fields of a form set that have a sort slot, by key: the first SORT_SLOTS.length fields of a short scalar
 * type, in the definition's order. A list sorted by one of them reads a range of that slot's index; by any other
 * scalar field (sortValues), every view of the form set and locale.
 */
export function sortSlotsOf(definition: { fields: readonly FieldDefinition[] }): Record<string, SortSlot> {
  const slots: Record<string, SortSlot> = {};
  let next = 0;
  for (const field of definition.fields) {
    if (next === SORT_SLOTS.length) break;
    if (SLOTTED_TYPES.has(field.type)) slots[field.key] = SORT_SLOTS[next++]!;
  }
  return slots;
}

/**
 * How many characters of a text value its sort key keeps. A list sorted by a text field orders entries by
 * their first 128 characters (then by entry id, as for equal values): what a reader can tell apart in a sorted
 * list, without a copy of a whole textarea (kilobytes, in every view and locale) in each view and, for a field
 * with a sort slot, in its index.
 */
export const SORT_KEY_LENGTH = 128;

/** A value as a list sorts by it: text cut to SORT_KEY_LENGTH characters (never inside a surrogate pair). */
export function sortKey(value: string | number | boolean | null): string | number | boolean | null {
  if (typeof value !== 'string' || value.length <= SORT_KEY_LENGTH) return value;
  const last = value.charCodeAt(SORT_KEY_LENGTH - 1);
  return value.slice(0, last >= 0xd800 && last <= 0xdbff ? SORT_KEY_LENGTH - 1 : SORT_KEY_LENGTH);
}

function sortKeys(fields: readonly FieldDefinition[], data: Record<string, unknown>): Pick<EntryView, 'sortValues' | 'sortSlots'> {
  const slots = sortSlotsOf({ fields });
  const sortValues: EntryView['sortValues'] = {};
  const sortSlots: EntryView['sortSlots'] = {};
  for (const field of fields) {
    if (!SCALAR_TYPES.has(field.type)) continue;
    const raw = field.type === 'date' ? dateValue(data[field.key]) : data[field.key];
    const value = sortKey(typeof raw === 'string' || typeof raw === 'number' || typeof raw === 'boolean' ? raw : null);
    const slot = slots[field.key];
    if (slot === undefined) sortValues[field.key] = value;
    else sortSlots[slot] = value;
  }
  return { sortValues, sortSlots };
}

/** Whether `key` names a field the entries list may sort by. */
export function isSortableField(definition: Pick<FormSetDefinition, 'fields'>, key: string): boolean {
  const field = definition.fields.find((f) => f.key === key);
  return field !== undefined && SCALAR_TYPES.has(field.type);
}

function mediaIds(fields: readonly FieldDefinition[], data: Record<string, unknown>): Record<string, string | string[]> {
  const media: Record<string, string | string[]> = {};
  for (const field of fields) {
    const value = data[field.key];
    if ((field.type === 'image' || field.type === 'file') && typeof value === 'string') media[field.key] = value;
    if (field.type === 'image_gallery' && Array.isArray(value)) {
      media[field.key] = value.map((item) => (typeof item === 'string' ? item : (item as { assetId?: unknown })?.assetId)).filter((id): id is string => typeof id === 'string');
    }
  }
  return media;
}

/** mediaUrls of a response: every asset id as a full URL on the request's base. */
export function mediaUrls(media: Record<string, string | string[]>, baseUrl: string): Record<string, string | string[]> {
  const urls: Record<string, string | string[]> = {};
  for (const [key, ids] of Object.entries(media)) urls[key] = Array.isArray(ids) ? ids.map((id) => `${baseUrl}/media/${id}`) : `${baseUrl}/media/${ids}`;
  return urls;
}

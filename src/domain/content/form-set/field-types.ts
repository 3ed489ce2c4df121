/**
 * The field types of spec section 2 and what each one allows: which are localized, which are backed by
 * a master, which limits apply.
 */
export const FIELD_TYPES = [
  'text',
  'url',
  'textarea',
  'tiptap',
  'number',
  'boolean',
  'date',
  'select',
  'radio',
  'multiselect',
  'image',
  'file',
  'image_gallery',
  'video_embed',
  'entry_ref',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export function isFieldType(value: unknown): value is FieldType {
  return typeof value === 'string' && (FIELD_TYPES as readonly string[]).includes(value);
}

/** With site locales enabled these hold one value per locale unless marked locale_shared (spec section 2). */
export const LOCALIZABLE_FIELD_TYPES: readonly FieldType[] = ['text', 'textarea', 'tiptap'];

/** Enumerations behind these come from a master entity (spec section 2, masters). */
export const MASTER_BACKED_FIELD_TYPES: readonly FieldType[] = ['select', 'radio', 'multiselect'];

/** Field types whose values are asset UUIDs (mediaUrls are built for them). */
export const ASSET_FIELD_TYPES: readonly FieldType[] = ['image', 'file', 'image_gallery'];

export const LIMIT_NAMES = ['minLength', 'maxLength', 'pattern', 'min', 'max', 'integer', 'maxItems'] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

/** The limits each field type accepts; any other limit on a field of that type is refused. */
export const LIMITS_BY_TYPE: Readonly<Record<FieldType, readonly LimitName[]>> = {
  text: ['minLength', 'maxLength', 'pattern'],
  textarea: ['minLength', 'maxLength', 'pattern'],
  url: ['maxLength', 'pattern'],
  tiptap: [],
  number: ['min', 'max', 'integer'],
  boolean: [],
  date: [],
  select: [],
  radio: [],
  multiselect: ['maxItems'],
  image: [],
  file: [],
  image_gallery: ['maxItems'],
  video_embed: [],
  entry_ref: [],
};

/** Upper bounds on limits themselves, so a definition cannot ask for absurd values. */
export const LIMIT_BOUNDS = {
  maxLength: 1_000_000,
  maxItems: 1_000,
  patternLength: 500,
} as const;

/** URL-valued fields (url, video_embed) are at most this long unless a smaller maxLength is set. */
export const URL_MAX_LENGTH = 2048;
/** Captions of image_gallery items. */
export const CAPTION_MAX_LENGTH = 1000;
/** Master record values (select, radio, multiselect). */
export const MASTER_VALUE_MAX_LENGTH = 100;

/** Whether a field holds one value per content locale. */
export function isLocalizedField(field: { type: FieldType; locale_shared?: boolean }): boolean {
  return LOCALIZABLE_FIELD_TYPES.includes(field.type) && !field.locale_shared;
}

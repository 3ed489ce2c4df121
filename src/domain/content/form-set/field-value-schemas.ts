/**
 * The JSON Schemas of an entry's field values (spec section 2; decisions in field-validation.ts): the schema
 * compiled for validation, and the published one (toJsonSchema) with titles, descriptions and examples.
 */
import { invalid } from '../../domain-error.ts';
import {
  CAPTION_MAX_LENGTH,
  MASTER_BACKED_FIELD_TYPES,
  MASTER_VALUE_MAX_LENGTH,
  URL_MAX_LENGTH,
  isLocalizedField,
  type FieldType,
} from './field-types.ts';
import type { JsonSchema, MasterValuesLookup } from './field-validation-types.ts';
import type { FieldDefinition, FormSetDefinition } from './form-set-definition.ts';
import { isLocaleCode, type ContentLocales } from './locale-code.ts';

export type Mode = 'validate' | 'publish';

export const URL_PATTERN = '^(?:https?://[^\\s/?#]+[^\\s]*|mailto:[^\\s]+|tel:[^\\s]+|/(?!/)[^\\s]*)$';
export const VIDEO_URL_PATTERN = '^https?://[^\\s/?#]+[^\\s]*$';
const UUID_SCHEMA = { type: 'string', format: 'uuid' } as const;
const DATE_STRING_SCHEMA = { type: 'string', anyOf: [{ format: 'date' }, { format: 'date-time' }] };
const DATE_RANGE_SCHEMA = {
  type: 'object',
  required: ['from', 'to'],
  additionalProperties: false,
  properties: { from: DATE_STRING_SCHEMA, to: DATE_STRING_SCHEMA },
};
const TIPTAP_DOCUMENT_SCHEMA = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { const: 'doc' },
    content: { type: 'array', items: { type: 'object', required: ['type'], properties: { type: { type: 'string', minLength: 1 } } } },
  },
};
const GALLERY_ITEM_OBJECT_SCHEMA = {
  type: 'object',
  required: ['assetId'],
  additionalProperties: false,
  properties: { assetId: UUID_SCHEMA, caption: { type: 'string', maxLength: CAPTION_MAX_LENGTH } },
};

/**
 * "An object of one shape, or something else": if/then/else when validating (errors come only from the
 * branch that applies), anyOf when published (easier to read for clients).
 */
function objectOr(mode: Mode, whenObject: JsonSchema, otherwise: JsonSchema): JsonSchema {
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else keywords, not a thenable.
  return mode === 'validate' ? { if: { type: 'object' }, then: whenObject, else: otherwise } : { anyOf: [otherwise, whenObject] };
}

function withoutUndefined(schema: Record<string, unknown>): JsonSchema {
  return Object.fromEntries(Object.entries(schema).filter(([, v]) => v !== undefined));
}

/** The schema of one value (one locale's value for a localized field). */
function valueSchema(field: FieldDefinition, mode: Mode, nonEmpty: boolean): JsonSchema {
  const limits = field.limits ?? {};
  const userPattern = limits.pattern !== undefined ? [{ pattern: limits.pattern }] : undefined;
  const minLength = Math.max(limits.minLength ?? 0, nonEmpty ? 1 : 0) || undefined;
  switch (field.type) {
    case 'text':
    case 'textarea':
      return withoutUndefined({ type: 'string', minLength, maxLength: limits.maxLength, pattern: limits.pattern });
    case 'url':
      return withoutUndefined({ type: 'string', minLength, maxLength: limits.maxLength ?? URL_MAX_LENGTH, pattern: URL_PATTERN, allOf: userPattern });
    case 'video_embed':
      return withoutUndefined({ type: 'string', maxLength: URL_MAX_LENGTH, pattern: VIDEO_URL_PATTERN });
    case 'tiptap':
      return objectOr(mode, TIPTAP_DOCUMENT_SCHEMA, withoutUndefined({ type: 'string', minLength }));
    case 'number':
      return withoutUndefined({ type: limits.integer ? 'integer' : 'number', minimum: limits.min, maximum: limits.max });
    case 'boolean':
      return { type: 'boolean' };
    case 'date':
      return objectOr(mode, DATE_RANGE_SCHEMA, DATE_STRING_SCHEMA);
    case 'select':
    case 'radio':
      return { type: 'string', minLength: 1, maxLength: MASTER_VALUE_MAX_LENGTH };
    case 'multiselect':
      return withoutUndefined({
        type: 'array',
        items: { type: 'string', minLength: 1, maxLength: MASTER_VALUE_MAX_LENGTH },
        uniqueItems: true,
        minItems: nonEmpty ? 1 : undefined,
        maxItems: limits.maxItems,
      });
    case 'image':
    case 'file':
    case 'entry_ref':
      return { ...UUID_SCHEMA };
    case 'image_gallery':
      return withoutUndefined({
        type: 'array',
        items: objectOr(mode, GALLERY_ITEM_OBJECT_SCHEMA, UUID_SCHEMA),
        minItems: nonEmpty ? 1 : undefined,
        maxItems: limits.maxItems,
      });
  }
}

/** What a value of the type must be, for messages and schema descriptions. */
export function expects(field: Pick<FieldDefinition, 'type' | 'masterEntityKey' | 'limits'>): string {
  const master = field.masterEntityKey ? `master "${field.masterEntityKey}"` : 'the master';
  const byType: Record<FieldType, string> = {
    text: 'a string',
    textarea: 'a string',
    url: 'a URL (http or https, mailto:, tel:, or a path beginning with /)',
    tiptap: 'a rich-text document ({"type": "doc", "content": [...]}) or an HTML string',
    number: field.limits?.integer ? 'an integer' : 'a number',
    boolean: 'true or false',
    date: 'a date (YYYY-MM-DD), a date-time (RFC 3339, e.g. 2026-05-01T09:00:00Z) or an object {from, to} of them',
    select: `a string (a record value of ${master})`,
    radio: `a string (a record value of ${master})`,
    multiselect: `an array of distinct strings (record values of ${master})`,
    image: 'an asset id (UUID)',
    file: 'an asset id (UUID)',
    image_gallery: 'an array of asset ids (UUIDs) or of objects {assetId, caption?}',
    video_embed: 'a video URL (http or https)',
    entry_ref: 'an entry id (UUID)',
  };
  return byType[field.type];
}

export const DATE_STRING_EXPECTS = 'a date (YYYY-MM-DD) or a date-time (RFC 3339, e.g. 2026-05-01T09:00:00Z)';

function fieldSchema(field: FieldDefinition, locales: ContentLocales, mode: Mode, options: { masterValues?: MasterValuesLookup | undefined } = {}): JsonSchema {
  let schema: JsonSchema;
  if (isLocalizedField(field)) {
    const properties = Object.fromEntries(locales.locales.map((locale) => [locale, valueSchema(field, mode, field.required && locale === locales.defaultLocale)]));
    const localeMap = withoutUndefined({
      type: 'object',
      properties,
      additionalProperties: false,
      required: field.required ? [locales.defaultLocale] : undefined,
    });
    schema = mode === 'validate' ? localeMap : { anyOf: [valueSchema(field, mode, field.required), localeMap] };
  } else {
    schema = valueSchema(field, mode, field.required);
  }
  if (mode === 'validate') return schema;

  const notes = [`${field.type} field: ${expects(field)}`];
  if (isLocalizedField(field)) {
    notes.push(`one value per content locale (${locales.locales.join(', ')}) as an object keyed by locale, or a plain value for the default locale (${locales.defaultLocale})`);
  }
  if (field.required) notes.push(isLocalizedField(field) ? `required in the default locale (${locales.defaultLocale})` : 'required');
  if (field.description) notes.push(field.description);
  const annotated: JsonSchema = { title: field.label, description: notes.join('; '), ...schema };
  if (field.masterEntityKey && options.masterValues) {
    const samples = sampleValues(field, options.masterValues(field.masterEntityKey));
    if (samples.length > 0) annotated.examples = field.type === 'multiselect' ? [samples] : samples;
  }
  return field.required ? annotated : { title: field.label, description: annotated.description, anyOf: [schema, { type: 'null' }], ...(annotated.examples ? { examples: annotated.examples } : {}) };
}

export function fieldsSchema(definition: Pick<FormSetDefinition, 'fields'>, locales: ContentLocales, mode: Mode, options: { masterValues?: MasterValuesLookup | undefined } = {}): JsonSchema {
  const required = definition.fields.filter((f) => f.required).map((f) => f.key);
  return withoutUndefined({
    type: 'object',
    properties: Object.fromEntries(definition.fields.map((f) => [f.key, fieldSchema(f, locales, mode, options)])),
    additionalProperties: false,
    required: required.length > 0 ? required : undefined,
  });
}

/**
 * The published JSON Schema (2020-12, as OpenAPI 3.1 uses) of an entry's `fields` for this form set and
 * these content locales: what create_entry and save_revision accept. With a masterValues lookup, master
 * fields carry a few record values as examples.
 */
export function toJsonSchema(
  definition: Pick<FormSetDefinition, 'fields'> & Partial<Pick<FormSetDefinition, 'name' | 'slug'>>,
  locales: ContentLocales,
  options: { masterValues?: MasterValuesLookup } = {},
): JsonSchema {
  assertContentLocales(locales);
  const schema = fieldsSchema(definition, locales, 'publish', options);
  const title = definition.name ?? definition.slug;
  return title !== undefined ? { title: `Fields of ${title}`, ...schema } : schema;
}

/**
 * Example values for a select, radio or multiselect field: the first `limit` record values of its master
 * in display order. Accepts the master's records (ordered by `order`, then value) or a set of values.
 * Other field types have none.
 */
export function sampleValues(
  field: Pick<FieldDefinition, 'type'>,
  master: { records: ReadonlyArray<{ value: string; order?: number }> } | Iterable<string> | undefined,
  limit = 5,
): string[] {
  if (!MASTER_BACKED_FIELD_TYPES.includes(field.type) || master === undefined) return [];
  if ('records' in master) {
    return [...master.records]
      .sort((a, b) => (a.order ?? 0) - (b.order ?? 0) || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
      .slice(0, limit)
      .map((r) => r.value);
  }
  return [...master].slice(0, limit);
}

export function assertContentLocales(locales: ContentLocales): void {
  const list = locales.locales;
  if (list.length === 0) throw invalid('Content locales: at least one locale is needed.');
  const bad = list.filter((l) => !isLocaleCode(l));
  if (bad.length > 0) throw invalid(`Content locales: ${bad.map((l) => JSON.stringify(l)).join(', ')} are not locale codes.`);
  if (new Set(list).size !== list.length) throw invalid('Content locales: a locale is listed twice.');
  if (!list.includes(locales.defaultLocale)) throw invalid(`Content locales: the default locale ${JSON.stringify(locales.defaultLocale)} is not one of ${list.join(', ')}.`);
}

import { invalid } from '../../domain-error.ts';
import { createAjv } from './ajv.ts';
import { CompiledEntryFieldsValidator } from './entry-fields-validator.ts';
import type { EntryFieldsResult, EntryFieldsValidator, ValidateEntryFieldsOptions } from './field-validation-types.ts';
import { assertContentLocales, fieldsSchema } from './field-value-schemas.ts';
import type { VersionedFormSetDefinition } from './form-set-definition.ts';
import type { ContentLocales } from './locale-code.ts';

/**
 * Validation of an entry's `fields` object against its form set's field definitions (issue 3 item 4):
 * a JSON Schema per (form set, definition version, content locales), compiled once with ajv and cached.
 *
 * Value types are those of spec section 2. Decisions where the spec is silent:
 * - Localized fields (text, textarea, tiptap unless locale_shared) are stored as {locale: value} with only
 *   the project's content locales as keys. A plain value is accepted in every project, single- or
 *   multi-locale, and taken as the default locale's value; the validator returns the fields normalized,
 *   so snapshots always hold the {locale: value} form. An object is a plain value, not a locale map,
 *   only for tiptap when it has a `type` key (a rich-text document); no locale code can be `type`.
 * - `null` (or an absent key) means "no value": it is dropped from the normalized fields, as are null
 *   locale values and empty locale maps.
 * - required means a value for the default locale; for strings and arrays an empty one does not count.
 * - Limits apply to every value present, in every locale.
 * - date: YYYY-MM-DD or an RFC 3339 date-time with offset; a {from, to} range must not end before it starts.
 * - url: http(s) URL, mailto:, tel:, or a site path beginning with a single "/"; at most 2048 characters
 *   unless maxLength says otherwise. video_embed: an http(s) URL.
 * - image_gallery: items may be asset UUIDs or {assetId, caption?} objects, mixed.
 * - select, radio, multiselect: any non-empty string passes the compiled schema (master records change
 *   without a definition change); membership in the master is checked when a `masterValues` lookup is given.
 * - tiptap: a document or an HTML string that fits the rich-text model (../rich-text/, checkRichTextValue),
 *   each problem named by its path inside the value (`fields.body.en.content[3].content[0].marks[1]: ...`).
 */

export type { EntryFieldsResult, EntryFieldsValidator, FieldValueProblem, JsonSchema, MasterValuesLookup, ValidateEntryFieldsOptions } from './field-validation-types.ts';
export { assertContentLocales, sampleValues, toJsonSchema } from './field-value-schemas.ts';

/**
 * Compiled validators by (form set id, definition version, content locales): each is compiled once and
 * reused until evicted (least recently used first, beyond `capacity`). A changed definition comes with a
 * new version (form-set.updated guarantees it); as a safety net, a hit whose fields differ from the ones
 * compiled (a caller passing a stale or wrong version) is recompiled rather than trusted.
 */
export class EntryFieldsValidatorCache {
  readonly #ajv = createAjv();
  readonly #validators = new Map<string, { validator: CompiledEntryFieldsValidator; fields: string }>();
  #compilations = 0;

  constructor(readonly capacity = 500) {}

  get(definition: VersionedFormSetDefinition, locales: ContentLocales): EntryFieldsValidator {
    const key = [definition.id, definition.version, locales.defaultLocale, ...locales.locales].join('\u0000');
    const cached = this.#validators.get(key);
    if (cached && (cached.validator.definition === definition || cached.fields === JSON.stringify(definition.fields))) {
      this.#validators.delete(key);
      this.#validators.set(key, cached);
      return cached.validator;
    }
    assertContentLocales(locales);
    const schema = fieldsSchema(definition, locales, 'validate');
    const validateFn = this.#ajv.compile(schema);
    // The compiled function stands alone; keep ajv's own cache from growing with every definition.
    this.#ajv.removeSchema(schema);
    this.#compilations++;
    const validator = new CompiledEntryFieldsValidator(definition, { locales: [...locales.locales], defaultLocale: locales.defaultLocale }, schema, validateFn);
    this.#validators.delete(key);
    this.#validators.set(key, { validator, fields: JSON.stringify(definition.fields) });
    while (this.#validators.size > this.capacity) this.#validators.delete(this.#validators.keys().next().value!);
    return validator;
  }

  /** How many validators were compiled since creation (or the last clear). */
  get compilations(): number {
    return this.#compilations;
  }

  get size(): number {
    return this.#validators.size;
  }

  clear(): void {
    this.#validators.clear();
    this.#compilations = 0;
  }
}

/** The process-wide cache used by validateEntryFields. */
export const entryFieldsValidators = new EntryFieldsValidatorCache();

export function entryFieldsValidator(definition: VersionedFormSetDefinition, locales: ContentLocales): EntryFieldsValidator {
  return entryFieldsValidators.get(definition, locales);
}

/** Validates and normalizes an entry's fields; never throws for bad values (see the result). */
export function validateEntryFields(definition: VersionedFormSetDefinition, locales: ContentLocales, fields: unknown, options: ValidateEntryFieldsOptions = {}): EntryFieldsResult {
  return entryFieldsValidator(definition, locales).validate(fields, options);
}

/** Validates and returns the normalized fields, or throws VALIDATION_ERROR naming every field and problem. */
export function assertValidEntryFields(
  definition: VersionedFormSetDefinition,
  locales: ContentLocales,
  fields: unknown,
  options: ValidateEntryFieldsOptions = {},
): Record<string, unknown> {
  const result = validateEntryFields(definition, locales, fields, options);
  if (!result.ok) throw invalid(result.message);
  return result.fields;
}

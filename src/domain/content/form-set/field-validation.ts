import { invalid } from '../../domain-error.ts';
import { createAjv, type AnySchemaObject, type ErrorObject, type ValidateFunction } from './ajv.ts';
import {
  CAPTION_MAX_LENGTH,
  MASTER_BACKED_FIELD_TYPES,
  MASTER_VALUE_MAX_LENGTH,
  URL_MAX_LENGTH,
  isLocalizedField,
  type FieldType,
} from './field-types.ts';
import type { FieldDefinition, FormSetDefinition, VersionedFormSetDefinition } from './form-set-definition.ts';
import { isLocaleCode, type ContentLocales } from './locale-code.ts';
import { checkRichTextValue } from '../rich-text-value.ts';

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

export type JsonSchema = AnySchemaObject;

export interface FieldValueProblem {
  /** The field key ('' when the fields object itself is wrong). */
  field: string;
  /** The locale, for a localized field's per-locale value. */
  locale?: string;
  /** Where inside the value, e.g. `[2].caption` or `.from`. */
  path?: string;
  problem: string;
  /** `fields.<key>[.<locale>][<path>]: <problem>` */
  message: string;
}

/** The record values of a master entity by key, or undefined when the project has no such master. */
export type MasterValuesLookup = (masterKey: string) => ReadonlySet<string> | undefined;

export interface ValidateEntryFieldsOptions {
  masterValues?: MasterValuesLookup;
  /**
   * The normalized fields of the revision a save replaces (or a restore copies): rich text stored before the
   * rich-text model may be carried over unchanged (checkRichTextValue).
   */
  previous?: Record<string, unknown>;
}

export type EntryFieldsResult =
  | { ok: true; fields: Record<string, unknown> }
  | { ok: false; problems: FieldValueProblem[]; message: string };

export interface EntryFieldsValidator {
  readonly formSetId: string;
  readonly version: number;
  /** The JSON Schema the validator was compiled from (the normalized form). */
  readonly schema: JsonSchema;
  validate(fields: unknown, options?: ValidateEntryFieldsOptions): EntryFieldsResult;
}

// ---------------------------------------------------------------------------------------------------
// Value schemas

type Mode = 'validate' | 'publish';

const URL_PATTERN = '^(?:https?://[^\\s/?#]+[^\\s]*|mailto:[^\\s]+|tel:[^\\s]+|/(?!/)[^\\s]*)$';
const VIDEO_URL_PATTERN = '^https?://[^\\s/?#]+[^\\s]*$';
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
function expects(field: Pick<FieldDefinition, 'type' | 'masterEntityKey' | 'limits'>): string {
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

const DATE_STRING_EXPECTS = 'a date (YYYY-MM-DD) or a date-time (RFC 3339, e.g. 2026-05-01T09:00:00Z)';

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

function fieldsSchema(definition: Pick<FormSetDefinition, 'fields'>, locales: ContentLocales, mode: Mode, options: { masterValues?: MasterValuesLookup | undefined } = {}): JsonSchema {
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

// ---------------------------------------------------------------------------------------------------
// Compiled validators

export function assertContentLocales(locales: ContentLocales): void {
  const list = locales.locales;
  if (list.length === 0) throw invalid('Content locales: at least one locale is needed.');
  const bad = list.filter((l) => !isLocaleCode(l));
  if (bad.length > 0) throw invalid(`Content locales: ${bad.map((l) => JSON.stringify(l)).join(', ')} are not locale codes.`);
  if (new Set(list).size !== list.length) throw invalid('Content locales: a locale is listed twice.');
  if (!list.includes(locales.defaultLocale)) throw invalid(`Content locales: the default locale ${JSON.stringify(locales.defaultLocale)} is not one of ${list.join(', ')}.`);
}

class CompiledEntryFieldsValidator implements EntryFieldsValidator {
  readonly #fields: ReadonlyMap<string, FieldDefinition>;

  constructor(
    readonly definition: VersionedFormSetDefinition,
    readonly locales: ContentLocales,
    readonly schema: JsonSchema,
    private readonly validateFn: ValidateFunction,
  ) {
    this.#fields = new Map(definition.fields.map((f) => [f.key, f]));
  }

  get formSetId(): string {
    return this.definition.id;
  }

  get version(): number {
    return this.definition.version;
  }

  validate(fields: unknown, options: ValidateEntryFieldsOptions = {}): EntryFieldsResult {
    if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) {
      const p = 'must be an object keyed by field key';
      return { ok: false, problems: [{ field: '', problem: p, message: `fields: ${p}` }], message: `fields: ${p}` };
    }
    const { normalized, wrapped } = this.#normalize(fields as Record<string, unknown>);
    const problems: FieldValueProblem[] = [];
    if (!this.validateFn(normalized)) problems.push(...this.#mapErrors(this.validateFn.errors ?? [], wrapped));
    const failed = new Set(problems.map((p) => p.field));
    problems.push(...this.#semanticProblems(normalized, failed, options));
    if (problems.length === 0) return { ok: true, fields: normalized };
    const unique = dedupeProblems(problems);
    return { ok: false, problems: unique, message: unique.map((p) => p.message).join('; ') };
  }

  #normalize(input: Record<string, unknown>): { normalized: Record<string, unknown>; wrapped: Set<string> } {
    const normalized: Record<string, unknown> = {};
    const wrapped = new Set<string>();
    for (const [key, value] of Object.entries(input)) {
      if (value === null || value === undefined) continue;
      const field = this.#fields.get(key);
      if (field === undefined || !isLocalizedField(field)) {
        setOwn(normalized, key, value);
        continue;
      }
      const isLocaleMap = isPlainObject(value) && !(field.type === 'tiptap' && Object.hasOwn(value, 'type'));
      if (isLocaleMap) {
        const map: Record<string, unknown> = {};
        for (const [locale, v] of Object.entries(value)) if (v !== null && v !== undefined) setOwn(map, locale, v);
        if (Object.keys(map).length > 0) setOwn(normalized, key, map);
      } else {
        setOwn(normalized, key, { [this.locales.defaultLocale]: value });
        wrapped.add(key);
      }
    }
    return { normalized, wrapped };
  }

  #mapErrors(errors: readonly ErrorObject[], wrapped: ReadonlySet<string>): FieldValueProblem[] {
    // An anyOf error stands for its branches: drop the branch errors.
    const anyOfs = errors.filter((e) => e.keyword === 'anyOf');
    const coveredByAnyOf = (e: ErrorObject) =>
      e.keyword !== 'anyOf' && anyOfs.some((a) => a.instancePath === e.instancePath && e.schemaPath.startsWith(`${a.schemaPath}/`));
    const problems: FieldValueProblem[] = [];
    for (const error of errors) {
      if (error.keyword === 'if' || coveredByAnyOf(error)) continue;
      const problem = this.#mapError(error, wrapped);
      if (problem) problems.push(problem);
    }
    return problems;
  }

  #mapError(error: ErrorObject, wrapped: ReadonlySet<string>): FieldValueProblem | null {
    const segments = parsePointer(error.instancePath);
    const params = error.params as Record<string, unknown>;
    if (segments.length === 0) {
      if (error.keyword === 'required') return makeProblem(String(params.missingProperty), undefined, [], 'is required');
      if (error.keyword === 'additionalProperties') {
        const known = [...this.#fields.keys()];
        const listing = known.length > 0 ? `; its fields are ${known.join(', ')}` : '; it has no fields';
        return makeProblem(String(params.additionalProperty), undefined, [], `is not a field of form set "${this.definition.slug}"${listing}`);
      }
      return null;
    }
    const key = segments[0]!;
    const field = this.#fields.get(key);
    if (field === undefined) return null;
    let locale: string | undefined;
    let rest: string[];
    if (isLocalizedField(field) && !wrapped.has(key)) {
      if (segments.length === 1) {
        if (error.keyword === 'required') {
          const missing = String(params.missingProperty);
          return makeProblem(key, missing, [], `is required (${missing} is the default locale)`);
        }
        if (error.keyword === 'additionalProperties') {
          return makeProblem(key, String(params.additionalProperty), [], `is not a content locale of this project (${this.locales.locales.join(', ')})`);
        }
        return makeProblem(key, undefined, [], `must be ${expects(field)}, or an object with one value per content locale`);
      }
      locale = segments[1];
      rest = segments.slice(2);
    } else {
      rest = isLocalizedField(field) ? segments.slice(2) : segments.slice(1);
    }
    const text = this.#describe(error, field, rest, wrapped.has(key));
    if (error.keyword === 'required' || error.keyword === 'additionalProperties') {
      const property = String(params.missingProperty ?? params.additionalProperty);
      if (field.type !== 'tiptap') return makeProblem(key, locale, [...rest, property], text);
      return makeProblem(key, locale, [], text);
    }
    return makeProblem(key, locale, field.type === 'tiptap' ? [] : rest, text);
  }

  #describe(error: ErrorObject, field: FieldDefinition, rest: readonly string[], wrapped: boolean): string {
    const params = error.params as Record<string, unknown>;
    const atRoot = rest.length === 0;
    if (field.type === 'tiptap' && error.keyword !== 'minLength') return `must be ${expects(field)}`;
    switch (error.keyword) {
      case 'type':
        if (atRoot) return `must be ${expects(field)}${wrapped ? ', or an object with one value per content locale' : ''}`;
        if (field.type === 'image_gallery' && rest.length === 1) return 'must be an asset id (UUID) or an object {assetId, caption?}';
        return `must be ${article(String(params.type))}`;
      case 'anyOf':
        return `must be ${DATE_STRING_EXPECTS}`;
      case 'format':
        if (params.format === 'uuid') return atRoot ? `must be ${expects(field)}` : 'must be an asset id (UUID)';
        return `must be ${String(params.format)}`;
      case 'pattern':
        if (params.pattern === URL_PATTERN || params.pattern === VIDEO_URL_PATTERN) return `must be ${expects(field)}`;
        return `must match the pattern ${String(params.pattern)}`;
      case 'minLength':
        return Number(params.limit) === 1 ? 'must not be empty' : `must be at least ${String(params.limit)} characters`;
      case 'maxLength':
        return `must be at most ${String(params.limit)} characters`;
      case 'minimum':
        return `must be at least ${String(params.limit)}`;
      case 'maximum':
        return `must be at most ${String(params.limit)}`;
      case 'minItems':
        return Number(params.limit) === 1 ? 'must have at least one item' : `must have at least ${String(params.limit)} items`;
      case 'maxItems':
        return `must have at most ${String(params.limit)} items`;
      case 'uniqueItems':
        return `must not contain the same value twice (items ${Math.min(Number(params.i), Number(params.j))} and ${Math.max(Number(params.i), Number(params.j))} are equal)`;
      case 'required':
        return 'is required';
      case 'additionalProperties':
        return 'is not allowed';
      case 'const':
        return `must be ${JSON.stringify(params.allowedValue)}`;
      default:
        return error.message ?? 'is invalid';
    }
  }

  /** Each locale's rich-text value (or the one value) against the model, with the stored value it replaces. */
  #richTextProblems(field: FieldDefinition, value: unknown, previous: unknown): FieldValueProblem[] {
    const localized = isLocalizedField(field);
    const values: Array<[string | undefined, unknown, unknown]> = localized
      ? Object.entries(value as Record<string, unknown>).map(([locale, v]) => [locale, v, isPlainObject(previous) ? previous[locale] : undefined])
      : [[undefined, value, previous]];
    const problems: FieldValueProblem[] = [];
    for (const [locale, v, before] of values) {
      const found = checkRichTextValue(v, before);
      for (const p of found.slice(0, RICH_TEXT_PROBLEMS_NAMED)) problems.push(richTextProblem(field.key, locale, p.where, p.problem));
      if (found.length > RICH_TEXT_PROBLEMS_NAMED) problems.push(richTextProblem(field.key, locale, '', `and ${found.length - RICH_TEXT_PROBLEMS_NAMED} more problems of the rich-text model`));
    }
    return problems;
  }

  #semanticProblems(normalized: Record<string, unknown>, failed: ReadonlySet<string>, options: ValidateEntryFieldsOptions): FieldValueProblem[] {
    const problems: FieldValueProblem[] = [];
    for (const field of this.definition.fields) {
      if (failed.has(field.key) || !Object.hasOwn(normalized, field.key)) continue;
      const value = normalized[field.key];
      if (field.type === 'tiptap') problems.push(...this.#richTextProblems(field, value, options.previous?.[field.key]));
      if (field.type === 'date' && isPlainObject(value)) {
        const from = Date.parse(String(value.from));
        const to = Date.parse(String(value.to));
        if (from > to) problems.push(makeProblem(field.key, undefined, [], 'must not end before it starts (from is later than to)'));
      }
      if (options.masterValues && field.masterEntityKey && MASTER_BACKED_FIELD_TYPES.includes(field.type)) {
        const values = options.masterValues(field.masterEntityKey);
        if (values === undefined) {
          problems.push(makeProblem(field.key, undefined, [], `its master "${field.masterEntityKey}" does not exist in this project`));
          continue;
        }
        const chosen = Array.isArray(value) ? value.map((v, i) => [v, [String(i)]] as const) : [[value, []] as const];
        for (const [v, at] of chosen) {
          if (typeof v === 'string' && !values.has(v)) {
            const allowed = [...values].slice(0, 10);
            const hint = allowed.length > 0 ? ` (values include ${allowed.join(', ')}${values.size > allowed.length ? ', ...' : ''})` : ' (the master has no records)';
            problems.push(makeProblem(field.key, undefined, [...at], `"${v}" is not a record value of master "${field.masterEntityKey}"${hint}`));
          }
        }
      }
    }
    return problems;
  }
}

/** How many of a rich-text value's problems are named, each with its path; past that the message says how many more. */
const RICH_TEXT_PROBLEMS_NAMED = 5;

function makeProblem(field: string, locale: string | undefined, rest: readonly string[], problem: string): FieldValueProblem {
  const path = rest.map((s) => (/^\d+$/.test(s) ? `[${s}]` : `.${s}`)).join('');
  const where = `fields.${field}${locale !== undefined ? `.${locale}` : ''}${path}`;
  return {
    field,
    ...(locale !== undefined ? { locale } : {}),
    ...(path ? { path } : {}),
    problem,
    message: `${where}: ${problem}`,
  };
}

function richTextProblem(field: string, locale: string | undefined, where: string, problem: string): FieldValueProblem {
  const at = `fields.${field}${locale !== undefined ? `.${locale}` : ''}${where}`;
  return { field, ...(locale !== undefined ? { locale } : {}), ...(where ? { path: where } : {}), problem, message: `${at}: ${problem}` };
}

function dedupeProblems(problems: FieldValueProblem[]): FieldValueProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => (seen.has(p.message) ? false : (seen.add(p.message), true)));
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sets an own property even for keys such as `__proto__`. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

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

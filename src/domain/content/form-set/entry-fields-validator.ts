/**
 * A form set's compiled validator of entry fields: the fields normalized (plain values of localized fields
 * wrapped in the default locale), checked against the compiled JSON Schema, then by what a schema cannot say
 * (rich text against its model, date ranges, master record values).
 */
import type { ValidateFunction } from './ajv.ts';
import { MASTER_BACKED_FIELD_TYPES, isLocalizedField } from './field-types.ts';
import type { EntryFieldsResult, EntryFieldsValidator, FieldValueProblem, JsonSchema, ValidateEntryFieldsOptions } from './field-validation-types.ts';
import { RICH_TEXT_PROBLEMS_NAMED, dedupeProblems, makeProblem, problemsOfErrors, richTextProblem } from './field-value-problems.ts';
import type { FieldDefinition, VersionedFormSetDefinition } from './form-set-definition.ts';
import type { ContentLocales } from './locale-code.ts';
import { checkRichTextValue } from '../rich-text-value.ts';

export class CompiledEntryFieldsValidator implements EntryFieldsValidator {
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
    if (!this.validateFn(normalized)) problems.push(...problemsOfErrors(this.validateFn.errors ?? [], wrapped, { fields: this.#fields, definition: this.definition, locales: this.locales }));
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

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sets an own property even for keys such as `__proto__`. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

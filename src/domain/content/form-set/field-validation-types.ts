/**
 * The types of entry-field validation (field-validation.ts): problems, results, options, the validator.
 */
import type { AnySchemaObject } from './ajv.ts';

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

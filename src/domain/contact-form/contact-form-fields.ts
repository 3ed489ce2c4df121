import { z } from 'zod';
import { FIELD_KEY_RULE, fieldKeySchema } from '../content/form-set/form-set-definition.ts';

/**
 * The fields of a contact form (spec section 2, contact form: "fields: key, type, ..."): what a submitter
 * fills in. Each key is the name of the value in the submitted JSON (spec section 4.2).
 *
 * Types and their submitted values:
 * - text, textarea, tel: a string (tel: digits, spaces and + ( ) . - only);
 * - email: a string holding one e-mail address;
 * - url: an absolute http or https URL;
 * - number: a JSON number;
 * - date: a calendar date YYYY-MM-DD;
 * - select, radio: one of the field's option values;
 * - checkbox, boolean (the same: a single tick box): true or false; a required one must be true (consent);
 * - multiselect: an array of distinct option values.
 * Limits (spec: "limits") apply by type: LIMITS_BY_CONTACT_TYPE. A string field without maxLength gets a
 * default one (DEFAULT_MAX_LENGTH), so no field takes unbounded text. No field takes a pattern: patterns
 * chosen by an admin would run on anonymous input (regular-expression denial of service).
 */
export const CONTACT_FIELD_TYPES = ['text', 'textarea', 'email', 'url', 'tel', 'number', 'date', 'select', 'radio', 'checkbox', 'boolean', 'multiselect'] as const;
export type ContactFieldType = (typeof CONTACT_FIELD_TYPES)[number];

export const STRING_FIELD_TYPES: readonly ContactFieldType[] = ['text', 'textarea', 'email', 'url', 'tel'];
export const OPTION_FIELD_TYPES: readonly ContactFieldType[] = ['select', 'radio', 'multiselect'];
export const TICK_FIELD_TYPES: readonly ContactFieldType[] = ['checkbox', 'boolean'];

export const CONTACT_LIMIT_NAMES = ['minLength', 'maxLength', 'min', 'max', 'integer', 'minItems', 'maxItems'] as const;
export type ContactLimitName = (typeof CONTACT_LIMIT_NAMES)[number];

export const LIMITS_BY_CONTACT_TYPE: Readonly<Record<ContactFieldType, readonly ContactLimitName[]>> = {
  text: ['minLength', 'maxLength'],
  textarea: ['minLength', 'maxLength'],
  tel: ['minLength', 'maxLength'],
  email: ['maxLength'],
  url: ['maxLength'],
  number: ['min', 'max', 'integer'],
  date: [],
  select: [],
  radio: [],
  checkbox: [],
  boolean: [],
  multiselect: ['minItems', 'maxItems'],
};

/** The longest value a string field takes when its limits name no maxLength. */
export const DEFAULT_MAX_LENGTH: Readonly<Record<'text' | 'textarea' | 'email' | 'url' | 'tel', number>> = {
  text: 1000,
  textarea: 10_000,
  email: 254,
  url: 2048,
  tel: 40,
};
/** The most a maxLength may allow, per type. */
export const MAX_MAX_LENGTH: Readonly<Record<'text' | 'textarea' | 'email' | 'url' | 'tel', number>> = {
  text: 10_000,
  textarea: 50_000,
  email: 254,
  url: 2048,
  tel: 40,
};

export const MAX_CONTACT_FIELDS = 50;
export const MAX_OPTIONS = 100;
export const OPTION_VALUE_MAX_LENGTH = 100;
export const CONTACT_LABEL_MAX_LENGTH = 200;
export const PLACEHOLDER_MAX_LENGTH = 200;
export const HELP_MAX_LENGTH = 500;

export const contactFieldKeySchema = fieldKeySchema;
export { FIELD_KEY_RULE };

const optionSchema = z.union([
  z.string().trim().min(1).max(OPTION_VALUE_MAX_LENGTH).transform((value) => ({ value, label: value })),
  z.strictObject({
    value: z.string().trim().min(1).max(OPTION_VALUE_MAX_LENGTH),
    label: z.string().trim().min(1).max(CONTACT_LABEL_MAX_LENGTH).optional(),
  }).transform((o) => ({ value: o.value, label: o.label ?? o.value })),
]);

export const contactFieldLimitsSchema = z.strictObject({
  minLength: z.int().min(0).max(50_000).optional(),
  maxLength: z.int().min(1).max(50_000).optional(),
  min: z.number().optional(),
  max: z.number().optional(),
  integer: z.boolean().optional(),
  minItems: z.int().min(0).max(MAX_OPTIONS).optional(),
  maxItems: z.int().min(1).max(MAX_OPTIONS).optional(),
});
export type ContactFieldLimits = z.output<typeof contactFieldLimitsSchema>;

export const contactFieldSchema = z.strictObject({
  key: contactFieldKeySchema,
  type: z.enum(CONTACT_FIELD_TYPES),
  label: z.string().trim().min(1).max(CONTACT_LABEL_MAX_LENGTH),
  required: z.boolean().default(false),
  /** select, radio, multiselect: the choices, as {value, label} (a plain string is both). */
  options: z.array(optionSchema).min(1).max(MAX_OPTIONS).optional(),
  limits: contactFieldLimitsSchema.optional(),
  /** Shown in the hosted page's input. */
  placeholder: z.string().max(PLACEHOLDER_MAX_LENGTH).optional(),
  /** A hint shown under the hosted page's input. */
  help: z.string().max(HELP_MAX_LENGTH).optional(),
});
export type ContactField = z.output<typeof contactFieldSchema>;
export type ContactFieldInput = z.input<typeof contactFieldSchema>;

/** The longest string a field accepts. */
export function maxLengthOf(field: Pick<ContactField, 'type' | 'limits'>): number {
  if (!(STRING_FIELD_TYPES as readonly string[]).includes(field.type)) return 0;
  return field.limits?.maxLength ?? DEFAULT_MAX_LENGTH[field.type as keyof typeof DEFAULT_MAX_LENGTH];
}

/** Problems a field has beyond its shape: limits that do not apply to its type, options where none belong, ... */
export function fieldRuleProblems(field: ContactField): Array<{ where: string; message: string }> {
  const problems: Array<{ where: string; message: string }> = [];
  const allowed = LIMITS_BY_CONTACT_TYPE[field.type];
  for (const name of CONTACT_LIMIT_NAMES) {
    if (field.limits?.[name] !== undefined && !allowed.includes(name)) {
      problems.push({ where: `limits.${name}`, message: allowed.length ? `does not apply to ${field.type} fields (they take ${allowed.join(', ')})` : `does not apply to ${field.type} fields (they take no limits)` });
    }
  }
  const limits = field.limits ?? {};
  if (limits.minLength !== undefined && limits.maxLength !== undefined && limits.minLength > limits.maxLength) problems.push({ where: 'limits.minLength', message: 'must not exceed maxLength' });
  if (limits.min !== undefined && limits.max !== undefined && limits.min > limits.max) problems.push({ where: 'limits.min', message: 'must not exceed max' });
  if (limits.minItems !== undefined && limits.maxItems !== undefined && limits.minItems > limits.maxItems) problems.push({ where: 'limits.minItems', message: 'must not exceed maxItems' });
  if ((STRING_FIELD_TYPES as readonly string[]).includes(field.type) && limits.maxLength !== undefined) {
    const cap = MAX_MAX_LENGTH[field.type as keyof typeof MAX_MAX_LENGTH];
    if (limits.maxLength > cap) problems.push({ where: 'limits.maxLength', message: `must be at most ${cap} for ${field.type} fields` });
  }
  const isOptionType = (OPTION_FIELD_TYPES as readonly string[]).includes(field.type);
  if (isOptionType && !field.options) problems.push({ where: 'options', message: `is required for ${field.type} fields (at least one {value, label})` });
  if (!isOptionType && field.options) problems.push({ where: 'options', message: `does not apply to ${field.type} fields (only select, radio and multiselect take options)` });
  if (field.options) {
    const seen = new Set<string>();
    for (const option of field.options) {
      if (seen.has(option.value)) problems.push({ where: 'options', message: `lists the value "${option.value}" twice` });
      seen.add(option.value);
    }
    if (limits.minItems !== undefined && limits.minItems > field.options.length) problems.push({ where: 'limits.minItems', message: `must not exceed the number of options (${field.options.length})` });
  }
  return problems;
}

import { z } from 'zod';
import { DomainError } from '../domain-error.ts';
import { maxLengthOf, OPTION_FIELD_TYPES, TICK_FIELD_TYPES, type ContactField } from './contact-form-fields.ts';

/** A submitted value, by field type: strings, a number, a tick, or the chosen option values. */
export type SubmittedValue = string | number | boolean | string[];
export type SubmittedValues = Record<string, SubmittedValue>;

export interface SubmissionProblem {
  field: string;
  message: string;
}

const email = z.email();
const TEL = /^[+0-9 ().\-/]+$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
// C0 controls other than tab, line feed and carriage return, and DEL: never part of what a person types.
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

/**
 * Checks a submitted body against the form's fields (spec section 4.2) and returns the values to keep, in
 * field order: absent, null, blank and empty values of optional fields are left out; strings of
 * single-line fields are trimmed; line breaks in textareas become LF. Keys that name no field are refused, except `ignoredKeys` (the honeypot
 * field and the `_locale` / challenge fields the caller handles). Pure.
 *
 * Throws VALIDATION_ERROR whose message names every field with a problem and the problem:
 * `Invalid submission: email: must be an e-mail address; name: is required`.
 */
export function validateSubmission(fields: readonly ContactField[], body: Record<string, unknown>, ignoredKeys: ReadonlySet<string> = new Set()): SubmittedValues {
  const problems = submissionProblems(fields, body, ignoredKeys);
  if (problems.length) {
    throw new DomainError('VALIDATION_ERROR', `Invalid submission: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`, 'Correct the named fields and send the form again.');
  }
  const values: SubmittedValues = {};
  for (const field of fields) {
    const value = normalise(field, body[field.key]);
    if (value !== undefined) values[field.key] = value;
  }
  return values;
}

/** Every problem of a submitted body, field by field (unknown keys first, then fields in order). */
export function submissionProblems(fields: readonly ContactField[], body: Record<string, unknown>, ignoredKeys: ReadonlySet<string> = new Set()): SubmissionProblem[] {
  const problems: SubmissionProblem[] = [];
  const known = new Set(fields.map((f) => f.key));
  for (const key of Object.keys(body)) {
    if (!known.has(key) && !ignoredKeys.has(key)) problems.push({ field: printableKey(key), message: 'is not a field of this form' });
  }
  for (const field of fields) {
    const message = fieldProblem(field, body[field.key]);
    if (message) problems.push({ field: field.key, message });
  }
  return problems;
}

function fieldProblem(field: ContactField, value: unknown): string | null {
  const isTick = TICK_FIELD_TYPES.includes(field.type);
  if (isEmpty(value) || (isTick && value === false)) {
    if (!field.required) return null;
    return isTick ? (value === false ? 'must be checked' : 'is required (it must be checked)') : 'is required';
  }
  const limits = field.limits ?? {};
  switch (field.type) {
    case 'text':
    case 'textarea':
    case 'email':
    case 'url':
    case 'tel': {
      if (typeof value !== 'string') return 'must be a string';
      if (CONTROL.test(value)) return 'must not contain control characters';
      const text = field.type === 'textarea' ? value.replace(/\r\n?/g, '\n') : value.trim();
      if (field.type !== 'textarea' && /[\r\n]/.test(text)) return 'must be a single line';
      const length = [...text].length;
      const max = maxLengthOf(field);
      if (length > max) return `must be at most ${max} characters`;
      if (limits.minLength !== undefined && length < limits.minLength) return `must be at least ${limits.minLength} characters`;
      if (field.type === 'email' && !email.safeParse(text).success) return 'must be an e-mail address';
      if (field.type === 'url' && !isHttpUrl(text)) return 'must be an http or https URL';
      if (field.type === 'tel' && !(TEL.test(text) && (text.match(/\d/g)?.length ?? 0) >= 3)) return 'must be a telephone number (digits, spaces and + ( ) . - /)';
      return null;
    }
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
      if (limits.integer && !Number.isInteger(value)) return 'must be a whole number';
      if (limits.min !== undefined && value < limits.min) return `must be at least ${limits.min}`;
      if (limits.max !== undefined && value > limits.max) return `must be at most ${limits.max}`;
      return null;
    }
    case 'date': {
      if (typeof value !== 'string') return 'must be a date YYYY-MM-DD';
      return isCalendarDate(value) ? null : 'must be a date YYYY-MM-DD';
    }
    case 'select':
    case 'radio': {
      const allowed = optionValues(field);
      if (typeof value !== 'string' || !allowed.includes(value)) return `must be one of: ${allowed.join(', ')}`;
      return null;
    }
    case 'checkbox':
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be true or false';
    case 'multiselect': {
      const allowed = optionValues(field);
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) return 'must be an array of option values';
      const wrong = value.find((v) => !allowed.includes(v as string));
      if (wrong !== undefined) return `"${String(wrong).slice(0, 100)}" is not one of: ${allowed.join(', ')}`;
      if (new Set(value).size !== value.length) return 'must not name an option twice';
      if (limits.minItems !== undefined && value.length < limits.minItems) return `must name at least ${limits.minItems} options`;
      if (limits.maxItems !== undefined && value.length > limits.maxItems) return `must name at most ${limits.maxItems} options`;
      return null;
    }
  }
}

function normalise(field: ContactField, value: unknown): SubmittedValue | undefined {
  if (isEmpty(value)) return undefined;
  // Browsers post line breaks of a textarea as CR LF: kept as LF, whichever way the value came.
  if (typeof value === 'string') return field.type === 'textarea' ? value.replace(/\r\n?/g, '\n') : value.trim();
  if (Array.isArray(value)) return [...(value as string[])];
  if (TICK_FIELD_TYPES.includes(field.type) && value === false && !field.required) return false;
  return value as SubmittedValue;
}

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '') || (Array.isArray(value) && value.length === 0);
}

function optionValues(field: ContactField): string[] {
  return OPTION_FIELD_TYPES.includes(field.type) ? (field.options ?? []).map((o) => o.value) : [];
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

function isCalendarDate(text: string): boolean {
  const m = DATE.exec(text);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** An unknown key as it may appear in a message: printable and short. */
function printableKey(key: string): string {
  const clean = key.replace(/[^\x20-\x7E]/g, '?');
  return clean.length > 64 ? `${clean.slice(0, 64)}…` : clean;
}

/** How a value reads in an e-mail or a page: options by label, ticks as yes/no, lists joined. */
export function displayValue(field: ContactField | undefined, value: SubmittedValue): string {
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  const label = (v: string) => field?.options?.find((o) => o.value === v)?.label ?? v;
  if (Array.isArray(value)) return value.map(label).join(', ');
  if (typeof value === 'number') return String(value);
  return field && OPTION_FIELD_TYPES.includes(field.type) ? label(value) : value;
}

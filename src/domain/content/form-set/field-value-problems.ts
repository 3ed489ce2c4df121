/**
 * The problems of an entry's field values as validation names them: ajv's errors turned into problems that
 * name the field, the locale and the place inside the value (`fields.<key>[.<locale>][<path>]: <problem>`).
 */
import type { ErrorObject } from './ajv.ts';
import { isLocalizedField } from './field-types.ts';
import type { FieldValueProblem } from './field-validation-types.ts';
import { DATE_STRING_EXPECTS, URL_PATTERN, VIDEO_URL_PATTERN, expects } from './field-value-schemas.ts';
import type { FieldDefinition, VersionedFormSetDefinition } from './form-set-definition.ts';
import type { ContentLocales } from './locale-code.ts';

/** What the mapping of ajv's errors needs of the validator: the form set's fields by key, its definition and locales. */
export interface ProblemContext {
  readonly fields: ReadonlyMap<string, FieldDefinition>;
  readonly definition: VersionedFormSetDefinition;
  readonly locales: ContentLocales;
}

export function problemsOfErrors(errors: readonly ErrorObject[], wrapped: ReadonlySet<string>, of: ProblemContext): FieldValueProblem[] {
  // An anyOf error stands for its branches: drop the branch errors.
  const anyOfs = errors.filter((e) => e.keyword === 'anyOf');
  const coveredByAnyOf = (e: ErrorObject) =>
    e.keyword !== 'anyOf' && anyOfs.some((a) => a.instancePath === e.instancePath && e.schemaPath.startsWith(`${a.schemaPath}/`));
  const problems: FieldValueProblem[] = [];
  for (const error of errors) {
    if (error.keyword === 'if' || coveredByAnyOf(error)) continue;
    const problem = problemOfError(error, wrapped, of);
    if (problem) problems.push(problem);
  }
  return problems;
}

function problemOfError(error: ErrorObject, wrapped: ReadonlySet<string>, of: ProblemContext): FieldValueProblem | null {
  const segments = parsePointer(error.instancePath);
  const params = error.params as Record<string, unknown>;
  if (segments.length === 0) {
    if (error.keyword === 'required') return makeProblem(String(params.missingProperty), undefined, [], 'is required');
    if (error.keyword === 'additionalProperties') {
      const known = [...of.fields.keys()];
      const listing = known.length > 0 ? `; its fields are ${known.join(', ')}` : '; it has no fields';
      return makeProblem(String(params.additionalProperty), undefined, [], `is not a field of form set "${of.definition.slug}"${listing}`);
    }
    return null;
  }
  const key = segments[0]!;
  const field = of.fields.get(key);
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
        return makeProblem(key, String(params.additionalProperty), [], `is not a content locale of this project (${of.locales.locales.join(', ')})`);
      }
      return makeProblem(key, undefined, [], `must be ${expects(field)}, or an object with one value per content locale`);
    }
    locale = segments[1];
    rest = segments.slice(2);
  } else {
    rest = isLocalizedField(field) ? segments.slice(2) : segments.slice(1);
  }
  const text = describe(error, field, rest, wrapped.has(key));
  if (error.keyword === 'required' || error.keyword === 'additionalProperties') {
    const property = String(params.missingProperty ?? params.additionalProperty);
    if (field.type !== 'tiptap') return makeProblem(key, locale, [...rest, property], text);
    return makeProblem(key, locale, [], text);
  }
  return makeProblem(key, locale, field.type === 'tiptap' ? [] : rest, text);
}

function describe(error: ErrorObject, field: FieldDefinition, rest: readonly string[], wrapped: boolean): string {
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

/** How many of a rich-text value's problems are named, each with its path; past that the message says how many more. */
export const RICH_TEXT_PROBLEMS_NAMED = 5;

export function makeProblem(field: string, locale: string | undefined, rest: readonly string[], problem: string): FieldValueProblem {
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

export function richTextProblem(field: string, locale: string | undefined, where: string, problem: string): FieldValueProblem {
  const at = `fields.${field}${locale !== undefined ? `.${locale}` : ''}${where}`;
  return { field, ...(locale !== undefined ? { locale } : {}), ...(where ? { path: where } : {}), problem, message: `${at}: ${problem}` };
}

export function dedupeProblems(problems: FieldValueProblem[]): FieldValueProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    if (seen.has(p.message)) return false;
    seen.add(p.message);
    return true;
  });
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

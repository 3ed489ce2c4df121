import { z } from 'zod';
import { masterKeySchema } from '../master/master-key.ts';
import {
  FIELD_TYPES,
  LIMIT_BOUNDS,
  LIMIT_NAMES,
  LIMITS_BY_TYPE,
  MASTER_BACKED_FIELD_TYPES,
  isFieldType,
  type FieldType,
} from './field-types.ts';
import { formSetSlugSchema } from './form-set-slug.ts';
import { joinPath, problem, problemsError, type Problem } from './problems.ts';
import { SEO_ROLES, SEO_ROLE_FIELD_TYPES, WIDGET_ROLES, WIDGET_ROLE_FIELD_TYPES } from './roles.ts';
import { zodProblems, type SegmentNamer } from './zod-problems.ts';

export const FIELD_KEY_PATTERN = /^[a-z][a-z0-9_]*$/;
export const FIELD_KEY_MAX_LENGTH = 64;
export const FIELD_KEY_RULE = 'a lowercase letter followed by lowercase letters, digits or underscores, at most 64 characters';
export const BLOCK_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
export const BLOCK_ID_MAX_LENGTH = 64;
export const MAX_FIELDS_PER_FORM_SET = 200;
export const MAX_BLOCKS_PER_FORM_SET = 100;
export const LABEL_MAX_LENGTH = 200;
export const NAME_MAX_LENGTH = 200;
export const DESCRIPTION_MAX_LENGTH = 2000;

export const fieldKeySchema = z
  .string()
  .max(FIELD_KEY_MAX_LENGTH)
  .regex(FIELD_KEY_PATTERN, { error: `must be ${FIELD_KEY_RULE}` });

const blockIdSchema = z
  .string()
  .max(BLOCK_ID_MAX_LENGTH)
  .regex(BLOCK_ID_PATTERN, { error: 'must be letters, digits, underscores or hyphens, starting with a letter or digit' });

const labelSchema = z.string().trim().min(1).max(LABEL_MAX_LENGTH);

/** Limits a field may carry; which apply depends on the type (LIMITS_BY_TYPE). */
export const fieldLimitsSchema = z.strictObject({
  minLength: z.int().min(0).max(LIMIT_BOUNDS.maxLength).optional(),
  maxLength: z.int().min(1).max(LIMIT_BOUNDS.maxLength).optional(),
  /** An ECMAScript regular expression (unicode mode) the whole value must match; anchor it yourself. */
  pattern: z.string().min(1).max(LIMIT_BOUNDS.patternLength).optional(),
  min: z.number().optional(),
  max: z.number().optional(),
  /** number fields: only whole numbers. */
  integer: z.boolean().optional(),
  maxItems: z.int().min(1).max(LIMIT_BOUNDS.maxItems).optional(),
});
export type FieldLimits = z.output<typeof fieldLimitsSchema>;

export const fieldDefinitionSchema = z.strictObject({
  key: fieldKeySchema,
  type: z.enum(FIELD_TYPES),
  label: labelSchema,
  /** Help text for editors and agents. */
  description: z.string().max(DESCRIPTION_MAX_LENGTH).optional(),
  /** A value is required for the project's default locale. */
  required: z.boolean().default(false),
  /** text, textarea, tiptap: one value for every locale instead of one per locale. */
  locale_shared: z.boolean().default(false),
  /** select, radio, multiselect: the master entity whose record values the field takes. */
  masterEntityKey: masterKeySchema.optional(),
  limits: fieldLimitsSchema.optional(),
});
export type FieldDefinition = z.output<typeof fieldDefinitionSchema>;
export type FieldDefinitionInput = z.input<typeof fieldDefinitionSchema>;

export const formBlockSchema = z.strictObject({
  id: blockIdSchema,
  label: labelSchema,
  /** The block's fields, in display order. */
  fieldKeys: z.array(fieldKeySchema).max(MAX_FIELDS_PER_FORM_SET),
});
export type FormBlock = z.output<typeof formBlockSchema>;

export const seoRolesSchema = z.strictObject({
  title: fieldKeySchema.optional(),
  description: fieldKeySchema.optional(),
  image: fieldKeySchema.optional(),
  date: fieldKeySchema.optional(),
  author: fieldKeySchema.optional(),
});

export const widgetRolesSchema = z.strictObject({
  title: fieldKeySchema.optional(),
  thumbnail: fieldKeySchema.optional(),
  description: fieldKeySchema.optional(),
  date: fieldKeySchema.optional(),
  category: fieldKeySchema.optional(),
});

export const SITEMAP_CHANGEFREQS = ['always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never'] as const;
export const URL_PATTERN_MAX_LENGTH = 500;
/** Placeholders a sitemap URL pattern may use. */
export const URL_PATTERN_PLACEHOLDERS = ['slug', 'formSetSlug', 'entryId', 'locale'] as const;

/**
 * Where the form set's entries live on the project's site, for sitemaps, Open Graph URLs and llms.txt links:
 * the pattern is a path appended to the project's site URL, with {slug}, {formSetSlug}, {entryId} and
 * {locale} replaced per entry (with {locale}, one URL per content locale).
 */
export const sitemapSettingsSchema = z.strictObject({
  /** List the form set's published entries in sitemaps and llms.txt. */
  include: z.boolean().default(true),
  urlPattern: z
    .string()
    .max(URL_PATTERN_MAX_LENGTH)
    .regex(/^\/[^\s?#]*$/, { error: 'must be a path starting with / (no spaces, query or fragment)' })
    .refine((pattern) => [...pattern.matchAll(/\{([^}]*)\}/g)].every((m) => (URL_PATTERN_PLACEHOLDERS as readonly string[]).includes(m[1]!)), {
      error: `may only use the placeholders ${URL_PATTERN_PLACEHOLDERS.map((p) => `{${p}}`).join(', ')}`,
    })
    .refine((pattern) => pattern.includes('{slug}') || pattern.includes('{entryId}'), { error: 'must contain {slug} or {entryId}, so every entry has its own URL' })
    .default('/{formSetSlug}/{slug}'),
  changefreq: z.enum(SITEMAP_CHANGEFREQS).default('weekly'),
  priority: z.number().min(0).max(1).default(0.5),
});
export type SitemapSettings = z.output<typeof sitemapSettingsSchema>;

const draftShape = {
  slug: formSetSlugSchema,
  name: z.string().trim().min(1).max(NAME_MAX_LENGTH),
  description: z.string().max(DESCRIPTION_MAX_LENGTH).nullable().default(null),
  /** Groups of fields for the editing form. A field is in at most one block; fields in none are shown after the blocks. */
  blocks: z.array(formBlockSchema).max(MAX_BLOCKS_PER_FORM_SET).default([]),
  /** In display order. */
  fields: z.array(fieldDefinitionSchema).max(MAX_FIELDS_PER_FORM_SET),
  seoRoles: seoRolesSchema.default({}),
  widgetRoles: widgetRolesSchema.default({}),
  /** Sitemap, Open Graph URL and llms.txt settings; defaults apply to form sets created before they existed. */
  sitemap: sitemapSettingsSchema.prefault({}),
};

/** A form set definition before it has an id (a blueprint's form set). Shape only: see formSetDefinitionProblems for the rules. */
export const formSetDraftSchema = z.strictObject(draftShape);
export type FormSetDraft = z.output<typeof formSetDraftSchema>;
export type FormSetDraftInput = z.input<typeof formSetDraftSchema>;

/** A form set definition as stored in form-set events. Shape only: see formSetDefinitionProblems for the rules. */
export const formSetDefinitionSchema = z.strictObject({ id: z.uuid(), ...draftShape });
export type FormSetDefinition = z.output<typeof formSetDefinitionSchema>;
export type FormSetDefinitionInput = z.input<typeof formSetDefinitionSchema>;

/** A definition together with its version (1 on creation, +1 on every update): what compiled validators are cached by. */
export type VersionedFormSetDefinition = FormSetDefinition & { version: number };

/**
 * Every problem in a form set definition (or, with `withId: false`, a draft without id): shape problems
 * from the zod schema, then the rules a schema cannot express. Never stops at the first.
 */
export function formSetDefinitionProblems(input: unknown, options: { withId?: boolean; base?: string } = {}): Problem[] {
  const base = options.base ?? '';
  const schema = options.withId === false ? formSetDraftSchema : formSetDefinitionSchema;
  const parsed = schema.safeParse(input);
  const problems = parsed.success ? [] : zodProblems(parsed.error.issues, input, base, definitionSegmentNamer);
  problems.push(...definitionRuleProblems(input, base));
  return dedupe(problems);
}

/** Parses and checks a definition; throws VALIDATION_ERROR naming every problem. */
export function validateFormSetDefinition(input: unknown): FormSetDefinition {
  const problems = formSetDefinitionProblems(input);
  if (problems.length > 0) throw problemsError('Invalid form set definition', problems);
  return formSetDefinitionSchema.parse(input);
}

/** Parses and checks a draft (no id); throws VALIDATION_ERROR naming every problem. */
export function validateFormSetDraft(input: unknown): FormSetDraft {
  const problems = formSetDefinitionProblems(input, { withId: false });
  if (problems.length > 0) throw problemsError('Invalid form set definition', problems);
  return formSetDraftSchema.parse(input);
}

// ---------------------------------------------------------------------------------------------------
// Rules beyond the shape. Tolerant of malformed input: each rule looks only at the parts it can read,
// so that a shape problem somewhere does not hide a rule broken elsewhere.

type Loose = Record<string, unknown>;
const isObject = (value: unknown): value is Loose => typeof value === 'object' && value !== null && !Array.isArray(value);
const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** A field's key when it names one field unambiguously, its index otherwise. */
function fieldSegment(fields: unknown, index: number): string | number {
  const list = asArray(fields);
  const key = isObject(list[index]) ? list[index].key : undefined;
  if (typeof key === 'string' && FIELD_KEY_PATTERN.test(key) && key.length <= FIELD_KEY_MAX_LENGTH) {
    if (list.filter((f) => isObject(f) && f.key === key).length === 1) return key;
  }
  return index;
}

function blockSegment(blocks: unknown, index: number): string | number {
  const list = asArray(blocks);
  const id = isObject(list[index]) ? list[index].id : undefined;
  if (typeof id === 'string' && BLOCK_ID_PATTERN.test(id) && id.length <= BLOCK_ID_MAX_LENGTH) {
    if (list.filter((b) => isObject(b) && b.id === id).length === 1) return id;
  }
  return index;
}

/** `fields.title` when the key names one field unambiguously, `fields[3]` otherwise. */
export function fieldPath(fields: unknown, index: number, base = ''): string {
  return joinPath(joinPath(base, 'fields'), fieldSegment(fields, index));
}

function blockPath(blocks: unknown, index: number, base = ''): string {
  return joinPath(joinPath(base, 'blocks'), blockSegment(blocks, index));
}

/** Renders `fields`/`blocks` indexes in zod paths by key or id. */
export const definitionSegmentNamer: SegmentNamer = (container, segment, input) => {
  if (typeof segment !== 'number' || container.length === 0) return null;
  const parent = container[container.length - 1];
  if (parent !== 'fields' && parent !== 'blocks') return null;
  let node: unknown = input;
  for (const step of container.slice(0, -1)) node = isObject(node) || Array.isArray(node) ? (node as Record<PropertyKey, unknown>)[step as string] : undefined;
  if (!isObject(node)) return null;
  return parent === 'fields' ? fieldSegment(node.fields, segment) : blockSegment(node.blocks, segment);
};

export function definitionRuleProblems(input: unknown, base = ''): Problem[] {
  if (!isObject(input)) return [];
  const problems: Problem[] = [];
  const fields = asArray(input.fields);
  const typeByKey = new Map<string, FieldType | undefined>();
  const keyCount = new Map<string, number>();
  for (const f of fields) if (isObject(f) && typeof f.key === 'string') keyCount.set(f.key, (keyCount.get(f.key) ?? 0) + 1);

  fields.forEach((field, index) => {
    if (!isObject(field)) return;
    const path = fieldPath(fields, index, base);
    const key = field.key;
    if (typeof key === 'string') {
      if ((keyCount.get(key) ?? 0) > 1) problems.push(problem(joinPath(path, 'key'), `"${key}" is the key of more than one field; field keys must be unique`));
      if (!typeByKey.has(key)) typeByKey.set(key, isFieldType(field.type) ? field.type : undefined);
    }
    if (!isFieldType(field.type)) return;
    const type = field.type;
    const masterKey = field.masterEntityKey;
    if (MASTER_BACKED_FIELD_TYPES.includes(type)) {
      if (masterKey === undefined || masterKey === null || masterKey === '') {
        problems.push(problem(joinPath(path, 'masterEntityKey'), `is required for ${type} fields (select, radio and multiselect take their values from a master)`));
      }
    } else if (masterKey !== undefined) {
      problems.push(problem(joinPath(path, 'masterEntityKey'), `only select, radio and multiselect fields take a masterEntityKey, not ${type} fields`));
    }
    if (isObject(field.limits)) problems.push(...limitProblems(field.limits, type, joinPath(path, 'limits')));
  });

  const blocks = asArray(input.blocks);
  const blockIdCount = new Map<string, number>();
  for (const b of blocks) if (isObject(b) && typeof b.id === 'string') blockIdCount.set(b.id, (blockIdCount.get(b.id) ?? 0) + 1);
  const blockOfField = new Map<string, string>();
  blocks.forEach((block, index) => {
    if (!isObject(block)) return;
    const path = blockPath(blocks, index, base);
    const id = typeof block.id === 'string' ? block.id : `#${index + 1}`;
    if (typeof block.id === 'string' && (blockIdCount.get(block.id) ?? 0) > 1) {
      problems.push(problem(joinPath(path, 'id'), `"${block.id}" is the id of more than one block; block ids must be unique`));
    }
    asArray(block.fieldKeys).forEach((fieldKey, j) => {
      if (typeof fieldKey !== 'string') return;
      const at = joinPath(joinPath(path, 'fieldKeys'), j);
      if (!typeByKey.has(fieldKey)) {
        problems.push(problem(at, `no field has the key "${fieldKey}"`));
        return;
      }
      const owner = blockOfField.get(fieldKey);
      if (owner !== undefined) {
        problems.push(problem(at, owner === id ? `field "${fieldKey}" is listed twice in this block` : `field "${fieldKey}" is already in block "${owner}"; a field belongs to at most one block`));
        return;
      }
      blockOfField.set(fieldKey, id);
    });
  });

  problems.push(...roleProblems(input.seoRoles, SEO_ROLES, SEO_ROLE_FIELD_TYPES, typeByKey, joinPath(base, 'seoRoles'), 'SEO'));
  problems.push(...roleProblems(input.widgetRoles, WIDGET_ROLES, WIDGET_ROLE_FIELD_TYPES, typeByKey, joinPath(base, 'widgetRoles'), 'widget'));
  return problems;
}

function limitProblems(limits: Loose, type: FieldType, path: string): Problem[] {
  const problems: Problem[] = [];
  const allowed = LIMITS_BY_TYPE[type];
  for (const name of LIMIT_NAMES) {
    if (limits[name] === undefined || allowed.includes(name)) continue;
    const takes = allowed.length === 0 ? 'they take no limits' : `they take ${allowed.join(', ')}`;
    problems.push(problem(joinPath(path, name), `does not apply to ${type} fields (${takes})`));
  }
  const { minLength, maxLength, min, max, pattern } = limits;
  if (typeof minLength === 'number' && typeof maxLength === 'number' && minLength > maxLength) {
    problems.push(problem(path, `minLength (${minLength}) must not be greater than maxLength (${maxLength})`));
  }
  if (typeof min === 'number' && typeof max === 'number' && min > max) {
    problems.push(problem(path, `min (${min}) must not be greater than max (${max})`));
  }
  if (typeof pattern === 'string' && pattern.length > 0) {
    const patternIssue = patternProblem(pattern);
    if (patternIssue) problems.push(problem(joinPath(path, 'pattern'), patternIssue));
  }
  return problems;
}

/**
 * Why a limits.pattern is refused, or null. Besides compiling (unicode mode, as ajv runs it), a pattern
 * must not repeat a group that itself repeats (`(a+)+`, `(\w*)*`, `(x{1,3}){2,}`): such patterns can take
 * exponential time on a crafted value, and they run on every entry save.
 */
export function patternProblem(pattern: string): string | null {
  try {
    new RegExp(pattern, 'u');
  } catch (error) {
    return `is not a valid regular expression (${(error as Error).message})`;
  }
  const groups: boolean[] = [];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(') groups.push(false);
    else if (c === ')') {
      const repeatsInside = groups.pop() ?? false;
      const repeated = isRepeatingQuantifier(pattern, i + 1);
      if (repeatsInside && repeated) return 'must not repeat a group that itself repeats, such as (a+)+: it can take exponential time';
      if ((repeatsInside || repeated) && groups.length > 0) groups[groups.length - 1] = true;
    } else if (isRepeatingQuantifier(pattern, i) && groups.length > 0) {
      groups[groups.length - 1] = true;
    }
  }
  return null;
}

/** Whether a quantifier that allows more than one repetition starts at `at` (+, *, {n,}, {n,m} with m > 1). */
function isRepeatingQuantifier(pattern: string, at: number): boolean {
  const c = pattern[at];
  if (c === '+' || c === '*') return true;
  if (c !== '{') return false;
  const match = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(at));
  if (!match) return false;
  if (match[2] === undefined) return Number(match[1]) > 1;
  return match[3] === '' || Number(match[3]) > 1;
}

function roleProblems(
  roles: unknown,
  names: readonly string[],
  compatible: Readonly<Record<string, readonly FieldType[]>>,
  typeByKey: ReadonlyMap<string, FieldType | undefined>,
  path: string,
  kind: string,
): Problem[] {
  if (!isObject(roles)) return [];
  const problems: Problem[] = [];
  for (const role of names) {
    const key = roles[role];
    if (typeof key !== 'string') continue;
    const at = joinPath(path, role);
    if (!typeByKey.has(key)) {
      problems.push(problem(at, `no field has the key "${key}"`));
      continue;
    }
    const type = typeByKey.get(key);
    const accepted = compatible[role]!;
    if (type !== undefined && !accepted.includes(type)) {
      problems.push(problem(at, `field "${key}" is a ${type} field; the ${kind} role ${role} needs a field of type ${accepted.join(' or ')}`));
    }
  }
  return problems;
}

function dedupe(problems: Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const id = `${p.path}\u0000${p.message}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/** Keys of fields present in `before` and absent from `after`, and likewise block ids: what an update deletes. */
export function removedParts(before: Pick<FormSetDefinition, 'fields' | 'blocks'>, after: Pick<FormSetDefinition, 'fields' | 'blocks'>): { fieldKeys: string[]; blockIds: string[] } {
  const afterKeys = new Set(after.fields.map((f) => f.key));
  const afterBlocks = new Set(after.blocks.map((b) => b.id));
  return {
    fieldKeys: before.fields.filter((f) => !afterKeys.has(f.key)).map((f) => f.key),
    blockIds: before.blocks.filter((b) => !afterBlocks.has(b.id)).map((b) => b.id),
  };
}

import { createAjv, type ErrorObject, type ValidateFunction } from '../form-set/ajv.ts';
import { FORM_SET_SLUG_PATTERN, FORM_SET_SLUG_RULE } from '../form-set/form-set-slug.ts';
import { MASTER_BACKED_FIELD_TYPES, isFieldType } from '../form-set/field-types.ts';
import {
  BLOCK_ID_PATTERN,
  FIELD_KEY_PATTERN,
  FIELD_KEY_RULE,
  definitionRuleProblems,
  definitionSegmentNamer,
  formSetDraftSchema,
  type FormSetDefinition,
  type FormSetDraft,
} from '../form-set/form-set-definition.ts';
import type { FormSetCommand } from '../form-set/form-set-decider.ts';
import { LOCALE_CODE_PATTERN, LOCALE_CODE_RULE } from '../form-set/locale-code.ts';
import { joinPath, problem, problemsError, type Problem } from '../form-set/problems.ts';
import { renderPath, zodProblems, type SegmentNamer } from '../form-set/zod-problems.ts';
import type { MasterCommand } from '../master/master-decider.ts';
import {
  MASTER_RECORD_VALUE_PATTERN,
  MASTER_RECORD_VALUE_RULE,
  completeRecords,
  masterRecordInputSchema,
  masterRecordsProblems,
  type MasterRecord,
} from '../master/master-entity.ts';
import { MASTER_KEY_PATTERN, MASTER_KEY_RULE } from '../master/master-key.ts';
import { FORM_BLUEPRINT_SCHEMA, MASTER_BLUEPRINT_SCHEMA, NOT_BLANK_PATTERN } from './blueprint-schema.ts';

/** What a blueprint names as already present in the project. */
export interface ExistingSchema {
  formSetSlugs: Iterable<string>;
  masterKeys: Iterable<string>;
}

export interface PlannedFormSet {
  slug: string;
  name: string;
  fieldCount: number;
  blockCount: number;
  /** Masters its select, radio and multiselect fields use. */
  masterKeys: string[];
  /** The definition to create (without id), or null when the document's form set is malformed. */
  draft: FormSetDraft | null;
}

export interface PlannedMaster {
  key: string;
  name: string;
  recordCount: number;
  /** create: a new master; reuse: a master with this key exists and is used as it is (form blueprints only). */
  action: 'create' | 'reuse';
  /** The records to create (order and parent filled in), or null when malformed or reused. */
  records: MasterRecord[] | null;
}

/**
 * The full preview of applying a blueprint: what would be created and every problem found. Applying is
 * all or nothing: with any problem (`ok` false) nothing is created. Conflicts (a slug or key already in
 * the project) have code CONFLICT, everything else VALIDATION_ERROR.
 */
export interface BlueprintPlan {
  ok: boolean;
  formSets: PlannedFormSet[];
  masters: PlannedMaster[];
  problems: Problem[];
  /** Things worth knowing that do not stop the application. */
  warnings: string[];
}

export type MasterBlueprintPlan = Omit<BlueprintPlan, 'formSets'>;

// ---------------------------------------------------------------------------------------------------

let compiled: { form: ValidateFunction; master: ValidateFunction } | undefined;
function validators(): { form: ValidateFunction; master: ValidateFunction } {
  if (!compiled) {
    const ajv = createAjv();
    compiled = { form: ajv.compile(FORM_BLUEPRINT_SCHEMA), master: ajv.compile(MASTER_BLUEPRINT_SCHEMA) };
  }
  return compiled;
}

/** Problems of a form blueprint document against the published JSON Schema alone (shape only). */
export function formBlueprintSchemaProblems(document: unknown): Problem[] {
  const validate = validators().form;
  return validate(document) ? [] : ajvProblems(validate.errors ?? [], document);
}

/** Problems of a master blueprint document against the published JSON Schema alone (shape only). */
export function masterBlueprintSchemaProblems(document: unknown): Problem[] {
  const validate = validators().master;
  return validate(document) ? [] : ajvProblems(validate.errors ?? [], document);
}

/**
 * Plans a form blueprint: validates it against the published schema, checks every rule across the
 * document and against the project (slug clashes, master references), and lists what would be created.
 * Never stops at the first problem.
 */
export function planBlueprint(document: unknown, existing: ExistingSchema): BlueprintPlan {
  const problems = formBlueprintSchemaProblems(document);
  const doc = isObject(document) ? document : {};
  const existingSlugs = new Set(existing.formSetSlugs);
  const existingMasters = new Set(existing.masterKeys);
  const warnings: string[] = [];

  const masters = planMasters(doc.masters, existingMasters, 'reuse', problems, warnings);
  const definedMasterKeys = new Set(masters.map((m) => m.key));

  const formSets: PlannedFormSet[] = [];
  const list = asArray(doc.formSets);
  const slugCount = countBy(list, 'slug');
  list.forEach((item, index) => {
    if (!isObject(item)) return;
    const base = itemPath(document, ['formSets'], index);
    const withBlockIds = { ...item, ...(Array.isArray(item.blocks) ? { blocks: withBlockIdsAssigned(item.blocks) } : {}) };
    const shapeProblemsHere = problems.some((p) => p.path === base || p.path.startsWith(`${base}.`) || p.path.startsWith(`${base}[`));

    problems.push(...definitionRuleProblems(withBlockIds, base));
    const parsed = formSetDraftSchema.safeParse(withBlockIds);
    // The JSON Schema and the zod schema describe the same shape; should they ever disagree, say so.
    if (!parsed.success && !shapeProblemsHere) problems.push(...zodProblems(parsed.error.issues, withBlockIds, base, definitionSegmentNamer));

    const slug = item.slug;
    if (typeof slug === 'string') {
      if ((slugCount.get(slug) ?? 0) > 1) problems.push(problem(joinPath(base, 'slug'), `"${slug}" is the slug of more than one form set in the blueprint`));
      if (existingSlugs.has(slug)) problems.push(problem(joinPath(base, 'slug'), `a form set with slug "${slug}" already exists in this project`, 'CONFLICT'));
    }

    const fields = asArray(item.fields);
    const masterKeys: string[] = [];
    fields.forEach((field, j) => {
      if (!isObject(field) || !isFieldType(field.type) || !MASTER_BACKED_FIELD_TYPES.includes(field.type)) return;
      const key = field.masterEntityKey;
      if (typeof key !== 'string') return;
      if (!masterKeys.includes(key)) masterKeys.push(key);
      if (!existingMasters.has(key) && !definedMasterKeys.has(key)) {
        const at = joinPath(renderPath(['fields', j], item, base, definitionSegmentNamer), 'masterEntityKey');
        problems.push(problem(at, `master "${key}" neither exists in this project nor is defined in the blueprint's masters`));
      }
    });

    formSets.push({
      slug: typeof slug === 'string' ? slug : '',
      name: typeof item.name === 'string' ? item.name : '',
      fieldCount: fields.length,
      blockCount: asArray(item.blocks).length,
      masterKeys,
      draft: parsed.success ? parsed.data : null,
    });
  });

  const unique = dedupe(problems);
  return { ok: unique.length === 0, formSets, masters, problems: unique, warnings };
}

/** Plans a master blueprint; a key that already exists in the project is a conflict. */
export function planMasterBlueprint(document: unknown, existing: Pick<ExistingSchema, 'masterKeys'>): MasterBlueprintPlan {
  const problems = masterBlueprintSchemaProblems(document);
  const doc = isObject(document) ? document : {};
  const warnings: string[] = [];
  const masters = planMasters(doc.masters, new Set(existing.masterKeys), 'conflict', problems, warnings);
  const unique = dedupe(problems);
  return { ok: unique.length === 0, masters, problems: unique, warnings };
}

function planMasters(list: unknown, existing: ReadonlySet<string>, onExisting: 'reuse' | 'conflict', problems: Problem[], warnings: string[]): PlannedMaster[] {
  const masters = asArray(list);
  const keyCount = countBy(masters, 'key');
  const planned: PlannedMaster[] = [];
  masters.forEach((item, index) => {
    if (!isObject(item)) return;
    const base = itemPath({ masters }, ['masters'], index);
    const key = typeof item.key === 'string' ? item.key : '';
    const records = asArray(item.records);
    if ((keyCount.get(key) ?? 0) > 1) problems.push(problem(joinPath(base, 'key'), `"${key}" is the key of more than one master in the blueprint`));
    const exists = key !== '' && existing.has(key);
    if (exists && onExisting === 'conflict') problems.push(problem(joinPath(base, 'key'), `a master with key "${key}" already exists in this project`, 'CONFLICT'));
    if (exists && onExisting === 'reuse') {
      warnings.push(`master "${key}" already exists in this project: it is used as it is, and the blueprint's records for it are not applied`);
    } else {
      problems.push(...masterRecordsProblems(records, joinPath(base, 'records')));
    }
    const parsed = records.map((r) => masterRecordInputSchema.safeParse(r));
    const wellFormed = parsed.every((p) => p.success);
    planned.push({
      key,
      name: typeof item.name === 'string' ? item.name : '',
      recordCount: records.length,
      action: exists && onExisting === 'reuse' ? 'reuse' : 'create',
      records: wellFormed && !(exists && onExisting === 'reuse') ? completeRecords(parsed.map((p) => p.data!)) : null,
    });
  });
  return planned;
}

/** Block ids for blocks that have none: block-1, block-2, ... by position, skipping ids already taken. */
function withBlockIdsAssigned(blocks: unknown[]): unknown[] {
  const taken = new Set(blocks.filter(isObject).map((b) => b.id).filter((id): id is string => typeof id === 'string'));
  return blocks.map((block, index) => {
    if (!isObject(block) || block.id !== undefined) return block;
    let id = `block-${index + 1}`;
    for (let n = 2; taken.has(id); n++) id = `block-${index + 1}-${n}`;
    taken.add(id);
    return { id, ...block };
  });
}

// ---------------------------------------------------------------------------------------------------
// From plan to commands

export interface BlueprintCommands {
  /** Create these first: the form sets' fields refer to them. */
  masters: Array<Extract<MasterCommand, { type: 'create_master' }> & { records: MasterRecord[] }>;
  formSets: Array<Extract<FormSetCommand, { type: 'create_form_set' }> & { definition: FormSetDefinition }>;
}

/**
 * The create commands that carry out an applicable plan (reused masters are left out). Ids come from
 * `newId`, called once per master, then once per form set, in document order. Throws the plan's problems
 * (VALIDATION_ERROR, or CONFLICT when every problem is a clash) when it is not applicable.
 */
export function blueprintCommands(plan: BlueprintPlan | MasterBlueprintPlan, options: { projectId: string; newId: () => string }): BlueprintCommands {
  assertPlanApplicable(plan);
  const masters = plan.masters
    .filter((m) => m.action === 'create')
    .map((m) => ({ type: 'create_master' as const, masterId: options.newId(), projectId: options.projectId, key: m.key, name: m.name, records: m.records ?? [] }));
  const formSets = ('formSets' in plan ? plan.formSets : []).map((f) => {
    const definition: FormSetDefinition = { id: options.newId(), ...f.draft! };
    return { type: 'create_form_set' as const, projectId: options.projectId, definition };
  });
  return { masters, formSets };
}

/** Throws the plan's problems as one DomainError naming every problem. */
export function assertPlanApplicable(plan: Pick<BlueprintPlan, 'ok' | 'problems'>): void {
  if (!plan.ok) throw problemsError('The blueprint cannot be applied', plan.problems);
}

// ---------------------------------------------------------------------------------------------------
// ajv errors → problems

const PATTERN_RULES: ReadonlyMap<string, string> = new Map([
  [FORM_SET_SLUG_PATTERN.source, FORM_SET_SLUG_RULE],
  [FIELD_KEY_PATTERN.source, FIELD_KEY_RULE],
  [MASTER_KEY_PATTERN.source, MASTER_KEY_RULE],
  [MASTER_RECORD_VALUE_PATTERN.source, MASTER_RECORD_VALUE_RULE],
  [LOCALE_CODE_PATTERN.source, LOCALE_CODE_RULE],
  [BLOCK_ID_PATTERN.source, 'letters, digits, underscores or hyphens, starting with a letter or digit'],
  [NOT_BLANK_PATTERN, 'not blank'],
]);

/** How items of each array are named in paths: by this property, when it is valid and unique. */
const IDENTIFIERS: Readonly<Record<string, { property: string; pattern: RegExp }>> = {
  formSets: { property: 'slug', pattern: FORM_SET_SLUG_PATTERN },
  masters: { property: 'key', pattern: MASTER_KEY_PATTERN },
  fields: { property: 'key', pattern: FIELD_KEY_PATTERN },
  blocks: { property: 'id', pattern: BLOCK_ID_PATTERN },
  records: { property: 'value', pattern: MASTER_RECORD_VALUE_PATTERN },
};

/** Names array items by their identifier (slug, key, id, value) when it is unique, by index otherwise. */
const blueprintNamer: SegmentNamer = (container, segment, input) => {
  if (typeof segment !== 'number' || container.length === 0) return null;
  const identifier = IDENTIFIERS[String(container[container.length - 1])];
  if (identifier === undefined) return null;
  const { property, pattern } = identifier;
  let node: unknown = input;
  for (const step of container) node = isObject(node) || Array.isArray(node) ? (node as Record<PropertyKey, unknown>)[step as string] : undefined;
  const list = asArray(node);
  const item = list[segment];
  const id = isObject(item) ? item[property] : undefined;
  if (typeof id !== 'string' || !pattern.test(id) || id.length > 100) return null;
  return list.filter((other) => isObject(other) && other[property] === id).length === 1 ? id : null;
};

function itemPath(document: unknown, container: PropertyKey[], index: number): string {
  return renderPath([...container, index], document, '', blueprintNamer);
}

function ajvProblems(errors: readonly ErrorObject[], document: unknown): Problem[] {
  const anyOfs = errors.filter((e) => e.keyword === 'anyOf');
  const tooShort = new Set(errors.filter((e) => e.keyword === 'minLength').map((e) => e.instancePath));
  const propertyNameErrors = errors.filter((e) => e.keyword === 'propertyNames');
  const problems: Problem[] = [];
  for (const error of errors) {
    const coveredByAnyOf = error.keyword !== 'anyOf' && anyOfs.some((a) => a.instancePath === error.instancePath && error.schemaPath.startsWith(`${a.schemaPath}/`));
    const insidePropertyNames = error.keyword !== 'propertyNames' && (error as ErrorObject & { propertyName?: string }).propertyName !== undefined;
    const blankAndEmpty = error.keyword === 'pattern' && (error.params as { pattern?: string }).pattern === NOT_BLANK_PATTERN && tooShort.has(error.instancePath);
    if (coveredByAnyOf || insidePropertyNames || blankAndEmpty) continue;
    const segments = parsePointer(error.instancePath);
    const params = error.params as Record<string, unknown>;
    let path = renderPath(segments, document, '', blueprintNamer);
    let message: string;
    switch (error.keyword) {
      case 'required':
        path = joinPath(path, String(params.missingProperty));
        message = 'is required';
        break;
      case 'additionalProperties':
        path = joinPath(path, String(params.additionalProperty));
        message = 'is not a known property';
        break;
      case 'propertyNames':
        path = joinPath(path, String(params.propertyName));
        message = propertyNameErrors.length > 0 ? `is not a locale code (${LOCALE_CODE_RULE})` : 'is not allowed';
        break;
      case 'type': {
        const types = Array.isArray(params.type) ? params.type.map(String) : String(params.type).split(',');
        message = `must be ${types.map(article).join(' or ')}`;
        break;
      }
      case 'enum':
        message = `must be one of: ${(params.allowedValues as unknown[]).map(String).join(', ')}`;
        break;
      case 'pattern': {
        const rule = PATTERN_RULES.get(String(params.pattern));
        message = rule === 'not blank' ? 'must not be blank' : rule ? `must be ${rule}` : `must match the pattern ${String(params.pattern)}`;
        break;
      }
      case 'minLength':
        message = Number(params.limit) === 1 ? 'must not be empty' : `must be at least ${String(params.limit)} characters`;
        break;
      case 'maxLength':
        message = `must be at most ${String(params.limit)} characters`;
        break;
      case 'minimum':
        message = `must be at least ${String(params.limit)}`;
        break;
      case 'maximum':
        message = `must be at most ${String(params.limit)}`;
        break;
      case 'minItems':
        message = Number(params.limit) === 1 ? 'must have at least one item' : `must have at least ${String(params.limit)} items`;
        break;
      case 'maxItems':
        message = `must have at most ${String(params.limit)} items`;
        break;
      case 'minProperties':
        message = Number(params.limit) === 1 ? 'must have at least one entry' : `must have at least ${String(params.limit)} entries`;
        break;
      case 'anyOf':
        message = /parent$/.test(error.instancePath) ? 'must be the value of another record, or null' : 'does not match any allowed form';
        break;
      default:
        message = error.message ?? 'is invalid';
    }
    problems.push(problem(path, message));
  }
  return problems;
}

function parsePointer(pointer: string): Array<string | number> {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

function article(type: string): string {
  if (type === 'null') return 'null';
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

type Loose = Record<string, unknown>;
function isObject(value: unknown): value is Loose {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
function countBy(list: unknown[], property: string): Map<string, number> {
  const count = new Map<string, number>();
  for (const item of list) {
    const id = isObject(item) ? item[property] : undefined;
    if (typeof id === 'string') count.set(id, (count.get(id) ?? 0) + 1);
  }
  return count;
}
function dedupe(problems: Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const id = `${p.code}\u0000${p.path}\u0000${p.message}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

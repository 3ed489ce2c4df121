import { z } from 'zod';
import { localeCodeSchema } from '../form-set/locale-code.ts';
import { MASTER_VALUE_MAX_LENGTH } from '../form-set/field-types.ts';
import { joinPath, problem, type Problem } from '../form-set/problems.ts';
import { masterKeySchema } from './master-key.ts';

/**
 * Master entities (spec section 2): enumerations behind select, radio and multiselect fields. A record's
 * value is its locale-stable identifier (what entries store); labels are per locale; `order` sorts
 * siblings; `parent` (another record's value) makes a tree. A master is public only once published.
 */
export const MASTER_RECORD_VALUE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
export const MASTER_RECORD_VALUE_RULE = 'letters, digits, underscores, dots or hyphens, starting with a letter or digit, at most 100 characters';
export const MAX_RECORDS_PER_MASTER = 5000;
export const MASTER_LABEL_MAX_LENGTH = 200;
export const MASTER_NAME_MAX_LENGTH = 200;

export const masterRecordValueSchema = z
  .string()
  .max(MASTER_VALUE_MAX_LENGTH)
  .regex(MASTER_RECORD_VALUE_PATTERN, { error: `must be ${MASTER_RECORD_VALUE_RULE}` });

export const masterLabelsSchema = z
  .record(localeCodeSchema, z.string().trim().min(1).max(MASTER_LABEL_MAX_LENGTH))
  .refine((labels) => Object.keys(labels).length > 0, { error: 'must have a label for at least one locale' });

/** A record as given in commands and blueprints: order and parent may be left out. */
export const masterRecordInputSchema = z.strictObject({
  value: masterRecordValueSchema,
  labels: masterLabelsSchema,
  order: z.int().min(0).max(1_000_000).optional(),
  parent: masterRecordValueSchema.nullable().optional(),
});
export type MasterRecordInput = z.input<typeof masterRecordInputSchema>;

/** A record as stored in master events. */
export const masterRecordSchema = z.strictObject({
  value: masterRecordValueSchema,
  labels: masterLabelsSchema,
  order: z.int().min(0).max(1_000_000),
  parent: masterRecordValueSchema.nullable(),
});
export type MasterRecord = z.output<typeof masterRecordSchema>;

export const masterNameSchema = z.string().trim().min(1).max(MASTER_NAME_MAX_LENGTH);
export { masterKeySchema };

export interface MasterEntity {
  id: string;
  projectId: string;
  key: string;
  name: string;
  records: MasterRecord[];
  /** Set when published to the site; the master is public only then. */
  sitePublishedAt: string | null;
}

/** Fills in order (position in the list, from 0) and parent (null) where a record leaves them out. */
export function completeRecords(records: readonly z.output<typeof masterRecordInputSchema>[]): MasterRecord[] {
  return records.map((r, index) => ({ value: r.value, labels: r.labels, order: r.order ?? index, parent: r.parent ?? null }));
}

/**
 * Every problem in a list of records: duplicate values, a parent that is no record's value, a record
 * that is its own parent, and parent cycles (each cycle reported once). Tolerant of malformed records.
 */
export function masterRecordsProblems(records: unknown, base = 'records'): Problem[] {
  if (!Array.isArray(records)) return [];
  const problems: Problem[] = [];
  const count = new Map<string, number>();
  for (const r of records) if (isRecordLike(r)) count.set(r.value, (count.get(r.value) ?? 0) + 1);
  const at = (index: number, value: unknown) =>
    typeof value === 'string' && count.get(value) === 1 && MASTER_RECORD_VALUE_PATTERN.test(value) ? joinPath(base, value) : joinPath(base, index);

  const parentOf = new Map<string, string>();
  records.forEach((record, index) => {
    if (!isRecordLike(record)) return;
    const path = at(index, record.value);
    if ((count.get(record.value) ?? 0) > 1) problems.push(problem(joinPath(path, 'value'), `"${record.value}" is the value of more than one record; record values must be unique`));
    const parent = record.parent;
    if (parent === undefined || parent === null) return;
    if (typeof parent !== 'string') return;
    if (parent === record.value) problems.push(problem(joinPath(path, 'parent'), 'a record cannot be its own parent'));
    else if (!count.has(parent)) problems.push(problem(joinPath(path, 'parent'), `no record has the value "${parent}"`));
    else parentOf.set(record.value, parent);
  });

  const reported = new Set<string>();
  for (const start of parentOf.keys()) {
    const chain: string[] = [];
    const seen = new Set<string>();
    let current: string | undefined = start;
    while (current !== undefined && !seen.has(current)) {
      seen.add(current);
      chain.push(current);
      current = parentOf.get(current);
    }
    if (current === undefined) continue;
    const cycle = chain.slice(chain.indexOf(current));
    const id = [...cycle].sort().join('\u0000');
    if (reported.has(id)) continue;
    reported.add(id);
    problems.push(problem(base, `parents form a cycle: ${[...cycle, current].join(' → ')}; a record cannot be its own ancestor`));
  }
  return problems;
}

function isRecordLike(value: unknown): value is { value: string; parent?: unknown } {
  return typeof value === 'object' && value !== null && typeof (value as { value?: unknown }).value === 'string';
}

/** Records in display order: depth-first from the roots, siblings by order then value. */
export function orderedRecords(records: readonly MasterRecord[]): MasterRecord[] {
  const children = new Map<string | null, MasterRecord[]>();
  const values = new Set(records.map((r) => r.value));
  for (const r of records) {
    const parent = r.parent !== null && values.has(r.parent) ? r.parent : null;
    const list = children.get(parent) ?? [];
    list.push(r);
    children.set(parent, list);
  }
  for (const list of children.values()) list.sort((a, b) => a.order - b.order || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  const out: MasterRecord[] = [];
  const visit = (parent: string | null) => {
    for (const r of children.get(parent) ?? []) {
      out.push(r);
      visit(r.value);
    }
  };
  visit(null);
  return out;
}

/** A record's label in a locale, falling back to the default locale, then to any label, then to the value. */
export function recordLabel(record: Pick<MasterRecord, 'labels' | 'value'>, locale: string | undefined, defaultLocale?: string): string {
  return (
    (locale !== undefined ? record.labels[locale] : undefined) ??
    (defaultLocale !== undefined ? record.labels[defaultLocale] : undefined) ??
    Object.values(record.labels)[0] ??
    record.value
  );
}

/** The set of record values, as the entry-field validator's masterValues lookup wants. */
export function masterValueSet(master: Pick<MasterEntity, 'records'>): Set<string> {
  return new Set(master.records.map((r) => r.value));
}

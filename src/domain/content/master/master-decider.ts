import type { ApprovalPolicy } from '../../access/project-decider.ts';
import { requirePersonFor, type PolicyAction } from '../../approval-policy.ts';
import { z } from 'zod';
import type { Decider } from '../../decider.ts';
import { conflict, forbidden, invalid, notFound } from '../../domain-error.ts';
import { grantsOf, type Principal } from '../../principal.ts';
import { problem, problemsError, type Problem } from '../form-set/problems.ts';
import { assertMayChangeSchema } from '../form-set/schema-policy.ts';
import { zodProblems } from '../form-set/zod-problems.ts';
import {
  completeRecords,
  masterLabelsSchema,
  masterNameSchema,
  masterRecordInputSchema,
  masterRecordsProblems,
  masterRecordValueSchema,
  MAX_RECORDS_PER_MASTER,
  type MasterEntity,
  type MasterRecord,
  type MasterRecordInput,
} from './master-entity.ts';
import type { MasterEvent } from './master-events.ts';
import { masterKeySchema } from './master-key.ts';

export type MasterState = { status: 'absent' } | ({ status: 'active' } & MasterEntity);

/** A record's place in the tree, as update_master_tree takes it; labels, when given, replace the record's. */
export interface MasterTreeNode {
  value: string;
  parent?: string | null;
  order?: number;
  labels?: Record<string, string>;
}

/**
 * Commands on one master (stream `master-${masterId}`). Key uniqueness within the project is reserved by
 * the application, as form set slugs are.
 */
export type MasterCommand =
  | { type: 'create_master'; masterId: string; projectId: string; key: string; name: string; records?: MasterRecordInput[] }
  | { type: 'rename_master'; name: string }
  | { type: 'create_master_record'; record: MasterRecordInput }
  /** Replaces the given parts of one record: labels (the whole map), order, parent (null: a root). */
  | { type: 'update_master_record'; value: string; labels?: Record<string, string>; order?: number; parent?: string | null }
  | { type: 'remove_master_record'; value: string }
  /** The new tree: every existing record exactly once, with its parent and order. */
  | { type: 'update_master_tree'; nodes: MasterTreeNode[] }
  | { type: 'publish_master' }
  | { type: 'unpublish_master' };

export interface MasterContext {
  principal: Principal;
  /** ISO 8601 UTC; becomes sitePublishedAt on publish. */
  now: string;
  /**
   * The project's approval policy (absent: both rules off). humanApproval: an agent key may not publish or
   * unpublish a master, nor rename one or add records to one while it is published (the public API serves it).
   */
  approvalPolicy?: ApprovalPolicy;
}

type Active = { status: 'active' } & MasterEntity;

/**
 * Who may do what (spec sections 4.4 and 5):
 * - create, rename, publish, unpublish a master: schema.manage (tenant_admin), or an agent key of scope full/schema;
 * - create_master_record: any console user, or an agent key of scope full/schema;
 * - update_master_record, update_master_tree: a user session only (agent keys of any scope refused);
 * - remove a record: a session with schema.manage (tenant_admin) only (a deletion, like form set fields).
 * A content-scope key changes no master.
 */
export function assertMayCreateMasterRecord(principal: Principal): void {
  if (principal.kind === 'agent' && principal.scope === 'content') {
    throw forbidden('A content-scope agent key may read masters but not create master records.', 'Use an agent key with scope full (or schema).');
  }
}

export function assertUserSession(principal: Principal, operation: string): void {
  if (principal.kind === 'agent') {
    throw forbidden(`${operation} needs a user session (a console JWT); agent keys are refused whatever their scope.`, 'Sign in to the admin console and do it there.');
  }
}

export const masterDecider: Decider<MasterState, MasterCommand, MasterEvent, MasterContext> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    if (event.type === 'master.created') {
      const { masterId, projectId, key, name, records } = event.data;
      return { status: 'active', id: masterId, projectId, key, name, records, sitePublishedAt: null };
    }
    if (state.status === 'absent') return state;
    switch (event.type) {
      case 'master.renamed':
        return { ...state, name: event.data.name };
      case 'master.record-added':
        return { ...state, records: [...state.records, event.data.record] };
      case 'master.record-updated':
        return { ...state, records: state.records.map((r) => (r.value === event.data.record.value ? event.data.record : r)) };
      case 'master.record-removed':
        return { ...state, records: state.records.filter((r) => r.value !== event.data.value) };
      case 'master.records-replaced':
        return { ...state, records: event.data.records };
      case 'master.published':
        return { ...state, sitePublishedAt: event.data.publishedAt };
      case 'master.unpublished':
        return { ...state, sitePublishedAt: null };
      default:
        return state;
    }
  },

  decide(command, state, { principal, now, approvalPolicy }) {
    if (command.type === 'create_master') {
      if (principal.kind === 'agent' && principal.projectId !== command.projectId) throw forbidden('An agent key acts only in the project that issued it.');
      assertMayChangeSchema(principal, 'create masters');
      if (state.status !== 'absent') throw conflict('A master with this id already exists.');
      const parsed = createSchema.safeParse(command);
      const problems = parsed.success ? [] : zodProblems(parsed.error.issues, command, '');
      problems.push(...masterRecordsProblems(command.records ?? []));
      if (!parsed.success || problems.length > 0) throw problemsError('Invalid master', problems);
      const { masterId, projectId, key, name, records } = parsed.data;
      return [{ type: 'master.created', data: { masterId, projectId, key, name, records: completeRecords(records ?? []) } }];
    }

    const master = requireActive(state, principal);
    const ids = { projectId: master.projectId, masterId: master.id };
    const requirePerson = (action: PolicyAction, what: string) => requirePersonFor(principal, approvalPolicy, action, { masterId: master.id }, what);
    switch (command.type) {
      case 'rename_master': {
        assertMayChangeSchema(principal, 'rename masters');
        const name = parseOrThrow(masterNameSchema, command.name, 'name', 'Invalid master');
        if (name === master.name) return [];
        if (master.sitePublishedAt !== null) requirePerson('rename_master', 'rename a published master');
        return [{ type: 'master.renamed', data: { ...ids, name } }];
      }
      case 'create_master_record': {
        assertMayCreateMasterRecord(principal);
        const input = parseOrThrow(masterRecordInputSchema, command.record, 'record', 'Invalid master record');
        if (master.sitePublishedAt !== null) requirePerson('add_master_record', 'add records to a published master (the public API lists them)');
        if (master.records.some((r) => r.value === input.value)) {
          throw conflict(`Master "${master.key}" already has a record with value "${input.value}".`, 'Record values are stable identifiers; choose another or update the existing record.');
        }
        if (master.records.length >= MAX_RECORDS_PER_MASTER) throw invalid(`A master holds at most ${MAX_RECORDS_PER_MASTER} records.`);
        const parent = input.parent ?? null;
        if (parent !== null && !master.records.some((r) => r.value === parent)) {
          throw invalid(`Invalid master record: record.parent: no record has the value "${parent}"`);
        }
        const siblings = master.records.filter((r) => r.parent === parent);
        const order = input.order ?? (siblings.length === 0 ? 0 : Math.max(...siblings.map((r) => r.order)) + 1);
        return [{ type: 'master.record-added', data: { ...ids, record: { value: input.value, labels: input.labels, order, parent } } }];
      }
      case 'update_master_record': {
        assertUserSession(principal, 'update_master_record');
        const existing = master.records.find((r) => r.value === command.value);
        if (!existing) throw notFound(`Master "${master.key}" has no record with value "${command.value}".`);
        const patch = parseOrThrow(recordPatchSchema, { labels: command.labels, order: command.order, parent: command.parent }, '', 'Invalid master record');
        const record: MasterRecord = {
          value: existing.value,
          labels: patch.labels ?? existing.labels,
          order: patch.order ?? existing.order,
          parent: patch.parent === undefined ? existing.parent : patch.parent,
        };
        if (JSON.stringify(record) === JSON.stringify(existing)) return [];
        const records = master.records.map((r) => (r.value === record.value ? record : r));
        const problems = masterRecordsProblems(records);
        if (problems.length > 0) throw problemsError('Invalid master record', problems);
        return [{ type: 'master.record-updated', data: { ...ids, record } }];
      }
      case 'remove_master_record': {
        assertUserSession(principal, 'Removing a master record');
        if (principal.kind === 'user' && !grantsOf(principal).capabilities.includes('schema.manage')) throw forbidden('Only a tenant_admin may remove master records, or a custom role with the schema.manage capability.');
        if (!master.records.some((r) => r.value === command.value)) throw notFound(`Master "${master.key}" has no record with value "${command.value}".`);
        const children = master.records.filter((r) => r.parent === command.value).map((r) => r.value);
        if (children.length > 0) {
          throw invalid(`Record "${command.value}" is the parent of ${children.map((c) => `"${c}"`).join(', ')}: move or remove them first.`);
        }
        return [{ type: 'master.record-removed', data: { ...ids, value: command.value } }];
      }
      case 'update_master_tree': {
        assertUserSession(principal, 'update_master_tree');
        const records = treeRecords(master, command.nodes);
        if (JSON.stringify(records) === JSON.stringify(master.records)) return [];
        return [{ type: 'master.records-replaced', data: { ...ids, records } }];
      }
      case 'publish_master':
        assertMayChangeSchema(principal, 'publish masters');
        requirePerson('publish_master', 'publish masters');
        return [{ type: 'master.published', data: { ...ids, key: master.key, publishedAt: now, recordCount: master.records.length } }];
      case 'unpublish_master':
        assertMayChangeSchema(principal, 'unpublish masters');
        if (master.sitePublishedAt === null) return [];
        requirePerson('unpublish_master', 'unpublish masters');
        return [{ type: 'master.unpublished', data: { ...ids, key: master.key } }];
    }
  },
};

const createSchema = z.object({
  masterId: z.uuid(),
  projectId: z.uuid(),
  key: masterKeySchema,
  name: masterNameSchema,
  records: z.array(masterRecordInputSchema).max(MAX_RECORDS_PER_MASTER).optional(),
});

const recordPatchSchema = z.object({
  labels: masterLabelsSchema.optional(),
  order: z.int().min(0).max(1_000_000).optional(),
  parent: masterRecordValueSchema.nullable().optional(),
});

const treeNodeSchema = z.strictObject({
  value: masterRecordValueSchema,
  parent: masterRecordValueSchema.nullable().optional(),
  order: z.int().min(0).max(1_000_000).optional(),
  labels: masterLabelsSchema.optional(),
});

function requireActive(state: MasterState, principal: Principal): Active {
  if (state.status !== 'active' || (principal.kind === 'agent' && principal.projectId !== state.projectId)) throw notFound('Master not found.');
  return state;
}

function parseOrThrow<T>(schema: z.ZodType<T>, input: unknown, base: string, subject: string): T {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw problemsError(subject, zodProblems(parsed.error.issues, input, base));
  return parsed.data;
}

/** The records after update_master_tree: every existing record placed exactly once, no cycles. */
function treeRecords(master: MasterEntity, nodes: unknown): MasterRecord[] {
  const parsed = z.array(treeNodeSchema).safeParse(nodes);
  if (!parsed.success) throw problemsError('Invalid master tree', zodProblems(parsed.error.issues, nodes, 'nodes'));
  const existing = new Map(master.records.map((r) => [r.value, r]));
  const problems: Problem[] = [];
  const placed = new Set<string>();
  parsed.data.forEach((node, index) => {
    if (!existing.has(node.value)) problems.push(problem(`nodes[${index}].value`, `master "${master.key}" has no record with value "${node.value}"; the tree only rearranges existing records`));
    else if (placed.has(node.value)) problems.push(problem(`nodes[${index}].value`, `record "${node.value}" is placed more than once`));
    placed.add(node.value);
  });
  const missing = master.records.filter((r) => !placed.has(r.value)).map((r) => r.value);
  if (missing.length > 0) problems.push(problem('nodes', `every record must be placed; missing ${missing.map((v) => `"${v}"`).join(', ')} (remove records one by one instead)`));
  if (problems.length > 0) throw problemsError('Invalid master tree', problems);

  const siblingsSeen = new Map<string | null, number>();
  const records = parsed.data.map((node): MasterRecord => {
    const current = existing.get(node.value)!;
    const parent = node.parent ?? null;
    const position = siblingsSeen.get(parent) ?? 0;
    siblingsSeen.set(parent, position + 1);
    return { value: node.value, labels: node.labels ?? current.labels, order: node.order ?? position, parent };
  });
  const treeProblems = masterRecordsProblems(records, 'nodes');
  if (treeProblems.length > 0) throw problemsError('Invalid master tree', treeProblems);
  return records;
}

import { z } from 'zod';
import { defineTool, DESTRUCTIVE, idempotencyKey, masterRef, READ_ONLY, resolveMasterId, sessionRequest, WRITES, type ToolDefinition } from '../tool-kit.ts';
import { createdRecordSchema, masterDetailSchema, masterRecordsSchema, masterSummarySchema } from '../../http/admin/schema-routes.ts';

const recordValue = z.string().min(1).max(100).describe('The record\'s value: its stable identifier, what select, radio and multiselect fields store (e.g. "tech").');
const labels = z.record(z.string(), z.string().max(200)).describe('Display names by locale, e.g. {"en": "Technology", "ja": "テクノロジー"}.');
const parent = z.string().min(1).max(100).nullable().optional().describe('The value of the parent record (hierarchical masters); null: top level.');
const order = z.number().int().min(0).optional().describe('Position among its siblings, 0 first.');

/** Masters: the enumerations behind select, radio and multiselect fields. */
export const masterTools: ToolDefinition[] = [
  defineTool({
    name: 'list_master_entities',
    title: 'List master entities',
    description:
      'Lists the project\'s master entities (the enumerations behind select, radio and multiselect fields): {items: [{id, key, name, recordCount, published}]}. A field\'s masterEntityKey (get_form_set_schema) names its master. Any agent key scope.',
    input: {},
    output: z.object({ items: z.array(masterSummarySchema) }),
    annotations: READ_ONLY,
    run: async (_args, { api }) => api.get('/master-entities'),
  }),

  defineTool({
    name: 'get_master_entity',
    title: 'Read a master entity',
    description:
      'Reads a master entity with all its records: {id, key, name, records: [{value, labels: {locale: label}, order, parent}], published, sitePublishedAt}. The record values are what entries store in select fields. Any agent key scope.',
    input: { ...masterRef },
    output: masterDetailSchema,
    annotations: READ_ONLY,
    run: async (args, context) => context.api.get(`/master-entities/${await resolveMasterId(context, args)}`),
  }),

  defineTool({
    name: 'list_master_records',
    title: 'List master records',
    description:
      'Lists a master\'s records in display order with the label resolved for a locale: {masterId, key, locale, items: [{value, label, labels, order, parent}]}. Any agent key scope.',
    input: { ...masterRef, locale: z.string().min(1).max(35).optional().describe('A content locale for the labels; default the default locale.') },
    output: masterRecordsSchema,
    annotations: READ_ONLY,
    run: async (args, context) => context.api.get(`/master-entities/${await resolveMasterId(context, args)}/records`, { query: { locale: args.locale } }),
  }),

  defineTool({
    name: 'create_master_record',
    title: 'Add a master record',
    description:
      'Adds a record to a master entity, e.g. a new blog category; its value becomes valid in the select fields backed by that master. The value must be new in the master (409 otherwise). Returns the record. Needs an agent key of scope full or schema (or a session). Changing an existing record is update_master_record (user session only).',
    input: { ...masterRef, value: recordValue, labels, order, parent, idempotencyKey },
    output: createdRecordSchema,
    annotations: WRITES,
    run: async (args, context) => {
      const { masterId: _id, masterKey: _key, ...body } = args;
      return context.api.request('POST', `/master-entities/${await resolveMasterId(context, args)}/records`, { body });
    },
  }),

  defineTool({
    name: 'update_master_record',
    title: 'Update a master record',
    description:
      'Changes a master record\'s labels, order or parent (its value never changes). Needs a console user session: agent keys are refused whatever their scope (spec 4.4), so this tool works only when the MCP server runs with ANNALS_SESSION_TOKEN and ANNALS_PROJECT_ID; otherwise it explains what to configure. Returns the master with its records.',
    input: {
      ...masterRef,
      value: recordValue.describe('The value of the record to change.'),
      labels: labels.optional(),
      order,
      parent,
    },
    output: masterDetailSchema,
    annotations: WRITES,
    run: async (args, context) => {
      const { masterId: _id, masterKey: _key, value, ...body } = args;
      return sessionRequest(context, 'update_master_record', 'console user', 'PATCH', `/master-entities/${await resolveMasterId(context, args)}/records/${encodeURIComponent(value)}`, { body });
    },
  }),

  defineTool({
    name: 'update_master_tree',
    title: 'Rearrange a master',
    description:
      'Rearranges every record of a master at once: each node gives a record\'s value, its parent (null: top level) and order, and optionally new labels; every record must be listed once and no cycle is allowed. Needs a console user session: agent keys are refused whatever their scope (spec 4.4), so this tool works only when the MCP server runs with ANNALS_SESSION_TOKEN and ANNALS_PROJECT_ID; otherwise it explains what to configure. Returns the master with its records.',
    input: {
      ...masterRef,
      nodes: z
        .array(z.object({ value: recordValue, parent, order, labels: labels.optional() }))
        .min(1)
        .max(5000)
        .describe('Every record of the master with its place in the tree.'),
    },
    output: masterDetailSchema,
    annotations: DESTRUCTIVE,
    run: async (args, context) => {
      return sessionRequest(context, 'update_master_tree', 'console user', 'PUT', `/master-entities/${await resolveMasterId(context, args)}/tree`, { body: { nodes: args.nodes } });
    },
  }),
];

import type { Router } from '@koa/router';
import { newRouter } from '../router.ts';
import type { Context } from 'koa';
import { z } from 'zod';
import { FORM_BLUEPRINT_SCHEMA, MASTER_BLUEPRINT_SCHEMA } from '../../domain/content/blueprint/blueprint-schema.ts';
import { listBuiltInTemplates } from '../../domain/content/blueprint/built-in-templates.ts';
import { Reservations } from '../../application/reservations.ts';
import { Idempotency } from '../../application/idempotency.ts';
import { SchemaService, masterDetail, preview } from '../../application/schema-service.ts';
import { notFound } from '../errors/error-factory.ts';
import type { ApiRegistry } from './api-registry.ts';
import { type AdminDeps, idempotencyKeyOf, principalOf, projectOf } from './admin-context.ts';
import { isUuid } from './request-body.ts';
import { masterRecordSchema } from '../../domain/content/master/master-entity.ts';
import { formSetDraftSchema } from '../../domain/content/form-set/form-set-definition.ts';

const labels = z.record(z.string(), z.string());

const createMasterBody = z.object({
  key: z.string(),
  name: z.string(),
  records: z.array(z.unknown()).optional(),
  idempotencyKey: z.string().optional(),
});

const createRecordBody = z.object({
  value: z.string(),
  labels,
  order: z.number().int().min(0).optional(),
  parent: z.string().nullable().optional(),
  idempotencyKey: z.string().optional(),
});

const updateRecordBody = z.object({
  labels: labels.optional(),
  order: z.number().int().min(0).optional(),
  parent: z.string().nullable().optional(),
});

const treeBody = z.object({
  nodes: z.array(
    z.object({
      value: z.string(),
      parent: z.string().nullable().optional(),
      order: z.number().int().min(0).optional(),
      labels: labels.optional(),
    }),
  ),
});

const recordsQuery = z.object({ locale: z.string().optional() });

const blueprintDocument = z.record(z.string(), z.unknown()).describe('A blueprint document; its JSON Schema is served by GET /form-blueprints/schema (form) or in the master-blueprint schema.');
const validateBody = z.object({ blueprint: blueprintDocument });
const applyBody = z.object({
  blueprint: blueprintDocument,
  dryRun: z.boolean().optional().describe('true: answer 200 with the full preview and write nothing'),
  idempotencyKey: z.string().optional(),
});
const applyTemplateBody = z.object({
  dryRun: z.boolean().optional().describe('true: answer 200 with the full preview and write nothing'),
  idempotencyKey: z.string().optional(),
});

// ---- answers

export const masterSummarySchema = z.object({ id: z.uuid(), key: z.string(), name: z.string(), recordCount: z.number().int(), sitePublishedAt: z.string().nullable(), published: z.boolean() }).meta({ id: 'MasterSummary' });
export const masterDetailSchema = masterSummarySchema.extend({ records: z.array(masterRecordSchema), createdAt: z.string(), updatedAt: z.string() }).meta({ id: 'Master' });
export const masterRecordsSchema = z.object({
  masterId: z.uuid(),
  key: z.string(),
  locale: z.string().describe('The locale the labels are resolved for.'),
  items: z.array(masterRecordSchema.extend({ label: z.string().describe('The label in that locale, else the default locale\'s, else the value.') })),
}).meta({ id: 'MasterRecordPage' });
export const createdRecordSchema = z.object({ masterId: z.uuid(), key: z.string(), record: masterRecordSchema.nullable() }).meta({ id: 'CreatedMasterRecord' });
const problemSchema = z.object({ path: z.string().describe('Dotted path of the offending part, e.g. fields.category.masterEntityKey.'), message: z.string(), code: z.enum(['VALIDATION_ERROR', 'CONFLICT']) }).meta({ id: 'BlueprintProblem' });
const plannedMasterSchema = z.object({ key: z.string(), name: z.string(), action: z.enum(['create', 'reuse']), recordCount: z.number().int(), records: z.array(masterRecordSchema).nullable() }).meta({ id: 'PlannedMaster' });
export const masterPlanSchema = z.object({ ok: z.boolean().describe('false: applying would create nothing, because of the problems.'), masters: z.array(plannedMasterSchema), problems: z.array(problemSchema), warnings: z.array(z.string()) }).meta({ id: 'MasterBlueprintPlan' });
export const formPlanSchema = masterPlanSchema.extend({
  formSets: z.array(z.object({ slug: z.string(), name: z.string(), fieldCount: z.number().int(), blockCount: z.number().int(), masterKeys: z.array(z.string()), definition: formSetDraftSchema.nullable() })),
}).meta({ id: 'FormBlueprintPlan' });
export const appliedSchema = z.object({ formSets: z.array(z.object({ id: z.uuid(), slug: z.string() })), masters: z.array(z.object({ id: z.uuid(), key: z.string() })) }).meta({ id: 'AppliedBlueprint' });
export const dryRun = { dryRun: z.literal(true) };
/** A published JSON Schema (2020-12) document: its head is described; what follows is the schema itself. */
export const jsonSchemaDocument = z
  .looseObject({
    $schema: z.literal('https://json-schema.org/draft/2020-12/schema'),
    $id: z.string(),
    title: z.string(),
    description: z.string(),
    type: z.literal('object'),
  })
  .describe('A JSON Schema (2020-12) document.');
export const templateSchema = z.object({ id: z.string(), name: z.string(), description: z.string(), formSetSlugs: z.array(z.string()), masterKeys: z.array(z.string()) }).meta({ id: 'FormSetTemplate' });
const masterListSchema = z.object({ items: z.array(masterSummarySchema) });
const formPlanDryRunSchema = formPlanSchema.extend(dryRun);
const masterPlanDryRunSchema = masterPlanSchema.extend(dryRun);
const templateListSchema = z.object({ items: z.array(templateSchema) });

/**
 * Masters (spec section 2), blueprints, master blueprints and built-in templates (spec section 4.3),
 * one route for each MCP tool of spec section 4.4 on them.
 */
export function schemaRoutes(deps: AdminDeps, api: ApiRegistry): Router {
  const router = newRouter();
  const schema = new SchemaService({
    log: deps.log,
    reader: deps.reader,
    reservations: new Reservations(deps.log),
    idempotency: new Idempotency(deps.log, { clock: deps.clock }),
    watermark: deps.watermark,
    clock: deps.clock,
  });
  const masterId = (ctx: Context): string => {
    const value = ctx.params['masterId'];
    if (!isUuid(value)) throw notFound(`No master entity ${value}.`);
    return value;
  };
  const tag = 'Masters';

  // ---- Masters ----------------------------------------------------------------------------------

  api.add(router, { method: 'get', path: '/master-entities', operationId: 'listMasterEntities', permission: 'masters.read', summary: 'List the project\'s master entities (list_master_entities)', tag, responses: { 200: { description: 'The masters', schema: masterListSchema } }, errors: {} }, async (ctx) => {
    const masters = await schema.listMasters(projectOf(ctx));
    ctx.body = { items: masters.map((m) => ({ id: m.masterId, key: m.key, name: m.name, recordCount: m.recordCount, sitePublishedAt: m.sitePublishedAt, published: m.sitePublishedAt !== null })) };
  });

  api.add(router, { method: 'post', path: '/master-entities', operationId: 'createMasterEntity', permission: 'masters.write', permissionCheckedBy: 'domain', summary: 'Create a master entity, optionally with records (key unique per project: 409 on a clash)', tag, body: createMasterBody, responses: { 201: { description: 'The master', schema: masterDetailSchema } }, errors: { 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const { idempotencyKey: _key, ...input } = body;
    const result = await schema.createMaster(principalOf(ctx), projectOf(ctx), input, idempotencyKeyOf(ctx, body));
    ctx.status = result.status;
    ctx.body = result.body;
  });

  api.add(router, { method: 'get', path: '/master-entities/:masterId', operationId: 'getMasterEntity', permission: 'masters.read', summary: 'Read a master entity with its records (get_master_entity)', tag, responses: { 200: { description: 'The master', schema: masterDetailSchema } }, errors: {} }, async (ctx) => {
    ctx.body = masterDetail(await schema.masterOrFail(projectOf(ctx), masterId(ctx)));
  });

  api.add(router, { method: 'get', path: '/master-entities/:masterId/records', operationId: 'listMasterRecords', permission: 'masters.read', summary: 'List a master\'s records in display order, labels resolved for a locale (list_master_records)', tag, query: recordsQuery, responses: { 200: { description: 'The records', schema: masterRecordsSchema } }, errors: {} }, async (ctx, { query }) => {
    const { master, locale, records } = await schema.listRecords(projectOf(ctx), masterId(ctx), query.locale);
    ctx.body = { masterId: master.masterId, key: master.key, locale, items: records };
  });

  api.add(router, { method: 'post', path: '/master-entities/:masterId/records', operationId: 'createMasterRecord', permission: 'masters.records.create', summary: 'Add a record to a master (create_master_record; agent keys of scope full or schema, or a session)', tag, body: createRecordBody, responses: { 201: { description: 'The record', schema: createdRecordSchema } }, errors: { 403: ['HUMAN_APPROVAL_REQUIRED'], 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const { idempotencyKey: _key, ...record } = body;
    const result = await schema.createRecord(principalOf(ctx), projectOf(ctx), masterId(ctx), record, idempotencyKeyOf(ctx, body));
    ctx.status = result.status;
    ctx.body = result.body;
  });

  api.add(router, { method: 'patch', path: '/master-entities/:masterId/records/:value', textParams: ['value'], operationId: 'updateMasterRecord', permission: 'masters.records.update', permissionCheckedBy: 'domain', summary: 'Update a record\'s labels, order or parent (update_master_record; a user session only, agent keys refused)', tag, body: updateRecordBody, responses: { 200: { description: 'The master', schema: masterDetailSchema } }, errors: { 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const updated = await schema.updateRecord(principalOf(ctx), projectOf(ctx), masterId(ctx), String(ctx.params['value']), body);
    ctx.body = masterDetail(updated);
  });

  api.add(router, { method: 'put', path: '/master-entities/:masterId/tree', operationId: 'updateMasterTree', permission: 'masters.tree.update', permissionCheckedBy: 'domain', summary: 'Rearrange every record (parent and order) at once (update_master_tree; a user session only, agent keys refused)', tag, body: treeBody, responses: { 200: { description: 'The master', schema: masterDetailSchema } }, errors: { 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const updated = await schema.updateTree(principalOf(ctx), projectOf(ctx), masterId(ctx), body.nodes);
    ctx.body = masterDetail(updated);
  });

  api.add(router, { method: 'post', path: '/master-entities/:masterId/publish', operationId: 'publishMasterEntity', permission: 'masters.publish', summary: 'Publish a master to the site: sets sitePublishedAt and emits master.published', tag, responses: { 200: { description: 'The master', schema: masterDetailSchema } }, errors: { 403: ['HUMAN_APPROVAL_REQUIRED'] } }, async (ctx) => {
    ctx.body = masterDetail(await schema.publishMaster(principalOf(ctx), projectOf(ctx), masterId(ctx)));
  });

  // ---- Blueprints -------------------------------------------------------------------------------

  api.add(router, { method: 'get', path: '/form-blueprints/schema', operationId: 'getFormBlueprintSchema', permission: 'form-sets.read', summary: 'The published JSON Schema (2020-12) of form blueprints, with the master-blueprint schema', tag: 'Blueprints', responses: { 200: { description: 'The JSON Schema', schema: jsonSchemaDocument } }, errors: {} }, async (ctx) => {
    ctx.body = FORM_BLUEPRINT_SCHEMA;
  });

  api.add(router, { method: 'get', path: '/master-blueprints/schema', operationId: 'getMasterBlueprintSchema', permission: 'masters.read', summary: 'The published JSON Schema (2020-12) of master blueprints', tag: 'Blueprints', responses: { 200: { description: 'The JSON Schema', schema: jsonSchemaDocument } }, errors: {} }, async (ctx) => {
    ctx.body = MASTER_BLUEPRINT_SCHEMA;
  });

  api.add(router, { method: 'post', path: '/form-blueprints/validate', operationId: 'validateFormBlueprint', permission: 'blueprints.validate', summary: 'Plan a form blueprint against the project: what would be created and every problem; writes nothing', tag: 'Blueprints', body: validateBody, responses: { 200: { description: 'The plan', schema: formPlanSchema } }, errors: {} }, async (ctx, { body }) => {
    ctx.body = preview(await schema.validateBlueprint(projectOf(ctx), body.blueprint));
  });

  api.add(router, { method: 'post', path: '/form-blueprints/apply', operationId: 'applyFormBlueprint', permission: 'blueprints.apply', permissionCheckedBy: 'domain', summary: 'Apply a form blueprint: masters, then form sets (apply_form_blueprint; dryRun previews; idempotent by key; 409 on a slug clash)', tag: 'Blueprints', body: applyBody, responses: { 200: { description: 'dryRun: the full preview, nothing written', schema: formPlanDryRunSchema }, 201: { description: 'What was created', schema: appliedSchema } }, errors: { 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const options = { ...(body.dryRun === undefined ? {} : { dryRun: body.dryRun }), ...keyOption(ctx, body) };
    const result = await schema.applyBlueprint(principalOf(ctx), projectOf(ctx), body.blueprint, options);
    ctx.status = result.status;
    ctx.body = result.body;
  });

  api.add(router, { method: 'post', path: '/master-blueprints/validate', operationId: 'validateMasterBlueprint', permission: 'blueprints.validate', summary: 'Plan a master blueprint against the project: every problem; writes nothing (validate_master_blueprint)', tag: 'Blueprints', body: validateBody, responses: { 200: { description: 'The plan', schema: masterPlanSchema } }, errors: {} }, async (ctx, { body }) => {
    ctx.body = preview(await schema.validateMasterBlueprint(projectOf(ctx), body.blueprint));
  });

  api.add(router, { method: 'post', path: '/master-blueprints/apply', operationId: 'applyMasterBlueprint', permission: 'blueprints.apply', permissionCheckedBy: 'domain', summary: 'Apply a master blueprint (apply_master_blueprint; dryRun previews; idempotent by key; 409 on a key clash)', tag: 'Blueprints', body: applyBody, responses: { 200: { description: 'dryRun: the full preview, nothing written', schema: masterPlanDryRunSchema }, 201: { description: 'What was created (formSets is empty)', schema: appliedSchema } }, errors: { 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const options = { ...(body.dryRun === undefined ? {} : { dryRun: body.dryRun }), ...keyOption(ctx, body) };
    const result = await schema.applyMasterBlueprint(principalOf(ctx), projectOf(ctx), body.blueprint, options);
    ctx.status = result.status;
    ctx.body = result.body;
  });

  // ---- Built-in templates -----------------------------------------------------------------------

  api.add(router, { method: 'get', path: '/form-set-templates', operationId: 'listFormSetTemplates', permission: 'form-sets.read', summary: 'List the built-in form set templates', tag: 'Blueprints', responses: { 200: { description: 'The templates', schema: templateListSchema } }, errors: {} }, async (ctx) => {
    ctx.body = { items: listBuiltInTemplates() };
  });

  api.add(router, { method: 'post', path: '/form-set-templates/:id/apply', textParams: ['id'], operationId: 'applyBuiltinFormTemplate', permission: 'blueprints.apply', permissionCheckedBy: 'domain', summary: 'Apply a built-in template by id, e.g. blog (apply_builtin_form_template; dryRun previews; idempotent by key; 409 on a slug clash)', tag: 'Blueprints', body: applyTemplateBody, responses: { 200: { description: 'dryRun: the full preview, nothing written', schema: formPlanDryRunSchema }, 201: { description: 'What was created', schema: appliedSchema } }, errors: { 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const options = { ...(body.dryRun === undefined ? {} : { dryRun: body.dryRun }), ...keyOption(ctx, body) };
    const result = await schema.applyTemplate(principalOf(ctx), projectOf(ctx), String(ctx.params['id']), options);
    ctx.status = result.status;
    ctx.body = result.body;
  });

  return router;
}

function keyOption(ctx: Context, body: { idempotencyKey?: string }): { idempotencyKey?: string } {
  const key = idempotencyKeyOf(ctx, body);
  return key === undefined ? {} : { idempotencyKey: key };
}

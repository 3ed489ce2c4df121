import { z } from 'zod';
import { defineTool, eitherObject, idempotencyKey, READ_ONLY, WRITES, type ToolDefinition } from '../tool-kit.ts';
import { appliedSchema, dryRun as dryRunAnswer, formPlanSchema, jsonSchemaDocument, masterPlanSchema, templateSchema } from '../../http/admin/schema-routes.ts';

const FORM_BLUEPRINT =
  'A form blueprint is a JSON document {name?, description?, formSets: [{slug, name, description?, fields: [{key, type, label, description?, required?, locale_shared?, masterEntityKey?, limits?}], blocks?: [{id, label, fieldKeys}], seoRoles?, widgetRoles?}], masters?: [{key, name, records?: [{value, labels: {locale: label}, order?, parent?}]}]}. Field types: text, url, textarea, tiptap, number, boolean, date, select, radio, multiselect, image, file, image_gallery, video_embed, entry_ref; select, radio and multiselect need masterEntityKey (a master of the project or of the blueprint). get_blueprint_schema returns the full JSON Schema.';
const MASTER_BLUEPRINT =
  'A master blueprint is a JSON document {name?, description?, masters: [{key, name, records?: [{value, labels: {locale: label}, order?, parent?}]}]}. get_blueprint_schema with kind "master" returns the full JSON Schema.';
const blueprint = z.record(z.string(), z.unknown());
const dryRun = z.boolean().optional().describe('true: return the full preview of what would be created and write nothing.');

/** Blueprints (form sets and masters as documents) and the built-in templates. */
export const blueprintTools: ToolDefinition[] = [
  defineTool({
    name: 'list_builtin_form_templates',
    title: 'List built-in templates',
    description: 'Lists the built-in form set templates (blog, news, faq, events, products): {items: [{id, name, description, formSetSlugs, masterKeys}]}. Apply one with apply_builtin_form_template. Any agent key scope.',
    input: {},
    output: z.object({ items: z.array(templateSchema) }),
    annotations: READ_ONLY,
    run: async (_args, { api }) => api.get('/form-set-templates'),
  }),

  defineTool({
    name: 'apply_builtin_form_template',
    title: 'Apply a built-in template',
    description:
      'Creates the form sets and masters of a built-in template, e.g. "blog" (a blog form set with title, rich-text body, meta description, OG image, date and a category master). Returns {formSets: [{id, slug}], masters: [{id, key}]} (201), or with dryRun the preview. A slug or key that already exists in the project is a 409 CONFLICT and nothing is created. Next: get_form_set_schema, then create_entry. Needs an agent key of scope full or schema: a content key gets 403 FORBIDDEN.',
    input: {
      templateId: z.string().min(1).max(100).describe('The template\'s id from list_builtin_form_templates, e.g. "blog".'),
      dryRun,
      idempotencyKey,
    },
    output: eitherObject(formPlanSchema.extend(dryRunAnswer), appliedSchema),
    annotations: WRITES,
    run: async (args, { api }) => {
      const { templateId, ...body } = args;
      return api.request('POST', `/form-set-templates/${encodeURIComponent(templateId)}/apply`, { body });
    },
  }),

  defineTool({
    name: 'get_blueprint_schema',
    title: 'Blueprint JSON Schema',
    description: 'Returns the published JSON Schema (2020-12) of form blueprints (kind "form", the default) or master blueprints (kind "master"), to write a valid blueprint for apply_form_blueprint or apply_master_blueprint. Any agent key scope.',
    input: { kind: z.enum(['form', 'master']).optional().describe('"form" (default) or "master".') },
    output: jsonSchemaDocument,
    annotations: READ_ONLY,
    run: async (args, { api }) => api.get(args.kind === 'master' ? '/master-blueprints/schema' : '/form-blueprints/schema'),
  }),

  defineTool({
    name: 'validate_form_blueprint',
    title: 'Validate a form blueprint',
    description: `Checks a form blueprint against the schema and against the project (slug and key clashes, unknown masters, block and role references) without writing anything: {ok, formSets, masters, problems: [...]} with every problem named. ${FORM_BLUEPRINT} Needs an agent key of scope full or schema.`,
    input: { blueprint: blueprint.describe('The form blueprint document.') },
    output: formPlanSchema,
    annotations: READ_ONLY,
    run: async (args, { api }) => api.request('POST', '/form-blueprints/validate', { body: args }),
  }),

  defineTool({
    name: 'apply_form_blueprint',
    title: 'Apply a form blueprint',
    description: `Creates the masters and then the form sets of a form blueprint, all or nothing: returns {formSets: [{id, slug}], masters: [{id, key}]} (201), or with dryRun the full preview. A slug or key that exists already is a 409 CONFLICT; an invalid document a 400 naming every problem (validate_form_blueprint first to see them). ${FORM_BLUEPRINT} Needs an agent key of scope full or schema: a content key gets 403 FORBIDDEN.`,
    input: { blueprint: blueprint.describe('The form blueprint document.'), dryRun, idempotencyKey },
    output: eitherObject(formPlanSchema.extend(dryRunAnswer), appliedSchema),
    annotations: WRITES,
    run: async (args, { api }) => api.request('POST', '/form-blueprints/apply', { body: args }),
  }),

  defineTool({
    name: 'validate_master_blueprint',
    title: 'Validate a master blueprint',
    description: `Checks a master blueprint against the schema and against the project (key clashes, duplicate values, parent cycles) without writing anything: {ok, masters, problems}. ${MASTER_BLUEPRINT} Needs an agent key of scope full or schema.`,
    input: { blueprint: blueprint.describe('The master blueprint document.') },
    output: masterPlanSchema,
    annotations: READ_ONLY,
    run: async (args, { api }) => api.request('POST', '/master-blueprints/validate', { body: args }),
  }),

  defineTool({
    name: 'apply_master_blueprint',
    title: 'Apply a master blueprint',
    description: `Creates the master entities of a master blueprint with their records, all or nothing: returns {masters: [{id, key}], formSets: []} (201), or with dryRun the preview. An existing key is a 409 CONFLICT. ${MASTER_BLUEPRINT} Needs an agent key of scope full or schema: a content key gets 403 FORBIDDEN.`,
    input: { blueprint: blueprint.describe('The master blueprint document.'), dryRun, idempotencyKey },
    output: eitherObject(masterPlanSchema.extend(dryRunAnswer), appliedSchema),
    annotations: WRITES,
    run: async (args, { api }) => api.request('POST', '/master-blueprints/apply', { body: args }),
  }),
];

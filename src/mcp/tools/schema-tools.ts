import { defineTool, formSetRef, READ_ONLY, resolveFormSetId, type ToolDefinition } from '../tool-kit.ts';
import { z } from 'zod';
import { formSetSchemaSchema, formSetSummarySchema, tenantSchemaSchema } from '../../http/admin/content-views.ts';

/** Form sets and the schema of their entries. */
export const schemaTools: ToolDefinition[] = [
  defineTool({
    name: 'get_tenant_schema',
    title: 'Project schema',
    description:
      'Returns everything needed to write valid content in one call: the content locales, every form set (id, slug, name) with its fields (key, type, label, required, localeShared; masterEntityKey and sampleValues for select, radio and multiselect fields) and the JSON Schema of its entry values, and the master entities behind select fields. Use it before create_entry or save_revision. Any agent key scope.',
    input: {},
    output: tenantSchemaSchema,
    annotations: READ_ONLY,
    run: async (_args, { api }) => api.get('/tenant-schema'),
  }),

  defineTool({
    name: 'list_form_sets',
    title: 'List form sets',
    description:
      'Lists the project\'s form sets (content types): id, slug, name, description, version. Entries live in a form set; create_entry and list_entries take its id or slug. An empty list means nothing is set up yet: apply a built-in template (list_builtin_form_templates, apply_builtin_form_template) or a form blueprint (apply_form_blueprint). Any agent key scope.',
    input: {},
    output: z.object({ items: z.array(formSetSummarySchema) }),
    annotations: READ_ONLY,
    run: async (_args, { api }) => api.get('/form-sets'),
  }),

  defineTool({
    name: 'get_form_set_schema',
    title: 'Form set schema',
    description:
      'Returns one form set\'s fields and the JSON Schema (2020-12) of the `fields` object that create_entry and save_revision accept. Each field has key, type, label, required and localeShared; select, radio and multiselect fields also carry masterEntityKey (the master whose record values they take) and sampleValues (valid values to use). Value shapes: text, url, textarea: string; tiptap: {"type": "doc", "content": [...]} or an HTML string; number; boolean; date: "YYYY-MM-DD" (or a date-time) or {from, to}; select, radio: a record value; multiselect: array of record values; image, file: an asset id from upload_media; image_gallery: array of asset ids or {assetId, caption}; video_embed: a URL; entry_ref: an entry id. Localized fields take {locale: value}. Any agent key scope.',
    input: { ...formSetRef },
    output: formSetSchemaSchema,
    annotations: READ_ONLY,
    run: async (args, context) => context.api.get(`/form-sets/${await resolveFormSetId(context, args)}/schema`),
  }),
];

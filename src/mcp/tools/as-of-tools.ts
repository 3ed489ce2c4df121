import { z } from 'zod';
import { AdminApiError } from '../admin-api-client.ts';
import { defineTool, formSetRef, READ_ONLY, resolveFormSetId, uuid, type ToolDefinition } from '../tool-kit.ts';
import { ToolFailure } from '../tool-result.ts';
import { asOfEntrySchema, asOfPageSchema, workflowSchema } from '../../http/admin/as-of-routes.ts';

const at = z
  .string()
  .min(1)
  .describe('The instant: an ISO 8601 date-time with an offset, e.g. "2026-11-01T09:00:00Z" or "2026-11-01T18:00:00+09:00". Not before the project was created, not in the future.');

/** As-of reads: what the public API served at an instant (for audits: "what did the site say on that day?"). */
export const asOfTools: ToolDefinition[] = [
  defineTool({
    name: 'get_entry_as_of',
    title: 'An entry as it was served at an instant',
    description:
      'Answers what the public API served for one entry at a past instant: {served: {entry {id, slug}, revision {id, revision, publishedAt, publishedBy, trigger}, liveSince, data} or null when it was not live then, workflow (with includeWorkflow: the entry\'s workflow state then: latest revision with status, who saved and submitted it, the live revision, slug, deleted)}. Give entryId, or a form set (formSetId or formSetSlug) and the slug it was served at. Built from the log, so the answer never changes for a past instant. Instants before the project existed or in the future are refused (400). Any agent key scope.',
    input: {
      entryId: uuid('an entry id').optional().describe('The entry\'s id. Give this, or a form set and slug.'),
      ...formSetRef,
      slug: z.string().min(1).max(200).optional().describe('The slug the entry was served at then (with formSetId or formSetSlug).'),
      at,
      includeWorkflow: z.boolean().optional().describe('Also return the entry\'s workflow state at that instant.'),
    },
    output: z.object({
      at: z.string().describe('The instant answered for (UTC).'),
      served: asOfEntrySchema.nullable().describe('The entry as the public API served it then, or null when it was not live.'),
      note: z.string().optional().describe('Why served is null.'),
      workflow: workflowSchema.optional().describe('With includeWorkflow: the entry\'s workflow state then.'),
    }),
    annotations: READ_ONLY,
    run: async (args, context) => {
      const query = { at: args.at };
      let served: { entry: { id: string } } | null = null;
      let note: string | undefined;
      try {
        if (args.entryId) {
          served = await context.api.get(`/as-of/entries/${args.entryId}`, { query });
        } else {
          if (!args.slug) throw new ToolFailure('VALIDATION_ERROR', 'Give entryId, or formSetId/formSetSlug and slug.', 'list_entries_as_of lists what was live at an instant.');
          served = await context.api.get(`/as-of/form-sets/${await resolveFormSetId(context, args)}/entries/${encodeURIComponent(args.slug)}`, { query });
        }
      } catch (error) {
        if (!(error instanceof AdminApiError && error.status === 404)) throw error;
        note = error.message;
      }
      const entryId = args.entryId ?? served?.entry.id;
      const workflow = args.includeWorkflow && entryId ? await context.api.get(`/entries/${entryId}/workflow`, { query }) : undefined;
      return { at: new Date(args.at).toISOString(), served, ...(note === undefined ? {} : { note }), ...(workflow === undefined ? {} : { workflow }) };
    },
  }),

  defineTool({
    name: 'list_entries_as_of',
    title: 'A form set\'s entries as they were served at an instant',
    description:
      'Lists the entries of a form set the public API served at a past instant, most recently published first, a page at a time: {at, formSetId, items: [{entry {id, slug}, revision {id, revision, publishedAt, publishedBy, trigger}, liveSince}], nextCursor}. Values are not included: get_entry_as_of gives one entry\'s. Any agent key scope.',
    input: {
      ...formSetRef,
      at,
      cursor: z.string().min(1).optional().describe('nextCursor of the previous page.'),
      limit: z.number().int().min(1).max(100).optional().describe('Entries per page, default 20, at most 100.'),
    },
    output: asOfPageSchema,
    annotations: READ_ONLY,
    run: async (args, context) => context.api.get(`/as-of/form-sets/${await resolveFormSetId(context, args)}/entries`, { query: { at: args.at, cursor: args.cursor, limit: args.limit } }),
  }),
];

import { z } from 'zod';
import { AdminApiError } from '../admin-api-client.ts';
import { defineTool, formSetRef, READ_ONLY, resolveFormSetId, uuid, type ToolDefinition } from '../tool-kit.ts';
import { ToolFailure } from '../tool-result.ts';
import { asOfEntrySchema, asOfMovedSchema, asOfPageSchema, workflowSchema } from '../../http/admin/as-of-routes.ts';

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
      'Answers what the public API served for one entry at a past instant: {served: {entry {id, slug}, revision {id, revision, publishedAt, publishedBy, trigger}, liveSince, locale, formSet, data (the values as served in the locale, with the default locale\'s where it had none), mediaUrls, widgetRoles} or null when it was not live then, moved (asked by a former slug: the public API answered 301 to the entry\'s slug then; served is then that entry), workflow (with includeWorkflow: the entry\'s workflow state then: latest revision with status, who saved and submitted it, the live revision, slug, deleted)}. Give entryId, or a form set (formSetId or formSetSlug) and the slug it was served at. Built from the log, so the answer never changes for a past instant. Instants before the project existed or in the future are refused (400), as is a locale that was not a content locale then. Any agent key scope.',
    input: {
      entryId: uuid('an entry id').optional().describe('The entry\'s id. Give this, or a form set and slug.'),
      ...formSetRef,
      slug: z.string().min(1).max(200).optional().describe('The slug the entry was served at then (with formSetId or formSetSlug).'),
      at,
      locale: z.string().min(1).max(35).optional().describe('The locale to answer in (the public API\'s locale parameter then); default: the default locale then.'),
      includeWorkflow: z.boolean().optional().describe('Also return the entry\'s workflow state at that instant.'),
    },
    output: z.object({
      at: z.string().describe('The instant answered for (UTC).'),
      served: asOfEntrySchema.nullable().describe('The entry as the public API served it then, or null when it was not live.'),
      moved: asOfMovedSchema.optional().describe('Asked by a former slug: where the public API redirected (301) then.'),
      note: z.string().optional().describe('Why served is null.'),
      workflow: workflowSchema.optional().describe('With includeWorkflow: the entry\'s workflow state then.'),
    }),
    annotations: READ_ONLY,
    run: async (args, context) => {
      const query = { at: args.at, locale: args.locale };
      let served: { entry: { id: string } } | null = null;
      let moved: { entry: { id: string } } | undefined;
      let note: string | undefined;
      try {
        if (args.entryId) {
          served = await context.api.get(`/as-of/entries/${args.entryId}`, { query });
        } else {
          if (!args.slug) throw new ToolFailure('VALIDATION_ERROR', 'Give entryId, or formSetId/formSetSlug and slug.', 'list_entries_as_of lists what was live at an instant.');
          try {
            served = await context.api.get(`/as-of/form-sets/${await resolveFormSetId(context, args)}/entries/${encodeURIComponent(args.slug)}`, { query });
          } catch (error) {
            if (!(error instanceof AdminApiError && error.status === 301 && error.body !== undefined)) throw error;
            // A former slug then: follow the redirect, as the public API's clients did.
            moved = error.body as { entry: { id: string } };
            served = await context.api.get(`/as-of/entries/${moved.entry.id}`, { query });
          }
        }
      } catch (error) {
        if (!(error instanceof AdminApiError && error.status === 404)) throw error;
        note = error.message;
      }
      const entryId = args.entryId ?? served?.entry.id;
      const workflow = args.includeWorkflow && entryId ? await context.api.get(`/entries/${entryId}/workflow`, { query: { at: args.at } }) : undefined;
      return { at: new Date(args.at).toISOString(), served, ...(moved === undefined ? {} : { moved }), ...(note === undefined ? {} : { note }), ...(workflow === undefined ? {} : { workflow }) };
    },
  }),

  defineTool({
    name: 'list_entries_as_of',
    title: 'A form set\'s entries as they were served at an instant',
    description:
      'Lists the entries of a form set the public API served at a past instant, in the public list\'s order (first published, newest first), a page at a time: {at, formSetId, items: [{entry {id, slug}, revision {id, revision, publishedAt, publishedBy, trigger}, liveSince, firstPublishedAt}], nextCursor}. Values are not included: get_entry_as_of gives one entry\'s. Any agent key scope.',
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

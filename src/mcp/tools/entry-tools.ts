import { z } from 'zod';
import { REVISION_STATUSES } from '../../domain/content/entry/entry-workflow.ts';
import { defineTool, formSetRef, idempotencyKey, READ_ONLY, resolveFormSetId, uuid, WRITES, type ToolDefinition } from '../tool-kit.ts';
import { ToolFailure } from '../tool-result.ts';
import { createdEntrySchema, entryDetailSchema, entrySummarySchema, revisionDetailSchema, revisionRefSchema, revisionSummarySchema, revisionTransitionSchema } from '../../http/admin/content-views.ts';
import { walkFields } from '../../http/admin/content-routes.ts';
import { pageSchema } from '../../http/admin/list-query.ts';
import { translationSchema } from '../../http/admin/translation-routes.ts';

const FIELD_VALUES =
  'Field values keyed by field key, as get_form_set_schema describes them (text/url/textarea: string; tiptap: {"type": "doc", "content": [...]} or HTML; number; boolean; date: "YYYY-MM-DD" or {from, to}; select/radio: a master record value; multiselect: array of values; image/file: an asset id from upload_media; image_gallery: array of asset ids; video_embed: URL; entry_ref: entry id). Localized fields (text, textarea, tiptap unless locale_shared) take {"en": ..., "ja": ...}; a plain value is the default locale\'s.';

const fieldValues = z.record(z.string(), z.unknown());
const slug = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, { error: 'must be lowercase letters, digits and single hyphens between them, e.g. "my-first-post"' });
const revisionNumber = z.number().int().positive();
const external = z.object({
  sourceType: z.string().min(1).max(50).optional().describe('The external system, e.g. "wordpress" (at most 50 characters).'),
  entityType: z.string().min(1).max(200).optional().describe('The kind of item there, e.g. "post" (at most 200 characters).'),
  externalId: z.string().min(1).max(2000).describe('The item\'s id there (at most 2000 characters).'),
});

interface EntryDoc {
  id: string;
  latestRevision: { revisionId: string; revision: number; status: string } | null;
  [key: string]: unknown;
}

/** Entries, their revisions and the workflow: save_revision → submit_entry_for_review → publish_revision. */
export const entryTools: ToolDefinition[] = [
  defineTool({
    name: 'list_entries',
    title: 'List entries',
    description:
      'Lists a form set\'s entries, most recently changed first, a page at a time: {items: [{id, slug, title, latestRevision {revisionId, revision, status}, liveRevision (the published one, or null), revisionCount, ...}], nextCursor, asOf, changed}. Pass nextCursor as cursor for the next page (null: the last page). The walk lists the entries as they were at its first page (changed: false), then those created or changed since (changed: true): an entry edited meanwhile can come twice, the later one is current. Filter by status (of the latest revision), assignee or q (words in titles and text fields). Field values are not included: use get_entry. Any agent key scope.',
    input: {
      ...formSetRef,
      status: z.enum(REVISION_STATUSES).optional().describe('Only entries whose latest revision has this status.'),
      assignee: z.string().min(1).max(200).optional().describe('Only entries assigned to this user id.'),
      q: z.string().min(1).max(200).optional().describe('Words that must all occur in the title or text fields.'),
      cursor: z.string().min(1).optional().describe('nextCursor of the previous page.'),
      limit: z.number().int().min(1).max(100).optional().describe('Entries per page, default 20, at most 100.'),
    },
    output: pageSchema(entrySummarySchema, walkFields),
    annotations: READ_ONLY,
    run: async (args, context) =>
      context.api.get(`/form-sets/${await resolveFormSetId(context, args)}/entries`, { query: { status: args.status, assignee: args.assignee, q: args.q, cursor: args.cursor, limit: args.limit } }),
  }),

  defineTool({
    name: 'get_entry',
    title: 'Read an entry',
    description:
      'Reads an entry: id, slug, title, form set, import metadata, latestRevision and liveRevision (id, revision number, status: draft, pending_review, scheduled, published, rejected or superseded), revisionCount (list_revisions pages through them), plus `values`: the field values of the latest revision (or of revisionId when given). Use the values as the starting point of save_revision, which replaces all values. Any agent key scope.',
    input: {
      entryId: uuid('an entry id').describe('The entry\'s id (from create_entry or list_entries).'),
      revisionId: uuid('a revision id').optional().describe('Read this revision\'s values instead of the latest one\'s.'),
    },
    output: entryDetailSchema.extend({
      valuesOf: z.object({ revisionId: z.uuid(), revision: z.number().int(), status: z.enum(REVISION_STATUSES) }).optional().describe('The revision whose values are given.'),
      values: revisionDetailSchema.shape.snapshot.nullable().describe('The field values of that revision; null for an entry without revisions.'),
    }),
    annotations: READ_ONLY,
    run: async (args, { api }) => {
      const entry = await api.get<EntryDoc>(`/entries/${args.entryId}`);
      const revisionId = args.revisionId ?? entry.latestRevision?.revisionId;
      if (!revisionId) return { ...entry, values: null };
      const revision = await api.get<{ id: string; entryId: string; revision: number; status: string; snapshot: unknown }>(`/revisions/${revisionId}`);
      if (revision.entryId !== entry.id) {
        throw new ToolFailure('VALIDATION_ERROR', `Revision ${revisionId} is not a revision of entry ${entry.id}.`, 'Use a revisionId that list_revisions gives for this entry.');
      }
      return { ...entry, valuesOf: { revisionId: revision.id, revision: revision.revision, status: revision.status }, values: revision.snapshot };
    },
  }),

  defineTool({
    name: 'create_entry',
    title: 'Create an entry',
    description:
      `Creates an entry in a form set with its first revision, a draft: returns {entry: {id, slug, formSetId}, revision: {id, revision, status: "draft"}}. Nothing is public until that revision is submitted and published: pass revision.id and revision.revision to submit_entry_for_review, then publish_revision. The slug must be unique in the form set (409 CONFLICT otherwise). Values are validated against the form set (400 VALIDATION_ERROR names the field). ${FIELD_VALUES} Any agent key scope (content, full, schema).`,
    input: {
      ...formSetRef,
      slug: slug.describe('URL slug of the entry, unique in its form set: lowercase letters, digits and hyphens, e.g. "hello-world".'),
      fields: fieldValues.default({}).describe('The field values of the first revision (see the tool description).'),
      importPath: z.string().min(1).max(2000).optional().describe('Optional import path (the entry\'s old URL path), looked up by the public /content/by-path.'),
      external: external.optional().describe('Optional identity in an external system, looked up by the public /content/by-external-id.'),
      idempotencyKey,
    },
    output: createdEntrySchema,
    annotations: WRITES,
    run: async (args, context) => {
      const { formSetId: _id, formSetSlug: _slug, ...body } = args;
      return context.api.request('POST', `/form-sets/${await resolveFormSetId(context, args)}/entries`, { body });
    },
  }),

  defineTool({
    name: 'update_entry',
    title: 'Update an entry (slug, import metadata)',
    description:
      'Changes an entry\'s slug and/or import metadata; field values are changed with save_revision instead. A new slug must be unique in the form set (409 otherwise); the public API answers the old slug with a 301 to the new one. importPath and external: a value sets them, null clears them, left out keeps them. Returns the entry. Any agent key scope.',
    input: {
      entryId: uuid('an entry id').describe('The entry\'s id.'),
      slug: slug.optional().describe('The new slug.'),
      importPath: z.string().min(1).max(2000).nullable().optional().describe('The import path; null clears it.'),
      external: external.nullable().optional().describe('The external identity; null clears it.'),
    },
    output: entrySummarySchema,
    annotations: WRITES,
    run: async (args, { api }) => {
      if (args.slug === undefined && args.importPath === undefined && args.external === undefined) {
        throw new ToolFailure('VALIDATION_ERROR', 'Nothing to change: give slug, importPath or external.', 'To change field values, use save_revision.');
      }
      let entry: unknown;
      if (args.slug !== undefined) entry = await api.request('PATCH', `/entries/${args.entryId}/slug`, { body: { slug: args.slug } });
      if (args.importPath !== undefined || args.external !== undefined) {
        entry = await api.request('PUT', `/entries/${args.entryId}/import-metadata`, {
          body: { ...(args.importPath === undefined ? {} : { importPath: args.importPath }), ...(args.external === undefined ? {} : { external: args.external }) },
        });
      }
      return entry;
    },
  }),

  defineTool({
    name: 'list_revisions',
    title: 'List revisions',
    description:
      'Lists an entry\'s revisions, oldest first (order desc: newest first), a page at a time: {items: [{id, revision, status, updatedAt, publishAt, publishedAt, restoredFrom}], nextCursor}; restoredFrom names the older revision a restore brought back (null otherwise). Pass nextCursor as cursor for the next page. Only the latest revision can be submitted or published; a published one stays live until a newer revision is published (it then becomes superseded). Any agent key scope.',
    input: {
      entryId: uuid('an entry id').describe('The entry\'s id.'),
      order: z.enum(['asc', 'desc']).optional().describe('asc: oldest first (default); desc: newest first.'),
      cursor: z.string().min(1).optional().describe('nextCursor of the previous page.'),
      limit: z.number().int().min(1).max(100).optional().describe('Revisions per page, default 20, at most 100.'),
    },
    output: pageSchema(revisionSummarySchema),
    annotations: READ_ONLY,
    run: async (args, { api }) => api.get(`/entries/${args.entryId}/revisions`, { query: { order: args.order, cursor: args.cursor, limit: args.limit } }),
  }),

  defineTool({
    name: 'save_revision',
    title: 'Save a revision',
    description:
      `Saves new field values of an entry as a new draft revision and returns {id, revision, status: "draft", ...}: pass id and revision to submit_entry_for_review and then to publish_revision. The values REPLACE the previous ones: send every field (start from get_entry's values), or set merge: true to change only the fields given. Editing a published entry does not change the live content until the new revision is published. Refused (409) while the latest revision is pending_review or scheduled. expectedRevision guards against overwriting someone else's save (409 REVISION_CONFLICT). ${FIELD_VALUES} Any agent key scope.`,
    input: {
      entryId: uuid('an entry id').describe('The entry\'s id.'),
      fields: fieldValues.describe('The field values (all of them, unless merge is true).'),
      merge: z.boolean().optional().describe('true: start from the latest revision\'s values and change only the fields given (a field set to null is removed). Default false.'),
      expectedRevision: revisionNumber.optional().describe('The revision number your edit is based on; the save is refused if the latest revision is another one.'),
      idempotencyKey,
    },
    output: revisionRefSchema,
    annotations: WRITES,
    run: async (args, { api }) => {
      let fields = args.fields;
      let expectedRevision = args.expectedRevision;
      if (args.merge) {
        const entry = await api.get<EntryDoc>(`/entries/${args.entryId}`);
        const latest = entry.latestRevision;
        const current = latest ? (await api.get<{ snapshot: Record<string, unknown> }>(`/revisions/${latest.revisionId}`)).snapshot : {};
        fields = Object.fromEntries(Object.entries({ ...current, ...args.fields }).filter(([, v]) => v !== null));
        expectedRevision ??= latest?.revision;
      }
      return api.request('POST', `/entries/${args.entryId}/revisions`, {
        body: { fields, ...(expectedRevision === undefined ? {} : { expectedRevision }), ...(args.idempotencyKey ? { idempotencyKey: args.idempotencyKey } : {}) },
      });
    },
  }),

  defineTool({
    name: 'submit_entry_for_review',
    title: 'Submit for review',
    description:
      'Moves a draft revision to pending_review (the step between save_revision and publish_revision). Give id and revision as save_revision or create_entry returned them, or just entryId to submit the entry\'s latest revision. Returns the revision with status pending_review. A revision that is not the latest answers 409 REVISION_CONFLICT; one not in draft answers 409 CONFLICT naming its status. Any agent key scope.',
    input: {
      id: uuid('a revision id').optional().describe('The revision id (the "id" save_revision returned).'),
      revision: revisionNumber.optional().describe('The revision number (the "revision" save_revision returned): refused if it does not match.'),
      entryId: uuid('an entry id').optional().describe('Instead of id: submit this entry\'s latest revision.'),
    },
    output: revisionTransitionSchema,
    annotations: WRITES,
    run: async (args, { api }) => {
      let revisionId = args.id;
      let revision = args.revision;
      if (!revisionId) {
        if (!args.entryId) throw new ToolFailure('VALIDATION_ERROR', 'Give id (and revision) from save_revision, or entryId.', 'save_revision returns {id, revision}.');
        const entry = await api.get<EntryDoc>(`/entries/${args.entryId}`);
        if (!entry.latestRevision) throw new ToolFailure('CONFLICT', `Entry ${args.entryId} has no revision to submit.`, 'Save a revision first (save_revision).');
        revisionId = entry.latestRevision.revisionId;
        revision ??= entry.latestRevision.revision;
      }
      return api.request('POST', `/revisions/${revisionId}/submit`, { body: revision === undefined ? {} : { revision } });
    },
  }),

  defineTool({
    name: 'publish_revision',
    title: 'Publish a revision',
    description:
      'Publishes a revision that is pending_review: it becomes the live content of its entry on the public API at once, the previously published revision becomes superseded, and entry.published (or entry.updated) webhooks fire. Takes id and revision exactly as save_revision returned them (after submit_entry_for_review). Publishing the live revision again answers already_published: true and changes nothing. A draft answers 409 CONFLICT (submit it first); a stale revision 409 REVISION_CONFLICT. Returns {id, revision, status: "published", publishedAt, already_published}. Agent keys of any scope may publish, unless the project\'s approval policy says otherwise (get_approval_policy): 403 HUMAN_APPROVAL_REQUIRED when a person must approve (leave the revision in review), 403 FOUR_EYES_REQUIRED when it was saved or submitted by the person who issued your key, with this key, another of theirs or their session (someone else must publish it); the error\'s hint names the setting, and the refusal is recorded in the audit log.',
    input: {
      id: uuid('a revision id').describe('The revision id (the "id" save_revision returned).'),
      revision: revisionNumber.describe('The revision number (the "revision" save_revision returned).'),
    },
    output: revisionTransitionSchema,
    annotations: { ...WRITES, idempotentHint: true },
    run: async (args, { api }) => api.request('POST', `/revisions/${args.id}/publish`, { body: { revision: args.revision } }),
  }),

  defineTool({
    name: 'translate_entry_locales',
    title: 'Translate missing locales',
    description:
      'Fills the missing locale values of an entry by machine translation and saves them as a new draft revision (Standard plan and above: PLAN_REQUIRED below). Translates text, textarea and tiptap fields that are not locale_shared, from sourceLocale (default: the default locale) into targetLocales (default: every other content locale); values already present are kept; rich text keeps its structure (text nodes are translated). Returns {revision (the new draft: submit and publish it as usual; null when nothing was missing), translated: [{field, locale}], skipped, characters}. Needs a translation provider configured on the service (TRANSLATION_API_URL; 409 says so otherwise). Refused while the latest revision is in review or scheduled. Any agent key scope.',
    input: {
      entryId: uuid('an entry id').describe('The entry\'s id.'),
      sourceLocale: z.string().min(1).max(35).optional().describe('The locale to translate from; default the project\'s default locale.'),
      targetLocales: z.array(z.string().min(1).max(35)).min(1).max(30).optional().describe('The locales to fill; default every other content locale.'),
    },
    output: translationSchema,
    annotations: { ...WRITES, openWorldHint: true },
    run: async (args, { api }) => {
      const { entryId, ...body } = args;
      return api.request('POST', `/entries/${entryId}/translate`, { body });
    },
  }),
];

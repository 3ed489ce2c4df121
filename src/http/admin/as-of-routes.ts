import type { Router } from '@koa/router';
import { newRouter } from '../router.ts';
import type { Context } from 'koa';
import { z } from 'zod';
import { REVISION_STATUSES } from '../../domain/content/entry/entry-workflow.ts';
import { AsOfReads } from '../../application/as-of-reads.ts';
import { notFound } from '../errors/error-factory.ts';
import type { ApiRegistry } from './api-registry.ts';
import { actorSchema } from './content-views.ts';
import { instant, listQuery, pageSchema, strictQuery } from './list-query.ts';
import { type AdminDeps, projectOf } from './admin-context.ts';
import { isUuid } from './request-body.ts';

const at = instant.describe('The instant to answer for: an ISO 8601 date-time with an offset, not before the project was created and not in the future.');
const locale = z
  .string()
  .min(1)
  .max(35)
  .optional()
  .describe('The locale to answer in, as the public API\'s `locale` parameter then: a content locale of the project at that instant (any case); a localized field without a value in it takes the default locale\'s. Default: the default locale then.');
const atQuery = strictQuery({ at });
const entryQuery = strictQuery({ at, locale });
const atListQuery = listQuery({ at });

const asOfRevisionSchema = z.object({
  id: z.uuid(),
  revision: z.number().int().positive(),
  publishedAt: z.string().describe('When this revision was published.'),
  publishedBy: actorSchema.describe('Who published it: a user, an agent key, or the system (the scheduled publishing job).'),
  trigger: z.enum(['approve', 'publish', 'schedule']),
});

export const asOfEntrySchema = z
  .object({
    at: z.string().describe('The instant answered for (UTC).'),
    locale: z.string().describe('The locale answered in.'),
    formSetId: z.uuid(),
    formSet: z.object({ id: z.uuid(), slug: z.string(), name: z.string() }).describe('The form set as the public API named it then.'),
    entry: z.object({ id: z.uuid(), slug: z.string().describe('The slug it was served at then.') }),
    revision: asOfRevisionSchema,
    liveSince: z.string().describe('Since when it was served with this slug and revision.'),
    data: z.record(z.string(), z.unknown()).describe('The field values as the public API served them in `locale` then: a localized field without a value in that locale has the default locale\'s.'),
    mediaUrls: z.record(z.string(), z.union([z.string(), z.array(z.string())])).describe('Media URLs of its image and file fields, on the project\'s public base (/public/p/{projectId}/v1).'),
    widgetRoles: z.record(z.string(), z.string()).describe('Field keys by widget role, as the form set defined them then.'),
  })
  .describe('The public single-entry answer then was {formSet, entry, revision: {id, revision, updatedAt: revision.publishedAt}, data, mediaUrls, widgetRoles}.');

/** A former slug at the instant: the public API answered 301 to the entry's slug then. */
export const asOfMovedSchema = z.object({
  at: z.string().describe('The instant answered for (UTC).'),
  formSetId: z.uuid(),
  slug: z.string().describe('The slug asked for: a former slug of the entry then.'),
  entry: z.object({ id: z.uuid(), slug: z.string().describe('Its slug then, where the public API redirected.') }),
  moved: z.string().describe('The as-of URL of the entry at its slug then (also the Location header).'),
});

export const asOfListItemSchema = z.object({
  entry: z.object({ id: z.uuid(), slug: z.string() }),
  revision: asOfRevisionSchema,
  liveSince: z.string(),
  firstPublishedAt: z.string().describe('When the entry first went live: the public list\'s order (newest first).'),
});

/** A page of a form set's entries live at an instant. */
export const asOfPageSchema = pageSchema(asOfListItemSchema, { at: z.string().describe('The instant answered for (UTC).'), formSetId: z.uuid() });

export const workflowSchema = z.object({
  at: z.string(),
  entryId: z.uuid(),
  formSetId: z.uuid(),
  deleted: z.boolean(),
  slug: z.string(),
  previousSlugs: z.array(z.string()),
  assignee: z.string().nullable(),
  revisionCount: z.number().int(),
  latest: z
    .object({
      revisionId: z.uuid(),
      revision: z.number().int(),
      status: z.enum(REVISION_STATUSES),
      savedAt: z.string(),
      savedBy: actorSchema.nullable(),
      submittedBy: actorSchema.nullable().describe('Who submitted it, while in review or scheduled (and once published).'),
      publishAt: z.string().nullable(),
      publishedAt: z.string().nullable(),
      rejectionReason: z.string().nullable(),
    })
    .nullable()
    .describe('The newest revision then, whatever its status.'),
  live: z.object({ revisionId: z.uuid(), revision: z.number().int(), publishedAt: z.string() }).nullable().describe('The revision the public API served then, or null.'),
  lastEvent: z.object({ eventId: z.uuid(), type: z.string(), occurredAt: z.string(), actor: actorSchema }).describe('The last event at or before the instant: the state holds from its time on.'),
});

/**
 * As-of reads (docs/audit.md): what the public API served at an instant, and an entry's workflow state then.
 * Every answer is a function of the log up to that instant, the same after any rebuild. The console's
 * "show as of" view of an entry's timeline reads these routes.
 */
export function asOfRoutes(deps: AdminDeps, api: ApiRegistry): Router {
  const router = newRouter();
  const reads = new AsOfReads({ log: deps.log, reader: deps.reader, watermark: deps.watermark, clock: deps.clock });
  // Media URLs as the public API handed them out on the project-pinned base.
  const publicBaseUrl = (ctx: Context) => `${ctx.protocol}://${ctx.host}/public/p/${projectOf(ctx).projectId}/v1`;
  const id = (ctx: Context, name: string, what: string): string => {
    const value = ctx.params[name];
    if (!isUuid(value)) throw notFound(`No ${what} ${value}.`);
    return value;
  };

  api.add(
    router,
    {
      method: 'get',
      path: '/as-of/entries/:entryId',
      operationId: 'getEntryAsOf',
      permission: 'entries.history.read',
      summary: 'The entry as the public API served it at an instant: slug, live revision and who published it, and its values in a locale as served then (404 when it was not live then)',
      tag: 'As of',
      query: entryQuery,
      responses: { 200: { description: 'The entry as served then', schema: asOfEntrySchema } },
      errors: {},
    },
    async (ctx, { query }) => {
      ctx.body = await reads.entry(projectOf(ctx), id(ctx, 'entryId', 'entry'), query.at, { locale: query.locale, publicBaseUrl: publicBaseUrl(ctx) });
    },
  );

  api.add(
    router,
    { method: 'get', path: '/as-of/form-sets/:formSetId/entries', operationId: 'listFormSetEntriesAsOf', permission: 'entries.history.read', summary: 'The form set\'s entries the public API served at an instant, in the public list\'s order (first published, newest first), a page at a time', tag: 'As of', query: atListQuery, responses: { 200: { description: 'A page of the entries live then', schema: asOfPageSchema } }, errors: {} },
    async (ctx, { query }) => {
      ctx.body = await reads.formSetEntries(projectOf(ctx), id(ctx, 'formSetId', 'form set'), query.at, query);
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: '/as-of/form-sets/:formSetId/entries/:slug',
      operationId: 'getEntryBySlugAsOf',
      permission: 'entries.history.read',
      summary:
        'What the public API answered at a slug of the form set at an instant: the entry served there; for a former slug of an entry live then, 301 to the as-of URL of its slug then (the public API redirected so); 404 when neither',
      tag: 'As of',
      query: entryQuery,
      textParams: ['slug'],
      responses: {
        200: { description: 'The entry as served then', schema: asOfEntrySchema },
        301: { description: 'A former slug then: the public API redirected to the entry\'s slug then; Location is the as-of URL of that slug (same at and locale)', schema: asOfMovedSchema, headers: { Location: 'The as-of URL of the entry at its slug then' } },
      },
      errors: {},
    },
    async (ctx, { query }) => {
      const formSetId = id(ctx, 'formSetId', 'form set');
      const answer = await reads.entryBySlug(projectOf(ctx), formSetId, String(ctx.params['slug']), query.at, { locale: query.locale, publicBaseUrl: publicBaseUrl(ctx) });
      if (answer.kind === 'served') {
        ctx.body = answer.entry;
        return;
      }
      const { kind: _kind, ...moved } = answer;
      const search = new URLSearchParams({ at: query.at, ...(query.locale === undefined ? {} : { locale: query.locale }) });
      const location = `${ctx.protocol}://${ctx.host}/admin/v1/as-of/form-sets/${formSetId}/entries/${encodeURIComponent(moved.entry.slug)}?${search.toString()}`;
      ctx.status = 301;
      ctx.set('Location', location);
      ctx.body = { ...moved, moved: location };
    },
  );

  api.add(
    router,
    { method: 'get', path: '/entries/:entryId/workflow', operationId: 'getEntryWorkflowAsOf', permission: 'entries.history.read', summary: 'The entry\'s whole workflow state at an instant: slug, assignee, latest revision with status, editor and submitter, live revision (404 before it existed)', tag: 'As of', query: atQuery, responses: { 200: { description: 'The workflow state then', schema: workflowSchema } }, errors: {} },
    async (ctx, { query }) => {
      ctx.body = await reads.workflow(projectOf(ctx), id(ctx, 'entryId', 'entry'), query.at);
    },
  );

  return router;
}

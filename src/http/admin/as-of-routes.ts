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
import { type AdminDeps, principalOf, projectOf } from './admin-context.ts';
import { isUuid } from './request-body.ts';

const at = instant.describe('The instant to answer for: an ISO 8601 date-time with an offset, not before the project was created and not in the future.');
const atQuery = strictQuery({ at });
const atListQuery = listQuery({ at });

const asOfRevisionSchema = z.object({
  id: z.uuid(),
  revision: z.number().int().positive(),
  publishedAt: z.string().describe('When this revision was published.'),
  publishedBy: actorSchema.describe('Who published it: a user, an agent key, or the system (the scheduled publishing job).'),
  trigger: z.enum(['approve', 'publish', 'schedule']),
});

export const asOfEntrySchema = z.object({
  at: z.string().describe('The instant answered for (UTC).'),
  formSetId: z.uuid(),
  entry: z.object({ id: z.uuid(), slug: z.string().describe('The slug it was served at then.') }),
  revision: asOfRevisionSchema,
  liveSince: z.string().describe('Since when it was served with this slug and revision.'),
  data: z.record(z.string(), z.unknown()).describe('The revision\'s field values, as stored (every locale).'),
});

export const asOfListItemSchema = z.object({
  entry: z.object({ id: z.uuid(), slug: z.string() }),
  revision: asOfRevisionSchema,
  liveSince: z.string(),
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
  const id = (ctx: Context, name: string, what: string): string => {
    const value = ctx.params[name];
    if (!isUuid(value)) throw notFound(`No ${what} ${value}.`);
    return value;
  };

  api.add(
    router,
    { method: 'get', path: '/as-of/entries/:entryId', operationId: 'getEntryAsOf', summary: 'The entry as the public API served it at an instant: slug, live revision, its values and who published it (404 when it was not live then)', tag: 'As of', query: atQuery, responses: { 200: { description: 'The entry as served then', schema: asOfEntrySchema } }, errors: {} },
    async (ctx, { query }) => {
      ctx.body = await reads.entry(principalOf(ctx), projectOf(ctx), id(ctx, 'entryId', 'entry'), query.at);
    },
  );

  api.add(
    router,
    { method: 'get', path: '/as-of/form-sets/:formSetId/entries', operationId: 'listFormSetEntriesAsOf', summary: 'The form set\'s entries the public API served at an instant, most recently published first, a page at a time', tag: 'As of', query: atListQuery, responses: { 200: { description: 'A page of the entries live then', schema: asOfPageSchema } }, errors: {} },
    async (ctx, { query }) => {
      ctx.body = await reads.formSetEntries(principalOf(ctx), projectOf(ctx), id(ctx, 'formSetId', 'form set'), query.at, query);
    },
  );

  api.add(
    router,
    { method: 'get', path: '/as-of/form-sets/:formSetId/entries/:slug', operationId: 'getEntryBySlugAsOf', summary: 'The entry the public API served at a slug of the form set at an instant (404 when none was)', tag: 'As of', query: atQuery, textParams: ['slug'], responses: { 200: { description: 'The entry as served then', schema: asOfEntrySchema } }, errors: {} },
    async (ctx, { query }) => {
      ctx.body = await reads.entryBySlug(principalOf(ctx), projectOf(ctx), id(ctx, 'formSetId', 'form set'), String(ctx.params['slug']), query.at);
    },
  );

  api.add(
    router,
    { method: 'get', path: '/entries/:entryId/workflow', operationId: 'getEntryWorkflowAsOf', summary: 'The entry\'s whole workflow state at an instant: slug, assignee, latest revision with status, editor and submitter, live revision (404 before it existed)', tag: 'As of', query: atQuery, responses: { 200: { description: 'The workflow state then', schema: workflowSchema } }, errors: {} },
    async (ctx, { query }) => {
      ctx.body = await reads.workflow(principalOf(ctx), projectOf(ctx), id(ctx, 'entryId', 'entry'), query.at);
    },
  );

  return router;
}

import type { Router } from '@koa/router';
import { newRouter } from '../router.ts';
import type { Context } from 'koa';
import { z } from 'zod';
import { IN_REVIEW_STATUSES, REVISION_STATUSES } from '../../domain/content/entry/entry-workflow.ts';
import { notFound, validationError } from '../errors/error-factory.ts';
import { statusOfDomainCode } from '../errors/domain-error-to-http.ts';
import type { DomainErrorCode } from '../../domain/domain-error.ts';
import type { ApiRegistry } from './api-registry.ts';
import { errorEnvelopeSchema } from './error-envelope-schema.ts';
import { recordRefusedWrite } from './refusal-audit.ts';
import { auditItemSchema, createdEntrySchema, diffSchema, entrySummary, entrySummarySchema, historyItemSchema, revisionRefSchema, restoredFromSchema, reviewItem, reviewItemSchema } from './content-views.ts';
import { instant, listQuery, pageSchema, strictQuery } from './list-query.ts';
import { type AdminDeps, idempotencyKeyOf, principalOf, projectOf } from './admin-context.ts';
import { isUuid } from './request-body.ts';

const MAX_BULK_REVISIONS = 100;

const idempotentBody = z.object({
  idempotencyKey: z.string().optional(),
});

const renameBody = z.object({
  slug: z.string({ error: 'required, a string of lowercase letters, digits and hyphens' }),
});

/** Spec section 8's lengths; the domain checks them again (and control characters). */
const externalIdentity = z.object({
  sourceType: z.string().min(1, 'must not be empty').max(50, 'at most 50 characters').optional(),
  entityType: z.string().min(1, 'must not be empty').max(200, 'at most 200 characters').optional(),
  externalId: z.string().min(1, 'must not be empty').max(2000, 'at most 2000 characters'),
});

const importMetadataBody = z.object({
  importPath: z.string().min(1, 'must not be empty').max(2000, 'at most 2000 characters').nullable().optional(),
  external: externalIdentity.nullable().optional(),
});

const assigneeBody = z.object({
  userId: z.string().min(1, 'must not be empty').max(200, 'at most 200 characters').nullable(),
});

const publishAt = z.union([z.string(), z.object({ local: z.string(), timeZone: z.string() })]);

const bulkScheduleBody = z.object({
  revisionIds: z.array(z.string()).min(1, 'at least 1 revision id').max(MAX_BULK_REVISIONS, `at most ${MAX_BULK_REVISIONS} revision ids`),
  publishAt,
});

const restoreBody = z.object({
  expectedRevision: z.number().int().positive().optional(),
  idempotencyKey: z.string().optional(),
});

const diffQuery = strictQuery({
  from: z.string({ error: 'required, a revision id' }).describe('The revision id to compare from.'),
  to: z.string({ error: 'required, a revision id' }).describe('The revision id to compare to.'),
});


const auditQuery = listQuery({
  actor: z.string().min(1).max(200).optional().describe('Only events of this user, agent key or system actor id.'),
  entryId: z.uuid({ error: 'must be an entry id (UUID)' }).optional().describe('Only events of this entry.'),
  from: instant.optional().describe('Only events at or after this time (ISO 8601 with an offset).'),
  to: instant.optional().describe('Only events before this time (ISO 8601 with an offset).'),
});

const historyQuery = listQuery({});

/** POST /revisions/bulk-schedule: one result per revision, in the order given. */
const bulkScheduleSchema = z.object({
  publishAt: z.string().describe('The publish time, in UTC.'),
  succeeded: z.number().int(),
  failed: z.number().int(),
  results: z.array(
    z.union([
      z.object({ revisionId: z.string(), ok: z.literal(true), entryId: z.uuid(), revision: z.number().int(), status: z.enum(REVISION_STATUSES), publishAt: z.string().nullable() }),
      z.object({ revisionId: z.string(), ok: z.literal(false), error: z.object({ code: z.string(), message: z.string(), hint: z.string().optional() }) }),
    ]),
  ),
}).meta({ id: 'BulkScheduleResult' });

/** POST /revisions/bulk-schedule when none was scheduled: the error envelope with the results beside it. */
const bulkScheduleFailureSchema = errorEnvelopeSchema().extend(bulkScheduleSchema.shape).meta({ id: 'BulkScheduleFailure' });

const restoredSchema = revisionRefSchema.extend({ restoredFrom: restoredFromSchema }).meta({ id: 'RestoredRevision' });

const reviewQueueQuery = listQuery({
  assignee: z.string().min(1, 'must not be empty').max(200).optional().describe('Only revisions of entries assigned to this user id.'),
  formSetId: z.uuid({ error: 'must be a form set id (UUID)' }).optional().describe('Only revisions of this form set\'s entries.'),
  status: z.enum(IN_REVIEW_STATUSES).optional().describe('Only revisions waiting for review (pending_review) or for their publish time (scheduled).'),
});

const historyPageSchema = pageSchema(historyItemSchema, { entryId: z.uuid() });
const reviewQueuePageSchema = pageSchema(reviewItemSchema);
const auditPageSchema = pageSchema(auditItemSchema);

/**
 * Entry lifecycle beyond create and save: duplicate, delete, rename, import metadata, assignee, bulk
 * scheduling, and the audit history (entry history, revision diff, restore, project audit log). Handlers
 * validate the request, call the content service and shape the answer; the rules live in the domain.
 */
export function entryRoutes(deps: AdminDeps, api: ApiRegistry): Router {
  const router = newRouter();
  const { content } = deps;
  const id = (ctx: Context, name: string): string => {
    const value = ctx.params[name];
    if (!isUuid(value)) throw notFound(`No ${name.replace(/Id$/, '').replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`)} ${value}.`);
    return value;
  };

  api.add(router, { method: 'post', path: '/entries/:entryId/duplicate', operationId: 'duplicateEntry', permission: 'entries.write', summary: 'Duplicate an entry as a new draft with all field values and slug {slug}-copy, or the next free {slug}-copy-2, {slug}-copy-3, ... (409 only when the first 100 are taken; idempotent by key)', tag: 'Entries', body: idempotentBody, responses: { 201: { description: 'The new entry and its draft revision', schema: createdEntrySchema } }, errors: { 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const result = await content.duplicateEntry(principalOf(ctx), projectOf(ctx), id(ctx, 'entryId'), idempotencyKeyOf(ctx, body));
    ctx.status = result.status;
    ctx.body = result.body;
  });

  api.add(router, { method: 'delete', path: '/entries/:entryId', operationId: 'deleteEntry', permission: 'entries.delete', summary: 'Delete an entry with all its revisions (tenant_admin, or an agent key of scope full or schema); the public API answers 404 afterwards', tag: 'Entries', responses: { 204: { description: 'Deleted', empty: true } }, errors: { 403: ['HUMAN_APPROVAL_REQUIRED'] } }, async (ctx) => {
    await content.deleteEntry(principalOf(ctx), projectOf(ctx), id(ctx, 'entryId'));
    ctx.status = 204;
  });

  api.add(router, { method: 'patch', path: '/entries/:entryId/slug', operationId: 'renameEntry', permission: 'entries.write', summary: 'Change an entry\'s slug (409 on a clash); former slugs stay reserved and answer with a 301', tag: 'Entries', body: renameBody, responses: { 200: { description: 'The entry', schema: entrySummarySchema } }, errors: { 403: ['HUMAN_APPROVAL_REQUIRED'], 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    ctx.body = entrySummary(await content.renameEntry(principalOf(ctx), projectOf(ctx), id(ctx, 'entryId'), body.slug));
  });

  api.add(router, { method: 'put', path: '/entries/:entryId/import-metadata', operationId: 'setEntryImportMetadata', permission: 'entries.write', summary: 'Set import metadata: importPath and external {sourceType (50), entityType (200), externalId (2000)}; an absent field is kept, null clears it', tag: 'Entries', body: importMetadataBody, responses: { 200: { description: 'The entry', schema: entrySummarySchema } }, errors: { 403: ['HUMAN_APPROVAL_REQUIRED'], 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    ctx.body = entrySummary(await content.setImportMetadata(principalOf(ctx), projectOf(ctx), id(ctx, 'entryId'), body));
  });

  api.add(router, { method: 'put', path: '/entries/:entryId/assignee', operationId: 'assignEntry', permission: 'entries.assign', summary: 'Assign an entry to a console user for review, or clear with null (Business plan and above: PLAN_REQUIRED otherwise)', tag: 'Entries', body: assigneeBody, responses: { 200: { description: 'The entry', schema: entrySummarySchema } }, errors: { 403: ['PLAN_REQUIRED'] } }, async (ctx, { body }) => {
    ctx.body = entrySummary(await content.assignEntry(principalOf(ctx), projectOf(ctx), id(ctx, 'entryId'), body.userId));
  });

  api.add(
    router,
    {
      method: 'post',
      path: '/revisions/bulk-schedule',
      operationId: 'bulkScheduleRevisions',
      permission: 'revisions.schedule',
      summary: 'Approve up to 100 revisions in review with one publish time (ISO with offset, or {local, timeZone}); answers each revision\'s result: 200 when all were scheduled, 207 when only some were, and an error status when none was',
      tag: 'Revisions',
      body: bulkScheduleBody,
      responses: {
        200: { description: 'Every revision was scheduled: failed is 0, each result ok', schema: bulkScheduleSchema },
        207: { description: 'Multi-status: some revisions were scheduled and some were not; each failed result with ok: false and its error {code, message, hint?}', schema: bulkScheduleSchema },
        // None was scheduled: the failures' common status and code (else 409 CONFLICT), with the results beside the envelope.
        ...Object.fromEntries(([400, 403, 404, 409] as const).map((status) => [status, { description: 'None was scheduled: the error envelope, with publishAt, succeeded: 0, failed and results beside it', schema: bulkScheduleFailureSchema }])),
      },
      // humanApproval refuses an agent key's bulk schedule as a whole, before any revision (the envelope alone).
      errors: { 403: ['HUMAN_APPROVAL_REQUIRED'] },
    },
    async (ctx, { body }) => {
      const outcome = await content.bulkSchedule(principalOf(ctx), projectOf(ctx), body.revisionIds, body.publishAt, {
        onRefused: (error) => recordRefusedWrite(deps, ctx, 'bulkScheduleRevisions', error),
      });
      if (outcome.failed === 0) {
        ctx.body = outcome;
      } else if (outcome.succeeded > 0) {
        ctx.status = 207;
        ctx.body = outcome;
      } else {
        const failures = outcome.results.flatMap((r) => (r.ok ? [] : [r]));
        const codes = new Set(failures.map((r) => r.error.code));
        const code = codes.size === 1 ? [...codes][0]! : 'CONFLICT';
        const listed = failures.slice(0, 5).map((r) => `${r.revisionId}: ${r.error.code}`).join('; ');
        ctx.status = statusOfDomainCode(code as DomainErrorCode) ?? 409;
        ctx.body = {
          error: { code, message: `None of the ${failures.length} revisions was scheduled (${listed}${failures.length > 5 ? '; ...' : ''}).`, hint: 'See results for each revision\'s error.', retryable: false },
          ...outcome,
        };
      }
    },
  );

  api.add(router, { method: 'get', path: '/entries/:entryId/history', operationId: 'getEntryHistory', permission: 'entries.history.read', summary: 'Every event of an entry, oldest first, with actor, time and kind, a page at a time', tag: 'History', query: historyQuery, responses: { 200: { description: 'A page of the entry\'s events', schema: historyPageSchema } }, errors: {} }, async (ctx, { query }) => {
    const entryId = id(ctx, 'entryId');
    ctx.body = { entryId, ...(await content.entryHistory(projectOf(ctx), entryId, query)) };
  });

  api.add(
    router,
    {
      method: 'get',
      path: '/review-queue',
      operationId: 'getReviewQueue',
      permission: 'entries.read',
      summary: 'The review desk: every revision in pending_review or scheduled across the project\'s form sets, oldest submission first, with entry title, form set, submitter, submission time, assignee and publish time; filter by assignee, form set and status',
      tag: 'Revisions',
      query: reviewQueueQuery,
      responses: { 200: { description: 'A page of the queue', schema: reviewQueuePageSchema } },
      errors: {},
    },
    async (ctx, { query }) => {
      const page = await content.reviewQueue(projectOf(ctx), query);
      ctx.body = { items: page.items.map(reviewItem), nextCursor: page.nextCursor };
    },
  );

  api.add(router, { method: 'get', path: '/entries/:entryId/diff', operationId: 'diffEntryRevisions', permission: 'entries.history.read', summary: 'Field-level diff between two revisions of an entry (from and to are revision ids)', tag: 'History', query: diffQuery, responses: { 200: { description: 'The changes, one per field (per locale for localized fields)', schema: diffSchema } }, errors: {} }, async (ctx, { query }) => {
    const entryId = id(ctx, 'entryId');
    for (const name of ['from', 'to'] as const) if (!isUuid(query[name])) throw validationError(`${name}: must be a revision id (UUID).`);
    ctx.body = { entryId, ...(await content.diffRevisions(projectOf(ctx), entryId, query.from, query.to)) };
  });

  api.add(router, { method: 'post', path: '/revisions/:revisionId/restore', operationId: 'restoreRevision', permission: 'revisions.save', summary: 'Restore an old revision: its field values become a new draft revision (idempotent by key)', tag: 'History', body: restoreBody, responses: { 201: { description: 'The new draft revision', schema: restoredSchema } }, errors: { 409: ['REVISION_CONFLICT'] } }, async (ctx, { body }) => {
    const result = await content.restoreRevision(principalOf(ctx), projectOf(ctx), id(ctx, 'revisionId'), { expectedRevision: body.expectedRevision }, idempotencyKeyOf(ctx, body));
    ctx.status = result.status;
    ctx.body = result.body;
  });

  api.add(router, { method: 'get', path: '/audit-log', operationId: 'getAuditLog', permission: 'audit.read', summary: 'The project\'s audit log, newest first, filterable by actor id, entry and time [from, to) (tenant_admin sessions only)', tag: 'History', query: auditQuery, responses: { 200: { description: 'A page of audit records', schema: auditPageSchema } }, errors: {} }, async (ctx, { query }) => {
    ctx.body = await content.auditLog(projectOf(ctx), query);
  });

  return router;
}

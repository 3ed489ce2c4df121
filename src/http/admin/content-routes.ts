import type { Router } from '@koa/router';
import { newRouter } from '../router.ts';
import type { Context } from 'koa';
import { z } from 'zod';
import type { FormSetView, ProjectView, RevisionAction } from '../../application/content-service.ts';
import { sampleValues, toJsonSchema } from '../../domain/content/form-set/field-validation.ts';
import { notFound } from '../errors/error-factory.ts';
import type { ApiRegistry } from './api-registry.ts';
import type { Action } from '../../domain/access/permissions.ts';
import { createdEntrySchema, entryDetail, entryDetailSchema, entrySummary, entrySummarySchema, formSetDetail, formSetDetailSchema, formSetSchemaSchema, formSetSummary, formSetSummarySchema, revisionDetailSchema, revisionRefSchema, revisionSummary, revisionSummarySchema, revisionTransitionSchema, tenantSchemaSchema } from './content-views.ts';
import { instant, listQuery, pageSchema } from './list-query.ts';
import { REVISION_STATUSES } from '../../domain/content/entry/entry-workflow.ts';
import { SLUG_MAX_LENGTH, SLUG_MIN_LENGTH, SLUG_PATTERN } from '../../domain/content/entry/slug.ts';
import { ENTRY_LIST_SORTS } from '../../../projections/content.ts';
import { contentQueries } from '../../../projections/content-queries.ts';
import { type AdminDeps, idempotencyKeyOf, principalOf, projectOf } from './admin-context.ts';
import { isUuid } from './request-body.ts';

const formSetBody = z.looseObject({
  slug: z.string(),
  name: z.string(),
  idempotencyKey: z.string().optional(),
  expectedVersion: z.number().int().positive().optional(),
});

const externalIdentity = z.object({
  sourceType: z.string().max(50, 'at most 50 characters').optional(),
  entityType: z.string().max(200, 'at most 200 characters').optional(),
  externalId: z.string().min(1).max(2000, 'at most 2000 characters'),
});

const createEntryBody = z.object({
  // The rules are the domain's (validateSlug names the one broken); the document states them.
  slug: z
    .string({ error: 'required, a string of lowercase letters, digits and hyphens' })
    .meta({ minLength: SLUG_MIN_LENGTH, maxLength: SLUG_MAX_LENGTH, pattern: SLUG_PATTERN.source })
    .describe('URL slug, unique in the form set: lowercase letters a-z, digits and single hyphens between them, e.g. "my-first-post".'),
  fields: z.record(z.string(), z.unknown()).default({}),
  importPath: z.string().max(2000).optional(),
  external: externalIdentity.optional(),
  idempotencyKey: z.string().optional(),
});

const saveRevisionBody = z.object({
  fields: z.record(z.string(), z.unknown()),
  expectedRevision: z.number().int().positive().optional(),
  idempotencyKey: z.string().optional(),
});

const revisionActionBody = z.object({
  revision: z.number().int().positive().optional(),
  publishAt: z.union([z.string(), z.object({ local: z.string(), timeZone: z.string() })]).optional(),
  reason: z.string().max(2000).optional(),
});

const ENTRY_SORTS = Object.keys(ENTRY_LIST_SORTS).flatMap((key) => [`${key}:desc`, `${key}:asc`]) as Array<`${keyof typeof ENTRY_LIST_SORTS}:${'asc' | 'desc'}`>;

const entryListQuery = listQuery({
  status: z.enum(REVISION_STATUSES).optional().describe('Only entries whose latest revision has this status.'),
  assignee: z.string().min(1, 'must not be empty').max(200).optional().describe('Only entries assigned to this user id.'),
  updatedBy: z.string().min(1, 'must not be empty').max(200).optional().describe('Only entries whose last change was made by this user or agent key id.'),
  updatedFrom: instant.optional().describe('Only entries changed at or after this time (ISO 8601 with an offset).'),
  updatedTo: instant.optional().describe('Only entries changed before this time (ISO 8601 with an offset).'),
  q: z.string().trim().min(1, 'must not be empty').max(200, 'at most 200 characters').optional().describe('Words that must all occur in the title or text fields of the latest revision (any locale). On every plan.'),
  sort: z.enum(ENTRY_SORTS).default('updated_at:desc').describe('updated_at, title or published_at, then :asc or :desc (default updated_at:desc). Entries never published come last by published_at:desc, first by :asc.'),
});

/** What a page of a pinned walk (the entry list) says of the walk. */
export const walkFields = {
  asOf: z.string().regex(/^\d{20}$/).describe('The log position the walk lists entries as of, fixed by its first page.'),
  changed: z.boolean().describe('false: entries as they were at asOf, in the requested order; true: entries created or changed since asOf, in the order of their last change.'),
};

const revisionListQuery = listQuery({
  order: z.enum(['asc', 'desc']).default('asc').describe('asc: oldest first (default); desc: newest first.'),
});

const formSetListSchema = z.object({ items: z.array(formSetSummarySchema) });
const entryPageSchema = pageSchema(entrySummarySchema, walkFields);
const revisionPageSchema = pageSchema(revisionSummarySchema);

/**
 * Form sets, entries and revisions (spec section 4.3). Handlers validate the request, call the content
 * service and shape the answer; the rules live in the domain.
 */
export function contentRoutes(deps: AdminDeps, api: ApiRegistry): Router {
  const router = newRouter();
  const { content } = deps;
  const contentModel = contentQueries(deps.reader, deps.log);
  const id = (ctx: Context, name: string): string => {
    const value = ctx.params[name];
    if (!isUuid(value)) throw notFound(`No ${name.replace(/Id$/, '').replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`)} ${value}.`);
    return value;
  };

  api.add(router, { method: 'get', path: '/form-sets', operationId: 'listFormSets', permission: 'form-sets.read', summary: 'List the project\'s form sets', tag: 'Form sets', responses: { 200: { description: 'The form sets', schema: formSetListSchema } }, errors: {} }, async (ctx) => {
    const project = projectOf(ctx);
    const items = await contentModel.formSetsOfProject(project.projectId);
    ctx.body = { items: items.map(formSetSummary) };
  });

  api.add(router, { method: 'post', path: '/form-sets', operationId: 'createFormSet', permission: 'form-sets.write', summary: 'Create a form set (slug unique per project: 409 on a clash)', tag: 'Form sets', body: formSetBody, responses: { 201: { description: 'The form set', schema: formSetDetailSchema } }, errors: { 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const { idempotencyKey: _key, expectedVersion: _version, ...definition } = body;
    const result = await content.createFormSet(principalOf(ctx), projectOf(ctx), definition, idempotencyKeyOf(ctx, body));
    ctx.status = result.status;
    ctx.body = formSetDetail(result.body as Record<string, unknown>);
  });

  api.add(router, { method: 'get', path: '/form-sets/:formSetId', operationId: 'getFormSet', permission: 'form-sets.read', summary: 'Read a form set with its definition', tag: 'Form sets', responses: { 200: { description: 'The form set', schema: formSetDetailSchema } }, errors: {} }, async (ctx) => {
    ctx.body = formSetDetail(await content.formSetOrFail(projectOf(ctx), id(ctx, 'formSetId')) as never);
  });

  api.add(router, { method: 'put', path: '/form-sets/:formSetId', operationId: 'updateFormSet', permission: 'form-sets.write', permissionCheckedBy: 'domain', summary: 'Replace a form set\'s definition (removing a field or block is a console-admin action)', tag: 'Form sets', body: formSetBody, responses: { 200: { description: 'The form set', schema: formSetDetailSchema } }, errors: { 403: ['HUMAN_APPROVAL_REQUIRED'], 409: ['CONFLICT', 'REVISION_CONFLICT'] } }, async (ctx, { body }) => {
    const { idempotencyKey: _key, expectedVersion, ...definition } = body;
    const updated = await content.updateFormSet(principalOf(ctx), projectOf(ctx), id(ctx, 'formSetId'), definition, expectedVersion);
    ctx.body = formSetDetail(updated as never);
  });

  api.add(router, { method: 'delete', path: '/form-sets/:formSetId', operationId: 'deleteFormSet', permission: 'form-sets.delete', permissionCheckedBy: 'domain', summary: 'Delete a form set (console tenant_admin only; agent keys never)', tag: 'Form sets', responses: { 204: { description: 'Deleted', empty: true } }, errors: { 409: ['CONFLICT'] } }, async (ctx) => {
    await content.deleteFormSet(principalOf(ctx), projectOf(ctx), id(ctx, 'formSetId'));
    ctx.status = 204;
  });

  api.add(router, { method: 'post', path: '/form-sets/:formSetId/entries', operationId: 'createEntry', permission: 'entries.write', summary: 'Create an entry with its first draft revision (idempotent by key)', tag: 'Entries', body: createEntryBody, responses: { 201: { description: 'The entry and its revision', schema: createdEntrySchema } }, errors: { 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const result = await content.createEntry(principalOf(ctx), projectOf(ctx), id(ctx, 'formSetId'), body, idempotencyKeyOf(ctx, body));
    ctx.status = result.status;
    ctx.body = result.body;
  });

  api.add(
    router,
    {
      method: 'get',
      path: '/form-sets/:formSetId/entries',
      operationId: 'listEntries',
      permission: 'entries.read',
      summary:
        'List a form set\'s entries, a page at a time, filtered by status of the latest revision, assignee, updatedBy, updated-time range and q (search on every plan), sorted by updated time (default, newest first), title or publish time. ' +
        'The walk is pinned to the position of its first page (asOf): first every entry as it was then, each once, in the requested order (changed: false); then the entries created or changed since, in the order of their changes (changed: true). Nothing is skipped while entries change between pages; an entry changed during the walk comes again in the second part, with its new values.',
      tag: 'Entries',
      query: entryListQuery,
      responses: { 200: { description: 'A page of entries', schema: entryPageSchema } },
      errors: { 403: ['PLAN_REQUIRED'] },
    },
    async (ctx, { query }) => {
      const page = await content.listEntries(projectOf(ctx), id(ctx, 'formSetId'), query);
      ctx.body = { items: page.items.map(entrySummary), nextCursor: page.nextCursor, asOf: page.asOf, changed: page.changed };
    },
  );

  api.add(router, { method: 'get', path: '/entries/:entryId', operationId: 'getEntry', permission: 'entries.read', summary: 'Read an entry: its latest and live revisions and how many revisions it has, with links to the paged revisions and history', tag: 'Entries', responses: { 200: { description: 'The entry', schema: entryDetailSchema } }, errors: {} }, async (ctx) => {
    ctx.body = entryDetail(await content.getEntry(projectOf(ctx), id(ctx, 'entryId')));
  });

  api.add(
    router,
    {
      method: 'get',
      path: '/entries/:entryId/revisions',
      operationId: 'listRevisions',
      permission: 'revisions.read',
      summary: 'List an entry\'s revisions without their values, oldest first (order=desc: newest first), a page at a time (list_revisions)',
      tag: 'Revisions',
      query: revisionListQuery,
      responses: { 200: { description: 'A page of revisions', schema: revisionPageSchema } },
      errors: {},
    },
    async (ctx, { query }) => {
      const page = await content.listRevisions(projectOf(ctx), id(ctx, 'entryId'), query);
      ctx.body = { items: page.items.map(revisionSummary), nextCursor: page.nextCursor };
    },
  );

  api.add(router, { method: 'get', path: '/form-sets/:formSetId/schema', operationId: 'getFormSetSchema', permission: 'form-sets.read', summary: 'A form set\'s fields as JSON Schema for entry values, with masterEntityKey and sampleValues for select fields (get_form_set_schema)', tag: 'Form sets', responses: { 200: { description: 'The schema', schema: formSetSchemaSchema } }, errors: {} }, async (ctx) => {
    const project = projectOf(ctx);
    const formSet = await content.formSetOrFail(project, id(ctx, 'formSetId'));
    ctx.body = await formSetSchema(formSet, project, await mastersOf(project.projectId));
  });

  api.add(router, { method: 'get', path: '/tenant-schema', operationId: 'getTenantSchema', permission: 'form-sets.read', summary: 'Every form set of the project with its fields, and the master entities behind select fields (get_tenant_schema)', tag: 'Form sets', responses: { 200: { description: 'The schema of the project', schema: tenantSchemaSchema } }, errors: {} }, async (ctx) => {
    const project = projectOf(ctx);
    const [formSets, masters] = await Promise.all([
      contentModel.formSetsOfProject(project.projectId),
      mastersOf(project.projectId),
    ]);
    ctx.body = {
      projectId: project.projectId,
      contentLocales: project.contentLocales,
      formSets: await Promise.all(formSets.map((f) => formSetSchema(f, project, masters))),
      masters: masters.map((m) => ({ id: m.masterId, key: m.key, name: m.name, recordCount: m.records.length, published: m.sitePublishedAt !== null })),
    };
  });

  const mastersOf = contentModel.mastersOfProject;

  api.add(router, { method: 'post', path: '/entries/:entryId/revisions', operationId: 'saveRevision', permission: 'revisions.save', summary: 'Save a new revision with the full field values (returns id and revision for publishing)', tag: 'Revisions', body: saveRevisionBody, responses: { 201: { description: 'The revision', schema: revisionRefSchema } }, errors: { 409: ['REVISION_CONFLICT', 'CONFLICT'] } }, async (ctx, { body }) => {
    const result = await content.saveRevision(principalOf(ctx), projectOf(ctx), id(ctx, 'entryId'), body, idempotencyKeyOf(ctx, body));
    ctx.status = result.status;
    ctx.body = result.body;
  });

  api.add(router, { method: 'get', path: '/revisions/:revisionId', operationId: 'getRevision', permission: 'revisions.read', summary: 'Read a revision with its snapshot', tag: 'Revisions', responses: { 200: { description: 'The revision', schema: revisionDetailSchema } }, errors: {} }, async (ctx) => {
    const revision = await content.revisionOrFail(projectOf(ctx), id(ctx, 'revisionId'));
    ctx.body = { ...revisionSummary(revision as never), snapshot: revision.snapshot };
  });

  // The project's approval policy refuses an approval or a publication (docs/help/workflow.md).
  const POLICY_REFUSALS = ['HUMAN_APPROVAL_REQUIRED', 'FOUR_EYES_REQUIRED'] as const;
  const actions: RevisionAction[] = ['submit', 'approve', 'reject', 'withdraw', 'reopen', 'publish'];
  const summaries: Record<RevisionAction, string> = {
    submit: 'Submit a draft for review',
    approve: 'Approve a revision in review: published now, or scheduled when publishAt is given (ISO with offset, or {local, timeZone})',
    reject: 'Reject a revision in review or scheduled',
    withdraw: 'Withdraw a revision from review or schedule back to draft',
    reopen: 'Reopen a rejected revision as a draft',
    publish: 'Publish a revision in review (already_published when it is live; REVISION_CONFLICT when stale)',
  };
  // Checked by the entry decider, whose refusal names the revision (the audit trail keeps it).
  const REVISION_PERMISSIONS: Record<RevisionAction, Action> = { submit: 'revisions.submit', approve: 'revisions.approve', reject: 'revisions.reject', withdraw: 'revisions.withdraw', reopen: 'revisions.reopen', publish: 'revisions.publish' };
  for (const action of actions) {
    api.add(router, { method: 'post', path: `/revisions/:revisionId/${action}`, operationId: `${action}Revision`, permission: REVISION_PERMISSIONS[action], permissionCheckedBy: 'domain', summary: summaries[action], tag: 'Revisions', body: revisionActionBody, responses: { 200: { description: 'The revision after the transition', schema: revisionTransitionSchema } }, errors: action === 'approve' || action === 'publish' ? { 403: POLICY_REFUSALS, 409: ['REVISION_CONFLICT', 'CONFLICT'] } : action === 'withdraw' ? { 403: ['HUMAN_APPROVAL_REQUIRED'], 409: ['REVISION_CONFLICT', 'CONFLICT'] } : { 409: ['REVISION_CONFLICT', 'CONFLICT'] } }, async (ctx, { body }) => {
      ctx.body = await content.revisionAction(principalOf(ctx), projectOf(ctx), id(ctx, 'revisionId'), action, body);
    });
  }
  return router;
}

interface MasterDoc {
  masterId: string;
  key: string;
  name: string;
  records: Array<{ value: string; order?: number }>;
  sitePublishedAt: string | null;
}

/** What an agent needs to write valid entries: each field, and the JSON Schema of the fields object. */
async function formSetSchema(formSet: FormSetView, project: ProjectView, masters: MasterDoc[]) {
  const byKey = new Map(masters.map((m) => [m.key, m]));
  return {
    ...formSetSummary(formSet as never),
    contentLocales: { locales: [...project.contentLocales.locales], defaultLocale: project.contentLocales.defaultLocale },
    fields: formSet.definition.fields.map((field) => {
      const master = field.masterEntityKey ? byKey.get(field.masterEntityKey) : undefined;
      return {
        key: field.key,
        type: field.type,
        label: field.label,
        required: field.required ?? false,
        localeShared: field.locale_shared ?? false,
        ...(field.masterEntityKey ? { masterEntityKey: field.masterEntityKey, sampleValues: sampleValues(field, master) } : {}),
      };
    }),
    jsonSchema: toJsonSchema(formSet.definition, project.contentLocales, {
      masterValues: (key: string) => {
        const master = byKey.get(key);
        return master ? new Set(master.records.map((r) => r.value)) : undefined;
      },
    }),
  };
}

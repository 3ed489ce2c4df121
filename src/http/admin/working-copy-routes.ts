import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { newRouter } from '../router.ts';
import { notFound } from '../errors/error-factory.ts';
import type { ApiRegistry } from './api-registry.ts';
import { type AdminDeps, principalOf, projectOf } from './admin-context.ts';
import { isUuid } from './request-body.ts';

const keepBody = z.object({
  fields: z.record(z.string(), z.unknown()).describe('The field values as typed, as a revision would hold them (not yet validated: a half-typed value is kept as it is).'),
  baseRevision: z.number().int().min(0).describe('The revision the typing started from (0 before the first one); at most the entry\'s latest.'),
});

const owner = z.object({ type: z.enum(['user', 'agent']), id: z.string() });

const workingCopyHeadSchema = z
  .object({
    entryId: z.uuid(),
    owner,
    baseRevision: z.number().int(),
    startedAt: z.string().describe('When this unsaved typing began (UTC).'),
    savedAt: z.string().describe('When it was last kept (UTC).'),
  })
  .meta({ id: 'WorkingCopyHead' });

const workingCopySchema = workingCopyHeadSchema.extend({ fields: z.record(z.string(), z.unknown()) }).meta({ id: 'WorkingCopy' });

const workingCopyListSchema = z.object({ items: z.array(workingCopyHeadSchema) }).meta({ id: 'WorkingCopyList' });

const keptSchema = z
  .object({
    entryId: z.uuid(),
    baseRevision: z.number().int(),
    savedAt: z.string(),
    latestRevision: z.number().int().describe('The entry\'s latest revision now: above baseRevision when someone saved meanwhile (the next save answers 409 REVISION_CONFLICT).'),
  })
  .meta({ id: 'WorkingCopyKept' });

/**
 * A console user's working copy of an entry (src/application/working-copies.ts): the typing the editor keeps
 * on the server between revisions (GET, PUT, DELETE /entries/:entryId/working-copy), and who has unsaved
 * typing in the entry (GET /entries/:entryId/working-copies), for the editor's notice. User sessions only.
 */
export function workingCopyRoutes(deps: AdminDeps, api: ApiRegistry): Router {
  const router = newRouter();
  const { workingCopies } = deps;
  const entryId = (ctx: Context): string => {
    const value = ctx.params['entryId'];
    if (!isUuid(value)) throw notFound(`No entry ${value}.`);
    return value;
  };
  const tag = 'Working copies';

  api.add(router, { method: 'get', path: '/entries/:entryId/working-copy', operationId: 'getWorkingCopy', permission: 'working-copies.keep', summary: 'Your working copy of the entry: what you typed and have not saved as a revision (404 when there is none)', tag, responses: { 200: { description: 'The working copy', schema: workingCopySchema } }, errors: {} }, async (ctx) => {
    const { projectId: _projectId, ...copy } = await workingCopies.get(principalOf(ctx), projectOf(ctx), entryId(ctx));
    ctx.body = copy;
  });

  api.add(
    router,
    {
      method: 'put',
      path: '/entries/:entryId/working-copy',
      operationId: 'keepWorkingCopy',
      permission: 'working-copies.keep',
      summary: 'Keep what you typed in the entry as your working copy, replacing the one before; no revision is made (saving a revision ends the working copy)',
      tag,
      body: keepBody,
      responses: { 200: { description: 'Kept', schema: keptSchema } },
      errors: {},
    },
    async (ctx, { body }) => {
      const kept = await workingCopies.keep(principalOf(ctx), projectOf(ctx), entryId(ctx), body);
      ctx.body = { entryId: kept.entryId, baseRevision: kept.baseRevision, savedAt: kept.savedAt, latestRevision: kept.latestRevision };
    },
  );

  api.add(router, { method: 'delete', path: '/entries/:entryId/working-copy', operationId: 'discardWorkingCopy', permission: 'working-copies.keep', summary: 'Discard your working copy of the entry (204 also when there was none)', tag, responses: { 204: { description: 'Discarded', empty: true } }, errors: {} }, async (ctx) => {
    await workingCopies.discard(principalOf(ctx), projectOf(ctx), entryId(ctx));
    ctx.status = 204;
  });

  api.add(router, { method: 'get', path: '/entries/:entryId/working-copies', operationId: 'listWorkingCopies', permission: 'entries.read', summary: 'Who has unsaved typing in the entry: each working copy\'s owner, base revision and times, without what was typed', tag, responses: { 200: { description: 'The working copies, least recently kept first', schema: workingCopyListSchema } }, errors: {} }, async (ctx) => {
    const copies = await workingCopies.list(projectOf(ctx), entryId(ctx));
    ctx.body = { items: copies.map(({ projectId: _projectId, ...copy }) => copy) };
  });

  return router;
}

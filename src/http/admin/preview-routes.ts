import { z } from 'zod';
import type { Router } from '@koa/router';
import { newRouter } from '../router.ts';
import { contentQueries } from '../../../projections/content-queries.ts';
import { notFound } from '../errors/error-factory.ts';
import type { ApiRegistry } from './api-registry.ts';
import { type AdminDeps, idempotencyKeyOf, principalOf, projectOf } from './admin-context.ts';
import { idempotentCreate } from './idempotent-create.ts';
import { isUuid } from './request-body.ts';

const previewTokenSchema = z.object({
  token: z.string().describe('The only credential of GET /preview/revisions on the public API.'),
  expiresAt: z.iso.datetime(),
  previewUrl: z.string(),
}).meta({ id: 'PreviewToken' });

/**
 * Preview links (spec 4.1 GET /preview/revisions, section 5 rule 7): a console user asks for a token bound
 * to one revision of the project, valid 15 minutes, and hands the link to whoever should see the draft.
 */
export function previewRoutes(deps: AdminDeps, api: ApiRegistry): Router {
  const router = newRouter();
  const contentModel = contentQueries(deps.reader, deps.log);
  api.add(
    router,
    {
      method: 'post',
      path: '/revisions/:revisionId/preview-token',
      operationId: 'issuePreviewToken',
      permission: 'preview.issue',
      summary: 'Issue a preview token for one revision, whatever its status (console users; valid 15 minutes)',
      tag: 'Revisions',
      responses: { 201: { description: 'The token; previewUrl opens the revision on the project-pinned public base', schema: previewTokenSchema } },
      errors: {},
      idempotent: true,
    },
    async (ctx) => {
      const principal = principalOf(ctx);
      const project = projectOf(ctx);
      const revisionId = ctx.params.revisionId!;
      const revision = isUuid(revisionId) ? await contentModel.revision(revisionId) : null;
      if (!revision || revision.projectId !== project.projectId) throw notFound(`No revision ${JSON.stringify(revisionId.slice(0, 64))} in this project.`);
      // The route's permission refuses agent keys: only a console user gets this far.
      const userId = principal.kind === 'user' ? principal.userId : principal.keyId;
      // With an idempotency key the record keeps when the token was issued, never the token: a replay signs the
      // same claims again, which gives the same token.
      const subject = { projectId: project.projectId, revisionId, userId };
      const issued = await idempotentCreate(deps, ctx, { scope: project.projectId, operation: 'issue_preview_token', key: idempotencyKeyOf(ctx, undefined), request: subject, ids: [] }, async () => ({ issuedAt: deps.clock.now().toISOString() }));
      const { token, claims } = await deps.sessions.issuePreview(subject, { issuedAt: new Date(issued.issuedAt) });
      ctx.status = 201;
      ctx.body = {
        token,
        expiresAt: claims.expiresAt.toISOString(),
        previewUrl: `${ctx.protocol}://${ctx.host}/public/p/${project.projectId}/v1/preview/revisions?token=${encodeURIComponent(token)}`,
      };
    },
  );
  return router;
}

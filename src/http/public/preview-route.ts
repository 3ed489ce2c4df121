import type { Router } from '@koa/router';
import { contentQueries } from '../../../projections/content-queries.ts';
import { shapeEntryView } from '../../public-content/entry-view.ts';
import { TokenError } from '../session-tokens.ts';
import { notFound, unauthorized } from '../errors/error-factory.ts';
import type { PublicContentDeps } from './public-content-deps.ts';
import { singleEntryBody } from '../../public-content/public-json.ts';
import { requestedLocale } from './entry-lookup.ts';
import { publicProjectOf } from './public-context.ts';
import { QueryParams } from './query-params.ts';

/** Preview tokens are JWTs of a few hundred characters; anything far longer is not one. */
const TOKEN_MAX_LENGTH = 4096;

/**
 * GET /preview/revisions?token=: one revision, whatever its status, in the single-entry shape (spec 4.1).
 * The token (issued by POST /admin/v1/revisions/{revisionId}/preview-token, valid 15 minutes) is the only
 * credential; it names one project and one revision, and a token of another project is refused like a
 * tampered one. Never cached.
 */
export function previewRoute(router: Router, deps: PublicContentDeps): void {
  const content = contentQueries(deps.reader, deps.log);
  router.get('/preview/revisions', async (ctx) => {
    ctx.set('Cache-Control', 'private, no-store');
    const target = publicProjectOf(ctx);
    const params = new QueryParams(ctx);
    const token = params.requiredString('token', { maxLength: TOKEN_MAX_LENGTH });
    const locale = requestedLocale(params, target);
    let revisionId: string;
    try {
      ({ revisionId } = await deps.sessions.verifyPreview(token, { projectId: target.projectId }));
    } catch (error) {
      if (!(error instanceof TokenError)) throw error;
      throw unauthorized(error.reason === 'expired' ? 'The preview token has expired.' : 'The preview token is invalid.', {
        hint: 'Preview links are valid for 15 minutes: ask the console for a new one.',
      });
    }
    const revision = await content.revision(revisionId);
    const entry = revision ? await content.entry(revision.entryId) : null;
    const formSet = revision ? await deps.publicContent.formSet(revision.formSetId) : null;
    if (!revision || !entry || !formSet || revision.projectId !== target.projectId) throw notFound('The previewed revision no longer exists.');
    const view = shapeEntryView({
      projectId: target.projectId,
      formSet: { formSetId: formSet.formSetId, slug: formSet.slug, name: formSet.name, definition: formSet.definition },
      entry: {
        entryId: entry.entryId,
        slug: entry.slug,
        createdAt: entry.createdAt,
        publishedAt: entry.liveRevision?.publishedAt ?? revision.savedAt,
        importPath: entry.importPath,
        external: entry.external,
      },
      revision: { revisionId: revision.revisionId, revision: revision.revision, updatedAt: revision.updatedAt, snapshot: revision.snapshot },
      locale,
      defaultLocale: target.project.contentLocales.defaultLocale,
    });
    const body = singleEntryBody(view, target.mediaBaseUrl);
    ctx.body = { ...body, revision: { ...view.revision, status: revision.status } };
  });
}

import type { Router } from '@koa/router';
import { newRouter } from '../router.ts';
import { z } from 'zod';
import { revisionRefSchema } from './content-views.ts';
import { EntryTranslator } from '../../translation/entry-translator.ts';
import { TranslationProviderError, type TranslationProvider } from '../../translation/translation-provider.ts';
import { notFound, unavailable } from '../errors/error-factory.ts';
import type { ApiRegistry } from './api-registry.ts';
import { type AdminDeps, principalOf, projectOf } from './admin-context.ts';
import { isUuid } from './request-body.ts';

const locale = z.string().min(1).max(35);
const translateBody = z.object({
  sourceLocale: locale.optional().describe('The locale translated from; default the project\'s default locale'),
  targetLocales: z.array(locale).min(1, 'at least 1 locale').max(30, 'at most 30 locales').optional().describe('The locales to fill; default every other content locale'),
});

export const translationSchema = z.object({
  revision: revisionRefSchema.nullable().describe('The new draft revision; null when nothing was missing.'),
  sourceLocale: z.string(),
  targetLocales: z.array(z.string()),
  translated: z.array(z.object({ field: z.string(), locale: z.string() })).describe('The values filled.'),
  skipped: z.array(z.object({ field: z.string(), locale: z.string(), reason: z.enum(['has-value', 'no-source-value']) })).describe('Values left as they were, and why.'),
  characters: z.number().int().describe('Characters sent to the provider.'),
}).meta({ id: 'EntryTranslation' });

/**
 * POST /entries/:entryId/translate (translate_entry_locales): fills the missing locale values of the
 * entry's latest revision through the configured translation provider (TRANSLATION_API_URL) and saves a
 * new draft revision. Standard plan and above.
 */
export function translationRoutes(deps: AdminDeps, api: ApiRegistry, provider: TranslationProvider | undefined): Router {
  const router = newRouter();
  const translator = new EntryTranslator({ content: deps.content, reader: deps.reader, log: deps.log, provider });
  api.add(
    router,
    {
      method: 'post',
      path: '/entries/:entryId/translate',
      operationId: 'translateEntryLocales',
      permission: 'entries.translate',
      summary:
        'Fill the missing locale values of an entry by machine translation (translate_entry_locales; Standard plan and above): text, textarea and tiptap fields that are not locale_shared, from sourceLocale into targetLocales, saved as a new draft revision. Values already present are kept. Needs TRANSLATION_API_URL on the service (409 otherwise); a provider failure answers 503',
      tag: 'Entries',
      body: translateBody,
      bodyLimitBytes: 16 * 1024,
      responses: { 200: { description: 'The new draft revision (null when nothing was missing) and what was translated', schema: translationSchema } },
      errors: { 403: ['PLAN_REQUIRED'], 409: ['CONFLICT', 'REVISION_CONFLICT'] },
    },
    async (ctx, { body }) => {
      const entryId = ctx.params['entryId'];
      if (!isUuid(entryId)) throw notFound(`No entry ${entryId}.`);
      try {
        ctx.body = await translator.translate(principalOf(ctx), projectOf(ctx), entryId, body);
      } catch (error) {
        if (!(error instanceof TranslationProviderError)) throw error;
        throw unavailable(error.message, {
          hint:
            error.failure === 'rejected' && (error.status === 401 || error.status === 403)
              ? 'The operator checks TRANSLATION_API_KEY.'
              : error.failure === 'refused'
                ? 'The operator allows the provider\'s address with OUTBOUND_ALLOWLIST, or points TRANSLATION_API_URL at a public provider.'
                : 'Nothing was saved; try again later.',
          cause: error,
        });
      }
    },
  );
  return router;
}

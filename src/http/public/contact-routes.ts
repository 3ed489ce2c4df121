import type { Context } from 'koa';
import type { ContactForms } from '../../contact-forms/contact-forms-runtime.ts';
import { FORM_SET_SLUG_PATTERN } from '../../domain/content/form-set/form-set-slug.ts';
import { jsonBody } from '../middleware/json-body.ts';
import { notFound, validationError } from '../errors/error-factory.ts';
import { publicProjectOf } from './public-context.ts';
import type { PublicRoutes } from './public-router.ts';

/**
 * POST /contact-forms/{slug}/submit on both public bases (spec section 4.2): no authentication, the one
 * public write. In order: the per-client-IP rate limit (429 RATE_LIMITED with Retry-After), the body
 * (JSON object, at most CONTACT_SUBMIT_MAX_BYTES: 413 beyond), the form (404 for an unknown or deleted
 * slug), the honeypot (a filled one answers 200 like a success, with a fresh id, and nothing is saved),
 * then the values (400 VALIDATION_ERROR naming each field and its problem). Success: 200
 * `{ok: true, submissionId}`. The autoreply's language is the `locale` query parameter, else the body's
 * `_locale` field, else the project's default locale.
 */
export function publicContactRoutes(contact: ContactForms): PublicRoutes {
  const body = jsonBody({ limitBytes: contact.settings.submitMaxBytes });
  return (router) => {
    router.post(
      '/contact-forms/:slug/submit',
      async (ctx, next) => {
        contact.assertSubmitAllowed(ctx);
        await next();
      },
      body,
      async (ctx: Context) => {
        const { projectId, project } = publicProjectOf(ctx);
        const slug = String(ctx.params['slug'] ?? '');
        const form = FORM_SET_SLUG_PATTERN.test(slug) ? await contact.forms.bySlug(projectId, slug) : null;
        if (!form) throw notFound(`No contact form ${JSON.stringify(slug.slice(0, 100))} in this project.`);
        const locale = ctx.query['locale'];
        if (Array.isArray(locale)) throw validationError('locale: give it once.');
        if (ctx.request.body === undefined) throw validationError('The body must be a JSON object whose keys are the form\'s field keys.', { hint: 'Send Content-Type: application/json.' });
        const { submissionId } = await contact.submissions.submit({ projectId, plan: project.plan, contentLocales: project.contentLocales }, form, ctx.request.body, locale);
        ctx.set('Cache-Control', 'no-store');
        ctx.status = 200;
        ctx.body = { ok: true, submissionId };
      },
    );
  };
}

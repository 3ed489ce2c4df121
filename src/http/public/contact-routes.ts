import type { Context, Middleware } from 'koa';
import type { ContactForms } from '../../contact-forms/contact-forms.ts';
import { formToSubmission } from '../../contact-forms/form-post.ts';
import { renderErrorPage, renderThanksPage } from '../../contact-forms/hosted-page.ts';
import { LOCALE_KEY, resolveLocale } from '../../contact-forms/submission-service.ts';
import { isLocaleCode } from '../../domain/content/form-set/locale-code.ts';
import { FORM_SET_SLUG_PATTERN } from '../../domain/content/form-set/form-set-slug.ts';
import { domainErrorToHttp } from '../errors/domain-error-to-http.ts';
import { notFound, unsupportedMediaType, validationError } from '../errors/error-factory.ts';
import { toHttpError } from '../errors/to-http-error.ts';
import { jsonBody, JSON_TYPES } from '../middleware/json-body.ts';
import { urlencodedForm } from '../middleware/urlencoded-form.ts';
import { cspNonce, sendHtmlPage } from '../contact-host/html-page.ts';
import { siteOf } from '../contact-host/contact-pages.ts';
import { publicProjectOf } from './public-context.ts';
import type { PublicRoutes } from './public-router.ts';

const FORM_TYPE = 'application/x-www-form-urlencoded';

interface SubmitState {
  /** The body came as an HTML form post and the client asked for HTML: answer with pages. */
  htmlAnswers?: boolean;
}

/**
 * POST /contact-forms/{slug}/submit on both public bases (spec section 4.2): no authentication, the one
 * public write. In order: the per-client-IP rate limit (429 RATE_LIMITED with Retry-After), the body
 * (at most CONTACT_SUBMIT_MAX_BYTES: 413 beyond), the form (404 for an unknown or deleted slug), the
 * honeypot (a filled one answers like a success, with a fresh id, and nothing is saved), then the values
 * (400 VALIDATION_ERROR naming each field and its problem). The autoreply's language is the `locale` query
 * parameter, else the body's `_locale` field, else the project's default locale.
 *
 * The body is JSON, or `application/x-www-form-urlencoded` as a plain HTML form on a customer's own site
 * sends it (values converted as the hosted page's are: numbers, ticks, multiselect lists). JSON clients get
 * `200 {ok: true, submissionId}` or the error envelope. A form post whose client asks for HTML (a browser
 * navigating) gets the hosted thank-you page, or an error page saying what to correct, with the same status.
 */
export function publicContactRoutes(contact: ContactForms): PublicRoutes {
  const json = jsonBody({ limitBytes: contact.settings.submitMaxBytes });
  const form = urlencodedForm({ limitBytes: contact.settings.submitMaxBytes });

  const answerBrowsersWithPages: Middleware = async (ctx, next) => {
    const formPost = ctx.is(FORM_TYPE) === FORM_TYPE;
    (ctx.state as SubmitState).htmlAnswers = formPost && ctx.accepts('json', 'html') === 'html';
    try {
      await next();
    } catch (thrown) {
      if (!(ctx.state as SubmitState).htmlAnswers) throw thrown;
      const error = domainErrorToHttp(thrown) ?? toHttpError(thrown);
      if (error.status >= 500) throw thrown;
      for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
      const locale = localeOf(ctx);
      const message = error.hint ? `${error.message} ${error.hint}` : error.message;
      sendHtmlPage(ctx, error.status, renderErrorPage({ title: locale === 'ja' ? '送信できませんでした' : 'The form could not be sent', message, locale, nonce: cspNonce(ctx) }), false);
    }
  };

  const body: Middleware = async (ctx, next) => {
    if (ctx.is(FORM_TYPE) === FORM_TYPE) return form(ctx, next);
    if (ctx.get('Content-Type') !== '' && !ctx.is(JSON_TYPES)) {
      throw unsupportedMediaType('A submission is JSON or an HTML form post.', { hint: `Send Content-Type: application/json, or ${FORM_TYPE} from an HTML form.` });
    }
    return json(ctx, next);
  };

  return (router) => {
    router.post(
      '/contact-forms/:slug/submit',
      answerBrowsersWithPages,
      async (ctx, next) => {
        contact.assertSubmitAllowed(ctx);
        await next();
      },
      body,
      async (ctx: Context) => {
        const { projectId, project } = publicProjectOf(ctx);
        const slug = String(ctx.params['slug'] ?? '');
        const found = FORM_SET_SLUG_PATTERN.test(slug) ? await contact.forms.bySlug(projectId, slug) : null;
        if (!found) throw notFound(`No contact form ${JSON.stringify(slug.slice(0, 100))} in this project.`);
        const locale = ctx.query['locale'];
        if (Array.isArray(locale)) throw validationError('locale: give it once.');
        const raw: unknown = ctx.request.body;
        if (raw === undefined) throw validationError('The body must be a JSON object whose keys are the form\'s field keys.', { hint: `Send Content-Type: application/json, or ${FORM_TYPE} from an HTML form.` });
        const values = ctx.is(FORM_TYPE) === FORM_TYPE ? formToSubmission(found.settings.fields, raw as Record<string, unknown>) : raw;
        const { submissionId } = await contact.submissions.submit({ projectId, plan: project.plan, contentLocales: project.contentLocales }, found, values, locale);
        ctx.set('Cache-Control', 'no-store');
        if ((ctx.state as SubmitState).htmlAnswers) {
          sendHtmlPage(ctx, 200, renderThanksPage({ form: found.settings, locale: localeOf(ctx), embed: false, nonce: cspNonce(ctx), ...siteOf(project) }), false);
          return;
        }
        ctx.status = 200;
        ctx.body = { ok: true, submissionId };
      },
    );
  };
}

/** The language of an HTML answer: `locale` in the query, else `_locale` in the form, else the project's default. */
function localeOf(ctx: Context): string {
  const { project } = publicProjectOf(ctx);
  const query = typeof ctx.query['locale'] === 'string' ? ctx.query['locale'] : undefined;
  const posted = (ctx.request as { body?: Record<string, unknown> }).body?.[LOCALE_KEY];
  const wanted = [query, typeof posted === 'string' ? posted : undefined].find((value) => value !== undefined && isLocaleCode(value));
  return resolveLocale(wanted, project.contentLocales);
}

import type { Middleware } from 'koa';
import type { ProjectDoc } from '../../../projections/access.ts';
import type { ContactFormDoc } from '../../../projections/contact-forms.ts';
import type { ContactForms } from '../../contact-forms/contact-forms.ts';
import { challengeMessage, renderErrorPage, renderFormPage, renderThanksPage } from '../../contact-forms/hosted-page.ts';
import { resolveLocale } from '../../contact-forms/submission-service.ts';
import { formToSubmission } from '../../contact-forms/form-post.ts';
import { isLocaleCode } from '../../domain/content/form-set/locale-code.ts';
import { FORM_SET_SLUG_PATTERN } from '../../domain/content/form-set/form-set-slug.ts';
import { toHttpError } from '../errors/to-http-error.ts';
import { urlencodedForm } from '../middleware/urlencoded-form.ts';
import { cspNonce, sendHtmlPage } from './html-page.ts';
import { accessQueries } from '../../../projections/access-queries.ts';

/**
 * Hosted contact pages (spec section 4.2): `/{projectSlug}/{formSlug}` on a contact host (CONTACT_HOSTS),
 * and `/contact/{projectSlug}/{formSlug}` on any host (so the embedded default needs no DNS). Append
 * `/embed` (or `?embed=1`) for the variant an iframe on another site may show. Only forms with
 * hosted_page_enabled are served.
 *
 * GET renders the form with a fresh proof-of-work challenge; POST (application/x-www-form-urlencoded, what
 * the form sends with or without JavaScript) checks it and answers with the thank-you page, or the form
 * again with the values kept and the errors next to their fields. Strict CSP: nothing but the page's own
 * inline style and script, allowed by a per-response nonce; the form posts only to its own origin; the page
 * may not be framed (`frame-ancestors 'none'`, X-Frame-Options DENY), the embed variant may be framed by
 * any site. Responses are never cached (they carry a single-use challenge).
 *
 * Mount after the API routers and before the not-found middleware.
 */
export function contactPages(contact: ContactForms): Middleware {
  const accessModel = accessQueries(contact.reader);
  const hosts = new Set(contact.settings.hosts);
  const parseForm = urlencodedForm({ limitBytes: contact.settings.submitMaxBytes });

  return async function contactPagesMiddleware(ctx, next) {
    const onContactHost = hosts.has(ctx.hostname.toLowerCase());
    const match = (onContactHost ? /^\/([^/]+)\/([^/]+?)(\/embed)?\/?$/ : /^\/contact\/([^/]+)\/([^/]+?)(\/embed)?\/?$/).exec(ctx.path);
    if (!match) {
      if (!onContactHost) return next();
      return sendHtmlPage(ctx, 404, renderErrorPage({ title: 'Not found', message: 'There is no contact page at this address.', locale: 'en', nonce: cspNonce(ctx) }), false);
    }
    const [, projectSlug, formSlug, embedSuffix] = match as unknown as [string, string, string, string | undefined];
    const embed = embedSuffix !== undefined || ctx.query['embed'] === '1' || ctx.query['embed'] === 'true';
    const nonce = cspNonce(ctx);
    const notFoundPage = () => sendHtmlPage(ctx, 404, renderErrorPage({ title: 'Not found', message: 'There is no contact page at this address.', locale: 'en', nonce, embed }), embed);
    if (!['GET', 'HEAD', 'POST'].includes(ctx.method)) {
      ctx.set('Allow', 'GET, HEAD, POST');
      return sendHtmlPage(ctx, 405, renderErrorPage({ title: 'Method not allowed', message: 'This page answers GET and POST only.', locale: 'en', nonce, embed }), embed);
    }
    if (!FORM_SET_SLUG_PATTERN.test(projectSlug) || !FORM_SET_SLUG_PATTERN.test(formSlug)) return notFoundPage();
    const project = await accessModel.projectBySlug(projectSlug);
    const form = project ? await contact.forms.bySlug(project.projectId, formSlug) : null;
    if (!project || !form?.settings.hosted_page_enabled) return notFoundPage();

    // ?locale= (or a post's _locale) first; else the browser's languages (Accept-Language) among the project's content locales.
    ctx.vary('Accept-Language');
    const browserLocale = ctx.get('Accept-Language') ? ctx.acceptsLanguages(project.contentLocales.locales) || undefined : undefined;
    const queryLocale = typeof ctx.query['locale'] === 'string' && isLocaleCode(ctx.query['locale']) ? ctx.query['locale'] : undefined;
    const scope = `${project.projectId}:${form.formId}`;
    const action = `${ctx.path}${embed && embedSuffix === undefined ? '?embed=1' : ''}`;
    const render = (locale: string, extra: { values?: Record<string, unknown>; fieldErrors?: Record<string, string>; notice?: string; token?: string } = {}) =>
      renderFormPage({
        form: form.settings,
        locale,
        action,
        embed,
        nonce,
        challenge: extra.token ? { token: extra.token, difficulty: contact.challenges.difficulty } : contact.challenges.issue(scope),
        noJsMinSeconds: contact.settings.noJsMinSeconds,
        ...(extra.values ? { values: extra.values } : {}),
        ...(extra.fieldErrors ? { fieldErrors: extra.fieldErrors } : {}),
        notice: extra.notice,
      });

    if (ctx.method !== 'POST') return sendHtmlPage(ctx, 200, render(resolveLocale(queryLocale ?? browserLocale, project.contentLocales)), embed);

    const submittingProject = { projectId: project.projectId, plan: project.plan, contentLocales: project.contentLocales };
    let locale = resolveLocale(queryLocale ?? browserLocale, project.contentLocales);
    try {
      contact.assertSubmitAllowed(ctx);
      if (ctx.get('Content-Type') && !ctx.is('application/x-www-form-urlencoded')) {
        return sendHtmlPage(ctx, 415, renderErrorPage({ title: 'Unsupported form encoding', message: 'Send the form as the page does (application/x-www-form-urlencoded).', locale, nonce, embed }), embed);
      }
      await parseForm(ctx, async () => undefined);
    } catch (thrown) {
      const error = toHttpError(thrown);
      for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
      if (error.status === 429) return sendHtmlPage(ctx, 429, render(locale, { notice: challengeMessage('rate-limited', locale, Number(error.headers['Retry-After'] ?? 60)) }), embed);
      return sendHtmlPage(ctx, error.status, renderErrorPage({ title: 'The form could not be sent', message: error.expose ? error.message : 'Please try again later.', locale, nonce, embed }), embed);
    }
    const raw = ((ctx.request as { body?: unknown }).body ?? {}) as Record<string, unknown>;
    const bodyLocale = typeof raw['_locale'] === 'string' && isLocaleCode(raw['_locale']) ? raw['_locale'] : undefined;
    locale = resolveLocale(queryLocale ?? bodyLocale ?? browserLocale, project.contentLocales);
    const submitted = formToSubmission(form.settings.fields, raw);
    const shown = visibleValues(form, raw);

    // The honeypot first: a bot that filled it gets the thank-you page whatever else it sent.
    if (form.settings.honeypot_enabled && isFilled(raw[form.settings.honeypot_field])) {
      contact.logger.info({ projectId: project.projectId, formId: form.formId }, 'hosted contact page: honeypot filled; answered as accepted, nothing saved');
      return sendHtmlPage(ctx, 200, renderThanksPage({ form: form.settings, locale, embed, nonce, again: action, ...siteOf(project) }), embed);
    }
    const token = typeof raw['_challenge'] === 'string' ? raw['_challenge'] : undefined;
    const verdict = contact.challenges.check(token, raw['_pow'], scope);
    if (!verdict.ok) {
      if (verdict.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(verdict.retryAfterSeconds));
      // Waiting is the no-JavaScript challenge: keep the same token, so sending again after the wait passes.
      const keep = verdict.reason === 'too-early' ? token : undefined;
      return sendHtmlPage(ctx, 400, render(locale, { values: shown, notice: challengeMessage(verdict.reason, locale, verdict.retryAfterSeconds), ...(keep ? { token: keep } : {}) }), embed);
    }
    if (!contact.challenges.spend(verdict)) return sendHtmlPage(ctx, 400, render(locale, { values: shown, notice: challengeMessage('spent', locale) }), embed);
    const outcome = await contact.submissions.accept(submittingProject, form, submitted, locale);
    if (outcome.kind === 'invalid') {
      contact.challenges.unspend(verdict);
      const fieldErrors = Object.fromEntries(outcome.problems.map((p) => [p.field, p.message]));
      const general = outcome.problems.filter((p) => !form.settings.fields.some((f) => f.key === p.field));
      return sendHtmlPage(ctx, 400, render(locale, { values: shown, fieldErrors, ...(general.length ? { notice: general.map((p) => `${p.field}: ${p.message}`).join('; ') } : {}), ...(token ? { token } : {}) }), embed);
    }
    return sendHtmlPage(ctx, 200, renderThanksPage({ form: form.settings, locale, embed, nonce, again: action, ...siteOf(project) }), embed);
  };
}

/** The project's site, when its settings name one: the thank-you page's way back. */
export function siteOf(project: Pick<ProjectDoc, 'siteSettings'>): { site?: { url: string; name: string | null } } {
  const url = project.siteSettings?.siteUrl;
  return url ? { site: { url, name: project.siteSettings.siteName } } : {};
}

/** The posted values to show again in the form (field keys only, as sent). */
function visibleValues(form: ContactFormDoc, raw: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(form.settings.fields.filter((f) => raw[f.key] !== undefined).map((f) => [f.key, raw[f.key]]));
}

function isFilled(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (Array.isArray(value)) return value.some((v) => typeof v === 'string' && v.trim() !== '');
  return typeof value === 'string' ? value.trim() !== '' : true;
}

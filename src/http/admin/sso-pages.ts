import type { Context } from 'koa';
import type { AdminDeps } from './admin-context.ts';
import { setSessionCookie } from './session-cookie.ts';
import { domainErrorToHttp } from '../errors/domain-error-to-http.ts';
import { toHttpError } from '../errors/to-http-error.ts';
import { HttpError } from '../errors/http-error.ts';
import { unavailable } from '../errors/error-factory.ts';
import { OidcError } from '../../sign-in/oidc-relying-party.ts';
import { SamlError } from '../../sign-in/saml-sign-in.ts';
import type { SsoSignedIn, SsoTestResult } from '../../sign-in/identity-sign-in.ts';
import { escapeHtml } from '../../html-escape.ts';

/**
 * What single sign-on's routes (OpenID Connect and SAML) answer a browser: the session begun and the redirect into
 * the console, a refusal (a page that says why, or the envelope), a test of the settings, each a page no script
 * may run on.
 */
export const CONSOLE_PATH = '/console/';

/** The refusal of a sign-in as the spec's envelope would say it: the provider's trouble is 503 (retryable), its refusals 401. */
export function signInError(error: unknown): HttpError {
  if (error instanceof SamlError) {
    return new HttpError({ status: 401, code: 'UNAUTHORIZED', message: 'Single sign-on did not sign you in: the identity provider\'s answer did not pass the checks.', hint: 'Start again from the login page; if it keeps failing, ask your administrator to check the SAML settings.', retryable: false });
  }
  if (error instanceof OidcError) {
    if (error.failure === 'provider-unreachable') return unavailable(error.message, { retryAfterSeconds: 30 });
    return new HttpError({ status: 401, code: 'UNAUTHORIZED', message: error.message, hint: 'Start again from the login page; if it keeps failing, ask your administrator to check the single sign-on settings.', retryable: false });
  }
  return domainErrorToHttp(error) ?? toHttpError(error);
}

/** Answers a refused sign-in: a page for a browser, the envelope for anything else; the provider's words go to the log. */
export function answerRefusal(ctx: Context, deps: AdminDeps, error: unknown): void {
  const http = signInError(error);
  if (http.status >= 500 && !(error instanceof OidcError)) throw error;
  if (error instanceof OidcError) deps.logger.warn({ failure: error.failure, detail: error.detail, requestId: ctx.state.requestId }, 'single sign-on refused');
  if (error instanceof SamlError) deps.logger.warn({ failure: 'saml-response', detail: error.message, requestId: ctx.state.requestId }, 'single sign-on refused');
  ctx.status = http.status;
  ctx.set('Cache-Control', 'no-store');
  for (const [name, value] of Object.entries(http.headers)) ctx.set(name, value);
  if (ctx.accepts('json', 'html') === 'html') {
    sendPage(ctx, 'Sign-in failed', `<p>${escapeHtml(http.message)}</p>${http.hint ? `<p>${escapeHtml(http.hint)}</p>` : ''}<p><a href="${CONSOLE_PATH}">Back to the login page</a></p>`);
    return;
  }
  ctx.body = { error: { code: http.code, message: http.message, ...(http.hint ? { hint: http.hint } : {}), retryable: http.retryable ?? false } };
}

/** The page a test of the settings ends on: what the provider sent, and what a sign-in would have done. */
export function answerTest(ctx: Context, result: SsoTestResult): void {
  const outcome =
    result.outcome === 'refused'
      ? `A sign-in would be refused: ${result.refusal ?? ''}`
      : `A sign-in would ${result.outcome === 'provision' ? 'create a new user' : result.outcome === 'link' ? 'link the existing user with this address' : 'sign in the user linked to this person'}, as ${result.role}${result.customRole ? ` with the role "${result.customRole}"` : ''}.`;
  const rows: Array<[string, string]> = [
    ['Subject (OpenID sub, SAML NameID)', result.subject],
    ['E-mail', result.email === null ? '(none sent)' : `${result.email} (${result.emailVerified ? 'verified' : 'not said to be verified'})`],
    [`Groups ("${result.groupsClaim}")`, result.groups === null ? '(none sent)' : JSON.stringify(result.groups)],
  ];
  ctx.status = 200;
  ctx.set('Cache-Control', 'no-store');
  sendPage(ctx, 'Single sign-on test', `<p>The identity provider signed you in. Nobody was signed in here and nothing was recorded.</p><table>${rows.map(([name, value]) => `<tr><th scope="row">${escapeHtml(name)}</th><td>${escapeHtml(value)}</td></tr>`).join('')}</table><p><strong>${escapeHtml(outcome)}</strong></p><p><a href="${CONSOLE_PATH}p/${encodeURIComponent(result.projectId)}/people">Back to the settings</a></p>`);
}

/** A page a sign-in ends on outside the console: `title` as its heading over `body` (HTML, escaped by the caller); no script may run on it. */
export function sendPage(ctx: Context, title: string, body: string): void {
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
  ctx.body = `<!doctype html><html lang="en"><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#1f2933}th{text-align:left;padding-right:1rem;vertical-align:top}a{color:#1d4ed8}</style><h1>${escapeHtml(title)}</h1>${body}</html>`;
}

/** Begins the console session of someone the provider signed in: recorded as user.signed-in (with the provider), the cookie set, back to the project whose login page the sign-in started from. */
export async function beginSsoSession(ctx: Context, deps: AdminDeps, signedIn: SsoSignedIn): Promise<void> {
  const subject = { userId: signedIn.userId, tenantId: signedIn.tenantId, role: signedIn.role };
  const { token, claims } = await deps.sessions.issueSession(subject);
  const caller = { kind: 'user' as const, ...subject };
  const { position } = await deps.access.signIn.recordSignIn(caller, { userId: signedIn.userId, sessionId: claims.sessionId, issuer: signedIn.issuer, protocol: signedIn.protocol, ...(signedIn.idpSessionId ? { idpSessionId: signedIn.idpSessionId } : {}), ...(signedIn.requestedAt === undefined ? {} : { requestedAt: signedIn.requestedAt }), expiresAt: claims.expiresAt, projectId: signedIn.projectId });
  await deps.watermark.waitFor(position, 2_000);
  setSessionCookie(ctx, token, claims.expiresAt, deps.clock.now());
  ctx.set('Cache-Control', 'no-store');
  ctx.redirect(`${CONSOLE_PATH}p/${signedIn.projectId}/`);
}

/** Where the provider's answer lands: the sign-in `finish` makes, answered as a test's page, the session begun, or the refusal. */
export async function answerSsoFinish(ctx: Context, deps: AdminDeps, finish: () => Promise<SsoSignedIn | SsoTestResult>): Promise<void> {
  try {
    const signedIn = await finish();
    if ('test' in signedIn) {
      answerTest(ctx, signedIn);
      return;
    }
    await beginSsoSession(ctx, deps, signedIn);
  } catch (error) {
    answerRefusal(ctx, deps, error);
  }
}

import type { Router } from '@koa/router';
import type { Context } from 'koa';
import type { SecondFactorSignIn } from '../../sign-in/second-factor-sign-in.ts';
import { newRouter } from '../router.ts';
import { z } from 'zod';
import { decideSignIn } from '../../domain/access/sign-in.ts';
import { verifyPassword, verifyPasswordAgainstNothing } from '../../security/password-hashing.ts';
import type { ApiRegistry } from './api-registry.ts';
import type { AdminDeps } from './admin-context.ts';
import { USER_ROLES } from './project-routes.ts';
import { isUuid } from './request-body.ts';
import { notFound, rateLimited, unavailable } from '../errors/error-factory.ts';
import { SlotsFullError } from '../../security/work-slots.ts';
import { clientIp } from '../../contact-forms/client-ip.ts';
import { assertSameOrigin, setSessionCookie } from './session-cookie.ts';
import { accessQueries } from '../../../projections/access-queries.ts';

const loginBody = z.object({
  email: z.string().min(1).max(320),
  password: z.string().min(1).max(1024),
  /** The project whose console login page was used: its IP allowlist applies. */
  projectId: z.string().optional(),
  cookie: z.boolean().optional().describe('true: the session is set as an HttpOnly, SameSite=Strict cookie (the console\'s way: no script can read it, and it survives reloads) and the answer holds its csrfToken instead of the token; writes with the cookie send X-CSRF-Token. Default false: the answer holds the token, sent as Authorization: Bearer.'),
});

export const sessionUserSchema = z.object({ id: z.uuid(), tenantId: z.uuid(), email: z.string(), role: z.enum(USER_ROLES) });

export const sessionSchema = z.object({
  token: z.string().optional().describe('The session token: send as Authorization: Bearer, with X-Project-Id. Absent for a cookie session.'),
  csrfToken: z.string().optional().describe('A cookie session\'s CSRF token: send it as X-CSRF-Token with every write made with the cookie. Absent for a bearer token.'),
  expiresAt: z.iso.datetime(),
  user: sessionUserSchema,
  recoveryCodes: z.array(z.string()).optional().describe('Present once, when this sign-in set up the authenticator app the organisation requires: the recovery codes to keep somewhere safe (each signs in once when the app is lost).'),
}).meta({ id: 'Session' });

const secondFactorChallengeSchema = z
  .object({
    secondFactor: z.object({
      ticket: z.string().describe('Give it back to POST /auth/login/second-factor (and /auth/login/passkey-options) within five minutes'),
      expiresAt: z.iso.datetime(),
      methods: z.array(z.enum(['passkey', 'totp', 'recovery-code'])).describe('The ways this person can prove a second factor, passkeys first'),
      enrolmentRequired: z.boolean().describe('The organisation requires a second factor and this person has none: POST /auth/login/totp-setup, then answer with the first code and the setupToken'),
    }),
  })
  .meta({ id: 'SecondFactorChallenge' });

/** The session a sign-in began, answered as the client asked: a bearer token, or the console's cookie with its CSRF token. */
export async function answerSession(ctx: Context, deps: AdminDeps, issued: { token: string; claims: { sessionId: string; expiresAt: Date } }, user: z.input<typeof sessionUserSchema>, cookie: boolean, recoveryCodes?: string[]): Promise<void> {
  ctx.set('Cache-Control', 'no-store');
  const extra = recoveryCodes ? { recoveryCodes } : {};
  if (cookie) {
    setSessionCookie(ctx, issued.token, issued.claims.expiresAt, deps.clock.now());
    ctx.body = { csrfToken: deps.sessions.csrfToken(issued.claims.sessionId), expiresAt: issued.claims.expiresAt.toISOString(), user, ...extra } satisfies z.input<typeof sessionSchema>;
  } else {
    ctx.body = { token: issued.token, expiresAt: issued.claims.expiresAt.toISOString(), user, ...extra } satisfies z.input<typeof sessionSchema>;
  }
}

export const loginBrandingSchema = z.object({
  projectId: z.uuid(),
  projectName: z.string(),
  logoUrl: z.string().nullable(),
  primaryColor: z.string().nullable(),
  accentColor: z.string().nullable(),
  message: z.string().nullable(),
}).meta({ id: 'LoginBranding' });

/** POST /auth/login: e-mail and password for a console session JWT; GET /projects/:projectId/login-branding, readable without credentials. */
export function authRoutes(deps: AdminDeps, api: ApiRegistry, secondFactor?: SecondFactorSignIn): Router {
  const router = newRouter();
  const accessModel = accessQueries(deps.reader);
  api.add(router, { method: 'post', path: '/auth/login', operationId: 'login', permission: 'none', summary: 'Sign in with e-mail and password for a console session token, or (cookie: true) a session cookie with its CSRF token, recorded as user.signed-in (429 with Retry-After after repeated failures; 503 when too many sign-ins wait; 403 when the organisation signs in with single sign-on only). Someone with a second factor, or whose organisation requires one, is answered a secondFactor challenge instead of the session.', tag: 'Sessions', auth: 'none', body: loginBody, bodyLimitBytes: 16 * 1024, responses: { 200: { description: 'The session token, its expiry and the user; or, when a second factor is needed, the challenge to answer', schema: z.union([sessionSchema, secondFactorChallengeSchema]) } }, errors: { 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'], 429: ['RATE_LIMITED'] } }, async (ctx, { body }) => {
    const email = body.email.trim().toLowerCase();
    // Throttled attempts are refused before the password is looked at: guessing costs time, not our CPU.
    const decision = deps.loginThrottle.begin(email, clientIp(ctx));
    if (!decision.allowed) {
      throw rateLimited(decision.retryAfterSeconds, { message: 'Too many failed sign-in attempts: wait before trying again.' });
    }
    const found = await accessModel.userByEmail(email);
    // Same work whether or not the e-mail exists: no timing oracle for account discovery. A few checks at
    // once (the rest queue), so hashing never takes every core from the requests being served.
    let passwordMatches: boolean;
    try {
      passwordMatches = await deps.passwordChecks.run(() => (found ? verifyPassword(body.password, found.passwordHash) : verifyPasswordAgainstNothing(body.password)));
    } catch (error) {
      if (error instanceof SlotsFullError) throw unavailable('Too many sign-ins at once; try again shortly.', { retryAfterSeconds: error.retryAfterSeconds });
      throw error;
    }
    const project = body.projectId && isUuid(body.projectId) ? await accessModel.project(body.projectId) : null;
    const tenant = found && passwordMatches ? await accessModel.tenant(found.tenantId) : null;
    const ssoOnly = tenant?.oidc?.ssoOnly === true || tenant?.saml?.ssoOnly === true;
    const subject = decideSignIn({
      ssoOnly,
      user: found ? { id: found.userId, tenantId: found.tenantId, email: found.email, role: found.role, passwordHash: found.passwordHash, disabled: found.disabled } : null,
      passwordMatches,
      project: project ? { tenantId: project.tenantId, plan: project.plan, consoleIpAllowlist: project.ipAllowlist } : null,
      clientIp: ctx.ip,
    });
    decision.attempt.succeeded();
    // A cookie is only set for the console's own page (no other origin may sign a browser in).
    if (body.cookie) assertSameOrigin(ctx);
    const user = { id: subject.userId, tenantId: subject.tenantId, email: found!.email, role: subject.role };
    // The password was right; a second factor, when the person has one or their organisation requires one, comes next.
    // What the person set up and what the organisation requires, from the reads above.
    const challenge = secondFactor?.afterPassword({ ...subject, email: user.email }, { setUp: found!.secondFactor, required: tenant?.secondFactorRequired === true, ...(project ? { projectId: project.projectId } : {}), cookie: body.cookie === true });
    if (challenge) {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { secondFactor: challenge } satisfies z.input<typeof secondFactorChallengeSchema>;
      return;
    }
    const issued = await deps.sessions.issueSession(subject);
    // Every sign-in is in the log (user.signed-in), as the person who signed in; nothing read next depends on it.
    // The user decider refuses it for someone with a second factor, whatever was decided here.
    await deps.access.signIn.recordSignIn({ kind: 'user', ...subject }, { userId: subject.userId, sessionId: issued.claims.sessionId, expiresAt: issued.claims.expiresAt, ...(project ? { projectId: project.projectId } : {}) });
    await answerSession(ctx, deps, issued, user, body.cookie === true);
  });

  // Spec 4.4 / issue 3 item 1: the console login page shows the project's branding before anyone signs in.
  api.add(router, { method: 'get', path: '/projects/:projectId/login-branding', operationId: 'getLoginBranding', permission: 'none', summary: "A project's console login page branding (logo, colours, message, project name); no credentials needed", tag: 'Console login', auth: 'none', responses: { 200: { description: 'The login branding', schema: loginBrandingSchema } }, errors: {} }, async (ctx) => {
    const projectId = ctx.params['projectId'];
    const project = isUuid(projectId) ? await accessModel.project(projectId) : null;
    if (!project) throw notFound(`No project ${projectId}.`);
    const { logoUrl, primaryColor, accentColor, message } = project.loginBranding;
    ctx.body = { projectId: project.projectId, projectName: project.name, logoUrl, primaryColor, accentColor, message } satisfies z.input<typeof loginBrandingSchema>;
  });
  return router;
}

import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { newRouter } from '../router.ts';
import { wrote, type ApiRegistry } from './api-registry.ts';
import { actingProject, principalOf, type AdminDeps } from './admin-context.ts';
import { answerSession, sessionSchema } from './auth-routes.ts';
import { assertSameOrigin } from './session-cookie.ts';
import { forbidden, notFound, rateLimited, unauthorized } from '../errors/error-factory.ts';
import { verifyPassword } from '../../security/password-hashing.ts';
import { isUuid } from './request-body.ts';
import { hasSecondFactor } from '../../domain/access/second-factor.ts';
import type { SecondFactorChecks, RelyingParty } from '../../sign-in/second-factor.ts';
import { SecondFactorThrottled, type SecondFactorAnswer, type SecondFactorSignIn } from '../../sign-in/second-factor-sign-in.ts';
import { accessQueries } from '../../../projections/access-queries.ts';
import { projectionsFolding } from '../../../projections/index.ts';

const ticket = z.string().min(1).max(8192).describe('The ticket POST /auth/login answered');
const code = z.string().min(1).max(64);
/** A WebAuthn answer as @simplewebauthn/browser gives it (checked in full by @simplewebauthn/server). */
const webAuthnResponse = z.object({
  id: z.string().min(1).max(1400),
  rawId: z.string().min(1).max(1400),
  type: z.literal('public-key'),
  response: z.record(z.string(), z.unknown()),
  clientExtensionResults: z.record(z.string(), z.unknown()).optional(),
  authenticatorAttachment: z.string().max(30).optional(),
});

const secondFactorBody = z.object({
  ticket,
  method: z.enum(['totp', 'recovery-code', 'passkey']),
  code: code.optional().describe('totp: the six digits the authenticator app shows; recovery-code: one of the recovery codes'),
  setupToken: z.string().max(8192).optional().describe('totp, when the organisation requires a second factor and the person has none: the setupToken of POST /auth/login/totp-setup (the code is then the new app\'s first)'),
  passkey: webAuthnResponse.optional().describe("passkey: the browser's answer to the challenge of POST /auth/login/passkey-options"),
});

const totpSetupSchema = z
  .object({
    secret: z.string().describe('The secret in base32, for apps that cannot scan the QR code'),
    otpauthUri: z.string(),
    qrCode: z.string().describe('The otpauth URI as a QR code (a PNG data URL)'),
    setupToken: z.string().describe('Give it back with the first code within ten minutes; nothing is recorded before'),
    expiresAt: z.iso.datetime(),
  })
  .meta({ id: 'TotpSetup' });

const passkeySummarySchema = z.object({
  credentialId: z.string(),
  name: z.string(),
  backedUp: z.boolean().describe('Synced by a password manager or platform (a copy survives losing the device)'),
  transports: z.array(z.string()),
});

const secondFactorSchema = z
  .object({
    required: z.boolean().describe('The organisation requires a second factor for password sign-in'),
    totp: z.boolean().describe('An authenticator app is set up'),
    passkeys: z.array(passkeySummarySchema),
    recoveryCodesLeft: z.number().int(),
  })
  .meta({ id: 'SecondFactor' });

const passwordConfirmation = z.object({ password: z.string().min(1).max(1024).describe('Your current password: changing how you sign in asks for it again') });
const recoveryCodesSchema = z.object({ recoveryCodes: z.array(z.string()).describe('Shown once: each signs in once when the authenticator app or passkey is lost') });
const policySchema = z.object({ required: z.boolean().describe('People who sign in with a password must prove a second factor (those with none set up an authenticator app as they sign in)') }).meta({ id: 'SecondFactorPolicy' });

/** The relying party of a passkey: the host the console is served from, as the request reached it (TRUST_PROXY decides what a proxy may say). */
export function relyingPartyOf(ctx: Context): RelyingParty {
  return { id: ctx.hostname, origin: ctx.origin, name: 'annals' };
}

/**
 * The second factor of password sign-in. Open (before authentication): the sign-in's second step, its passkey
 * challenge and the authenticator app set up on the way in. Signed in (console sessions only): one's own second
 * factor (authenticator app, passkeys, recovery codes; removing one or renewing codes asks for the password
 * again); a tenant admin's reset of another member's; the tenant's policy.
 */
export function secondFactorRoutes(deps: AdminDeps, api: ApiRegistry, services: { secondFactor: SecondFactorSignIn; secondFactorChecks: SecondFactorChecks }): { open: Router; authenticated: Router } {
  const open = newRouter();
  const authenticated = newRouter();
  const { secondFactor, secondFactorChecks: checks } = services;
  const accessModel = accessQueries(deps.reader);
  const sessionUser = (ctx: Context) => {
    const principal = principalOf(ctx);
    if (principal.kind !== 'user') throw forbidden('A second factor belongs to a console user; agent keys have none.', { hint: 'Sign in as the user.' });
    return principal;
  };
  const confirmPassword = async (userId: string, password: string) => {
    const user = await accessModel.user(userId);
    if (!user || !(await deps.passwordChecks.run(() => verifyPassword(password, user.passwordHash)))) throw unauthorized('The password is not right.', { hint: 'Give your current password.' });
  };

  // ---- the sign-in's second step

  api.add(open, { method: 'post', path: '/auth/login/second-factor', operationId: 'loginSecondFactor', permission: 'none', auth: 'none', summary: "The second step of a password sign-in: the authenticator app's code, a recovery code (each signs in once) or a passkey's answer; begins the session the password step was for, recorded as user.signed-in with the factor used. A wrong one is recorded as user.second-factor-failed (429 with Retry-After after repeated failures).", tag: 'Sessions', body: secondFactorBody, bodyLimitBytes: 64 * 1024, responses: { 200: { description: 'The session, as POST /auth/login answers it', schema: sessionSchema } }, errors: { 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'], 409: ['CONFLICT'], 429: ['RATE_LIMITED'] } }, async (ctx, { body }) => {
    let answer: SecondFactorAnswer;
    if (body.method === 'passkey') {
      if (!body.passkey) throw unauthorized('A passkey sign-in sends the passkey\'s answer.', { hint: 'Ask POST /auth/login/passkey-options for the challenge first.' });
      answer = { method: 'passkey', response: body.passkey as unknown as AuthenticationResponseJSON };
    } else {
      if (body.code === undefined) throw unauthorized('The code is missing.');
      answer = body.method === 'totp' ? { method: 'totp', code: body.code, ...(body.setupToken === undefined ? {} : { setupToken: body.setupToken }) } : { method: 'recovery-code', code: body.code };
    }
    // A cookie is only set for the console's own page: checked before anything is recorded.
    if (checks.openTicket(body.ticket).cookie) assertSameOrigin(ctx);
    let finished: Awaited<ReturnType<SecondFactorSignIn['finish']>>;
    try {
      finished = await secondFactor.finish(body.ticket, answer, relyingPartyOf(ctx), ctx.ip, (subject) => deps.sessions.issueSession(subject));
    } catch (error) {
      if (error instanceof SecondFactorThrottled) throw rateLimited(error.retryAfterSeconds, { message: error.message });
      throw error;
    }
    const user = await accessModel.user(finished.ticket.userId);
    await answerSession(ctx, deps, finished.session, { id: finished.ticket.userId, tenantId: finished.ticket.tenantId, email: user?.email ?? finished.ticket.email, role: user?.role ?? finished.ticket.role }, finished.ticket.cookie, finished.recoveryCodes);
  });

  api.add(open, { method: 'post', path: '/auth/login/passkey-options', operationId: 'loginPasskeyOptions', permission: 'none', auth: 'none', summary: "The passkey challenge of a password sign-in's second step (WebAuthn request options) and the ticket that carries it", tag: 'Sessions', body: z.object({ ticket }), bodyLimitBytes: 16 * 1024, responses: { 200: { description: "The options for the browser's navigator.credentials.get, and the ticket to send with its answer", schema: z.object({ ticket: z.string(), expiresAt: z.iso.datetime(), options: z.record(z.string(), z.unknown()) }) } }, errors: { 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'], 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const made = await secondFactor.passkeyOptions(body.ticket, relyingPartyOf(ctx));
    ctx.body = { ticket: made.ticket, expiresAt: made.expiresAt, options: made.options as unknown as Record<string, unknown> };
  });

  api.add(open, { method: 'post', path: '/auth/login/totp-setup', operationId: 'loginTotpSetup', permission: 'none', auth: 'none', summary: 'For someone whose organisation requires a second factor and who has none: a new authenticator app secret to scan, set up by answering POST /auth/login/second-factor with its first code and the setupToken', tag: 'Sessions', body: z.object({ ticket }), bodyLimitBytes: 16 * 1024, responses: { 200: { description: 'The secret, its QR code and the setup token', schema: totpSetupSchema } }, errors: { 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'], 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    ctx.body = await secondFactor.totpSetup(body.ticket);
  });

  // ---- one's own second factor

  api.add(authenticated, { method: 'get', path: '/me/second-factor', operationId: 'getSecondFactor', permission: 'none', summary: 'Your second factor for password sign-in: authenticator app, passkeys, recovery codes left, and whether your organisation requires one (sessions only)', tag: 'Second factor', responses: { 200: { description: 'Your second factor', schema: secondFactorSchema } }, errors: { 403: ['FORBIDDEN'] } }, async (ctx) => {
    const principal = sessionUser(ctx);
    const [user, tenant] = await Promise.all([deps.access.secondFactor.user(principal.userId), accessModel.tenant(principal.tenantId)]);
    if (!user) throw notFound('No such user.');
    const factors = user.secondFactor;
    ctx.body = {
      required: tenant?.secondFactorRequired === true,
      totp: !!factors?.totp,
      passkeys: (factors?.passkeys ?? []).map(({ credentialId, name, backedUp, transports }) => ({ credentialId, name, backedUp, transports })),
      recoveryCodesLeft: factors?.recoveryCodeHashes.length ?? 0,
    } satisfies z.input<typeof secondFactorSchema>;
  });

  api.add(authenticated, { method: 'post', path: '/me/second-factor/totp/setup', operationId: 'startTotpSetup', permission: 'none', summary: 'Begin setting up an authenticator app: a new secret to scan; nothing is recorded until POST /me/second-factor/totp proves the app has it (sessions only)', tag: 'Second factor', responses: { 200: { description: 'The secret, its QR code and the setup token', schema: totpSetupSchema } }, errors: { 403: ['FORBIDDEN'] } }, async (ctx) => {
    const principal = sessionUser(ctx);
    const user = await accessModel.user(principal.userId);
    if (!user) throw notFound('No such user.');
    ctx.body = await checks.totpSetup(principal.userId, user.email);
  });

  api.add(authenticated, { method: 'post', path: '/me/second-factor/totp', operationId: 'enrolTotp', permission: 'none', summary: "Finish setting up an authenticator app with its first code (recorded as user.totp-enrolled, the secret sealed); the first second factor also brings recovery codes, answered once (sessions only)", tag: 'Second factor', body: z.object({ setupToken: z.string().min(1).max(8192), code }), bodyLimitBytes: 16 * 1024, responses: { 200: { description: 'Set up; recoveryCodes when this was the first second factor', schema: z.object({ totp: z.literal(true), recoveryCodes: z.array(z.string()).optional() }) } }, errors: { 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'], 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const principal = sessionUser(ctx);
    const secret = checks.openTotpSetup(principal.userId, body.setupToken);
    if (checks.totpStep(secret, body.code) === null) throw unauthorized('The code is not right: it may have changed while you typed it.', { hint: 'Type the code the app shows now.' });
    const codes = checks.newRecoveryCodes();
    const result = await deps.access.secondFactor.enrolTotp(principal, principal.userId, checks.sealTotpSecret(principal.userId, secret), codes.hashes, actingProject(ctx));
    wrote(ctx, result.position, projectionsFolding('user.totp-enrolled'));
    ctx.body = { totp: true, ...(result.recoveryCodesIssued ? { recoveryCodes: codes.codes } : {}) };
  });

  api.add(authenticated, { method: 'post', path: '/me/second-factor/totp/remove', operationId: 'removeTotp', permission: 'none', summary: 'Remove your authenticator app (your password again; recorded as user.totp-removed). Where your organisation requires a second factor and none is left, you set one up at your next sign-in.', tag: 'Second factor', body: passwordConfirmation, bodyLimitBytes: 16 * 1024, responses: { 204: { description: 'Removed', empty: true } }, errors: { 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'] } }, async (ctx, { body }) => {
    const principal = sessionUser(ctx);
    await confirmPassword(principal.userId, body.password);
    const result = await deps.access.secondFactor.removeTotp(principal, principal.userId, actingProject(ctx));
    wrote(ctx, result.position, projectionsFolding('user.totp-removed'));
    ctx.status = 204;
  });

  api.add(authenticated, { method: 'post', path: '/me/second-factor/recovery-codes', operationId: 'renewRecoveryCodes', permission: 'none', summary: 'New recovery codes in place of those left (your password again; recorded as user.recovery-codes-issued, hashes only); answered once', tag: 'Second factor', body: passwordConfirmation, bodyLimitBytes: 16 * 1024, responses: { 200: { description: 'The new codes', schema: recoveryCodesSchema } }, errors: { 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'], 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const principal = sessionUser(ctx);
    await confirmPassword(principal.userId, body.password);
    const codes = checks.newRecoveryCodes();
    const result = await deps.access.secondFactor.issueRecoveryCodes(principal, principal.userId, codes.hashes, actingProject(ctx));
    wrote(ctx, result.position, projectionsFolding('user.recovery-codes-issued'));
    ctx.body = { recoveryCodes: codes.codes } satisfies z.input<typeof recoveryCodesSchema>;
  });

  api.add(authenticated, { method: 'post', path: '/me/passkeys/options', operationId: 'startPasskeyRegistration', permission: 'none', summary: "Begin adding a passkey: WebAuthn creation options for the browser's navigator.credentials.create, and the setup token to send back with its answer (sessions only)", tag: 'Second factor', responses: { 200: { description: 'The options and the setup token', schema: z.object({ options: z.record(z.string(), z.unknown()), setupToken: z.string() }) } }, errors: { 403: ['FORBIDDEN'] } }, async (ctx) => {
    const principal = sessionUser(ctx);
    const user = await deps.access.secondFactor.user(principal.userId);
    if (!user) throw notFound('No such user.');
    const made = await checks.registrationOptions({ id: user.id, email: user.email }, user.secondFactor?.passkeys ?? [], relyingPartyOf(ctx));
    ctx.body = { options: made.options as unknown as Record<string, unknown>, setupToken: made.setupToken };
  });

  api.add(authenticated, { method: 'post', path: '/me/passkeys', operationId: 'registerPasskey', permission: 'none', summary: "Add a passkey: the browser's answer to the creation options, checked (recorded as user.passkey-registered: its public key, never a secret); the first second factor also brings recovery codes, answered once (sessions only)", tag: 'Second factor', body: z.object({ setupToken: z.string().min(1).max(8192), name: z.string().min(1).max(100), response: webAuthnResponse }), bodyLimitBytes: 64 * 1024, responses: { 201: { description: 'The passkey; recoveryCodes when this was the first second factor', schema: z.object({ passkey: passkeySummarySchema, recoveryCodes: z.array(z.string()).optional() }) } }, errors: { 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'], 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const principal = sessionUser(ctx);
    const passkey = await checks.verifyRegistration(principal.userId, body.setupToken, body.response as unknown as RegistrationResponseJSON, relyingPartyOf(ctx), body.name);
    const codes = checks.newRecoveryCodes();
    const result = await deps.access.secondFactor.registerPasskey(principal, principal.userId, passkey, codes.hashes, actingProject(ctx));
    wrote(ctx, result.position, projectionsFolding('user.passkey-registered'));
    ctx.status = 201;
    ctx.body = { passkey: { credentialId: passkey.credentialId, name: passkey.name.trim(), backedUp: passkey.backedUp, transports: passkey.transports }, ...(result.recoveryCodesIssued ? { recoveryCodes: codes.codes } : {}) };
  });

  api.add(authenticated, { method: 'post', path: '/me/passkeys/:credentialId/remove', operationId: 'removePasskey', permission: 'none', summary: 'Remove one of your passkeys (your password again; recorded as user.passkey-removed)', tag: 'Second factor', body: passwordConfirmation, bodyLimitBytes: 16 * 1024, responses: { 204: { description: 'Removed', empty: true } }, errors: { 401: ['UNAUTHORIZED'], 403: ['FORBIDDEN'] } }, async (ctx, { body }) => {
    const principal = sessionUser(ctx);
    await confirmPassword(principal.userId, body.password);
    const result = await deps.access.secondFactor.removePasskey(principal, principal.userId, ctx.params['credentialId'] ?? '', actingProject(ctx));
    wrote(ctx, result.position, projectionsFolding('user.passkey-removed'));
    ctx.status = 204;
  });

  // ---- a tenant admin's

  api.add(authenticated, { method: 'post', path: '/users/:userId/second-factor/reset', operationId: 'resetSecondFactor', permission: 'members.manage', summary: "Remove every second factor of a member who lost theirs (authenticator app, passkeys, recovery codes; recorded as user.second-factor-reset). Never one's own.", tag: 'Members', responses: { 204: { description: 'Reset (or there was nothing to reset)', empty: true } }, errors: { 403: ['FORBIDDEN'], 404: ['NOT_FOUND'] } }, async (ctx) => {
    const userId = ctx.params['userId'] ?? '';
    if (!isUuid(userId)) throw notFound(`No user ${userId}.`);
    const result = await deps.access.secondFactor.reset(principalOf(ctx), userId, actingProject(ctx));
    wrote(ctx, result.position, projectionsFolding('user.second-factor-reset'));
    ctx.status = 204;
  });

  api.add(authenticated, { method: 'get', path: '/sign-in/second-factor', operationId: 'getSecondFactorPolicy', permission: 'sign-in.read', summary: 'Whether the organisation requires a second factor for password sign-in', tag: 'Second factor', responses: { 200: { description: 'The policy', schema: policySchema } }, errors: {} }, async (ctx) => {
    const tenant = await accessModel.tenant(principalOf(ctx).tenantId);
    ctx.body = { required: tenant?.secondFactorRequired === true };
  });

  api.add(authenticated, { method: 'put', path: '/sign-in/second-factor', operationId: 'setSecondFactorPolicy', permission: 'sign-in.manage', summary: 'Require a second factor for password sign-in, or stop requiring it (recorded as tenant.second-factor-policy-changed). Requiring it needs your own second factor set up first, so that you are not the first one locked out.', tag: 'Second factor', body: policySchema, bodyLimitBytes: 16 * 1024, responses: { 200: { description: 'The policy as set', schema: policySchema } }, errors: { 403: ['FORBIDDEN'] } }, async (ctx, { body }) => {
    const caller = principalOf(ctx);
    if (body.required && caller.kind === 'user' && !hasSecondFactor((await deps.access.secondFactor.user(caller.userId))?.secondFactor)) {
      throw forbidden('Requiring a second factor needs your own set up first.', { hint: 'Set up an authenticator app or a passkey under your account, then require it.' });
    }
    const result = await deps.access.secondFactor.setPolicy(caller, caller.tenantId, body.required, actingProject(ctx));
    wrote(ctx, result.position, projectionsFolding('tenant.second-factor-policy-changed'));
    ctx.body = { required: result.required };
  });

  return { open, authenticated };
}

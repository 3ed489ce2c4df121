import type { Middleware } from 'koa';
import { hashApiKey, looksLikeAgentKey } from '../../security/api-keys.ts';
import { TokenError } from '../session-tokens.ts';
import { agentRateLimit } from '../../domain/access/agent-key-limits.ts';
import { assertConsoleAccess } from '../../domain/access/sign-in.ts';
import type { Principal } from '../../domain/principal.ts';
import { notFound, rateLimited, unauthorized } from '../errors/error-factory.ts';
import { isInternalCall } from '../../security/internal-call.ts';
import { assertSameOrigin, clearedSessionCookie, isWrite, missingCsrfToken, sessionCookieOf, CSRF_HEADER } from './session-cookie.ts';
import type { HttpError } from '../errors/http-error.ts';
import type { AdminDeps, AdminState } from './admin-context.ts';
import { accessQueries } from '../../../projections/access-queries.ts';
import { VersionedCache } from '../../read-models/versioned-cache.ts';
import { grantsOfMember } from '../../domain/access/custom-roles.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Authenticates an admin request (spec section 5): `Authorization: Bearer <agent key>` or
 * `Bearer <session JWT>`, or, without an Authorization header, the console's session cookie (session-cookie.ts:
 * writes then need the session's CSRF token and a same-origin request). Agent keys are looked up by their
 * SHA-256 (the key itself is never stored) and rate limited per key by the project's plan; console sessions
 * are exempt from that limit but must come from an address the project's console IP allowlist admits,
 * checked on every request. A refused session cookie is cleared with the 401.
 */
export function authenticate(deps: AdminDeps): Middleware {
  const access = cachedAccess(deps);
  return async (ctx, next) => {
    const header = ctx.get('Authorization');
    const bearer = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
    const cookie = header ? undefined : sessionCookieOf(ctx);
    const token = bearer ?? cookie;
    if (!token) throw unauthorized('Missing credentials: send Authorization: Bearer <agent key or session token>, or sign in to the console.');
    const viaCookie = bearer === undefined;
    // A refused cookie is forgotten by the browser with the answer.
    const refuse = (message: string): HttpError => unauthorized(message, viaCookie ? { headers: { 'Set-Cookie': clearedSessionCookie(ctx) } } : {});
    const state = ctx.state as AdminState;
    if (looksLikeAgentKey(token) && viaCookie) throw refuse('The credentials are invalid.');
    if (looksLikeAgentKey(token)) {
      const key = await access.agentKeyByHash(hashApiKey(token));
      if (!key || key.revokedAt) throw unauthorized('The agent key is invalid or revoked.');
      const project = await access.project(key.projectId);
      if (!project) throw unauthorized('The agent key is invalid or revoked.');
      // A call the service makes to itself for a request already counted (the remote MCP endpoint) is not counted again.
      if (!isInternalCall(ctx)) {
        const limit = agentRateLimit(project.plan);
        const decision = deps.rateLimiter.hit(`agent:${key.keyId}`, limit.limit);
        ctx.set('X-RateLimit-Limit', String(decision.limit));
        ctx.set('X-RateLimit-Remaining', String(decision.remaining));
        if (!decision.allowed) {
          throw rateLimited(decision.retryAfterSeconds, { message: `Rate limit of ${limit.limit} requests per ${limit.windowSeconds} s for this agent key exceeded.` });
        }
      }
      state.principal = { kind: 'agent', keyId: key.keyId, tenantId: key.tenantId, projectId: key.projectId, scope: key.scope } satisfies Principal;
      if (!isInternalCall(ctx)) deps.keyUsage?.seen(key.keyId, key.projectId);
      state.project = project;
    } else {
      let claims;
      try {
        claims = await deps.sessions.verifySession(token);
      } catch (error) {
        if (error instanceof TokenError) {
          throw refuse(error.reason === 'expired' ? 'The session has expired: sign in again.' : 'The credentials are invalid.');
        }
        throw error;
      }
      if (viaCookie && isWrite(ctx)) {
        assertSameOrigin(ctx);
        if (!deps.sessions.isCsrfToken(claims.sessionId, ctx.get(CSRF_HEADER) || undefined)) throw missingCsrfToken();
      }
      const user = await access.user(claims.userId);
      if (!user || user.disabled) throw refuse('The session is no longer valid: sign in again.');
      if (user.revokedSessions?.some((revoked) => revoked.sessionId === claims.sessionId)) throw refuse('The session was signed out: sign in again.');
      state.session = { sessionId: claims.sessionId, expiresAt: claims.expiresAt, cookie: viaCookie };
      // The role comes from the user as it is now, not as it was when the token was issued; a custom role's
      // grants from its definition as it is now (nothing beyond reading once it is gone).
      const tenant = user.roleId ? await access.tenant(user.tenantId) : null;
      const grants = tenant !== null ? grantsOfMember(user, (roleId) => tenant?.roles?.find((role) => role.roleId === roleId)) : undefined;
      state.principal = { kind: 'user', userId: user.userId, tenantId: user.tenantId, role: user.role, ...(grants ? { grants } : {}) } satisfies Principal;
      const projectId = ctx.get('X-Project-Id');
      if (projectId) {
        const project = UUID.test(projectId) ? await access.project(projectId) : null;
        if (!project || project.tenantId !== user.tenantId) throw notFound(`No project ${projectId}.`);
        assertConsoleAccess({ plan: project.plan, consoleIpAllowlist: project.ipAllowlist }, ctx.ip);
        state.project = project;
      }
    }
    await next();
  };
}

/**
 * The access reads authentication makes (users, their tenant's roles, agent keys by hash, projects), kept by the access read model's
 * version where it is exact (AdminDeps.accessVersion), read every time where it is not. What is kept is shared
 * by requests: never mutated.
 */
function cachedAccess(deps: AdminDeps): Pick<ReturnType<typeof accessQueries>, 'user' | 'tenant' | 'project' | 'agentKeyByHash'> {
  const access = accessQueries(deps.reader);
  const version = deps.accessVersion;
  if (!version) return access;
  // The cache reads the version in the same turn as the check before it, so it is never asked while not exact.
  const cache = new VersionedCache<unknown>(() => version() ?? '');
  const kept = <T>(key: string, load: () => Promise<T>): Promise<T> => (version() === undefined ? load() : (cache.get(key, load) as Promise<T>));
  return {
    user: (userId) => kept(`u:${userId}`, () => access.user(userId)),
    tenant: (tenantId) => kept(`t:${tenantId}`, () => access.tenant(tenantId)),
    project: (projectId) => kept(`p:${projectId}`, () => access.project(projectId)),
    agentKeyByHash: (hash) => kept(`k:${hash}`, () => access.agentKeyByHash(hash)),
  };
}

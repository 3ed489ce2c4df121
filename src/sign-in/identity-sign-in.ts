import type { Clock } from '../clock.ts';
import type { AccessService } from '../application/access-service.ts';
import type { ProjectionWatermark } from '../application/projection-watermark.ts';
import { READ_YOUR_WRITES_MS } from '../application/project-writes.ts';
import type { SsoProtocol } from '../application/sign-in-access.ts';
import { DomainError } from '../domain/domain-error.ts';
import { decideOidcSignIn, OIDC_SIGN_IN_REFUSED, type OidcClaims, type OidcUser, type SsoRules } from '../domain/access/oidc-sign-in.ts';
import type { UserRole } from '../domain/principal.ts';
import type { accessQueries } from '../../projections/access-queries.ts';
import type { UserDoc } from '../../projections/access.ts';

/** Someone signed in through the tenant's provider: whom, from which project's login page, by which provider. */
export interface SsoSignedIn {
  /** The project whose login page the sign-in started from. */
  projectId: string;
  userId: string;
  tenantId: string;
  email: string;
  role: UserRole;
  protocol: SsoProtocol;
  issuer: string;
  /** The provider's session (OpenID Connect's sid, SAML's SessionIndex), when it sent one. */
  idpSessionId?: string;
  /** SAML: when the request the provider answered was made (ms), so that an answer signs in once. */
  requestedAt?: number;
}

/** What a test of the settings saw: the provider's answer, and what a sign-in would have done with it. */
export interface SsoTestResult {
  test: true;
  projectId: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  /** The claim (OpenID Connect) or attribute (SAML) that lists the person's groups. */
  groupsClaim: string;
  groups: unknown;
  /** provision: a new user; link: the existing user with that address, linked; existing: the linked user; refused. */
  outcome: 'provision' | 'link' | 'existing' | 'refused';
  role?: UserRole;
  /** The organisation's own role the sign-in would give (its name), when it would give one. */
  customRole?: string;
  refusal?: string;
}

/** A person the provider vouched for, its answer checked (signature, issuer, audience, time, the request it answers). */
export interface VouchedIdentity {
  protocol: SsoProtocol;
  issuer: string;
  claims: OidcClaims;
}

export interface IdentitySignInDeps {
  access: AccessService;
  watermark: ProjectionWatermark;
  queries: ReturnType<typeof accessQueries>;
}

/**
 * The part of a sign-in through a provider that does not depend on the protocol: who the vouched-for person is
 * here (decideOidcSignIn over the access read model), and what to record first (a new user, the link to the
 * provider's subject, the role its groups give), waiting until the session's next request can read it. A test of
 * the settings says what it would do and records nothing.
 */
export async function signInVouched(deps: IdentitySignInDeps, flow: { tenantId: string; projectId: string; test?: boolean; requestedAt?: number }, rules: SsoRules, identity: VouchedIdentity, clientIp: string | undefined): Promise<SsoSignedIn | SsoTestResult> {
  const { claims, issuer, protocol } = identity;
  const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : undefined;
  const [linked, withEmail, project] = await Promise.all([
    deps.queries.userOfIdentity(issuer, claims.subject),
    email === undefined ? Promise.resolve(null) : deps.queries.userByEmail(email),
    deps.queries.project(flow.projectId),
  ]);
  if (!project) throw new DomainError('UNAUTHORIZED', OIDC_SIGN_IN_REFUSED);
  const decide = () =>
    decideOidcSignIn({
      tenantId: flow.tenantId,
      settings: rules,
      claims,
      linkedUser: linked ? ssoUser(linked, issuer) : null,
      userWithEmail: withEmail ? ssoUser(withEmail, issuer) : null,
      project: { tenantId: project.tenantId, plan: project.plan, consoleIpAllowlist: project.ipAllowlist },
      ...(clientIp === undefined ? {} : { clientIp }),
    });
  if (flow.test) {
    // What the provider sent and what a sign-in would do with it; nothing is recorded, nobody is signed in.
    const seen = { projectId: flow.projectId, subject: claims.subject, email: typeof claims.email === 'string' ? claims.email : null, emailVerified: claims.emailVerified === true, groups: claims.groups ?? null, groupsClaim: rules.groupsClaim };
    try {
      const decision = decide();
      const customRole = decision.roleId ? ((await deps.queries.tenant(flow.tenantId))?.roles?.find((role) => role.roleId === decision.roleId)?.name ?? decision.roleId) : undefined;
      return { test: true, ...seen, outcome: decision.kind === 'provision' ? 'provision' : decision.link ? 'link' : 'existing', role: decision.role, ...(customRole ? { customRole } : {}) };
    } catch (error) {
      if (error instanceof DomainError) return { test: true, ...seen, outcome: 'refused', refusal: error.message };
      throw error;
    }
  }
  const decision = decide();
  const signIn = deps.access.signIn;
  let userId: string;
  let position: bigint;
  if (decision.kind === 'provision') {
    ({ userId, position } = await signIn.provision({ tenantId: flow.tenantId, email: decision.email, role: decision.role, roleId: decision.roleId, issuer, subject: claims.subject, projectId: flow.projectId, protocol }));
  } else {
    userId = decision.userId;
    position = 0n;
    if (decision.link) position = (await signIn.link(userId, issuer, claims.subject, flow.projectId, protocol)).position;
    if (decision.roleChange) position = (await signIn.changeRole(userId, flow.tenantId, issuer, decision.roleChange, flow.projectId, protocol)).position;
  }
  // The session's user must be readable as it now is (its role, its link) by the next request.
  if (position > 0n) await deps.watermark.waitFor(position, READ_YOUR_WRITES_MS);
  const sid = typeof claims.sessionId === 'string' && claims.sessionId.length > 0 && claims.sessionId.length <= 255 ? claims.sessionId : undefined;
  return { projectId: flow.projectId, userId, tenantId: flow.tenantId, email: decision.email, role: decision.role, protocol, issuer, ...(sid ? { idpSessionId: sid } : {}), ...(flow.requestedAt === undefined ? {} : { requestedAt: flow.requestedAt }) };
}

function ssoUser(doc: UserDoc, issuer: string): OidcUser {
  return { id: doc.userId, tenantId: doc.tenantId, email: doc.email, role: doc.role, roleId: doc.roleId ?? null, disabled: doc.disabled, linkedSubject: doc.identities?.[issuer] ?? null };
}

/**
 * The provider's logout (OpenID Connect back-channel, SAML single logout), its message already checked: the
 * sessions begun through the provider in the provider session it names (`idpSessionId`), or all of the person's
 * (`subject`), end as a sign-out would end them (user.session-revoked, by the provider), on every instance. How
 * many ended; a message that names nobody here ends nothing.
 */
export async function endSessionsAtProvider(deps: IdentitySignInDeps & { clock: Clock }, tenantId: string, provider: { protocol: SsoProtocol; issuer: string }, request: { subject?: string | undefined; idpSessionId?: string | undefined }): Promise<{ ended: number }> {
  const { issuer } = provider;
  const linked = request.subject === undefined ? null : await deps.queries.userOfIdentity(issuer, request.subject);
  if (request.subject !== undefined && (!linked || linked.tenantId !== tenantId)) return { ended: 0 };
  const candidates = request.idpSessionId !== undefined ? await deps.queries.ssoSessionsOfIdpSession(issuer, request.idpSessionId) : await deps.queries.ssoSessionsOfUser(linked!.userId);
  const now = deps.clock.now().toISOString();
  let position = 0n;
  let ended = 0;
  const tenantOf = new Map<string, string | undefined>();
  for (const session of candidates) {
    if (session.issuer !== issuer || session.expiresAt <= now || (linked && session.userId !== linked.userId)) continue;
    // A session of another tenant whose client shares the provider's session: not this tenant's to end.
    if (!tenantOf.has(session.userId)) tenantOf.set(session.userId, (await deps.queries.user(session.userId))?.tenantId);
    if (tenantOf.get(session.userId) !== tenantId) continue;
    ({ position } = await deps.access.signIn.endSession(session.userId, issuer, session, provider.protocol));
    ended++;
  }
  if (position > 0n) await deps.watermark.waitFor(position, READ_YOUR_WRITES_MS);
  return { ended };
}

import type { Clock } from '../clock.ts';
import type { AccessService } from '../application/access-service.ts';
import type { ProjectionWatermark } from '../application/projection-watermark.ts';
import { READ_YOUR_WRITES_MS } from '../application/project-writes.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import { DomainError, notFound } from '../domain/domain-error.ts';
import { decideOidcSignIn, OIDC_SIGN_IN_REFUSED, type OidcUser } from '../domain/access/oidc-sign-in.ts';
import { oidcSecretContext, type OidcSettings } from '../domain/access/oidc-settings.ts';
import type { UserRole } from '../domain/principal.ts';
import { type SecretBox, SecretBoxError } from '../security/secret-box.ts';
import { accessQueries } from '../../projections/access-queries.ts';
import type { UserDoc } from '../../projections/access.ts';
import { OidcError, OidcRelyingParty, type OidcChecks } from './oidc-relying-party.ts';

/**
 * Console sign-in through a tenant's OpenID Connect provider, from the button on a project's login page to the
 * session: `start` sends the browser to the provider with a new state, nonce and PKCE verifier, kept until the
 * callback in a cookie sealed with the secrets key (no table of pending sign-ins: any instance finishes what
 * another started, and nothing is left behind by abandoned sign-ins); `finish` redeems the provider's answer
 * (openid-client checks the state, the code with the verifier, and the ID token's signature, issuer, audience,
 * expiry and nonce), decides whom it signs in (decideOidcSignIn), records what the provider vouched for (a new
 * user, the link to the provider's subject, the role its groups give) and answers the session's subject.
 *
 * A flow cookie is good for one callback within FLOW_TTL_MS: the route clears it on the callback, the provider
 * refuses a code twice, and a code whose state or verifier is not this cookie's is refused.
 */
export const FLOW_TTL_MS = 10 * 60 * 1000;
const FLOW_CONTEXT = 'oidc-flow';

interface Flow extends OidcChecks {
  /** A test of the settings: the callback says what a sign-in would do, and does nothing. */
  test?: boolean;
  projectId: string;
  tenantId: string;
  issuer: string;
  expiresAt: number;
}

export interface OidcSignedIn {
  /** The project whose login page the sign-in started from. */
  projectId: string;
  userId: string;
  tenantId: string;
  email: string;
  role: UserRole;
  issuer: string;
  /** The provider's session id (sid), when the ID token carries one. */
  idpSessionId?: string;
}

/** What a test of the settings saw: the provider's answer, and what a sign-in would have done with it. */
export interface OidcTestResult {
  test: true;
  projectId: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  groupsClaim: string;
  groups: unknown;
  /** provision: a new user; link: the existing user with that address, linked; existing: the linked user; refused. */
  outcome: 'provision' | 'link' | 'existing' | 'refused';
  role?: UserRole;
  refusal?: string;
}

export interface OidcSignInDeps {
  access: AccessService;
  reader: ReadModelReader;
  watermark: ProjectionWatermark;
  box: SecretBox;
  relyingParty: OidcRelyingParty;
  clock: Clock;
}

export class OidcSignIn {
  readonly #deps: OidcSignInDeps;
  readonly #queries;

  constructor(deps: OidcSignInDeps) {
    this.#deps = deps;
    this.#queries = accessQueries(deps.reader);
  }

  /** The tenant's settings for a project's login page, or null when its tenant signs in with passwords only. */
  async settingsForProject(projectId: string): Promise<{ tenantId: string; settings: OidcSettings } | null> {
    const project = await this.#queries.project(projectId);
    if (!project) return null;
    const tenant = await this.#queries.tenant(project.tenantId);
    return tenant?.oidc ? { tenantId: tenant.tenantId, settings: tenant.oidc } : null;
  }

  /** Where to send the browser, and the sealed flow to keep in its cookie until the callback. */
  async start(projectId: string, redirectUri: string, options: { test?: boolean } = {}): Promise<{ location: string; flow: string }> {
    const found = await this.settingsForProject(projectId);
    if (!found) throw notFound('Single sign-on is not set up for this project\'s organisation.', 'Sign in with your e-mail address and password.');
    const { tenantId, settings } = found;
    const checks = OidcRelyingParty.newChecks();
    const location = await this.#deps.relyingParty.authorizationUrl(this.#client(tenantId, settings), redirectUri, checks);
    const flow: Flow = { ...checks, ...(options.test ? { test: true } : {}), projectId, tenantId, issuer: settings.issuer, expiresAt: this.#deps.clock.now().getTime() + FLOW_TTL_MS };
    return { location: location.href, flow: this.#deps.box.seal(JSON.stringify(flow), FLOW_CONTEXT) };
  }

  /** Redeems the provider's answer at `callbackUrl` for the flow the browser kept; whom it signs in, recorded. */
  async finish(callbackUrl: URL, redirectUri: string, sealedFlow: string | undefined, clientIp: string | undefined): Promise<OidcSignedIn | OidcTestResult> {
    const flow = this.#openFlow(sealedFlow);
    const error = callbackUrl.searchParams.get('error');
    if (error !== null) throw new DomainError('UNAUTHORIZED', `${OIDC_SIGN_IN_REFUSED} The identity provider answered: ${error.slice(0, 100)}.`, 'Start again from the login page.');
    const found = await this.settingsForProject(flow.projectId);
    // The settings changed since the sign-in started (another provider, or none): start again under the new ones.
    if (!found || found.tenantId !== flow.tenantId || found.settings.issuer !== flow.issuer) throw new DomainError('UNAUTHORIZED', `${OIDC_SIGN_IN_REFUSED} Its settings changed while you signed in.`, 'Start again from the login page.');
    const { settings } = found;
    const token = await this.#deps.relyingParty.redeem(this.#client(flow.tenantId, settings), callbackUrl, redirectUri, flow);
    const claims = token.claims;
    const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : undefined;
    const [linked, withEmail, project] = await Promise.all([
      this.#queries.userOfIdentity(settings.issuer, token.subject),
      email === undefined ? Promise.resolve(null) : this.#queries.userByEmail(email),
      this.#queries.project(flow.projectId),
    ]);
    if (!project) throw new DomainError('UNAUTHORIZED', OIDC_SIGN_IN_REFUSED);
    const decide = () =>
      decideOidcSignIn({
        tenantId: flow.tenantId,
        settings,
        claims: { subject: token.subject, email: claims.email, emailVerified: claims.email_verified, groups: claims[settings.groupsClaim], sessionId: claims.sid },
        linkedUser: linked ? oidcUser(linked, settings.issuer) : null,
        userWithEmail: withEmail ? oidcUser(withEmail, settings.issuer) : null,
        project: { tenantId: project.tenantId, plan: project.plan, consoleIpAllowlist: project.ipAllowlist },
        ...(clientIp === undefined ? {} : { clientIp }),
      });
    if (flow.test) {
      // What the provider sent and what a sign-in would do with it; nothing is recorded, nobody is signed in.
      const seen = { projectId: flow.projectId, subject: token.subject, email: typeof claims.email === 'string' ? claims.email : null, emailVerified: claims.email_verified === true, groups: claims[settings.groupsClaim] ?? null, groupsClaim: settings.groupsClaim };
      try {
        const decision = decide();
        return { test: true, ...seen, outcome: decision.kind === 'provision' ? 'provision' : decision.link ? 'link' : 'existing', role: decision.role };
      } catch (error) {
        if (error instanceof DomainError) return { test: true, ...seen, outcome: 'refused', refusal: error.message };
        throw error;
      }
    }
    const decision = decide();
    const signIn = this.#deps.access.signIn;
    let userId: string;
    let position: bigint;
    if (decision.kind === 'provision') {
      ({ userId, position } = await signIn.provision({ tenantId: flow.tenantId, email: decision.email, role: decision.role, issuer: settings.issuer, subject: token.subject, projectId: flow.projectId }));
    } else {
      userId = decision.userId;
      position = 0n;
      if (decision.link) position = (await signIn.link(userId, settings.issuer, token.subject, flow.projectId)).position;
      if (decision.roleChange) position = (await signIn.changeRole(userId, settings.issuer, decision.roleChange, flow.projectId)).position;
    }
    // The session's user must be readable as it now is (its role, its link) by the next request.
    if (position > 0n) await this.#deps.watermark.waitFor(position, READ_YOUR_WRITES_MS);
    const sid = typeof claims.sid === 'string' && claims.sid.length > 0 && claims.sid.length <= 255 ? claims.sid : undefined;
    return { projectId: flow.projectId, userId, tenantId: flow.tenantId, email: decision.email, role: decision.role, issuer: settings.issuer, ...(sid ? { idpSessionId: sid } : {}) };
  }

  /**
   * The provider's back-channel logout for the tenant's client: the sessions begun through the provider in the
   * provider session the token names (sid), or all of the person's (sub), are ended as a sign-out would end
   * them (user.session-revoked, by the provider), on every instance. Answers how many ended; a token that
   * names nobody here ends nothing. OidcError ('invalid-logout-token') for a token that does not pass the checks.
   */
  async logout(tenantId: string, logoutToken: string): Promise<{ ended: number }> {
    const tenant = await this.#queries.tenant(tenantId);
    if (!tenant?.oidc) throw new OidcError('invalid-logout-token', 'Single sign-on is not set up for this organisation.');
    const settings = tenant.oidc;
    const request = await this.#deps.relyingParty.verifyLogoutToken(this.#client(tenantId, settings), logoutToken);
    const linked = request.subject === undefined ? null : await this.#queries.userOfIdentity(settings.issuer, request.subject);
    if (request.subject !== undefined && (!linked || linked.tenantId !== tenantId)) return { ended: 0 };
    const candidates = request.idpSessionId !== undefined ? await this.#queries.ssoSessionsOfIdpSession(settings.issuer, request.idpSessionId) : await this.#queries.ssoSessionsOfUser(linked!.userId);
    const now = this.#deps.clock.now().toISOString();
    let position = 0n;
    let ended = 0;
    const tenantOf = new Map<string, string | undefined>();
    for (const session of candidates) {
      if (session.issuer !== settings.issuer || session.expiresAt <= now || (linked && session.userId !== linked.userId)) continue;
      // A session of another tenant whose client shares the provider's session: not this client's to end.
      if (!tenantOf.has(session.userId)) tenantOf.set(session.userId, (await this.#queries.user(session.userId))?.tenantId);
      if (tenantOf.get(session.userId) !== tenantId) continue;
      ({ position } = await this.#deps.access.signIn.endSession(session.userId, settings.issuer, session));
      ended++;
    }
    if (position > 0n) await this.#deps.watermark.waitFor(position, READ_YOUR_WRITES_MS);
    return { ended };
  }

  #client(tenantId: string, settings: OidcSettings) {
    let clientSecret: string;
    try {
      clientSecret = this.#deps.box.open(settings.sealedClientSecret, oidcSecretContext(tenantId));
    } catch (error) {
      if (error instanceof SecretBoxError) throw new OidcError('invalid-response', `The single sign-on client secret does not open with this service's secrets key (${error.message}).`);
      throw error;
    }
    return { issuer: settings.issuer, clientId: settings.clientId, clientSecret };
  }

  #openFlow(sealed: string | undefined): Flow {
    const refused = () => new DomainError('UNAUTHORIZED', `${OIDC_SIGN_IN_REFUSED} It was not started in this browser, was finished already, or took too long.`, 'Start again from the login page.');
    if (!sealed || sealed.length > 4096) throw refused();
    let flow: Flow;
    try {
      flow = JSON.parse(this.#deps.box.open(sealed, FLOW_CONTEXT)) as Flow;
    } catch {
      throw refused();
    }
    if (typeof flow.expiresAt !== 'number' || flow.expiresAt <= this.#deps.clock.now().getTime()) throw refused();
    return flow;
  }
}

function oidcUser(doc: UserDoc, issuer: string): OidcUser {
  return { id: doc.userId, tenantId: doc.tenantId, email: doc.email, role: doc.role, disabled: doc.disabled, linkedSubject: doc.identities?.[issuer] ?? null };
}

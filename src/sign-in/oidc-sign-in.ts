import type { Clock } from '../clock.ts';
import type { AccessService } from '../application/access-service.ts';
import type { ProjectionWatermark } from '../application/projection-watermark.ts';
import { endSessionsAtProvider, signInVouched, type SsoSignedIn, type SsoTestResult } from './identity-sign-in.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import { DomainError, notFound } from '../domain/domain-error.ts';
import { OIDC_SIGN_IN_REFUSED } from '../domain/access/oidc-sign-in.ts';
import { oidcSecretContext, type OidcSettings } from '../domain/access/oidc-settings.ts';
import { type SecretBox, SecretBoxError } from '../security/secret-box.ts';
import { accessQueries } from '../../projections/access-queries.ts';
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

/** A sign-in through the provider, and a test of the settings (identity-sign-in.ts). */
export type OidcSignedIn = SsoSignedIn;
export type OidcTestResult = SsoTestResult;

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
    const identity = { protocol: 'oidc' as const, issuer: settings.issuer, claims: { subject: token.subject, email: claims.email, emailVerified: claims.email_verified, groups: claims[settings.groupsClaim], sessionId: claims.sid } };
    return signInVouched({ access: this.#deps.access, watermark: this.#deps.watermark, queries: this.#queries }, flow, settings, identity, clientIp);
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
    return endSessionsAtProvider({ access: this.#deps.access, watermark: this.#deps.watermark, queries: this.#queries, clock: this.#deps.clock }, tenantId, { protocol: 'oidc', issuer: settings.issuer }, request);
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

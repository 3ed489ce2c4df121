import { randomBytes } from 'node:crypto';
import { generateServiceProviderMetadata, SAML, ValidateInResponseTo, type CacheProvider, type Profile } from '@node-saml/node-saml';
import type { Clock } from '../clock.ts';
import type { AccessService } from '../application/access-service.ts';
import type { ProjectionWatermark } from '../application/projection-watermark.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import { DomainError, notFound } from '../domain/domain-error.ts';
import { OIDC_SIGN_IN_REFUSED } from '../domain/access/oidc-sign-in.ts';
import type { SamlSettings } from '../domain/access/saml-settings.ts';
import type { SecretBox } from '../security/secret-box.ts';
import { accessQueries } from '../../projections/access-queries.ts';
import { endSessionsAtProvider, signInVouched, type SsoSignedIn, type SsoTestResult } from './identity-sign-in.ts';
import { serviceProviderKey } from './saml-sp-keys.ts';

/**
 * Console sign-in through a tenant's SAML 2.0 identity provider (SP-initiated, with @node-saml/node-saml): `start`
 * sends the browser to the provider's single sign-on service with an AuthnRequest (HTTP-Redirect binding) and
 * keeps the request's ID and a RelayState in a cookie sealed with the secrets key until the provider posts its
 * answer back (any instance finishes what another started). `finish` checks that answer: **the assertion signed
 * by one of the provider's certificates** (an unsigned assertion, or one signed by another key, is refused),
 * issued by the provider's entity ID, for this service (audience), in its time window, and in answer to the
 * request this browser's cookie names (InResponseTo); then whom it signs in is decided as for OpenID Connect.
 *
 * IdP-initiated sign-in (an answer to no request) is refused: nothing would tie it to the browser that posts it.
 */
export const SAML_FLOW_TTL_MS = 10 * 60 * 1000;
const FLOW_CONTEXT = 'saml-flow';
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
const TRANSIENT_FORMAT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient';

interface Flow {
  requestId: string;
  relayState: string;
  requestedAt: number;
  projectId: string;
  tenantId: string;
  idpEntityId: string;
  test?: boolean;
  expiresAt: number;
}

/** This service as a SAML service provider for one tenant: its entity ID and where answers are posted (the ACS). */
export interface ServiceProvider {
  entityId: string;
  acsUrl: string;
  /** Where the provider sends its logout requests (single logout, HTTP-Redirect binding). */
  sloUrl: string;
}

/** The provider's answer did not pass the checks (its reason, for the log; the person is told less). */
export class SamlError extends Error {
  override name = 'SamlError';
}

export interface SamlSignInDeps {
  access: AccessService;
  reader: ReadModelReader;
  watermark: ProjectionWatermark;
  box: SecretBox;
  clock: Clock;
}

export class SamlSignIn {
  readonly #deps: SamlSignInDeps;
  readonly #queries;

  constructor(deps: SamlSignInDeps) {
    this.#deps = deps;
    this.#queries = accessQueries(deps.reader);
  }

  /** The tenant's SAML settings for a project's login page, or null when its tenant has none. */
  async settingsForProject(projectId: string): Promise<{ tenantId: string; settings: SamlSettings } | null> {
    const project = await this.#queries.project(projectId);
    if (!project) return null;
    const tenant = await this.#queries.tenant(project.tenantId);
    return tenant?.saml ? { tenantId: tenant.tenantId, settings: tenant.saml } : null;
  }

  /** Where to send the browser (the provider, with the AuthnRequest), and the sealed flow to keep in its cookie. */
  async start(projectId: string, sp: ServiceProvider, options: { test?: boolean } = {}): Promise<{ location: string; flow: string }> {
    const found = await this.settingsForProject(projectId);
    if (!found) throw notFound("SAML sign-in is not set up for this project's organisation.", 'Sign in with your e-mail address and password.');
    const { tenantId, settings } = found;
    let requestId: string | undefined;
    const now = this.#deps.clock.now().getTime();
    const remember: CacheProvider = {
      saveAsync: async (key, value) => {
        requestId = key;
        return { value, createdAt: now };
      },
      getAsync: async () => null,
      removeAsync: async () => null,
    };
    const relayState = randomBytes(18).toString('base64url');
    const location = await this.#saml(tenantId, settings, sp, remember).getAuthorizeUrlAsync(relayState, undefined, {});
    if (!requestId) throw new SamlError('the authentication request has no ID');
    const flow: Flow = { requestId, relayState, requestedAt: now, projectId, tenantId, idpEntityId: settings.idpEntityId, ...(options.test ? { test: true } : {}), expiresAt: now + SAML_FLOW_TTL_MS };
    return { location, flow: this.#deps.box.seal(JSON.stringify(flow), FLOW_CONTEXT) };
  }

  /** Checks the provider's posted answer for the flow this browser kept; whom it signs in, recorded (or, for a test, what it would do). */
  async finish(posted: { SAMLResponse: string; RelayState?: string | undefined }, spOf: (tenantId: string) => ServiceProvider, sealedFlow: string | undefined, clientIp: string | undefined): Promise<SsoSignedIn | SsoTestResult> {
    const flow = this.#openFlow(sealedFlow);
    if (posted.RelayState !== flow.relayState) throw refused('It was not started in this browser.');
    const found = await this.settingsForProject(flow.projectId);
    if (!found || found.tenantId !== flow.tenantId || found.settings.idpEntityId !== flow.idpEntityId) throw refused('Its settings changed while you signed in.');
    const { settings } = found;
    const sp = spOf(flow.tenantId);
    // The one request this browser started is the one an answer may be to; it is answered once (the cookie is spent).
    const answered: CacheProvider = {
      saveAsync: async () => null,
      getAsync: async (key) => (key === flow.requestId ? new Date(flow.requestedAt).toISOString() : null),
      removeAsync: async () => null,
    };
    if (settings.wantAssertionsEncrypted && hasPlainAssertion(posted.SAMLResponse)) throw new SamlError('the assertion was not encrypted, and the settings want it encrypted');
    let profile: Profile | null;
    try {
      ({ profile } = await this.#saml(flow.tenantId, settings, sp, answered).validatePostResponseAsync({ SAMLResponse: posted.SAMLResponse, ...(posted.RelayState ? { RelayState: posted.RelayState } : {}) }));
    } catch (error) {
      throw new SamlError((error as Error).message);
    }
    if (!profile) throw new SamlError('the answer is a logout, not a sign-in');
    // node-saml checks the issuer of logout messages only: the assertion's is checked here.
    if (profile.issuer !== settings.idpEntityId) throw new SamlError(`the assertion was issued by ${String(profile.issuer).slice(0, 200)}, not by ${settings.idpEntityId}`);
    const subject = profile.nameID;
    // A transient NameID names nobody for good: it cannot be linked to an account.
    if (typeof subject !== 'string' || subject.length === 0 || subject.length > 1024 || profile.nameIDFormat === TRANSIENT_FORMAT) throw new SamlError('the assertion names no persistent subject (NameID)');
    const email = settings.emailAttribute ? firstValue(profile[settings.emailAttribute]) : profile.nameIDFormat === EMAIL_FORMAT ? subject : undefined;
    const identity = {
      protocol: 'saml' as const,
      issuer: settings.idpEntityId,
      // The provider is the tenant's own directory, trusted for its domains' addresses: it vouches for them as OpenID's email_verified does.
      claims: { subject, email, emailVerified: email !== undefined, groups: profile[settings.groupsAttribute], sessionId: profile.sessionIndex },
    };
    return signInVouched({ access: this.#deps.access, watermark: this.#deps.watermark, queries: this.#queries }, flow, { ...settings, groupsClaim: settings.groupsAttribute }, identity, clientIp);
  }

  /**
   * The provider's single logout (a LogoutRequest by the HTTP-Redirect binding, `query` as parsed and `rawQuery`
   * as sent, whose signature covers its exact encoding): it must be signed by one of the provider's certificates
   * (node-saml takes an unsigned one; it is refused here: anyone could end anyone's sessions with it) and issued
   * by its entity ID. Ends the sessions begun in the provider session it names (SessionIndex), or all of the
   * person's (NameID) begun through the provider; answers where to send the browser with the LogoutResponse.
   */
  async logout(tenantId: string, query: Record<string, string>, rawQuery: string, sp: ServiceProvider): Promise<{ ended: number; location: string }> {
    const tenant = await this.#queries.tenant(tenantId);
    if (!tenant?.saml) throw new SamlError('SAML sign-in is not set up for this organisation');
    const settings = tenant.saml;
    if (!query['SAMLRequest']) throw new SamlError('no SAMLRequest: this endpoint takes the provider\'s logout requests');
    if (!query['Signature'] || !query['SigAlg']) throw new SamlError('the logout request is not signed');
    const saml = this.#saml(tenantId, settings, sp, { saveAsync: async () => null, getAsync: async () => null, removeAsync: async () => null });
    let profile: Profile | null;
    try {
      ({ profile } = await saml.validateRedirectAsync(query, rawQuery));
    } catch (error) {
      throw new SamlError((error as Error).message);
    }
    if (!profile || profile.issuer !== settings.idpEntityId) throw new SamlError('the logout request is not from the provider');
    const ended = await endSessionsAtProvider({ access: this.#deps.access, watermark: this.#deps.watermark, queries: this.#queries, clock: this.#deps.clock }, tenantId, { protocol: 'saml', issuer: settings.idpEntityId }, {
      ...(profile.sessionIndex ? { idpSessionId: profile.sessionIndex } : { subject: profile.nameID }),
    });
    const location = await saml.getLogoutResponseUrlAsync(profile, query['RelayState'] ?? '', {}, true);
    return { ...ended, location };
  }

  /**
   * This service provider's metadata for a tenant's provider (entity ID, ACS, single logout), as an administrator
   * registers it there; with the tenant's settings, its certificate too, for signing (its requests are signed) and
   * for encryption (the provider may encrypt assertions to it).
   */
  metadata(sp: ServiceProvider, tenant?: { tenantId: string; settings: SamlSettings }): string {
    const key = tenant ? serviceProviderKey(tenant.tenantId, tenant.settings, this.#deps.box) : undefined;
    const keys = key && tenant?.settings.spCertificate ? { privateKey: key, publicCerts: tenant.settings.spCertificate, decryptionPvk: key, decryptionCert: tenant.settings.spCertificate, signatureAlgorithm: 'sha256' as const } : {};
    return generateServiceProviderMetadata({ issuer: sp.entityId, callbackUrl: sp.acsUrl, logoutCallbackUrl: sp.sloUrl, wantAssertionsSigned: true, identifierFormat: null, ...keys });
  }

  #saml(tenantId: string, settings: SamlSettings, sp: ServiceProvider, cacheProvider: CacheProvider): SAML {
    // With the tenant's key pair: requests (and logout responses) signed, encrypted assertions decrypted.
    const key = serviceProviderKey(tenantId, settings, this.#deps.box);
    return new SAML({
      ...(key ? { privateKey: key, decryptionPvk: key, ...(settings.spCertificate ? { publicCert: settings.spCertificate } : {}) } : {}),
      issuer: sp.entityId,
      callbackUrl: sp.acsUrl,
      entryPoint: settings.ssoUrl,
      logoutUrl: settings.sloUrl ?? settings.ssoUrl,
      logoutCallbackUrl: sp.sloUrl,
      idpCert: settings.idpCertificates,
      idpIssuer: settings.idpEntityId,
      audience: sp.entityId,
      // The assertion itself must be signed: a signed envelope around an unsigned assertion is not enough.
      wantAssertionsSigned: true,
      wantAuthnResponseSigned: false,
      validateInResponseTo: ValidateInResponseTo.always,
      requestIdExpirationPeriodMs: SAML_FLOW_TTL_MS,
      cacheProvider,
      acceptedClockSkewMs: 60_000,
      maxAssertionAgeMs: SAML_FLOW_TTL_MS,
      identifierFormat: null,
      disableRequestedAuthnContext: true,
      signatureAlgorithm: 'sha256',
    });
  }

  #openFlow(sealed: string | undefined): Flow {
    if (!sealed || sealed.length > 4096) throw refused('It was not started in this browser, was finished already, or took too long.');
    let flow: Flow;
    try {
      flow = JSON.parse(this.#deps.box.open(sealed, FLOW_CONTEXT)) as Flow;
    } catch {
      throw refused('It was not started in this browser, was finished already, or took too long.');
    }
    if (typeof flow.expiresAt !== 'number' || flow.expiresAt <= this.#deps.clock.now().getTime()) throw refused('It took too long.');
    return flow;
  }
}

function refused(why: string): DomainError {
  return new DomainError('UNAUTHORIZED', `${OIDC_SIGN_IN_REFUSED} ${why}`, 'Start again from the login page.');
}

/**
 * Whether a posted samlp:Response (base64) carries an assertion in clear (an <Assertion> element, in any namespace
 * prefix, where an encrypted one is an <EncryptedAssertion>). A policy check before the answer is verified, which
 * the signature checks do after it.
 */
function hasPlainAssertion(samlResponse: string): boolean {
  const xml = Buffer.from(samlResponse, 'base64').toString('utf8');
  return /<(?:[A-Za-z_][\w.-]*:)?Assertion[\s>/]/.test(xml);
}

function firstValue(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}

import * as client from 'openid-client';
import { createRemoteJWKSet, customFetch as joseCustomFetch, errors as joseErrors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { Agent, fetch as undiciFetch } from 'undici';
import { assertOutboundAllowed, guardedLookup, OutboundRefusedError, type OutboundPolicy, type Resolver } from '../security/ssrf-guard.ts';
import { isLoopbackHost } from '../domain/access/oidc-settings.ts';

/**
 * This service as an OpenID Connect relying party (openid-client, a certified implementation): the provider's
 * discovery document and keys, the authorization request (code flow, PKCE S256, state and nonce), and the
 * redemption of the code with every check of the ID token (signature by the provider's published keys,
 * issuer, audience, expiry, nonce).
 *
 * Every request to a provider goes through the SSRF guard (OUTBOUND_ALLOWLIST): the issuer's address is
 * checked before the request and again at connect time (undici's connector with the guard as its lookup), as
 * webhooks are. Plain http is accepted only for an issuer on a loopback address, which the guard refuses
 * unless the operator allowlisted it.
 *
 * A provider's configuration is kept CONFIGURATION_TTL_MS per (issuer, client id, secret), so a sign-in does
 * not fetch the discovery document each time; openid-client fetches the keys again when a token is signed by
 * one it does not know (key rotation).
 */
export interface OidcClient {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

/** What one sign-in carries from its start to its callback (kept sealed in the browser, see OidcFlowCookie). */
export interface OidcChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** The claims of a validated ID token this service reads. */
export interface ValidatedIdToken {
  subject: string;
  claims: Record<string, unknown>;
}

export type OidcFailure = 'provider-unreachable' | 'provider-refused' | 'invalid-response' | 'refused-address' | 'invalid-logout-token';

/** What a provider's back-channel logout token says ended: its session `sid`, or every session of `sub`, or both together. */
export interface LogoutRequest {
  subject?: string;
  idpSessionId?: string;
}

const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** How old a logout token may be (its iat), and how far in the future, as clocks differ. */
const LOGOUT_TOKEN_MAX_AGE_SECONDS = 300;

/** The provider could not be used, or its answer did not pass the checks; the message names the issuer's host, never a secret. */
export class OidcError extends Error {
  override name = 'OidcError';
  constructor(
    readonly failure: OidcFailure,
    message: string,
    /** The library's own words, for the log only (they may name claims, never secrets). */
    readonly detail?: string,
  ) {
    super(message);
  }
}

export const CONFIGURATION_TTL_MS = 10 * 60 * 1000;
const REQUEST_TIMEOUT_SECONDS = 10;

export interface OidcRelyingPartyOptions {
  policy: OutboundPolicy;
  now?: () => number;
  /** Injected in tests; default the system resolver. */
  resolve?: Resolver;
}

export class OidcRelyingParty {
  readonly #policy: OutboundPolicy;
  readonly #resolve: Resolver | undefined;
  readonly #now: () => number;
  readonly #agent: Agent;
  readonly #configurations = new Map<string, { configuration: Promise<client.Configuration>; until: number }>();
  /** The provider's keys by JWKS URL (jose fetches them again for a key id it does not know). */
  readonly #keySets = new Map<string, JWTVerifyGetKey>();

  constructor(options: OidcRelyingPartyOptions) {
    this.#policy = options.policy;
    this.#resolve = options.resolve;
    this.#now = options.now ?? Date.now;
    this.#agent = new Agent({ connect: { lookup: guardedLookup(options.policy, options.resolve) }, headersTimeout: REQUEST_TIMEOUT_SECONDS * 1000, bodyTimeout: REQUEST_TIMEOUT_SECONDS * 1000 });
  }

  /** Fresh values for one sign-in: state, nonce and the PKCE code verifier. */
  static newChecks(): OidcChecks {
    return { state: client.randomState(), nonce: client.randomNonce(), codeVerifier: client.randomPKCECodeVerifier() };
  }

  /** Reads the provider's discovery document (kept as for a sign-in): OidcError when it cannot be used. Answers its authorization endpoint. */
  async check(oidc: OidcClient): Promise<string> {
    const configuration = await this.#configuration(oidc);
    const endpoint = configuration.serverMetadata().authorization_endpoint;
    if (!endpoint) throw new OidcError('invalid-response', `The identity provider ${this.#host(oidc)} names no authorization endpoint.`);
    return endpoint;
  }

  /** The provider's authorization endpoint with this sign-in's request (code flow, openid email profile, PKCE S256). */
  async authorizationUrl(oidc: OidcClient, redirectUri: string, checks: OidcChecks): Promise<URL> {
    const configuration = await this.#configuration(oidc);
    return client.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: 'openid email profile',
      response_type: 'code',
      state: checks.state,
      nonce: checks.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(checks.codeVerifier),
      code_challenge_method: 'S256',
    });
  }

  /**
   * Redeems the authorization response at `callbackUrl` (the URL the browser was sent back to): the state must
   * be this sign-in's, the code is exchanged with the PKCE verifier, and the ID token must be valid and carry
   * this sign-in's nonce. OidcError otherwise.
   */
  async redeem(oidc: OidcClient, callbackUrl: URL, redirectUri: string, checks: OidcChecks): Promise<ValidatedIdToken> {
    const configuration = await this.#configuration(oidc);
    // The redirect URI the code was issued for (the one registered), whatever host the callback came in by.
    const current = new URL(redirectUri);
    current.search = callbackUrl.search;
    try {
      const tokens = await client.authorizationCodeGrant(configuration, current, { pkceCodeVerifier: checks.codeVerifier, expectedState: checks.state, expectedNonce: checks.nonce, idTokenExpected: true });
      const claims = tokens.claims();
      if (!claims) throw new OidcError('invalid-response', `${this.#host(oidc)} sent no ID token.`);
      return { subject: claims.sub, claims: { ...claims } };
    } catch (error) {
      throw this.#failure(oidc, error);
    }
  }

  /**
   * A back-channel logout token (OpenID Connect Back-Channel Logout 1.0) checked as that specification says: signed
   * by the provider's published keys, issued by it for this client, recent, carrying the logout event, no nonce,
   * and a sub or a sid. OidcError ('invalid-logout-token') otherwise.
   */
  async verifyLogoutToken(oidc: OidcClient, token: string): Promise<LogoutRequest> {
    const configuration = await this.#configuration(oidc);
    const jwksUri = configuration.serverMetadata().jwks_uri;
    if (!jwksUri) throw new OidcError('invalid-response', `The identity provider ${this.#host(oidc)} publishes no keys (jwks_uri).`);
    let keys = this.#keySets.get(jwksUri);
    if (!keys) {
      keys = createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: REQUEST_TIMEOUT_SECONDS * 1000, [joseCustomFetch]: this.#fetch as never });
      this.#keySets.set(jwksUri, keys);
    }
    const refused = (why: string) => new OidcError('invalid-logout-token', `The logout token is not valid: ${why}.`);
    let claims: Record<string, unknown>;
    try {
      ({ payload: claims } = await jwtVerify(token, keys, { issuer: oidc.issuer, audience: oidc.clientId, maxTokenAge: LOGOUT_TOKEN_MAX_AGE_SECONDS, clockTolerance: 60, currentDate: new Date(this.#now()), requiredClaims: ['iat', 'jti'] }));
    } catch (error) {
      if (error instanceof joseErrors.JOSEError) throw refused(error.code === 'ERR_JWT_CLAIM_VALIDATION_FAILED' ? `its ${(error as joseErrors.JWTClaimValidationFailed).claim} claim does not match` : error.code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' || error.code === 'ERR_JWKS_NO_MATCHING_KEY' ? 'it is not signed by the provider' : 'it cannot be read or has expired');
      throw this.#failure(oidc, error);
    }
    const events = claims.events;
    if (typeof events !== 'object' || events === null || !(BACKCHANNEL_LOGOUT_EVENT in events)) throw refused('it carries no back-channel logout event');
    if ('nonce' in claims) throw refused('it carries a nonce');
    const subject = typeof claims.sub === 'string' && claims.sub.length > 0 ? claims.sub : undefined;
    const idpSessionId = typeof claims.sid === 'string' && claims.sid.length > 0 ? claims.sid : undefined;
    if (subject === undefined && idpSessionId === undefined) throw refused('it names neither a subject (sub) nor a session (sid)');
    return { ...(subject === undefined ? {} : { subject }), ...(idpSessionId === undefined ? {} : { idpSessionId }) };
  }

  async #configuration(oidc: OidcClient): Promise<client.Configuration> {
    const key = `${oidc.issuer}\n${oidc.clientId}\n${oidc.clientSecret}`;
    const now = this.#now();
    const kept = this.#configurations.get(key);
    if (kept && kept.until > now) return kept.configuration;
    const issuer = new URL(oidc.issuer);
    const insecure = issuer.protocol === 'http:' && isLoopbackHost(issuer.hostname);
    const configuration = client
      .discovery(issuer, oidc.clientId, oidc.clientSecret, undefined, {
        [client.customFetch]: this.#fetch,
        timeout: REQUEST_TIMEOUT_SECONDS,
        // The ID token's signature is checked against the provider's published keys even though it comes straight
        // from the token endpoint (OpenID Connect lets a client rely on TLS alone there): a proxy or a
        // compromised network path cannot hand this service claims the provider never signed.
        execute: insecure ? [client.enableNonRepudiationChecks, client.allowInsecureRequests] : [client.enableNonRepudiationChecks],
      })
      .catch((error: unknown) => {
        this.#configurations.delete(key);
        throw this.#failure(oidc, error);
      });
    this.#configurations.set(key, { configuration, until: now + CONFIGURATION_TTL_MS });
    // At most a few providers' configurations per tenant: drop the expired ones as new ones come.
    for (const [other, entry] of this.#configurations) if (entry.until <= now) this.#configurations.delete(other);
    return configuration;
  }

  /** fetch for openid-client: through the SSRF guard, before the request and at connect time. */
  readonly #fetch: client.CustomFetch = async (url, options) => {
    await assertOutboundAllowed(new URL(url), this.#policy, this.#resolve);
    const response = await undiciFetch(url, { method: options.method, headers: options.headers as Record<string, string>, body: options.body as string | undefined, redirect: 'manual', signal: options.signal, dispatcher: this.#agent });
    return response as unknown as Response;
  };

  #host(oidc: OidcClient): string {
    return new URL(oidc.issuer).host;
  }

  #failure(oidc: OidcClient, error: unknown): OidcError {
    if (error instanceof OidcError) return error;
    const host = this.#host(oidc);
    const refused = error instanceof OutboundRefusedError ? error : (error as { cause?: unknown })?.cause instanceof OutboundRefusedError ? ((error as { cause: OutboundRefusedError }).cause) : undefined;
    if (refused) return new OidcError('refused-address', `The identity provider ${host} may not be reached from this service: ${refused.message}`, refused.message);
    if (error instanceof client.ResponseBodyError) return new OidcError('provider-refused', `The identity provider ${host} refused the sign-in (${error.error}).`, error.error_description ?? error.message);
    if (error instanceof client.AuthorizationResponseError) return new OidcError('provider-refused', `The identity provider ${host} answered the sign-in with an error (${error.error}).`, error.error_description ?? error.message);
    if (error instanceof client.ClientError) return new OidcError('invalid-response', `The identity provider ${host} answered in a way that does not pass the checks of a sign-in.`, `${error.code ?? ''} ${error.message}`.trim());
    const message = error instanceof Error ? error.message : String(error);
    return new OidcError('provider-unreachable', `The identity provider ${host} could not be reached.`, message);
  }
}

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';

/**
 * A real OpenID provider for the sign-in tests: oidc-provider (a certified implementation), started in the test
 * process with its development login and consent pages, one confidential client for the service under test,
 * and accounts the test sets. It is reached through a small proxy in front of it (the issuer is the proxy's
 * address), which passes every request through unchanged unless a test asks it to alter the ID token the token
 * endpoint answers: a hostile network between the service and a genuine provider.
 */
export interface TestAccount {
  email?: string;
  emailVerified?: boolean;
  groups?: string[];
}

/** How the proxy alters the token endpoint's ID token: not at all, a claim changed under the provider's signature, signed again by the provider's key for another client, or expired. */
export type TokenTampering = 'none' | 'altered-claims' | 'other-audience' | 'expired';

export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Accounts by subject (the login name typed on the provider's page). */
  accounts: Map<string, TestAccount>;
  tampering: TokenTampering;
  /**
   * Walks the provider's login and consent pages as `subject`, from the authorization request at `location`;
   * answers the URL it sends the browser back to. `jar`: the browser's cookies at the provider (its session there),
   * kept for a later logout.
   */
  authorize(location: string, subject: string, jar?: ProviderCookies): Promise<string>;
  /** Signs the browser whose cookies are `jar` out at the provider (its logout page, confirmed): the provider then posts logout tokens to its clients. */
  logout(jar: ProviderCookies): Promise<void>;
  /** The provider's signing key, for tests that forge a token with another one. */
  signingKey: SigningKey;
  close(): Promise<void>;
}

type SigningKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

export const TEST_CLIENT_ID = 'annals-console';

/** A browser's cookies at the provider. */
export type ProviderCookies = Map<string, string>;

export async function startOidcProvider(options: { redirectUri: string; backchannelLogoutUri?: string }): Promise<TestOidcProvider> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid: 'test-signing-key', alg: 'RS256', use: 'sig' };
  const accounts = new Map<string, TestAccount>();
  const clientSecret = `client-secret-${Math.random().toString(36).slice(2)}-${Date.now()}`;

  const front = http.createServer();
  await listen(front);
  const issuer = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: TEST_CLIENT_ID,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
        ...(options.backchannelLogoutUri ? { backchannel_logout_uri: options.backchannelLogoutUri, backchannel_logout_session_required: true } : {}),
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: ['oidc-provider-test-cookie-key'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['groups'] },
    // The claims of the scopes asked for in the ID token itself, as many providers send them.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600 },
    // Its own SSRF guard refuses loopback addresses, where the service under test listens: its back-channel
    // logout requests go out without it (a test peer's setting, not the service's).
    fetch: (url: string, { dispatcher: _dispatcher, ...options }: RequestInit & { dispatcher?: unknown }) => globalThis.fetch(url, options),
    features: { devInteractions: { enabled: true }, backchannelLogout: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    findAccount: (_ctx: unknown, id: string) => {
      const account = accounts.get(id);
      if (!account) return undefined;
      return {
        accountId: id,
        claims: () => ({ sub: id, ...(account.email === undefined ? {} : { email: account.email }), email_verified: account.emailVerified ?? true, ...(account.groups ? { groups: account.groups } : {}) }),
      };
    },
  } as never);
  provider.on('backchannel.error', (_ctx: unknown, error: Error) => process.stderr.write(`oidc-provider back-channel logout failed: ${error.message} ${String((error as { cause?: unknown }).cause)}\n`));
  const behind = http.createServer(provider.callback());
  await listen(behind);
  const behindPort = (behind.address() as AddressInfo).port;

  const state: TestOidcProvider = {
    issuer,
    clientId: TEST_CLIENT_ID,
    clientSecret,
    accounts,
    tampering: 'none',
    signingKey: privateKey,
    authorize: (location, subject, jar = new Map()) => walkInteractions(location, subject, options.redirectUri, jar),
    logout: (jar) => logOut(issuer, jar),
    close: async () => {
      await Promise.all([close(front), close(behind)]);
    },
  };

  front.on('request', (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const upstream = http.request({ host: '127.0.0.1', port: behindPort, method: request.method, path: request.url, headers: request.headers }, (answer) => {
        const body: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => body.push(chunk));
        answer.on('end', () => {
          void (async () => {
            let payload = Buffer.concat(body);
            if (request.url?.startsWith('/token') && answer.statusCode === 200 && state.tampering !== 'none') {
              const tokens = JSON.parse(payload.toString('utf8')) as { id_token: string };
              tokens.id_token = await tamper(tokens.id_token, state.tampering, privateKey);
              payload = Buffer.from(JSON.stringify(tokens));
            }
            const headers = { ...answer.headers, 'content-length': String(payload.length) };
            delete headers['transfer-encoding'];
            response.writeHead(answer.statusCode ?? 502, headers);
            response.end(payload);
          })();
        });
      });
      upstream.on('error', () => {
        response.writeHead(502);
        response.end();
      });
      upstream.end(Buffer.concat(chunks));
    });
  });
  return state;
}

async function tamper(idToken: string, how: TokenTampering, key: SigningKey): Promise<string> {
  const [header, , signature] = idToken.split('.');
  const claims = decodeJwt(idToken);
  if (how === 'altered-claims') {
    // The provider's signature kept over claims it never signed: someone else's address.
    const altered = Buffer.from(JSON.stringify({ ...claims, email: 'mallory@example.com' })).toString('base64url');
    return `${header}.${altered}.${signature}`;
  }
  const now = Math.floor(Date.now() / 1000);
  const changed = how === 'other-audience' ? { ...claims, aud: 'another-application' } : { ...claims, iat: now - 7200, exp: now - 3600 };
  const { kid } = decodeProtectedHeader(idToken);
  return new SignJWT(changed).setProtectedHeader({ alg: 'RS256', ...(kid ? { kid } : {}) }).sign(key);
}

function remember(cookies: ProviderCookies, response: Response): void {
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const at = pair!.indexOf('=');
    const name = pair!.slice(0, at).trim();
    const value = pair!.slice(at + 1);
    if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === '') cookies.delete(name);
    else cookies.set(name, value);
  }
}

const cookieHeaderOf = (cookies: ProviderCookies) => [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');

/** The provider's logout page, confirmed ("Yes, sign me out"), as the browser whose cookies are `cookies`. */
async function logOut(issuer: string, cookies: ProviderCookies): Promise<void> {
  const page = await fetch(`${issuer}/session/end`, { headers: { cookie: cookieHeaderOf(cookies) } });
  remember(cookies, page);
  const html = await page.text();
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1];
  if (!action || !xsrf) throw new Error(`no logout form on the provider's page: ${html.slice(0, 300)}`);
  const confirmed = await fetch(new URL(action.replace(/&amp;/g, '&'), issuer), { method: 'POST', redirect: 'manual', headers: { cookie: cookieHeaderOf(cookies), 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ xsrf, logout: 'yes' }).toString() });
  remember(cookies, confirmed);
  if (confirmed.status >= 400) throw new Error(`the provider refused the logout: ${confirmed.status} ${(await confirmed.text()).slice(0, 300)}`);
}

/** The provider's development pages, walked as a browser would: log in as `subject`, consent, and stop at the redirect back to `redirectUri`. */
async function walkInteractions(location: string, subject: string, redirectUri: string, cookies: ProviderCookies): Promise<string> {
  const cookieHeader = () => cookieHeaderOf(cookies);
  let url = location;
  let request: RequestInit = {};
  for (let step = 0; step < 12; step++) {
    const response = await fetch(url, { redirect: 'manual', ...request, headers: { cookie: cookieHeader(), ...(request.headers as Record<string, string> | undefined) } });
    remember(cookies, response);
    request = {};
    if (response.status >= 300 && response.status < 400) {
      const next = new URL(response.headers.get('location')!, url).href;
      if (next.startsWith(redirectUri)) return next;
      url = next;
      continue;
    }
    const html = await response.text();
    if (response.status !== 200) throw new Error(`the provider answered ${response.status} at ${url}: ${html.slice(0, 300)}`);
    const action = /action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
    if (!action || !prompt) throw new Error(`no form on the provider's page at ${url}`);
    const form = new URLSearchParams(prompt === 'login' ? { prompt, login: subject, password: 'any' } : { prompt });
    url = new URL(action.replace(/&amp;/g, '&'), url).href;
    request = { method: 'POST', body: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
  }
  throw new Error('the provider did not send the browser back within 12 steps');
}

function listen(server: http.Server): Promise<void> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
}

function close(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

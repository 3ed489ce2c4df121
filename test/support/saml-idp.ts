import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import samlify from 'samlify';
import validator from '@authenio/samlify-node-xmllint';

/**
 * A SAML 2.0 identity provider for tests: samlify in its identity-provider role, a separate implementation from
 * the service's (@node-saml/node-saml). It parses and schema-validates the service's AuthnRequest (xmllint, as
 * WebAssembly), and answers with a samlp:Response whose assertion it signs with its key (test/fixtures/saml), as
 * a real provider does. `answer` gives the form post a browser would make; `tamper` makes the answers a
 * provider must never be believed for (unsigned, signed by another key, for another audience, expired, to
 * another request). The HTTP server plays the provider's pages for a browser: GET /sso lists the accounts,
 * POST /login posts the answer to the service's ACS.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = (name: string) => readFileSync(path.join(here, '..', 'fixtures', 'saml', name), 'utf8');
export const IDP_CERT = fixture('idp-cert.pem');
const IDP_KEY = fixture('idp-key.pem');
/** Another key and certificate: what an attacker who re-signs an assertion holds. */
export const ROGUE_CERT = fixture('rogue-cert.pem');
const ROGUE_KEY = fixture('rogue-key.pem');

const PERSISTENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';
/**
 * xmllint (node-xmllint, compiled with Emscripten) adds process listeners each time it runs and never removes
 * them, and prints a blank line: the validator is wrapped to take away what each run added and keep it quiet.
 */
samlify.setSchemaValidator({
  validate: async (xml: string) => {
    const watched: Array<[NodeJS.EventEmitter, string]> = [
      [process, 'uncaughtException'],
      [process, 'unhandledRejection'],
      [process.stdout, 'drain'],
      [process.stderr, 'drain'],
    ];
    const before = watched.map(([emitter, event]) => new Set(emitter.listeners(event)));
    // It also prints an empty line for each run.
    const log = console.log;
    console.log = () => {};
    try {
      return await validator.validate(xml);
    } finally {
      console.log = log;
      watched.forEach(([emitter, event], i) => {
        for (const listener of emitter.listeners(event)) if (!before[i]!.has(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
      });
    }
  },
});

export interface SamlAccount {
  email?: string;
  groups?: string[];
  nameIdFormat?: string;
}

export type Tamper = 'unsigned' | 'rogue-key' | 'wrong-audience' | 'expired' | 'other-request' | 'wrong-issuer';

/**
 * XML signature wrapping: a response rightly signed for the attacker's own account, changed after signing so that
 * a careless reader takes another person's: a forged unsigned assertion beside the signed one (`two-assertions`),
 * or around it (`wrapped`, the signed one moved into its Advice), naming `victim`; or a comment in the NameID
 * (`comment-in-nameid`: "victim<!---->.evil" reads as "victim" to a reader of the first text node only, while the
 * signature, made without comments, still holds).
 */
export type Wrapping = { kind: 'two-assertions' | 'wrapped'; victim: string; victimEmail: string } | { kind: 'comment-in-nameid'; victim: string };

/** Changes a signed samlp:Response (base64) as `wrapping` says, after its signature was made. */
export function wrapped(samlResponse: string, wrapping: Wrapping): string {
  let xml = Buffer.from(samlResponse, 'base64').toString('utf8');
  const signed = /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(xml)![0];
  if (wrapping.kind === 'comment-in-nameid') {
    xml = xml.replace(/(<saml:NameID[^>]*>)([^<]*)</, (_all, open: string, name: string) => `${open}${wrapping.victim}<!---->${name.slice(wrapping.victim.length)}<`);
  } else {
    const forged = signed
      .replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, '')
      .replace(/ ID="[^"]+"/, ` ID="_${randomUUID()}"`)
      .replace(/(<saml:NameID[^>]*>)[^<]*</, `$1${escapeXml(wrapping.victim)}<`)
      .replace(/(<saml:Attribute Name="email"[^>]*><saml:AttributeValue[^>]*>)[^<]*</, `$1${escapeXml(wrapping.victimEmail)}<`)
      .replace(/(<saml:Attribute Name="groups"[^>]*>)[\s\S]*?(<\/saml:Attribute>)/, '$1<saml:AttributeValue xsi:type="xs:string">cms-admins</saml:AttributeValue>$2');
    xml = xml.replace(signed, wrapping.kind === 'two-assertions' ? forged + signed : forged.replace('</saml:Issuer>', `</saml:Issuer><saml:Advice>${signed}</saml:Advice>`));
  }
  return Buffer.from(xml, 'utf8').toString('base64');
}

export interface SamlAnswer {
  acsUrl: string;
  SAMLResponse: string;
  RelayState: string;
}

export interface TestSamlIdp {
  entityId: string;
  ssoUrl: string;
  accounts: Map<string, SamlAccount>;
  /** The answer to the AuthnRequest in `location` (the service's redirect) for `subject`, as the provider's page would post it. */
  answer(location: string, subject: string, tamper?: Tamper): Promise<SamlAnswer>;
  /** The URL of a LogoutRequest to the service's single logout service `sloUrl` (HTTP-Redirect), signed unless `unsigned`. */
  logoutRequest(sloUrl: string, subject: string, sessionIndex: string | undefined, options?: { unsigned?: boolean; rogue?: boolean }): string;
  /**
   * Registers the service's metadata (its certificate) at the provider, as an administrator does: `signedRequests`
   * makes the provider refuse an AuthnRequest whose signature does not verify with that certificate; `encrypt`
   * encrypts each assertion (signed first) to it. null: back to knowing the service by its entity ID alone.
   */
  register(metadata: string | null, options?: { signedRequests?: boolean; encrypt?: boolean }): void;
  close(): Promise<void>;
}

const escapeXml = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function attributeStatement(account: SamlAccount): string {
  const attribute = (name: string, values: string[]) =>
    `<saml:Attribute Name="${name}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic">${values.map((value) => `<saml:AttributeValue xsi:type="xs:string">${escapeXml(value)}</saml:AttributeValue>`).join('')}</saml:Attribute>`;
  const parts = [...(account.email ? [attribute('email', [account.email])] : []), ...(account.groups?.length ? [attribute('groups', account.groups)] : [])];
  return parts.length ? `<saml:AttributeStatement>${parts.join('')}</saml:AttributeStatement>` : '';
}

export async function startSamlIdp(options: { spEntityId: (tenantId: string) => string; acsUrl: string; tenantId: string }): Promise<TestSamlIdp> {
  const accounts = new Map<string, SamlAccount>();
  const pending = new Map<string, { location: string }>();
  const server: Server = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', 'http://idp');
      if (request.method === 'GET' && url.pathname === '/sso') {
        // The provider's sign-in page: one button per account (a real provider asks for a password here).
        const id = randomUUID();
        pending.set(id, { location: url.href.replace('http://idp', base) });
        const buttons = [...accounts.keys()].map((subject) => `<button name="subject" value="${escapeXml(subject)}">${escapeXml(subject)}</button>`).join(' ');
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        response.end(`<!doctype html><html lang="en"><title>Test IdP</title><h1>Test identity provider</h1><form method="post" action="/login"><input type="hidden" name="pending" value="${id}">${buttons}</form></html>`);
        return;
      }
      if (request.method === 'POST' && url.pathname === '/login') {
        let body = '';
        for await (const chunk of request) body += chunk;
        const form = new URLSearchParams(body);
        const waiting = pending.get(form.get('pending') ?? '');
        if (!waiting) {
          response.writeHead(400).end('unknown sign-in');
          return;
        }
        pending.delete(form.get('pending')!);
        const posted = await idp.answer(waiting.location, form.get('subject') ?? '');
        // The HTTP-POST binding: a form the browser posts to the service's ACS at once.
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        response.end(`<!doctype html><html lang="en"><title>Signing in</title><body onload="document.forms[0].submit()"><form method="post" action="${escapeXml(posted.acsUrl)}"><input type="hidden" name="SAMLResponse" value="${escapeXml(posted.SAMLResponse)}"><input type="hidden" name="RelayState" value="${escapeXml(posted.RelayState)}"><noscript><button>Continue</button></noscript></form></body></html>`);
        return;
      }
      response.writeHead(404).end();
    })().catch((error: unknown) => {
      response.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  const base = `http://127.0.0.1:${address.port}`;
  const entityId = `${base}/metadata`;

  let registered: { metadata: string; signedRequests: boolean; encrypt: boolean } | null = null;
  const provider = (key: string, cert: string, issuer = entityId) =>
    samlify.IdentityProvider({
      entityID: issuer,
      signingCert: cert,
      privateKey: key,
      isAssertionEncrypted: registered?.encrypt ?? false,
      wantAuthnRequestsSigned: registered?.signedRequests ?? false,
      nameIDFormat: [PERSISTENT],
      singleSignOnService: [{ Binding: samlify.Constants.namespace.binding.redirect, Location: `${base}/sso` }],
      singleLogoutService: [{ Binding: samlify.Constants.namespace.binding.redirect, Location: `${base}/sso` }],
    });
  const serviceProvider = (wantAssertionsSigned: boolean) =>
    registered
      ? samlify.ServiceProvider({ metadata: registered.metadata, wantAssertionsSigned })
      : samlify.ServiceProvider({
          entityID: options.spEntityId(options.tenantId),
          assertionConsumerService: [{ Binding: samlify.Constants.namespace.binding.post, Location: options.acsUrl }],
          wantAssertionsSigned,
          authnRequestsSigned: false,
        });

  const idp: TestSamlIdp = {
    entityId,
    ssoUrl: `${base}/sso`,
    accounts,
    async answer(location, subject, tamper) {
      const query = Object.fromEntries(new URL(location).searchParams);
      const sp = serviceProvider(tamper !== 'unsigned');
      const signer = tamper === 'rogue-key' ? provider(ROGUE_KEY, ROGUE_CERT) : provider(IDP_KEY, IDP_CERT, tamper === 'wrong-issuer' ? 'https://impostor.example/idp' : entityId);
      // The service's AuthnRequest, parsed and checked against the SAML schema by the provider.
      // With the service's certificate registered and signed requests wanted, the signature over the query as sent.
      const octetString = new URL(location).search.slice(1).split('&').filter((part) => !part.startsWith('Signature=')).join('&');
      const parsed = await provider(IDP_KEY, IDP_CERT).parseLoginRequest(sp, 'redirect', { query, octetString });
      const requestId = tamper === 'other-request' ? `_${randomUUID()}` : (parsed.extract.request?.id as string);
      const account = accounts.get(subject) ?? {};
      const now = Date.now();
      const at = (offsetMs: number) => new Date(now + offsetMs).toISOString();
      const [notBefore, notOnOrAfter] = tamper === 'expired' ? [at(-20 * 60_000), at(-10 * 60_000)] : [at(-1000), at(5 * 60_000)];
      const issuer = tamper === 'wrong-issuer' ? 'https://impostor.example/idp' : entityId;
      const replace = (template: string) => {
        const withStatements = template
          .replace('{AuthnStatement}', `<saml:AuthnStatement AuthnInstant="${at(0)}" SessionIndex="_session-${escapeXml(subject)}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`)
          .replace('{AttributeStatement}', attributeStatement(account));
        const id = `_${randomUUID()}`;
        const context = samlify.SamlLib.replaceTagsByValue(withStatements, {
          ID: id,
          AssertionID: `_${randomUUID()}`,
          Destination: options.acsUrl,
          Audience: tamper === 'wrong-audience' ? 'https://another-service.example/sp' : options.spEntityId(options.tenantId),
          SubjectRecipient: options.acsUrl,
          Issuer: issuer,
          IssueInstant: at(0),
          StatusCode: 'urn:oasis:names:tc:SAML:2.0:status:Success',
          ConditionsNotBefore: notBefore,
          ConditionsNotOnOrAfter: notOnOrAfter,
          SubjectConfirmationDataNotOnOrAfter: notOnOrAfter,
          NameIDFormat: account.nameIdFormat ?? PERSISTENT,
          NameID: subject,
          InResponseTo: requestId,
        });
        return { id, context };
      };
      const { context } = await signer.createLoginResponse(sp, parsed as unknown as Parameters<typeof signer.createLoginResponse>[1], 'post', {}, replace);
      return { acsUrl: options.acsUrl, SAMLResponse: context, RelayState: query['RelayState'] ?? '' };
    },
    logoutRequest(sloUrl, subject, sessionIndex, logoutOptions = {}) {
      const sp = samlify.ServiceProvider({
        entityID: options.spEntityId(options.tenantId),
        assertionConsumerService: [{ Binding: samlify.Constants.namespace.binding.post, Location: options.acsUrl }],
        singleLogoutService: [{ Binding: samlify.Constants.namespace.binding.redirect, Location: sloUrl }],
        wantLogoutRequestSigned: !logoutOptions.unsigned,
      });
      const signer = logoutOptions.rogue ? provider(ROGUE_KEY, ROGUE_CERT) : provider(IDP_KEY, IDP_CERT);
      const { context } = signer.createLogoutRequest(sp, 'redirect', { logoutNameID: subject, ...(sessionIndex ? { sessionIndex } : {}) }) as { context: string };
      return context;
    },
    register(metadata, registration = {}) {
      registered = metadata === null ? null : { metadata, signedRequests: registration.signedRequests ?? false, encrypt: registration.encrypt ?? false };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return idp;
}

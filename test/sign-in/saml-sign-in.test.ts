import { expect } from 'chai';
import { adminSession, PASSWORD, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { IDP_CERT, ROGUE_CERT, startSamlIdp, wrapped, type Tamper, type TestSamlIdp } from '../support/saml-idp.ts';

/**
 * Console sign-in through the tenant's SAML 2.0 provider, end to end over HTTP: a separate implementation in the
 * provider's role (samlify, which also schema-checks the service's AuthnRequest) signs real assertions; the
 * service's start, assertion consumer service and settings routes, and what the log records. The browser's form
 * post is played by fetch, with the flow cookie the start set.
 */
describe('Single sign-on with SAML 2.0', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let idp: TestSamlIdp;
  let admin: { token: string; headers: Record<string, string> };
  const domain = 'example.com';

  before(async () => {
    f = await startAdminFixture();
    idp = await startSamlIdp({ tenantId: f.project.tenantId, spEntityId: (tenantId) => `${f.service.url}/admin/v1/auth/saml/metadata/${tenantId}`, acsUrl: `${f.service.url}/admin/v1/auth/saml/acs` });
    admin = await adminSession(f);
  });
  after(async () => {
    await f?.stop();
    await idp?.close();
  });

  const settings = (overrides: Record<string, unknown> = {}) => ({ idpEntityId: idp.entityId, ssoUrl: idp.ssoUrl, idpCertificates: [IDP_CERT], allowedEmailDomains: [domain], adminGroups: ['cms-admins'], userGroups: ['cms-editors'], ...overrides });
  const eventsOf = async (streamId: string) => {
    const events: Array<{ type: string; data: Record<string, unknown>; actor: unknown }> = [];
    for await (const e of f.service.log.readStream(streamId)) events.push({ type: e.type, data: e.data as Record<string, unknown>, actor: e.metadata.actor });
    return events;
  };

  /** From the login page's button to the ACS's answer, as `subject` at the provider. */
  async function signIn(subject: string, options: { tamper?: Tamper; test?: boolean } = {}): Promise<{ acs: Response; replay: () => Promise<Response> }> {
    const start = await fetch(`${f.service.url}/admin/v1/auth/saml/start?projectId=${f.project.projectId}${options.test ? '&test=true' : ''}`, { redirect: 'manual' });
    expect(start.status, await start.clone().text()).to.equal(302);
    const location = start.headers.get('location')!;
    expect(location.startsWith(idp.ssoUrl)).to.equal(true);
    const flow = start.headers.getSetCookie().find((line) => line.startsWith('annals-saml-flow='))!.split(';')[0]!;
    const answer = await idp.answer(location, subject, options.tamper);
    const post = () => fetch(answer.acsUrl, { method: 'POST', redirect: 'manual', headers: { cookie: flow, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: new URLSearchParams({ SAMLResponse: answer.SAMLResponse, RelayState: answer.RelayState }) });
    return { acs: await post(), replay: post };
  }

  it('refuses settings it cannot use, and answers what to register at the provider', async () => {
    expect((await f.call('GET', '/sign-in/saml', { token: admin.token })).status).to.equal(404);
    const notACertificate = await f.call('PUT', '/sign-in/saml', { token: admin.token, body: settings({ idpCertificates: ['-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----'] }) });
    expect(notACertificate.status).to.equal(400);
    const plainHttp = await f.call('PUT', '/sign-in/saml', { token: admin.token, body: settings({ ssoUrl: 'http://idp.example.org/sso' }) });
    expect(plainHttp.status).to.equal(400);
    expect((await f.call('PUT', '/sign-in/saml', { body: settings() })).status, 'agent keys do not set up sign-in').to.equal(403);

    const put = await f.call('PUT', '/sign-in/saml', { token: admin.token, headers: admin.headers, body: settings() });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body).to.deep.include({ idpEntityId: idp.entityId, sloUrl: null, spEntityId: `${f.service.url}/admin/v1/auth/saml/metadata/${f.project.tenantId}`, acsUrl: `${f.service.url}/admin/v1/auth/saml/acs`, ssoOnly: false, emailAttribute: 'email', groupsAttribute: 'groups' });
    expect(put.body.idpCertificates[0].subject).to.include('annals test idp');
    const metadata = await fetch(put.body.spEntityId);
    expect(metadata.headers.get('content-type')).to.match(/samlmetadata\+xml/);
    const xml = await metadata.text();
    expect(xml).to.include(`entityID="${put.body.spEntityId}"`);
    expect(xml).to.include(put.body.acsUrl);
    const options = await (await fetch(`${f.service.url}/admin/v1/auth/sign-in-options?projectId=${f.project.projectId}`)).json();
    expect(options).to.deep.equal({ password: true, oidc: null, saml: { startUrl: `/admin/v1/auth/saml/start?projectId=${f.project.projectId}` } });
    const events = await eventsOf(`tenant-${f.project.tenantId}`);
    expect(events.find((e) => e.type === 'tenant.saml-configured')!.data).to.deep.include({ idpEntityId: idp.entityId, projectId: f.project.projectId });
  });

  it('signs in a person new here with the role their groups give, provisions and links them, and records the sign-in', async () => {
    idp.accounts.set('saml-alice', { email: `Alice@${domain}`, groups: ['cms-editors'] });
    const { acs } = await signIn('saml-alice');
    expect(acs.status, await acs.clone().text()).to.equal(302);
    expect(acs.headers.get('location')).to.equal(`/console/p/${f.project.projectId}/`);
    const cookie = acs.headers.getSetCookie().find((line) => line.startsWith('annals-session='))!.split(';')[0]!;
    const session = await fetch(`${f.service.url}/admin/v1/auth/session`, { headers: { cookie } });
    const { user } = (await session.json()) as { user: { id: string; email: string; role: string } };
    expect(user).to.deep.include({ email: `alice@${domain}`, role: 'tenant_user' });
    const events = await eventsOf(`user-${user.id}`);
    expect(events.map((e) => e.type)).to.deep.equal(['user.created', 'user.identity-linked', 'user.signed-in']);
    expect(events[1]!.data).to.deep.include({ protocol: 'saml', issuer: idp.entityId, subject: 'saml-alice' });
    expect(events[1]!.actor).to.deep.include({ type: 'operator', id: `saml:${new URL(idp.entityId).host}` });
    expect(events[2]!.data).to.deep.include({ method: 'saml', issuer: idp.entityId, idpSessionId: '_session-saml-alice', projectId: f.project.projectId });
  });

  it('refuses an answer posted twice, even with a copy of the flow cookie', async () => {
    idp.accounts.set('saml-bo', { email: `bo@${domain}`, groups: ['cms-editors'] });
    const { acs, replay } = await signIn('saml-bo');
    expect(acs.status).to.equal(302);
    const again = await replay();
    expect(again.status).to.equal(401);
    expect(((await again.json()) as { error: { message: string } }).error.message).to.match(/used already/);
  });

  for (const [tamper, why] of [
    ['unsigned', 'an unsigned assertion'],
    ['rogue-key', 'an assertion re-signed with a key the settings do not name'],
    ['wrong-audience', 'an assertion for another service'],
    ['expired', 'an expired assertion'],
    ['other-request', 'an answer to a request this browser did not make'],
    ['wrong-issuer', 'an answer from another issuer'],
  ] as const) {
    it(`refuses ${why}, signs nobody in and records nothing`, async () => {
      idp.accounts.set('saml-mallory', { email: `mallory@${domain}`, groups: ['cms-admins'] });
      const { acs } = await signIn('saml-mallory', { tamper });
      expect(acs.status, await acs.clone().text()).to.equal(401);
      expect(acs.headers.getSetCookie().some((line) => line.startsWith('annals-session='))).to.equal(false);
      const users = await f.call('GET', '/users', { token: admin.token, headers: admin.headers });
      expect(users.body.items.some((u: { email: string }) => u.email === `mallory@${domain}`)).to.equal(false);
    });
  }

  for (const kind of ['two-assertions', 'wrapped', 'comment-in-nameid'] as const) {
    it(`never signs the attacker in as someone else by signature wrapping (${kind})`, async () => {
      // The victim, an administrator here through the provider; the attacker, an editor with an account at the provider.
      idp.accounts.set(`victim-${kind}`, { email: `victim-${kind}@${domain}`, groups: ['cms-admins'] });
      expect((await signIn(`victim-${kind}`)).acs.status).to.equal(302);
      const attacker = `victim-${kind}.evil`;
      idp.accounts.set(attacker, { email: `evil-${kind}@${domain}`, groups: ['cms-editors'] });
      const start = await fetch(`${f.service.url}/admin/v1/auth/saml/start?projectId=${f.project.projectId}`, { redirect: 'manual' });
      const flow = start.headers.getSetCookie().find((line) => line.startsWith('annals-saml-flow='))!.split(';')[0]!;
      const answer = await idp.answer(start.headers.get('location')!, attacker);
      const forged = wrapped(answer.SAMLResponse, kind === 'comment-in-nameid' ? { kind, victim: `victim-${kind}` } : { kind, victim: `victim-${kind}`, victimEmail: `victim-${kind}@${domain}` });
      const acs = await fetch(answer.acsUrl, { method: 'POST', redirect: 'manual', headers: { cookie: flow, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: new URLSearchParams({ SAMLResponse: forged, RelayState: answer.RelayState }) });
      if (kind === 'comment-in-nameid') {
        // The comment changes nothing the signature covers: read whole, the NameID is the attacker's own.
        expect(acs.status, await acs.clone().text()).to.equal(302);
        const cookie = acs.headers.getSetCookie().find((line) => line.startsWith('annals-session='))!.split(';')[0]!;
        const { user } = (await (await fetch(`${f.service.url}/admin/v1/auth/session`, { headers: { cookie } })).json()) as { user: { id: string; email: string; role: string } };
        expect(user).to.deep.include({ email: `evil-${kind}@${domain}`, role: 'tenant_user' });
        const linked = (await eventsOf(`user-${user.id}`)).find((e) => e.type === 'user.identity-linked');
        expect(linked!.data.subject).to.equal(attacker);
      } else {
        // A forged assertion beside or around the signed one: refused whole.
        expect(acs.status, await acs.clone().text()).to.equal(401);
        expect(acs.headers.getSetCookie().some((line) => line.startsWith('annals-session='))).to.equal(false);
      }
    });
  }

  it('also refuses an assertion signed by a rogue key that is not in the settings, while the right one is', async () => {
    // The settings name both certificates during a rotation: then the second key signs in too.
    const rotated = await f.call('PUT', '/sign-in/saml', { token: admin.token, body: settings({ idpCertificates: [IDP_CERT, ROGUE_CERT] }) });
    expect(rotated.status).to.equal(200);
    idp.accounts.set('saml-rotated', { email: `rotated@${domain}`, groups: ['cms-editors'] });
    expect((await signIn('saml-rotated', { tamper: 'rogue-key' })).acs.status).to.equal(302);
    await f.call('PUT', '/sign-in/saml', { token: admin.token, body: settings() });
  });

  it('tests the settings: shows what the provider sent and what a sign-in would do, recording nothing', async () => {
    idp.accounts.set('saml-tester', { email: `tester@${domain}`, groups: ['cms-admins'] });
    const before = (await eventsOf(`tenant-${f.project.tenantId}`)).length;
    const { acs } = await signIn('saml-tester', { test: true });
    expect(acs.status).to.equal(200);
    const page = await acs.text();
    expect(page).to.include('saml-tester');
    expect(page).to.include('create a new user');
    expect(page).to.include('tenant_admin');
    const users = await f.call('GET', '/users', { token: admin.token, headers: admin.headers });
    expect(users.body.items.some((u: { email: string }) => u.email === `tester@${domain}`)).to.equal(false);
    expect((await eventsOf(`tenant-${f.project.tenantId}`)).length).to.equal(before);
  });

  it('refuses people outside the allowed domains and groups, saying why', async () => {
    idp.accounts.set('saml-outsider', { email: 'out@elsewhere.org', groups: ['cms-admins'] });
    expect((await signIn('saml-outsider')).acs.status).to.equal(403);
    idp.accounts.set('saml-nogroup', { email: `nogroup@${domain}`, groups: ['finance'] });
    expect((await signIn('saml-nogroup')).acs.status).to.equal(403);
  });

  it("ends the sessions begun in the provider's session at its signed single logout; an unsigned or foreign request ends nothing", async () => {
    idp.accounts.set('saml-leaver', { email: `leaver@${domain}`, groups: ['cms-editors'] });
    const { acs } = await signIn('saml-leaver');
    const cookie = acs.headers.getSetCookie().find((line) => line.startsWith('annals-session='))!.split(';')[0]!;
    const sessionStatus = async () => (await fetch(`${f.service.url}/admin/v1/auth/session`, { headers: { cookie } })).status;
    expect(await sessionStatus()).to.equal(200);
    const sloUrl = `${f.service.url}/admin/v1/auth/saml/slo/${f.project.tenantId}`;
    const settingsNow = await f.call('GET', '/sign-in/saml', { token: admin.token });
    expect(settingsNow.body.sloServiceUrl).to.equal(sloUrl);

    for (const forged of [idp.logoutRequest(sloUrl, 'saml-leaver', '_session-saml-leaver', { unsigned: true }), idp.logoutRequest(sloUrl, 'saml-leaver', '_session-saml-leaver', { rogue: true })]) {
      const refused = await fetch(forged, { redirect: 'manual', headers: { accept: 'application/json' } });
      expect(refused.status, await refused.clone().text()).to.equal(401);
      expect(await sessionStatus(), 'the session stays').to.equal(200);
    }
    const logout = await fetch(idp.logoutRequest(sloUrl, 'saml-leaver', '_session-saml-leaver'), { redirect: 'manual' });
    expect(logout.status, await logout.clone().text()).to.equal(302);
    expect(logout.headers.get('location')!.startsWith(idp.ssoUrl)).to.equal(true);
    expect(new URL(logout.headers.get('location')!).searchParams.get('SAMLResponse')).to.be.a('string');
    expect(await sessionStatus()).to.equal(401);
    const users = await f.call('GET', '/users', { token: admin.token, headers: admin.headers });
    const leaver = users.body.items.find((u: { email: string }) => u.email === `leaver@${domain}`);
    const revoked = (await eventsOf(`user-${leaver.id}`)).filter((e) => e.type === 'user.session-revoked');
    expect(revoked).to.have.length(1);
    expect(revoked[0]!.actor).to.deep.include({ type: 'operator', id: `saml:${new URL(idp.entityId).host}` });
  });

  it('signs its requests and takes encrypted assertions with the key pair it made for the tenant; wanting encryption refuses an assertion in clear', async () => {
    const first = await f.call('GET', '/sign-in/saml', { token: admin.token, headers: admin.headers });
    expect(first.body.spCertificate.pem).to.match(/^-----BEGIN CERTIFICATE-----/);
    expect(first.body.wantAssertionsEncrypted).to.equal(false);
    expect(JSON.stringify(first.body)).to.not.match(/PRIVATE KEY|sealedSpKey/);
    // The private key is in the log sealed, never in clear.
    const configured = (await eventsOf(`tenant-${f.project.tenantId}`)).filter((e) => e.type === 'tenant.saml-configured');
    expect(configured.at(-1)!.data['sealedSpKey']).to.match(/^v1\./);
    expect(JSON.stringify(configured)).to.not.match(/PRIVATE KEY/);
    const metadata = await (await fetch(first.body.spEntityId)).text();
    expect(metadata).to.match(/AuthnRequestsSigned="true"/);
    expect(metadata).to.match(/use="encryption"/);
    expect(metadata).to.include(first.body.spCertificate.pem.replace(/-----[A-Z ]+-----|\s/g, '').slice(0, 64));

    /** The provider's answer to a sign-in started now, and the flow cookie, without posting it. */
    const answered = async (subject: string) => {
      const start = await fetch(`${f.service.url}/admin/v1/auth/saml/start?projectId=${f.project.projectId}`, { redirect: 'manual' });
      const flow = start.headers.getSetCookie().find((line) => line.startsWith('annals-saml-flow='))!.split(';')[0]!;
      const answer = await idp.answer(start.headers.get('location')!, subject);
      const post = () => fetch(answer.acsUrl, { method: 'POST', redirect: 'manual', headers: { cookie: flow, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: new URLSearchParams({ SAMLResponse: answer.SAMLResponse, RelayState: answer.RelayState }) });
      return { xml: Buffer.from(answer.SAMLResponse, 'base64').toString('utf8'), post };
    };
    idp.accounts.set('saml-erin', { email: `erin@${domain}`, groups: ['cms-editors'] });
    // The provider knows the service's certificate: it checks each request's signature and encrypts to it.
    idp.register(metadata, { signedRequests: true, encrypt: true });
    try {
      const encrypted = await answered('saml-erin');
      expect(encrypted.xml).to.match(/EncryptedAssertion/);
      expect(encrypted.xml).to.not.include('saml-erin');
      expect((await encrypted.post()).status).to.equal(302);

      const wanting = await f.call('PUT', '/sign-in/saml', { token: admin.token, headers: admin.headers, body: settings({ wantAssertionsEncrypted: true }) });
      expect(wanting.status, JSON.stringify(wanting.body)).to.equal(200);
      expect(wanting.body.spCertificate.fingerprint256, 'the key pair is kept').to.equal(first.body.spCertificate.fingerprint256);
      expect((await (await answered('saml-erin')).post()).status).to.equal(302);
      idp.register(metadata, { signedRequests: true, encrypt: false });
      const inClear = await answered('saml-erin');
      const refused = await inClear.post();
      expect(refused.status).to.equal(401);

      // A new key pair: the provider, still holding the old certificate, refuses the requests signed with the new one.
      const renewed = await f.call('PUT', '/sign-in/saml', { token: admin.token, headers: admin.headers, body: settings({ newSpCertificate: true }) });
      expect(renewed.status).to.equal(200);
      expect(renewed.body.spCertificate.fingerprint256).to.not.equal(first.body.spCertificate.fingerprint256);
      let failure: unknown;
      await answered('saml-erin').catch((error: unknown) => {
        failure = error;
      });
      expect(String(failure)).to.match(/SIGNATURE/);
      // Given the new certificate, it signs in again.
      idp.register(await (await fetch(first.body.spEntityId)).text(), { signedRequests: true, encrypt: true });
      expect((await (await answered('saml-erin')).post()).status).to.equal(302);
    } finally {
      idp.register(null);
      await f.call('PUT', '/sign-in/saml', { token: admin.token, headers: admin.headers, body: settings() });
    }
  });

  it('turns on single sign-on only once the admin signed in through the provider; passwords are then refused', async () => {
    const early = await f.call('PUT', '/sign-in/saml', { token: admin.token, body: settings({ ssoOnly: true }) });
    expect(early.status, JSON.stringify(early.body)).to.equal(403);
    idp.accounts.set('saml-admin', { email: f.project.adminEmail, groups: ['cms-admins'] });
    expect((await signIn('saml-admin')).acs.status).to.equal(302);
    const on = await f.call('PUT', '/sign-in/saml', { token: admin.token, body: settings({ ssoOnly: true }) });
    expect(on.status, JSON.stringify(on.body)).to.equal(200);
    const password = await fetch(`${f.service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: f.project.adminEmail, password: PASSWORD }) });
    expect(password.status).to.equal(403);
    const options = (await (await fetch(`${f.service.url}/admin/v1/auth/sign-in-options?projectId=${f.project.projectId}`)).json()) as { password: boolean };
    expect(options.password).to.equal(false);
    const removed = await f.call('DELETE', '/sign-in/saml', { token: admin.token });
    expect(removed.status).to.equal(204);
  });
});

import { expect } from 'chai';
import { adminSession, PASSWORD, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { ManualClock } from '../../src/clock.ts';
import { generateKeyPair, SignJWT } from 'jose';
import { startOidcProvider, type ProviderCookies, type TestOidcProvider } from '../support/oidc-provider.ts';
import { eventually } from '../support/eventually.ts';

/**
 * Console sign-in through the tenant's OpenID Connect provider, end to end over HTTP: a real provider
 * (oidc-provider) with its login and consent pages, the service's start, callback and settings routes, and what
 * the log records. The browser is played by fetch with a cookie jar per site.
 */
describe('Single sign-on with OpenID Connect', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let idp: TestOidcProvider;
  let admin: { token: string; headers: Record<string, string> };
  const domain = 'example.com';

  before(async () => {
    f = await startAdminFixture({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    idp = await startOidcProvider({ redirectUri: `${f.service.url}/admin/v1/auth/oidc/callback`, backchannelLogoutUri: `${f.service.url}/admin/v1/auth/oidc/backchannel-logout/${f.project.tenantId}` });
    admin = await adminSession(f);
  });
  after(async () => {
    await f?.stop();
    await idp?.close();
  });

  const settings = (overrides: Record<string, unknown> = {}) => ({ issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, allowedEmailDomains: [domain], adminGroups: ['cms-admins'], userGroups: ['cms-editors'], ...overrides });

  /** A browser's cookies for the service's site. */
  class Browser {
    readonly cookies = new Map<string, string>();
    async get(path: string, headers: Record<string, string> = {}): Promise<Response> {
      const response = await fetch(new URL(path, f.service.url), { redirect: 'manual', headers: { cookie: [...this.cookies].map(([n, v]) => `${n}=${v}`).join('; '), ...headers } });
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const [name, ...rest] = pair!.split('=');
        const value = rest.join('=');
        if (/Max-Age=0/.test(line)) this.cookies.delete(name!);
        else this.cookies.set(name!, value);
      }
      return response;
    }
    /** The same browser's cookies at the provider (its session there). */
    readonly atProvider: ProviderCookies = new Map();
    /** From the login page's button to the callback's answer, signing in at the provider as `subject`. */
    async signIn(subject: string): Promise<{ callback: Response; callbackUrl: string }> {
      const options = (await (await this.get(`/admin/v1/auth/sign-in-options?projectId=${f.project.projectId}`)).json()) as { oidc: { startUrl: string } | null };
      expect(options.oidc, 'single sign-on offered').to.not.equal(null);
      const start = await this.get(options.oidc!.startUrl);
      expect(start.status, await start.clone().text()).to.equal(302);
      const callbackUrl = await idp.authorize(start.headers.get('location')!, subject, this.atProvider);
      const callback = await this.get(callbackUrl, { accept: 'text/html' });
      return { callback, callbackUrl };
    }
  }

  const eventsOf = async (streamId: string) => {
    const events: Array<{ type: string; data: Record<string, unknown>; actor: unknown }> = [];
    for await (const e of f.service.log.readStream(streamId)) events.push({ type: e.type, data: e.data as Record<string, unknown>, actor: e.metadata.actor });
    return events;
  };

  it('answers 404 for the settings until they are set, and refuses agent keys', async () => {
    const none = await f.call('GET', '/sign-in/oidc', { token: admin.token });
    expect(none.status).to.equal(404);
    const byKey = await f.call('PUT', '/sign-in/oidc', { body: settings() });
    expect(byKey.status).to.equal(403);
    const options = await fetch(`${f.service.url}/admin/v1/auth/sign-in-options?projectId=${f.project.projectId}`);
    expect(await options.json()).to.deep.equal({ password: true, oidc: null, saml: null });
  });

  it('refuses settings whose issuer cannot be used, naming why', async () => {
    const plainHttp = await f.call('PUT', '/sign-in/oidc', { token: admin.token, body: settings({ issuer: 'http://login.example.org' }) });
    expect(plainHttp.status).to.equal(400);
    expect(plainHttp.body.error.message).to.match(/https/);
    const unreachable = await f.call('PUT', '/sign-in/oidc', { token: admin.token, body: settings({ issuer: 'http://127.0.0.1:9/' }) });
    expect(unreachable.status, JSON.stringify(unreachable.body)).to.equal(400);
    expect(unreachable.body.error.message).to.match(/could not be reached/);
    const noDomains = await f.call('PUT', '/sign-in/oidc', { token: admin.token, body: settings({ allowedEmailDomains: ['not a domain'] }) });
    expect(noDomains.status).to.equal(400);
  });

  it('keeps the client secret sealed: never answered, never in the log in clear', async () => {
    const put = await f.call('PUT', '/sign-in/oidc', { token: admin.token, headers: admin.headers, body: settings() });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body).to.deep.include({ issuer: idp.issuer, clientId: idp.clientId, clientSecretSet: true, ssoOnly: false, redirectUri: `${f.service.url}/admin/v1/auth/oidc/callback`, backchannelLogoutUri: `${f.service.url}/admin/v1/auth/oidc/backchannel-logout/${f.project.tenantId}` });
    expect(JSON.stringify(put.body)).to.not.include(idp.clientSecret);
    const events = await eventsOf(`tenant-${f.project.tenantId}`);
    const configured = events.filter((e) => e.type === 'tenant.oidc-configured');
    expect(configured).to.have.length(1);
    expect(configured[0]!.data.sealedClientSecret).to.match(/^v1\./);
    expect(JSON.stringify(events)).to.not.include(idp.clientSecret);
    // Saved again unchanged, without the secret: nothing new is recorded.
    const again = await f.call('PUT', '/sign-in/oidc', { token: admin.token, body: settings({ clientSecret: undefined }) });
    expect(again.status).to.equal(200);
    expect((await eventsOf(`tenant-${f.project.tenantId}`)).filter((e) => e.type === 'tenant.oidc-configured')).to.have.length(1);
  });

  it('signs in a person new here with the role their groups give, provisions and links them, and records the sign-in', async () => {
    idp.accounts.set('alice-sub', { email: `Alice@${domain}`, groups: ['cms-editors'] });
    const browser = new Browser();
    const { callback } = await browser.signIn('alice-sub');
    expect(callback.status, await callback.clone().text()).to.equal(302);
    expect(callback.headers.get('location')).to.equal(`/console/p/${f.project.projectId}/`);
    expect(browser.cookies.has('annals-session')).to.equal(true);
    expect(browser.cookies.has('annals-oidc-flow'), 'the flow cookie is spent').to.equal(false);

    const session = await browser.get('/admin/v1/auth/session');
    expect(session.status).to.equal(200);
    const { user } = (await session.json()) as { user: { id: string; email: string; role: string; tenantId: string } };
    expect(user).to.deep.include({ email: `alice@${domain}`, role: 'tenant_user', tenantId: f.project.tenantId });

    const events = await eventsOf(`user-${user.id}`);
    expect(events.map((e) => e.type)).to.deep.equal(['user.created', 'user.identity-linked', 'user.signed-in']);
    expect(events[1]!.data).to.deep.include({ issuer: idp.issuer, subject: 'alice-sub' });
    expect(events[1]!.actor).to.deep.include({ type: 'operator', id: `oidc:${new URL(idp.issuer).host}` });
    expect(events[2]!.data).to.deep.include({ method: 'oidc', issuer: idp.issuer });
    expect(events[2]!.actor).to.deep.include({ type: 'user', id: user.id });
    // The project whose login page was used shows the sign-in in its audit log, the settings change too.
    const audit = await f.call('GET', '/audit-log?limit=100', { token: admin.token, headers: admin.headers });
    const shown = (audit.body.items as Array<{ type: string; actor: { id: string } }>).map((item) => `${item.type} by ${item.actor.id}`);
    expect(shown).to.include.members([`user.signed-in by ${user.id}`, `user.identity-linked by oidc:${new URL(idp.issuer).host}`, `user.created by oidc:${new URL(idp.issuer).host}`, `tenant.oidc-configured by ${f.project.userId}`]);

    // The groups decide the role at every sign-in.
    idp.accounts.set('alice-sub', { email: `alice@${domain}`, groups: ['cms-editors', 'cms-admins'] });
    const later = new Browser();
    expect((await later.signIn('alice-sub')).callback.status).to.equal(302);
    const promoted = (await (await later.get('/admin/v1/auth/session')).json()) as { user: { id: string; role: string } };
    expect(promoted.user).to.deep.include({ id: user.id, role: 'tenant_admin' });
    const changed = (await eventsOf(`user-${user.id}`)).find((e) => e.type === 'user.role-changed');
    expect(changed?.data).to.deep.include({ role: 'tenant_admin', previousRole: 'tenant_user' });
  });

  it('refuses people outside the allowed domains, in no allowed group, or without a verified address, with a page that says why', async () => {
    idp.accounts.set('outsider', { email: 'bob@elsewhere.org', groups: ['cms-admins'] });
    idp.accounts.set('no-group', { email: `carol@${domain}`, groups: ['sales'] });
    idp.accounts.set('unverified', { email: `dave@${domain}`, emailVerified: false, groups: ['cms-editors'] });
    for (const [subject, status, words] of [
      ['outsider', 403, /elsewhere\.org may not sign in/],
      ['no-group', 403, /none of the groups/],
      ['unverified', 401, /did not say it verified/],
    ] as const) {
      const browser = new Browser();
      const { callback } = await browser.signIn(subject);
      expect(callback.status, subject).to.equal(status);
      expect(callback.headers.get('content-type')).to.match(/^text\/html/);
      expect(await callback.text()).to.match(words);
      expect(browser.cookies.has('annals-session'), subject).to.equal(false);
    }
  });

  it('answers a callback once: a replayed code, and a callback without the browser that started it, are refused', async () => {
    idp.accounts.set('erin-sub', { email: `erin@${domain}`, groups: ['cms-editors'] });
    const browser = new Browser();
    const flowBefore = new Map<string, string>();
    const options = (await (await browser.get(`/admin/v1/auth/sign-in-options?projectId=${f.project.projectId}`)).json()) as { oidc: { startUrl: string } };
    const start = await browser.get(options.oidc.startUrl);
    for (const [name, value] of browser.cookies) flowBefore.set(name, value);
    const callbackUrl = await idp.authorize(start.headers.get('location')!, 'erin-sub');

    const elsewhere = new Browser();
    const stolen = await elsewhere.get(callbackUrl, { accept: 'application/json' });
    expect(stolen.status).to.equal(401);
    expect(((await stolen.json()) as { error: { code: string } }).error.code).to.equal('UNAUTHORIZED');

    expect((await browser.get(callbackUrl)).status).to.equal(302);
    // The same code with the same flow cookie sent again (a replay): the provider will not redeem it twice.
    const replay = new Browser();
    for (const [name, value] of flowBefore) replay.cookies.set(name, value);
    const replayed = await replay.get(callbackUrl, { accept: 'application/json' });
    expect(replayed.status).to.equal(401);
    expect(replay.cookies.has('annals-session')).to.equal(false);
  });

  for (const [tampering, why] of [
    ['altered-claims', 'an ID token altered on the way'],
    ['other-audience', 'an ID token the provider issued to another application'],
    ['expired', 'an expired ID token'],
  ] as const) {
    it(`refuses ${why}`, async () => {
      idp.accounts.set('frank-sub', { email: `frank@${domain}`, groups: ['cms-admins'] });
      idp.tampering = tampering;
      try {
        const browser = new Browser();
        const { callback } = await browser.signIn('frank-sub');
        expect(callback.status).to.equal(401);
        expect(await callback.text()).to.match(/does not pass the checks/);
        expect(browser.cookies.has('annals-session')).to.equal(false);
      } finally {
        idp.tampering = 'none';
      }
    });
  }

  it('tests the settings: says what the provider sent and what a sign-in would do, signing nobody in and recording nothing', async () => {
    idp.accounts.set('judy-sub', { email: `judy@${domain}`, groups: ['cms-admins'] });
    idp.accounts.set('ken-sub', { email: 'ken@elsewhere.org', groups: ['cms-admins'] });
    const before = (await f.call('GET', '/users', { token: admin.token })).body.items.length;
    for (const [subject, words] of [
      ['judy-sub', /create a new user, as tenant_admin/],
      ['ken-sub', /would be refused: .*elsewhere\.org may not sign in/],
    ] as const) {
      const browser = new Browser();
      const start = await browser.get(`/admin/v1/auth/oidc/start?projectId=${f.project.projectId}&test=true`);
      expect(start.status).to.equal(302);
      const page = await browser.get(await idp.authorize(start.headers.get('location')!, subject, browser.atProvider), { accept: 'text/html' });
      expect(page.status).to.equal(200);
      const html = await page.text();
      expect(html).to.match(words);
      expect(html).to.include('Nobody was signed in here and nothing was recorded');
      expect(browser.cookies.has('annals-session')).to.equal(false);
    }
    expect((await f.call('GET', '/users', { token: admin.token })).body.items.length, 'nobody provisioned').to.equal(before);
  });

  it("ends the sessions the provider's logout ends (back-channel logout), and only those", async () => {
    idp.accounts.set('henry-sub', { email: `henry@${domain}`, groups: ['cms-editors'] });
    const laptop = new Browser();
    const phone = new Browser();
    expect((await laptop.signIn('henry-sub')).callback.status).to.equal(302);
    expect((await phone.signIn('henry-sub')).callback.status).to.equal(302);
    const { user } = (await (await laptop.get('/admin/v1/auth/session')).json()) as { user: { id: string } };

    await idp.logout(laptop.atProvider);
    await eventually(async () => (await laptop.get('/admin/v1/auth/session')).status, (status) => status === 401, 10_000);
    expect((await phone.get('/admin/v1/auth/session')).status, 'the session of another provider session stays').to.equal(200);
    const revoked = (await eventsOf(`user-${user.id}`)).filter((e) => e.type === 'user.session-revoked');
    expect(revoked).to.have.length(1);
    expect(revoked[0]!.actor).to.deep.include({ type: 'operator', id: `oidc:${new URL(idp.issuer).host}` });
  });

  it('refuses a logout token that does not pass the checks, and ends nothing', async () => {
    idp.accounts.set('iris-sub', { email: `iris@${domain}`, groups: ['cms-editors'] });
    const browser = new Browser();
    expect((await browser.signIn('iris-sub')).callback.status).to.equal(302);
    const now = Math.floor(Date.now() / 1000);
    const logoutToken = (key: Parameters<SignJWT['sign']>[0], claims: Record<string, unknown> = {}) =>
      new SignJWT({ iss: idp.issuer, aud: idp.clientId, iat: now, sub: 'iris-sub', events: { 'http://schemas.openid.net/event/backchannel-logout': {} }, jti: `j-${Math.random()}`, ...claims }).setProtectedHeader({ alg: 'RS256', kid: 'test-signing-key' }).sign(key);
    const post = (token: string) => fetch(`${f.service.url}/admin/v1/auth/oidc/backchannel-logout/${f.project.tenantId}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ logout_token: token }).toString() });
    const { privateKey: otherKey } = await generateKeyPair('RS256');
    for (const [token, why] of [
      [await logoutToken(otherKey), /not signed by the provider/],
      [await logoutToken(idp.signingKey, { aud: 'another-application' }), /aud claim/],
      [await logoutToken(idp.signingKey, { events: {} }), /no back-channel logout event/],
      [await logoutToken(idp.signingKey, { nonce: 'n' }), /nonce/],
      [await logoutToken(idp.signingKey, { iat: now - 3600 }), /expired|iat/],
    ] as const) {
      const answer = await post(token);
      expect(answer.status, String(why)).to.equal(400);
      expect(((await answer.json()) as { error: { message: string } }).error.message).to.match(why);
    }
    expect((await browser.get('/admin/v1/auth/session')).status, 'still signed in').to.equal(200);
    // The provider's own key, for this client: the person's sessions end.
    const valid = await post(await logoutToken(idp.signingKey));
    expect(valid.status).to.equal(200);
    expect(await valid.json()).to.deep.equal({ ended: 1 });
    expect((await browser.get('/admin/v1/auth/session')).status).to.equal(401);
  });

  it('links an existing account by its verified address, keeps it to that person, and then refuses passwords when single sign-on only is on', async () => {
    // Single sign-on only needs someone who has signed in through the provider: not yet.
    const beforeLinking = await f.call('PUT', '/sign-in/oidc', { token: admin.token, body: settings({ ssoOnly: true }) });
    expect(beforeLinking.status).to.equal(403);
    expect(beforeLinking.body.error.message).to.match(/signed in through this identity provider first/);

    // The bootstrap admin signs in through the provider: the account is linked, not duplicated.
    idp.accounts.set('admin-sub', { email: f.project.adminEmail, groups: ['cms-admins'] });
    const browser = new Browser();
    expect((await browser.signIn('admin-sub')).callback.status).to.equal(302);
    const session = (await (await browser.get('/admin/v1/auth/session')).json()) as { user: { id: string }; csrfToken: string };
    expect(session.user.id).to.equal(f.project.userId);

    // Another person at the provider who is given the same address does not take the account over.
    idp.accounts.set('impostor-sub', { email: f.project.adminEmail, groups: ['cms-admins'] });
    const impostor = new Browser();
    expect((await impostor.signIn('impostor-sub')).callback.status).to.equal(401);

    // Now linked, the admin turns single sign-on only on (here with the session cookie the provider's sign-in gave).
    const cookie = [...browser.cookies].map(([n, v]) => `${n}=${v}`).join('; ');
    const bySso = await fetch(`${f.service.url}/admin/v1/sign-in/oidc`, { method: 'PUT', headers: { cookie, 'content-type': 'application/json', 'x-csrf-token': session.csrfToken }, body: JSON.stringify(settings({ ssoOnly: true })) });
    expect(bySso.status, await bySso.clone().text()).to.equal(200);
    expect(((await bySso.json()) as { ssoOnly: boolean }).ssoOnly).to.equal(true);

    const login = await fetch(`${f.service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: f.project.adminEmail, password: PASSWORD }) });
    expect(login.status).to.equal(403);
    expect(((await login.json()) as { error: { message: string } }).error.message).to.match(/single sign-on only/);
    const wrongPassword = await fetch(`${f.service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: f.project.adminEmail, password: 'not the password' }) });
    expect(wrongPassword.status, 'a wrong password says nothing more').to.equal(401);
    const options = await fetch(`${f.service.url}/admin/v1/auth/sign-in-options?projectId=${f.project.projectId}`);
    expect(((await options.json()) as { password: boolean }).password).to.equal(false);

    // Removed: passwords sign in again.
    const removed = await fetch(`${f.service.url}/admin/v1/sign-in/oidc`, { method: 'DELETE', headers: { cookie, 'x-csrf-token': session.csrfToken } });
    expect(removed.status).to.equal(204);
    const again = await fetch(`${f.service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: f.project.adminEmail, password: PASSWORD }) });
    expect(again.status).to.equal(200);
    // Every sign-in is in the log, with how the person proved who they are.
    const signIns = (await eventsOf(`user-${f.project.userId}`)).filter((e) => e.type === 'user.signed-in').map((e) => e.data.method);
    expect(signIns.at(-1)).to.equal('password');
    expect(signIns).to.include('oidc');
  });
  it("gives the organisation's own role to the members of a group, and takes it away when they leave it", async () => {
    const legal = await f.call('POST', '/roles', { token: admin.token, headers: admin.headers, body: { name: 'Legal reviewer', capabilities: ['content.approve'] } });
    expect(legal.status, JSON.stringify(legal.body)).to.equal(201);
    const unknownRole = await f.call('PUT', '/sign-in/oidc', { token: admin.token, headers: admin.headers, body: settings({ roleGroups: [{ group: 'legal', roleId: '00000000-0000-4000-8000-000000000000' }] }) });
    expect(unknownRole.status).to.equal(400);
    const put = await f.call('PUT', '/sign-in/oidc', { token: admin.token, headers: admin.headers, body: settings({ roleGroups: [{ group: 'legal', roleId: legal.body.id }] }) });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body.roleGroups).to.deep.equal([{ group: 'legal', roleId: legal.body.id }]);
    // The role is in use: it is not removed.
    expect((await f.call('DELETE', `/roles/${legal.body.id}`, { token: admin.token, headers: admin.headers })).status).to.equal(409);

    idp.accounts.set('olga-sub', { email: `olga@${domain}`, groups: ['legal'] });
    const browser = new Browser();
    expect((await browser.signIn('olga-sub')).callback.status).to.equal(302);
    const session = (await (await browser.get('/admin/v1/auth/session')).json()) as { user: { id: string; role: string }; grants: { roleId: string | null; roleName: string | null; capabilities: string[] } };
    expect(session.user.role).to.equal('tenant_user');
    expect(session.grants).to.deep.include({ roleId: legal.body.id, roleName: 'Legal reviewer', capabilities: ['content.approve'] });
    expect((await eventsOf(`user-${session.user.id}`))[0]!.data).to.deep.include({ role: 'tenant_user', roleId: legal.body.id });

    idp.accounts.set('olga-sub', { email: `olga@${domain}`, groups: ['cms-editors'] });
    const later = new Browser();
    expect((await later.signIn('olga-sub')).callback.status).to.equal(302);
    const after = (await (await later.get('/admin/v1/auth/session')).json()) as { grants: { roleId: string | null; capabilities: string[] } };
    expect(after.grants).to.deep.include({ roleId: null, capabilities: ['content.write', 'content.submit', 'submissions.handle'] });
    const changed = (await eventsOf(`user-${session.user.id}`)).filter((e) => e.type === 'user.role-changed');
    expect(changed.map((e) => e.data)).to.deep.equal([{ userId: session.user.id, role: 'tenant_user', previousRole: 'tenant_user', roleId: null, previousRoleId: legal.body.id, projectId: f.project.projectId }]);
    // Back to the settings without role groups for the tests after this one.
    expect((await f.call('PUT', '/sign-in/oidc', { token: admin.token, headers: admin.headers, body: settings() })).status).to.equal(200);
  });
});

describe('Single sign-on with OpenID Connect: time limits (an injected clock)', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let idp: TestOidcProvider;
  const clock = new ManualClock(new Date());

  before(async () => {
    f = await startAdminFixture({ clock, env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    idp = await startOidcProvider({ redirectUri: `${f.service.url}/admin/v1/auth/oidc/callback` });
    const { token } = await adminSession(f);
    const put = await f.call('PUT', '/sign-in/oidc', { token, body: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, allowedEmailDomains: ['example.com'], adminGroups: ['cms-admins'] } });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    idp.accounts.set('lena-sub', { email: 'lena@example.com' });
  });
  after(async () => {
    await f?.stop();
    await idp?.close();
  });

  /** The browser's way from the start to the callback, with `between` run while it is at the provider. */
  async function signIn(between: () => void = () => {}): Promise<{ status: number; cookie: string | undefined; text: string }> {
    const start = await fetch(`${f.service.url}/admin/v1/auth/oidc/start?projectId=${f.project.projectId}`, { redirect: 'manual' });
    const flow = start.headers.getSetCookie()[0]!.split(';')[0]!;
    const callbackUrl = await idp.authorize(start.headers.get('location')!, 'lena-sub');
    between();
    const callback = await fetch(callbackUrl, { redirect: 'manual', headers: { cookie: flow, accept: 'application/json' } });
    const session = callback.headers.getSetCookie().find((line) => line.startsWith('annals-session='));
    return { status: callback.status, cookie: session?.split(';')[0], text: await callback.text() };
  }

  it('refuses a sign-in that took longer than ten minutes at the provider', async () => {
    const late = await signIn(() => clock.advance(10 * 60 * 1000 + 1000));
    expect(late.status).to.equal(401);
    expect(late.text).to.match(/took too long/);
  });

  it('ends a session begun through the provider when it expires, as any session', async () => {
    const signedIn = await signIn();
    expect(signedIn.status, signedIn.text).to.equal(302);
    const session = () => fetch(`${f.service.url}/admin/v1/auth/session`, { headers: { cookie: signedIn.cookie! } });
    expect((await session()).status).to.equal(200);
    clock.advance(12 * 60 * 60 * 1000 + 1000);
    expect((await session()).status).to.equal(401);
  });
});

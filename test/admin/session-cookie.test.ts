/**
 * Console sessions in an HttpOnly, SameSite=Strict cookie (issue 44, defect 4), with CSRF protection on
 * writes: the session's token in X-CSRF-Token, and no cross-origin request even with it. Sign-out and expiry
 * hold on the service; bearer tokens and agent keys work as before, without either.
 */
import { expect } from 'chai';
import { ManualClock } from '../../src/clock.ts';
import { PASSWORD, startAdminFixture, type AdminFixture } from './support.ts';

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

describe('admin API: the console session cookie and CSRF', function () {
  this.timeout(30_000);
  const clock = new ManualClock(new Date());
  let f: AdminFixture;
  let origin: string;

  const send = async (method: string, route: string, headers: Record<string, string> = {}, body?: unknown): Promise<Answer> => {
    const response = await fetch(`${f.service.url}/admin/v1${route}`, { method, headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers };
  };
  /** Signs in for a cookie; answers the cookie (name=value) and the CSRF token. */
  const cookieSession = async (headers: Record<string, string> = {}) => {
    const answer = await send('POST', '/auth/login', { origin, 'sec-fetch-site': 'same-origin', ...headers }, { email: f.project.adminEmail, password: PASSWORD, cookie: true });
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    const setCookie = answer.headers.get('set-cookie')!;
    return { cookie: setCookie.split(';')[0]!, setCookie, csrfToken: answer.body.csrfToken as string, body: answer.body };
  };
  const asConsole = (s: { cookie: string; csrfToken: string }, extra: Record<string, string> = {}) => ({ cookie: s.cookie, 'x-project-id': f.project.projectId, origin, 'sec-fetch-site': 'same-origin', 'x-csrf-token': s.csrfToken, ...extra });
  const newFormSet = (n: number) => ({ slug: `set-${n}-${Math.random().toString(36).slice(2, 6)}`, name: `Set ${n}`, fields: [{ key: 'title', type: 'text', label: 'Title' }] });

  before(async () => {
    f = await startAdminFixture({ clock, env: { SESSION_TTL_MINUTES: '5' } });
    origin = f.service.url;
  });
  after(() => f?.stop());

  it('sign-in with cookie: true sets an HttpOnly, SameSite=Strict cookie for the session lifetime and answers the CSRF token, never the token', async () => {
    const s = await cookieSession();
    expect(s.setCookie).to.match(/^annals-session=[\w-]+\.[\w-]+\.[\w-]+; Path=\/; Max-Age=300; HttpOnly; SameSite=Strict$/);
    expect(s.body).to.have.keys('csrfToken', 'expiresAt', 'user');
    expect(JSON.stringify(s.body)).not.to.include(s.cookie.split('=')[1]);
    // Reads need nothing more: a reload or a new tab asks who it is.
    const session = await send('GET', '/auth/session', { cookie: s.cookie });
    expect(session.status).to.equal(200);
    expect(session.body).to.deep.include({ cookie: true, csrfToken: s.csrfToken, expiresAt: s.body.expiresAt });
    expect(session.body.user.email).to.equal(f.project.adminEmail);
    expect(session.headers.get('cache-control')).to.equal('no-store');
    expect((await send('GET', '/form-sets', { cookie: s.cookie, 'x-project-id': f.project.projectId })).status).to.equal(200);
  });

  it('a write with the cookie needs the CSRF token, and is refused from another origin even with it', async () => {
    const s = await cookieSession();
    const write = (headers: Record<string, string>) => send('POST', '/form-sets', headers, newFormSet(1));
    const { 'x-csrf-token': _token, ...withoutToken } = asConsole(s);
    const missing = await write(withoutToken);
    expect([missing.status, missing.body.error.code, missing.body.error.message]).to.deep.equal([403, 'FORBIDDEN', "A write signed in with the console's session cookie needs the session's CSRF token in the X-CSRF-Token header."]);
    expect((await write(asConsole(s, { 'x-csrf-token': `${s.csrfToken.slice(0, -2)}xx` }))).status).to.equal(403);
    // Another session's token is not this one's.
    expect((await write(asConsole(s, { 'x-csrf-token': (await cookieSession()).csrfToken }))).status).to.equal(403);
    const crossSite = await write(asConsole(s, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }));
    expect([crossSite.status, crossSite.body.error.message]).to.deep.equal([403, "A request signed in with the console's session cookie must come from the console's own page: the browser says it comes from a cross-site page."]);
    expect((await write(asConsole(s, { 'sec-fetch-site': 'same-site' }))).status, 'a sibling origin of the same site').to.equal(403);
    const otherOrigin = await write({ ...asConsole(s, { origin: 'http://localhost:1' }), 'sec-fetch-site': '' });
    expect([otherOrigin.status, otherOrigin.body.error.message]).to.deep.equal([403, `A request signed in with the console's session cookie must come from the console's own page: it comes from http://localhost:1, not ${origin}.`]);
    expect((await write(asConsole(s))).status).to.equal(201);
    // Without the browser's headers (not a browser), the token is what counts.
    const { origin: _o, 'sec-fetch-site': _s, ...bare } = asConsole(s);
    expect((await write(bare)).status).to.equal(201);
  });

  it('sign-in for a cookie is refused from another origin', async () => {
    const answer = await send('POST', '/auth/login', { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }, { email: f.project.adminEmail, password: PASSWORD, cookie: true });
    expect(answer.status).to.equal(403);
    expect(answer.headers.get('set-cookie')).to.equal(null);
  });

  it('bearer tokens and agent keys work as before: the cookie is not read beside an Authorization header, and no CSRF token is asked', async () => {
    const login = await send('POST', '/auth/login', {}, { email: f.project.adminEmail, password: PASSWORD });
    expect(login.status).to.equal(200);
    expect(login.body.token).to.be.a('string');
    expect(login.headers.get('set-cookie')).to.equal(null);
    expect((await send('POST', '/form-sets', { authorization: `Bearer ${login.body.token}`, 'x-project-id': f.project.projectId }, newFormSet(2))).status).to.equal(201);
    expect((await send('POST', '/form-sets', { authorization: `Bearer ${f.project.agentKey.key}` }, newFormSet(3))).status).to.equal(201);
    // A cookie beside a bad bearer token does not rescue it.
    const s = await cookieSession();
    expect((await send('GET', '/form-sets', { authorization: 'Bearer nope', cookie: s.cookie, 'x-project-id': f.project.projectId })).status).to.equal(401);
    expect((await send('GET', '/auth/session', { authorization: `Bearer ${login.body.token}` })).body).to.deep.include({ cookie: false });
    expect((await send('GET', '/auth/session', { authorization: `Bearer ${f.project.agentKey.key}` })).status).to.equal(403);
  });

  it('sign-out ends the cookie session on the service and clears the cookie; the old cookie is refused and cleared', async () => {
    const s = await cookieSession();
    const out = await send('POST', '/auth/logout', asConsole(s));
    expect(out.status).to.equal(204);
    expect(out.headers.get('set-cookie')).to.equal('annals-session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict');
    const after = await send('GET', '/form-sets', { cookie: s.cookie, 'x-project-id': f.project.projectId });
    expect([after.status, after.body.error.message]).to.deep.equal([401, 'The session was signed out: sign in again.']);
    expect(after.headers.get('set-cookie')).to.equal('annals-session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict');
  });

  it('a cookie session expires on the service at its time', async () => {
    const s = await cookieSession();
    clock.advance(4 * 60_000);
    expect((await send('GET', '/auth/session', { cookie: s.cookie })).status).to.equal(200);
    clock.advance(2 * 60_000);
    const expired = await send('GET', '/auth/session', { cookie: s.cookie });
    expect([expired.status, expired.body.error.message]).to.deep.equal([401, 'The session has expired: sign in again.']);
  });

  describe('over HTTPS (behind a trusted proxy)', () => {
    let proxied: AdminFixture;
    before(async () => {
      proxied = await startAdminFixture({ env: { TRUST_PROXY: 'true' } });
    });
    after(() => proxied?.stop());

    it('the cookie is Secure and __Host- prefixed, and the plain one is not read', async () => {
      const https = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'cms.example.com', origin: 'https://cms.example.com', 'sec-fetch-site': 'same-origin' };
      const login = await fetch(`${proxied.service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', ...https }, body: JSON.stringify({ email: proxied.project.adminEmail, password: PASSWORD, cookie: true }) });
      expect(login.status).to.equal(200);
      const setCookie = login.headers.get('set-cookie')!;
      expect(setCookie).to.match(/^__Host-annals-session=[\w.-]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Strict; Secure$/);
      // What is left of the 12-hour session (the token's expiry is in whole seconds; a busy machine takes a moment between issuing and answering).
      expect(Number(/Max-Age=(\d+)/.exec(setCookie)![1])).to.be.within(43_190, 43_200);
      const value = setCookie.split(';')[0]!.split('=')[1]!;
      const read = (cookie: string) => fetch(`${proxied.service.url}/admin/v1/auth/session`, { headers: { cookie, ...https } });
      expect((await read(`__Host-annals-session=${value}`)).status).to.equal(200);
      expect((await read(`annals-session=${value}`)).status).to.equal(401);
    });
  });
});

import { expect } from 'chai';
import { Secret, TOTP } from 'otpauth';
import { adminSession, PASSWORD, startAdminFixture, type AdminFixture } from '../admin/support.ts';
import { ManualClock } from '../../src/clock.ts';

/**
 * A second factor for password sign-in, over HTTP against a started service with an injected clock: an
 * authenticator app (codes made here with otpauth, as the app would), recovery codes, the organisation's policy
 * with setting one up on the way in, an admin's reset, and what the log records (never a secret in clear).
 * Passkeys run in Chromium with its virtual authenticator (test/console/second-factor-console.test.ts).
 */
describe('Second factor for password sign-in', function () {
  this.timeout(60_000);
  const clock = new ManualClock(new Date('2026-12-07T10:00:00.000Z'));
  let f: AdminFixture;
  let admin: { token: string; headers: Record<string, string> };
  const OPERATOR = { kind: 'operator', operatorId: 'test' } as const;

  before(async () => {
    f = await startAdminFixture({ clock });
    admin = await adminSession(f);
  });
  after(async () => {
    await f?.stop();
  });

  const codeAt = (secret: string, at = clock.now()) => new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: at.getTime() });
  const login = (email: string, password: string) => f.call('POST', '/auth/login', { body: { email, password, projectId: f.project.projectId } });
  const second = (body: Record<string, unknown>) => f.call('POST', '/auth/login/second-factor', { body });
  const eventsOf = async (streamId: string) => {
    const events: Array<{ type: string; data: Record<string, unknown> }> = [];
    for await (const e of f.service.log.readStream(streamId)) events.push({ type: e.type, data: e.data as Record<string, unknown> });
    return events;
  };
  async function member(email: string, password = 'member password 1'): Promise<{ userId: string; token: string }> {
    const created = await f.access.createUser(OPERATOR, { tenantId: f.project.tenantId, email, password, role: 'editor' });
    await f.service.supervisor!.waitFor(created.position, 5000);
    const signedIn = await login(email, password);
    expect(signedIn.status, JSON.stringify(signedIn.body)).to.equal(200);
    return { userId: created.userId, token: signedIn.body.token };
  }
  /** Sets up an authenticator app for the session's user; its secret and the recovery codes. */
  async function enrolTotp(token: string): Promise<{ secret: string; recoveryCodes: string[] }> {
    const setup = await f.call('POST', '/me/second-factor/totp/setup', { token });
    expect(setup.status, JSON.stringify(setup.body)).to.equal(200);
    expect(setup.body.otpauthUri).to.match(/^otpauth:\/\/totp\/annals:/);
    expect(setup.body.qrCode).to.match(/^data:image\/png;base64,/);
    const enrolled = await f.call('POST', '/me/second-factor/totp', { token, body: { setupToken: setup.body.setupToken, code: codeAt(setup.body.secret) } });
    expect(enrolled.status, JSON.stringify(enrolled.body)).to.equal(200);
    return { secret: setup.body.secret, recoveryCodes: enrolled.body.recoveryCodes };
  }

  it('sets up an authenticator app only with a right first code, keeps its secret sealed, and gives ten recovery codes once', async () => {
    const { userId, token } = await member('totp-setup@example.com');
    const setup = await f.call('POST', '/me/second-factor/totp/setup', { token });
    const wrong = await f.call('POST', '/me/second-factor/totp', { token, body: { setupToken: setup.body.setupToken, code: '000000' === codeAt(setup.body.secret) ? '111111' : '000000' } });
    expect(wrong.status).to.equal(401);
    // Another user's setup token does not open for this one.
    const other = await member('totp-other@example.com');
    const stolen = await f.call('POST', '/me/second-factor/totp', { token: other.token, body: { setupToken: setup.body.setupToken, code: codeAt(setup.body.secret) } });
    expect(stolen.status).to.equal(401);

    const enrolled = await f.call('POST', '/me/second-factor/totp', { token, body: { setupToken: setup.body.setupToken, code: codeAt(setup.body.secret) } });
    expect(enrolled.status, JSON.stringify(enrolled.body)).to.equal(200);
    expect(enrolled.body.recoveryCodes).to.have.length(10);
    for (const code of enrolled.body.recoveryCodes) expect(code).to.match(/^[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}$/);
    const again = await f.call('POST', '/me/second-factor/totp', { token, body: { setupToken: setup.body.setupToken, code: codeAt(setup.body.secret) } });
    expect(again.status, 'a second app is refused while one is set up').to.equal(409);

    const mine = await f.call('GET', '/me/second-factor', { token });
    expect(mine.body).to.deep.equal({ required: false, totp: true, passkeys: [], recoveryCodesLeft: 10 });
    const events = await eventsOf(`user-${userId}`);
    expect(events.map((e) => e.type)).to.include.members(['user.totp-enrolled', 'user.recovery-codes-issued']);
    const log = JSON.stringify(events);
    expect(log, 'the secret is sealed in the log').to.not.include(setup.body.secret);
    for (const code of enrolled.body.recoveryCodes) expect(log).to.not.include(code.replace(/-/g, ''));
    expect(events.find((e) => e.type === 'user.totp-enrolled')!.data.sealedSecret).to.match(/^v1\./);
  });

  it('asks for the code after the password, takes a right one once, and records the sign-in with the factor', async () => {
    const { userId, token } = await member('totp-login@example.com');
    const { secret } = await enrolTotp(token);
    clock.advance(60_000);

    const first = await login('totp-login@example.com', 'member password 1');
    expect(first.status).to.equal(200);
    expect(first.body.token, 'no session before the second factor').to.equal(undefined);
    expect(first.body.secondFactor).to.deep.include({ methods: ['totp', 'recovery-code'], enrolmentRequired: false });

    const code = codeAt(secret);
    const signedIn = await second({ ticket: first.body.secondFactor.ticket, method: 'totp', code });
    expect(signedIn.status, JSON.stringify(signedIn.body)).to.equal(200);
    expect(signedIn.body.user).to.deep.include({ id: userId, email: 'totp-login@example.com' });
    const session = await f.call('GET', '/me/second-factor', { token: signedIn.body.token });
    expect(session.status).to.equal(200);

    // The same code again, with a new ticket, is refused: a code signs in once.
    const replay = await second({ ticket: (await login('totp-login@example.com', 'member password 1')).body.secondFactor.ticket, method: 'totp', code });
    expect(replay.status).to.equal(401);
    // A code from an authenticator whose clock is a minute and a half off is refused too.
    const drifted = await second({ ticket: (await login('totp-login@example.com', 'member password 1')).body.secondFactor.ticket, method: 'totp', code: codeAt(secret, new Date(clock.now().getTime() + 90_000)) });
    expect(drifted.status).to.equal(401);

    const events = await eventsOf(`user-${userId}`);
    const signIns = events.filter((e) => e.type === 'user.signed-in');
    expect(signIns.at(-1)!.data).to.deep.include({ method: 'password' });
    expect((signIns.at(-1)!.data.secondFactor as { method: string }).method).to.equal('totp');
    expect(events.filter((e) => e.type === 'user.second-factor-failed').map((e) => e.data.method)).to.deep.equal(['totp', 'totp']);
  });

  it('refuses a ticket that expired, was altered, or was made for a password sign-in five minutes ago', async () => {
    const { token } = await member('totp-ticket@example.com');
    const { secret } = await enrolTotp(token);
    clock.advance(60_000);
    const first = await login('totp-ticket@example.com', 'member password 1');
    const ticket: string = first.body.secondFactor.ticket;
    const altered = `${ticket.slice(0, -3)}${ticket.endsWith('A') ? 'B' : 'A'}${ticket.slice(-2)}`;
    expect((await second({ ticket: altered, method: 'totp', code: codeAt(secret) })).status).to.equal(401);
    clock.advance(5 * 60_000 + 1000);
    const late = await second({ ticket, method: 'totp', code: codeAt(secret) });
    expect(late.status).to.equal(401);
    expect(late.body.error.message).to.match(/expired/);
  });

  it('signs in once with each recovery code, whatever its case and hyphens', async () => {
    const { userId, token } = await member('recovery@example.com');
    const { recoveryCodes } = await enrolTotp(token);
    const code = recoveryCodes[3]!;
    const typed = code.toLowerCase().replace(/-/g, ' ');
    const first = await login('recovery@example.com', 'member password 1');
    const used = await second({ ticket: first.body.secondFactor.ticket, method: 'recovery-code', code: typed });
    expect(used.status, JSON.stringify(used.body)).to.equal(200);
    const reused = await second({ ticket: (await login('recovery@example.com', 'member password 1')).body.secondFactor.ticket, method: 'recovery-code', code });
    expect(reused.status).to.equal(401);
    const mine = await f.call('GET', '/me/second-factor', { token: used.body.token });
    expect(mine.body.recoveryCodesLeft).to.equal(9);
    const users = await f.call('GET', '/users', { token: admin.token, headers: admin.headers });
    const summary = users.body.items.find((u: { id: string }) => u.id === userId);
    expect(summary.secondFactor).to.deep.equal({ totp: true, passkeys: 0, recoveryCodesLeft: 9 });

    // New codes replace the old, with the password again.
    const noPassword = await f.call('POST', '/me/second-factor/recovery-codes', { token: used.body.token, body: { password: 'wrong password' } });
    expect(noPassword.status).to.equal(401);
    const renewed = await f.call('POST', '/me/second-factor/recovery-codes', { token: used.body.token, body: { password: 'member password 1' } });
    expect(renewed.status).to.equal(200);
    expect(renewed.body.recoveryCodes).to.have.length(10);
    const old = await second({ ticket: (await login('recovery@example.com', 'member password 1')).body.secondFactor.ticket, method: 'recovery-code', code: recoveryCodes[0] });
    expect(old.status, 'the old codes no longer sign in').to.equal(401);
  });

  it('throttles wrong codes: after a few, the next answer is 429 with Retry-After, even with a right code', async () => {
    const { token } = await member('throttle@example.com');
    const { secret } = await enrolTotp(token);
    clock.advance(60_000);
    const ticket = (await login('throttle@example.com', 'member password 1')).body.secondFactor.ticket;
    const right = codeAt(secret);
    const wrong = right === '123456' ? '654321' : '123456';
    // Five wrong answers are free (a mistyped code or two); the sixth makes the next wait.
    for (let i = 0; i < 6; i++) expect((await second({ ticket, method: 'totp', code: wrong })).status).to.equal(401);
    const throttled = await second({ ticket, method: 'totp', code: right });
    expect(throttled.status).to.equal(429);
    expect(Number(throttled.headers.get('retry-after'))).to.be.greaterThan(0);
    clock.advance(Number(throttled.headers.get('retry-after')) * 1000);
    const later = await second({ ticket: (await login('throttle@example.com', 'member password 1')).body.secondFactor.ticket, method: 'totp', code: codeAt(secret) });
    expect(later.status, JSON.stringify(later.body)).to.equal(200);
  });

  it('removes the authenticator app only with the password; a password then signs in alone', async () => {
    const { token } = await member('remove@example.com');
    await enrolTotp(token);
    expect((await f.call('POST', '/me/second-factor/totp/remove', { token, body: { password: 'nope' } })).status).to.equal(401);
    expect((await f.call('POST', '/me/second-factor/totp/remove', { token, body: { password: 'member password 1' } })).status).to.equal(204);
    const plain = await login('remove@example.com', 'member password 1');
    expect(plain.body.secondFactor, 'no second factor left: no challenge').to.equal(undefined);
    expect(plain.body.token).to.be.a('string');
  });

  it("lets a tenant admin reset another member's second factor, never their own", async () => {
    const { userId, token } = await member('reset@example.com');
    await enrolTotp(token);
    const byMember = await f.call('POST', `/users/${f.project.userId}/second-factor/reset`, { token, headers: { 'X-Project-Id': f.project.projectId } });
    expect(byMember.status).to.equal(403);
    const own = await f.call('POST', `/users/${f.project.userId}/second-factor/reset`, { token: admin.token, headers: admin.headers });
    expect(own.status).to.equal(403);
    const reset = await f.call('POST', `/users/${userId}/second-factor/reset`, { token: admin.token, headers: admin.headers });
    expect(reset.status, JSON.stringify(reset.body)).to.equal(204);
    const plain = await login('reset@example.com', 'member password 1');
    expect(plain.body.token).to.be.a('string');
    const events = await eventsOf(`user-${userId}`);
    expect(events.find((e) => e.type === 'user.second-factor-reset')!.data).to.deep.include({ projectId: f.project.projectId });
  });

  it('requires a second factor for the organisation: someone without one sets up an app on the way in, and gets recovery codes', async () => {
    // The admin requiring it must have one first.
    const tooEarly = await f.call('PUT', '/sign-in/second-factor', { token: admin.token, headers: admin.headers, body: { required: true } });
    expect(tooEarly.status).to.equal(403);
    await enrolTotp(admin.token);
    const byKey = await f.call('PUT', '/sign-in/second-factor', { body: { required: true } });
    expect(byKey.status, 'agent keys do not change sign-in policy').to.equal(403);
    const required = await f.call('PUT', '/sign-in/second-factor', { token: admin.token, headers: admin.headers, body: { required: true } });
    expect(required.status, JSON.stringify(required.body)).to.equal(200);
    expect(required.body).to.deep.equal({ required: true });

    const newcomer = await f.access.createUser(OPERATOR, { tenantId: f.project.tenantId, email: 'newcomer@example.com', password: 'member password 1', role: 'editor' });
    await f.service.supervisor!.waitFor(newcomer.position, 5000);
    const first = await login('newcomer@example.com', 'member password 1');
    expect(first.body.secondFactor).to.deep.include({ methods: [], enrolmentRequired: true });
    const noFactor = await second({ ticket: first.body.secondFactor.ticket, method: 'totp', code: '123456' });
    expect(noFactor.status, 'nothing to check against: refused').to.equal(401);
    const setup = await f.call('POST', '/auth/login/totp-setup', { body: { ticket: first.body.secondFactor.ticket } });
    expect(setup.status, JSON.stringify(setup.body)).to.equal(200);
    const signedIn = await second({ ticket: first.body.secondFactor.ticket, method: 'totp', code: codeAt(setup.body.secret), setupToken: setup.body.setupToken });
    expect(signedIn.status, JSON.stringify(signedIn.body)).to.equal(200);
    expect(signedIn.body.recoveryCodes).to.have.length(10);
    expect(signedIn.body.token).to.be.a('string');
    // Once set up, the way-in setup is closed.
    const again = await f.call('POST', '/auth/login/totp-setup', { body: { ticket: (await login('newcomer@example.com', 'member password 1')).body.secondFactor.ticket } });
    expect(again.status).to.equal(409);

    const tenantEvents = await eventsOf(`tenant-${f.project.tenantId}`);
    expect(tenantEvents.find((e) => e.type === 'tenant.second-factor-policy-changed')!.data).to.deep.include({ required: true, projectId: f.project.projectId });
    const off = await f.call('PUT', '/sign-in/second-factor', { token: admin.token, headers: admin.headers, body: { required: false } });
    expect(off.body).to.deep.equal({ required: false });
  });

  it('refuses a password-only sign-in of someone with a second factor in the domain too, whatever the route decided', async () => {
    const { userId, token } = await member('domain@example.com');
    await enrolTotp(token);
    const caller = { kind: 'user', userId, tenantId: f.project.tenantId, role: 'tenant_user' } as const;
    let refused: unknown;
    try {
      await f.access.signIn.recordSignIn(caller, { userId, sessionId: crypto.randomUUID(), expiresAt: new Date(clock.now().getTime() + 3600_000) });
    } catch (error) {
      refused = error;
    }
    expect(refused).to.have.property('code', 'UNAUTHORIZED');
  });

  it("shows every second-factor event in the project's audit log, by the person", async () => {
    const { userId, token } = await member('audited@example.com');
    const headers = { 'X-Project-Id': f.project.projectId };
    const setup = await f.call('POST', '/me/second-factor/totp/setup', { token, headers });
    const enrolled = await f.call('POST', '/me/second-factor/totp', { token, headers, body: { setupToken: setup.body.setupToken, code: codeAt(setup.body.secret) } });
    expect(enrolled.status).to.equal(200);
    clock.advance(60_000);
    const ticket = (await login('audited@example.com', 'member password 1')).body.secondFactor.ticket;
    expect((await second({ ticket, method: 'recovery-code', code: 'AAAA-AAAA-AAAA-AAAA' })).status).to.equal(401);
    expect((await second({ ticket, method: 'totp', code: codeAt(setup.body.secret) })).status).to.equal(200);
    const log = await f.call('GET', `/audit-log?actor=${userId}`, { token: admin.token, headers: admin.headers });
    expect(log.status, JSON.stringify(log.body)).to.equal(200);
    expect(log.body.items.map((i: { type: string }) => i.type)).to.include.members(['user.totp-enrolled', 'user.recovery-codes-issued', 'user.second-factor-failed', 'user.signed-in']);
    expect(JSON.stringify(log.body), 'the audit log shows no secret').to.not.include(setup.body.secret);

    // And in the project's signed audit export of the period, for an auditor: sealed, never in clear.
    const from = new Date(clock.now().getTime() - 3600_000).toISOString();
    const to = new Date(clock.now().getTime() + 3600_000).toISOString();
    const exported = await fetch(`${f.service.url}/admin/v1/audit/exports/period?from=${from}&to=${to}`, { headers: { authorization: `Bearer ${admin.token}`, ...admin.headers } });
    expect(exported.status).to.equal(200);
    const text = await exported.text();
    const events = text.trim().split('\n').map((line) => JSON.parse(line) as { kind: string; type?: string; streamId?: string; data?: Record<string, unknown> }).filter((line) => line.kind === 'event' && line.streamId === `user-${userId}`);
    expect(events.map((e) => e.type)).to.include.members(['user.totp-enrolled', 'user.recovery-codes-issued', 'user.second-factor-failed', 'user.signed-in']);
    expect(events.find((e) => e.type === 'user.totp-enrolled')!.data!['sealedSecret']).to.match(/^v1\./);
    expect(text, 'the export holds no secret in clear').to.not.include(setup.body.secret);
  });

  it('answers the password step of someone without a second factor as before (no ticket), and keeps agent keys out of /me', async () => {
    const plainUser = await f.access.createUser(OPERATOR, { tenantId: f.project.tenantId, email: 'plain@example.com', password: PASSWORD, role: 'editor' });
    await f.service.supervisor!.waitFor(plainUser.position, 5000);
    const plain = await login('plain@example.com', PASSWORD);
    expect(plain.status).to.equal(200);
    expect(plain.body.token).to.be.a('string');
    expect(plain.body.secondFactor).to.equal(undefined);
    const byKey = await f.call('GET', '/me/second-factor');
    expect(byKey.status).to.equal(403);
  });
});

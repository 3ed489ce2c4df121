import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { simpleParser } from 'mailparser';
import { ManualClock } from '../../src/clock.ts';
import { OPERATOR, PASSWORD, startAdminFixture, type AdminFixture } from './support.ts';
import { tempDir } from '../support/temp-dir.ts';

const NEW_PASSWORD = 'a password of my own choosing';

/** The invitation e-mails written to DATA_DIR/mail (no SMTP_URL), newest last, parsed. */
async function invitationMails(dataDir: string, to: string) {
  const dir = path.join(dataDir, 'mail');
  const mails = [];
  for (const name of fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith('.eml')) : []) {
    const parsed = await simpleParser(fs.readFileSync(path.join(dir, name)));
    if (parsed.subject === 'Your invitation to the annals console' && parsed.text?.includes('annals console') && (parsed.to as { text: string }).text === to) mails.push({ parsed, at: fs.statSync(path.join(dir, name)).mtimeMs });
  }
  return mails.sort((a, b) => a.at - b.at).map((m) => m.parsed);
}

/** The token of the link in the newest invitation to `to`. */
async function tokenFor(dataDir: string, to: string): Promise<{ token: string; link: string; count: number }> {
  const mails = await invitationMails(dataDir, to);
  const text = mails.at(-1)!.text!;
  const link = /(https?:\/\/\S+\/accept-invitation#\S+)/.exec(text)![1]!;
  return { token: decodeURIComponent(link.slice(link.indexOf('#') + 1)), link, count: mails.length };
}

describe('admin API: invitations by e-mail', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  let dataDir: string;
  let clock: ManualClock;
  let admin: { token: string; headers: Record<string, string> };
  const call = (method: string, route: string, body?: unknown, who = admin) => f.call(method, route, { token: who.token, headers: who.headers, ...(body === undefined ? {} : { body }) });
  const signIn = (email: string, password: string) => fetch(`${f.service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
  const accept = (token: string, password = NEW_PASSWORD) => f.call('POST', '/auth/invitations/accept', { body: { token, password }, token: 'none' });

  before(async () => {
    dataDir = path.join(tempDir(), 'data');
    clock = new ManualClock('2026-12-06T12:00:00.000Z');
    f = await startAdminFixture({ dataDir, clock, env: { CONSOLE_URL: 'https://console.example.com/console' } });
    const login = await signIn(f.project.adminEmail, PASSWORD);
    admin = { token: ((await login.json()) as { token: string }).token, headers: { 'X-Project-Id': f.project.projectId } };
  });
  after(async () => {
    await f.stop();
  });

  it('invites by e-mail: the person gets a link to choose a password, signs in with it, and the link is spent', async () => {
    const invited = await call('POST', '/users/invitations', { email: 'New.Person@Example.com', role: 'editor' });
    expect(invited.status, JSON.stringify(invited.body)).to.equal(201);
    expect(invited.body).to.include({ email: 'new.person@example.com', role: 'tenant_user', mailed: true, invitationExpiresAt: '2026-12-13T12:00:00.000Z' });
    const { token, link } = await tokenFor(dataDir, 'new.person@example.com');
    expect(link.startsWith('https://console.example.com/console/accept-invitation#')).to.equal(true);
    expect((await call('GET', '/users')).body.items.find((u: { email: string }) => u.email === 'new.person@example.com')).to.include({ invitationExpiresAt: '2026-12-13T12:00:00.000Z' });
    // Nobody knows a password for the account until the link is used.
    expect((await signIn('new.person@example.com', '')).status).to.be.oneOf([400, 401]);

    const accepted = await accept(token);
    expect(accepted.status, JSON.stringify(accepted.body)).to.equal(200);
    expect(accepted.body).to.deep.equal({ email: 'new.person@example.com' });
    const session = await signIn('new.person@example.com', NEW_PASSWORD);
    expect(session.status).to.equal(200);
    expect(((await session.json()) as { user: { role: string } }).user.role).to.equal('tenant_user');
    expect((await call('GET', '/users')).body.items.find((u: { email: string }) => u.email === 'new.person@example.com').invitationExpiresAt).to.equal(null);

    const again = await accept(token, 'yet another long password');
    expect(again.status).to.equal(401);
    expect(again.body.error.code).to.equal('UNAUTHORIZED');
    expect((await signIn('new.person@example.com', NEW_PASSWORD)).status, 'the password chosen first stands').to.equal(200);
  });

  it('keeps only the SHA-256 of the link\'s secret in the log; the accept is the invitee\'s own event', async () => {
    await call('POST', '/users/invitations', { email: 'logged@example.com', role: 'reviewer' });
    const { token } = await tokenFor(dataDir, 'logged@example.com');
    const secret = token.slice(token.indexOf('.') + 1);
    expect((await accept(token)).status).to.equal(200);
    const userId = token.slice(0, token.indexOf('.'));
    const events = [];
    for await (const event of f.service.log.readAll({ after: 'start' })) events.push(event);
    expect(JSON.stringify(events.map((e) => e.data))).to.not.include(secret);
    const ofUser = events.filter((e) => (e.data as { userId?: string }).userId === userId);
    expect(ofUser.map((e) => e.type)).to.deep.equal(['user.created', 'user.invited', 'user.password-changed', 'user.invitation-accepted']);
    expect(ofUser.at(-1)!.metadata.actor).to.deep.equal({ type: 'user', id: userId });
  });

  it('sending again gives a new link and voids the older one; a link expires after 7 days', async () => {
    const invited = await call('POST', '/users/invitations', { email: 'twice@example.com', role: 'editor' });
    const first = await tokenFor(dataDir, 'twice@example.com');
    const resent = await call('POST', `/users/${invited.body.id}/invitation`);
    expect(resent.status, JSON.stringify(resent.body)).to.equal(200);
    expect(resent.body).to.include({ mailed: true, email: 'twice@example.com' });
    const second = await tokenFor(dataDir, 'twice@example.com');
    expect(second.count).to.equal(2);
    expect(second.token).to.not.equal(first.token);
    expect((await accept(first.token)).status).to.equal(401);

    clock.advance(7 * 24 * 60 * 60 * 1000);
    expect((await accept(second.token)).status, 'expired').to.equal(401);
    // The admin's session expired meanwhile too.
    const login = await signIn(f.project.adminEmail, PASSWORD);
    admin = { token: ((await login.json()) as { token: string }).token, headers: admin.headers };
    const third = await call('POST', `/users/${invited.body.id}/invitation`);
    expect(third.body.invitationExpiresAt).to.equal(new Date(clock.now().getTime() + 7 * 24 * 60 * 60 * 1000).toISOString());
    expect((await accept((await tokenFor(dataDir, 'twice@example.com')).token)).status).to.equal(200);
    // Accepted: nothing to send again.
    const after = await call('POST', `/users/${invited.body.id}/invitation`);
    expect(after.status).to.equal(409);
    expect(after.body.error.code).to.equal('CONFLICT');
  });

  it('refuses what is not an invitation: malformed or forged tokens (401, one message), short passwords (400), agent keys and editors (403), taken e-mails (409)', async () => {
    const invited = await call('POST', '/users/invitations', { email: 'forged@example.com', role: 'editor' });
    const { token } = await tokenFor(dataDir, 'forged@example.com');
    const forged = `${invited.body.id}.${'A'.repeat(43)}`;
    expect((await accept('')).status, 'no token at all').to.equal(400);
    const refusals = await Promise.all(['nonsense', forged, `${'0'.repeat(8)}-0000-4000-8000-000000000000.${token.slice(37)}`].map((t) => accept(t)));
    expect(refusals.map((r) => [r.status, r.body.error.code])).to.deep.equal([[401, 'UNAUTHORIZED'], [401, 'UNAUTHORIZED'], [401, 'UNAUTHORIZED']]);
    expect(new Set(refusals.map((r) => r.body.error.message)).size, 'one message for every refused link').to.equal(1);
    const short = await accept(token, 'short');
    expect(short.status).to.equal(400);
    expect(short.body.error.code).to.equal('VALIDATION_ERROR');

    const byKey = await f.call('POST', '/users/invitations', { body: { email: 'key@example.com', role: 'editor' } });
    expect(byKey.status).to.equal(403);
    const editor = await f.access.createUser(OPERATOR, { tenantId: f.project.tenantId, email: 'plain-editor@example.com', password: 'editor password 1', role: 'editor' });
    await f.service.supervisor!.waitFor(editor.position, 5000);
    const editorSession = { token: ((await (await signIn('plain-editor@example.com', 'editor password 1')).json()) as { token: string }).token, headers: admin.headers };
    expect((await call('POST', '/users/invitations', { email: 'by-editor@example.com', role: 'editor' }, editorSession)).status).to.equal(403);
    expect((await call('POST', `/users/${invited.body.id}/invitation`, undefined, editorSession)).status).to.equal(403);
    expect((await call('POST', '/users/invitations', { email: f.project.adminEmail, role: 'editor' })).status).to.equal(409);
    // A user added with a password has no invitation to send again.
    expect((await call('POST', `/users/${editor.userId}/invitation`)).status).to.equal(409);
  });

  // Last: it throttles this address.
  it('throttles guessing: after 6 refused tokens for one invitation from one address, 429 with Retry-After, before the token is looked at', async () => {
    const invited = await call('POST', '/users/invitations', { email: 'guessed@example.com', role: 'editor' });
    const { token } = await tokenFor(dataDir, 'guessed@example.com');
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await accept(`${invited.body.id}.${String(i).repeat(43)}`)).status);
    expect(statuses).to.deep.equal([401, 401, 401, 401, 401, 401, 429]);
    const throttled = await accept(token);
    expect(throttled.status, 'even the right token waits').to.equal(429);
    expect(Number(throttled.headers.get('retry-after'))).to.be.greaterThan(0);
    clock.advance(60_000);
    expect((await accept(token)).status).to.equal(200);
  });
});

import path from 'node:path';
import { expect } from 'chai';
import { ManualClock } from '../../src/clock.ts';
import { startAdminFixture, type AdminFixture } from './support.ts';
import { tempDir } from '../support/temp-dir.ts';

const PASSWORD = 'correct horse battery staple';

/** Issue 12 item 6: sign-in throttling, sign-out, the session lifetime setting. */
describe('admin API: sign-in throttling, sign-out and session lifetime', function () {
  this.timeout(120_000);

  async function login(f: AdminFixture, email: string, password: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any; retryAfter: string | null }> {
    const response = await fetch(`${f.service.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ email, password }) });
    return { status: response.status, body: await response.json(), retryAfter: response.headers.get('retry-after') };
  }

  describe('throttling', () => {
    let f: AdminFixture;
    let clock: ManualClock;
    beforeEach(async () => {
      clock = new ManualClock(new Date());
      f = await startAdminFixture({ clock, env: { TRUST_PROXY: 'true' } });
    });
    afterEach(() => f.stop());

    it('answers wrong passwords beyond a few with 429 and a growing Retry-After; the right one waits, then is accepted', async () => {
      const email = f.project.adminEmail;
      const statuses: number[] = [];
      const waits: number[] = [];
      for (let i = 0; i < 30; i++) {
        const attempt = await login(f, email, `wrong password ${i}`);
        statuses.push(attempt.status);
        if (attempt.status === 429) {
          expect(attempt.body.error.code).to.equal('RATE_LIMITED');
          expect(attempt.body.error.retryable).to.equal(true);
          waits.push(Number(attempt.retryAfter));
          // The guesser waits as told: the next allowed guess must wait longer.
          clock.advance(Number(attempt.retryAfter) * 1000);
        }
      }
      expect(statuses.slice(0, 5)).to.deep.equal([401, 401, 401, 401, 401]);
      expect(statuses.filter((s) => s === 429).length, statuses.join(',')).to.be.greaterThan(10);
      // Exponential, but never long: the wait doubles and stops at 60 s per account.
      expect(waits[1]! > waits[0]! || waits[0] === 60).to.equal(true);
      expect(Math.max(...waits)).to.be.at.most(300);
      // The rightful user right after the attack: refused before the password is even checked...
      const throttled = await login(f, email, PASSWORD);
      expect(throttled.status).to.equal(429);
      expect(Number(throttled.retryAfter)).to.be.within(1, 300);
      // ...and accepted once the wait is over.
      clock.advance(Number(throttled.retryAfter) * 1000);
      const accepted = await login(f, email, PASSWORD);
      expect(accepted.status, JSON.stringify(accepted.body)).to.equal(200);
    });

    it('throttles one address guessing many accounts, but not the rightful user from their own address', async () => {
      const attacker = { 'x-forwarded-for': '203.0.113.7' };
      const statuses: number[] = [];
      for (let i = 0; i < 25; i++) statuses.push((await login(f, `nobody-${i}@example.com`, 'guess', attacker)).status);
      expect(statuses.slice(0, 20).every((s) => s === 401)).to.equal(true);
      expect(statuses.slice(20)).to.include(429);
      expect((await login(f, f.project.adminEmail, PASSWORD, attacker)).status).to.equal(429);
      expect((await login(f, f.project.adminEmail, PASSWORD, { 'x-forwarded-for': '198.51.100.20' })).status).to.equal(200);
    });

    it('a distributed guess at one account does not lock out the owner at an address they signed in from before', async () => {
      const home = { 'x-forwarded-for': '198.51.100.30' };
      expect((await login(f, f.project.adminEmail, PASSWORD, home)).status).to.equal(200);
      const statuses: number[] = [];
      for (let i = 0; i < 40; i++) statuses.push((await login(f, f.project.adminEmail, 'guess', { 'x-forwarded-for': `203.0.113.${i + 1}` })).status);
      expect(statuses).to.include(429);
      expect((await login(f, f.project.adminEmail, PASSWORD, home)).status).to.equal(200);
      const newPlace = await login(f, f.project.adminEmail, PASSWORD, { 'x-forwarded-for': '198.51.100.99' });
      expect(newPlace.status).to.equal(429);
      expect(Number(newPlace.retryAfter)).to.be.at.most(60);
    });
  });

  describe('sign-out', () => {
    it('refuses a signed-out session at once, keeps the user\'s other sessions, and still refuses it after a restart', async () => {
      const dataDir = path.join(tempDir(), 'data');
      let f = await startAdminFixture({ dataDir });
      const first = (await login(f, f.project.adminEmail, PASSWORD)).body.token as string;
      const second = (await login(f, f.project.adminEmail, PASSWORD)).body.token as string;
      const headers = { 'x-project-id': f.project.projectId };
      expect((await f.call('GET', '/form-sets', { token: first, headers })).status).to.equal(200);
      const out = await fetch(`${f.service.url}/admin/v1/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${first}` } });
      expect(out.status).to.equal(204);
      const refused = await f.call('GET', '/form-sets', { token: first, headers });
      expect(refused.status).to.equal(401);
      expect(refused.body.error.message).to.match(/signed out/);
      expect((await f.call('GET', '/form-sets', { token: second, headers })).status).to.equal(200);
      // Agent keys have no session: they are revoked instead.
      const agent = await fetch(`${f.service.url}/admin/v1/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${f.project.agentKey.key}` } });
      expect(agent.status).to.equal(403);
      const project = f.project;
      await f.stop();
      // The same data, a new process: the revocation is an event, folded again.
      f = await startAdminFixture({ dataDir });
      try {
        const again = { 'x-project-id': project.projectId };
        expect((await f.call('GET', '/form-sets', { token: first, headers: again })).status).to.equal(401);
        expect((await f.call('GET', '/form-sets', { token: second, headers: again })).status).to.equal(200);
      } finally {
        await f.stop();
      }
    });
  });

  describe('session lifetime', () => {
    it('issues sessions for SESSION_TTL_MINUTES and refuses them afterwards', async () => {
      const clock = new ManualClock(new Date());
      const f = await startAdminFixture({ clock, env: { SESSION_TTL_MINUTES: '30' } });
      try {
        const signedIn = await login(f, f.project.adminEmail, PASSWORD);
        expect(Date.parse(signedIn.body.expiresAt) - clock.now().getTime()).to.be.within(29 * 60_000, 30 * 60_000);
        const headers = { 'x-project-id': f.project.projectId };
        clock.advance(29 * 60_000);
        expect((await f.call('GET', '/form-sets', { token: signedIn.body.token, headers })).status).to.equal(200);
        clock.advance(2 * 60_000);
        expect((await f.call('GET', '/form-sets', { token: signedIn.body.token, headers })).status).to.equal(401);
      } finally {
        await f.stop();
      }
    });
  });
});

import { expect } from 'chai';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { ManualClock } from '../../src/clock.ts';
import { PREVIEW_TTL_SECONDS, SESSION_TTL_SECONDS, SessionTokens, TokenError, type TokenFailure } from '../../src/http/session-tokens.ts';

const SECRET = 'a-test-secret-that-is-long-enough-0123456789';
const USER = { userId: 'a1111111-1111-4111-8111-111111111111', tenantId: '0b7e4c6a-6f3e-4d5c-9a51-3b1f9f5b2c01', role: 'tenant_admin' as const };
const PREVIEW = { projectId: '7d2a9c1e-2b44-4e8a-8f0a-6c1d2e3f4a01', revisionId: 'c1111111-1111-4111-8111-111111111111', userId: USER.userId };

async function failure(promise: Promise<unknown>): Promise<TokenError> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(TokenError);
    return error as TokenError;
  }
  throw new Error('expected a TokenError');
}

async function expectFailure(promise: Promise<unknown>, reason: TokenFailure): Promise<void> {
  const error = await failure(promise);
  expect(error.reason).to.equal(reason);
  expect(error.message).to.equal(reason === 'expired' ? 'token expired' : 'token invalid');
  expect(error.cause).to.equal(undefined);
}

function tamperPayload(token: string, change: (claims: Record<string, unknown>) => void): string {
  const [header, payload, signature] = token.split('.');
  const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>;
  change(claims);
  return [header, Buffer.from(JSON.stringify(claims)).toString('base64url'), signature].join('.');
}

describe('session tokens', () => {
  let clock: ManualClock;
  let tokens: SessionTokens;
  beforeEach(() => {
    clock = new ManualClock('2026-03-01T09:00:00.000Z');
    tokens = new SessionTokens({ secret: SECRET, clock });
  });

  describe('console sessions', () => {
    it('carries sub, tid, role, iat and a 12-hour exp', async () => {
      const { token, claims } = await tokens.issueSession(USER);
      const payload = decodeJwt(token);
      expect(payload).to.include({ sub: USER.userId, tid: USER.tenantId, role: 'tenant_admin', iss: 'annals', aud: 'annals:console' });
      expect(payload.iat).to.equal(Date.parse('2026-03-01T09:00:00Z') / 1000);
      expect(payload.exp! - payload.iat!).to.equal(SESSION_TTL_SECONDS).and.to.equal(43_200);
      expect(decodeProtectedHeader(token)).to.deep.equal({ alg: 'HS256', typ: 'session+jwt' });
      expect(claims.expiresAt.toISOString()).to.equal('2026-03-01T21:00:00.000Z');
      const verified = await tokens.verifySession(token);
      expect(verified).to.deep.include(USER);
      expect(verified.sessionId).to.equal(claims.sessionId).and.to.equal(payload.jti);
    });

    it('is valid until just before 12 hours and expired from then on (ManualClock, no sleeping)', async () => {
      const { token } = await tokens.issueSession(USER);
      clock.advance(SESSION_TTL_SECONDS * 1000 - 1000);
      expect((await tokens.verifySession(token)).userId).to.equal(USER.userId);
      clock.advance(1000);
      await expectFailure(tokens.verifySession(token), 'expired');
      clock.advance(365 * 24 * 3600 * 1000);
      await expectFailure(tokens.verifySession(token), 'expired');
    });

    it('checks a token it verified before again at each use: its expiry by the clock, and for the audience asked', async () => {
      const { token } = await tokens.issueSession(USER);
      for (let i = 0; i < 3; i++) expect((await tokens.verifySession(token)).userId).to.equal(USER.userId);
      await expectFailure(tokens.verifyPreview(token), 'invalid');
      expect((await tokens.verifySession(token)).sessionId).to.be.a('string');
      clock.advance(SESSION_TTL_SECONDS * 1000);
      await expectFailure(tokens.verifySession(token), 'expired');
      clock.set(new Date('2026-03-01T09:00:00.000Z'));
      // Forgotten once found expired, and verified afresh (a clock set back, as in this test).
      expect((await tokens.verifySession(token)).userId).to.equal(USER.userId);
    });

    it('honours a configured lifetime', async () => {
      const short = new SessionTokens({ secret: SECRET, clock, sessionTtlSeconds: 60 });
      const { token } = await short.issueSession(USER);
      clock.advance(60_000);
      await expectFailure(short.verifySession(token), 'expired');
    });

    it('refuses a tampered token', async () => {
      const { token } = await tokens.issueSession({ ...USER, role: 'tenant_user' });
      await expectFailure(tokens.verifySession(tamperPayload(token, (c) => (c.role = 'tenant_admin'))), 'invalid');
      await expectFailure(tokens.verifySession(tamperPayload(token, (c) => (c.tid = 'another-tenant'))), 'invalid');
      const [h, p, s] = token.split('.');
      await expectFailure(tokens.verifySession(`${h}.${p}.${s![0] === 'A' ? 'B' : 'A'}${s!.slice(1)}`), 'invalid');
    });

    it('reports a tampered expired token as invalid, never as expired', async () => {
      const { token } = await tokens.issueSession(USER);
      clock.advance(13 * 3600 * 1000);
      await expectFailure(tokens.verifySession(tamperPayload(token, (c) => (c.role = 'tenant_user'))), 'invalid');
    });

    it('refuses a token signed with another secret', async () => {
      const other = new SessionTokens({ secret: 'another-secret-that-is-long-enough-98765', clock });
      const { token } = await other.issueSession(USER);
      await expectFailure(tokens.verifySession(token), 'invalid');
    });

    it("refuses alg 'none' and garbage", async () => {
      const { token } = await tokens.issueSession(USER);
      const [, payload] = token.split('.');
      const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'session+jwt' })).toString('base64url')}.${payload}.`;
      await expectFailure(tokens.verifySession(none), 'invalid');
      for (const garbage of ['', 'abc', 'a.b.c', 'x'.repeat(5000)]) await expectFailure(tokens.verifySession(garbage), 'invalid');
    });

    it('refuses a correctly signed token whose claims are not a session', async () => {
      const key = new TextEncoder().encode(SECRET);
      const iat = Math.floor(clock.now().getTime() / 1000);
      const base = () => new SignJWT({ tid: USER.tenantId, role: 'superuser' }).setProtectedHeader({ alg: 'HS256', typ: 'session+jwt' }).setIssuer('annals').setAudience('annals:console').setSubject(USER.userId).setJti('x').setIssuedAt(iat).setExpirationTime(iat + 60);
      await expectFailure(tokens.verifySession(await base().sign(key)), 'invalid');
      const noExp = await new SignJWT({ tid: USER.tenantId, role: 'tenant_admin' }).setProtectedHeader({ alg: 'HS256', typ: 'session+jwt' }).setIssuer('annals').setAudience('annals:console').setSubject(USER.userId).setJti('x').setIssuedAt(iat).sign(key);
      await expectFailure(tokens.verifySession(noExp), 'invalid');
    });

    it('refuses a secret shorter than 32 bytes', () => {
      expect(() => new SessionTokens({ secret: 'too-short', clock })).to.throw(RangeError, /32 bytes/);
      expect(() => new SessionTokens({ secret: new Uint8Array(32), clock })).not.to.throw();
    });
  });

  describe('preview tokens', () => {
    it('binds a project and a revision for 15 minutes', async () => {
      const { token, claims } = await tokens.issuePreview(PREVIEW);
      const payload = decodeJwt(token);
      expect(payload).to.include({ pid: PREVIEW.projectId, rid: PREVIEW.revisionId, sub: PREVIEW.userId, aud: 'annals:preview' });
      expect(payload.exp! - payload.iat!).to.equal(PREVIEW_TTL_SECONDS).and.to.equal(900);
      expect(claims.expiresAt.toISOString()).to.equal('2026-03-01T09:15:00.000Z');
      expect(await tokens.verifyPreview(token, { projectId: PREVIEW.projectId })).to.deep.include(PREVIEW);
    });

    it('expires after 15 minutes', async () => {
      const { token } = await tokens.issuePreview(PREVIEW);
      clock.advance(14 * 60_000 + 59_000);
      await tokens.verifyPreview(token);
      clock.advance(1000);
      await expectFailure(tokens.verifyPreview(token), 'expired');
    });

    it('does not open another project', async () => {
      const { token } = await tokens.issuePreview(PREVIEW);
      await expectFailure(tokens.verifyPreview(token, { projectId: '7d2a9c1e-2b44-4e8a-8f0a-6c1d2e3f4a02' }), 'invalid');
    });

    it('refuses a tampered revision id', async () => {
      const { token } = await tokens.issuePreview(PREVIEW);
      await expectFailure(tokens.verifyPreview(tamperPayload(token, (c) => (c.rid = 'c2222222-2222-4222-8222-222222222222'))), 'invalid');
    });
  });

  describe('audiences', () => {
    it('refuses a preview token used as a session', async () => {
      const { token } = await tokens.issuePreview(PREVIEW);
      await expectFailure(tokens.verifySession(token), 'invalid');
    });

    it('refuses a session token used as a preview token', async () => {
      const { token } = await tokens.issueSession(USER);
      await expectFailure(tokens.verifyPreview(token), 'invalid');
    });

    it('refuses a wrong-audience token even when the other checks would call it expired', async () => {
      const { token } = await tokens.issuePreview(PREVIEW);
      clock.advance(3600_000);
      await expectFailure(tokens.verifySession(token), 'invalid');
    });
  });
});

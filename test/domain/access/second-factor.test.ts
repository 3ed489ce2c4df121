import { expect } from 'chai';
import type { UserEvent } from '../../../src/domain/access/access-events.ts';
import { userDecider, type UserContext } from '../../../src/domain/access/user-decider.ts';
import { acceptProof, NO_SECOND_FACTORS, recoveryCodeValue, secondFactorMethods, type Passkey, type SecondFactors } from '../../../src/domain/access/second-factor.ts';
import { DomainError } from '../../../src/domain/domain-error.ts';
import { hashPassword } from '../../../src/security/password-hashing.ts';
import { admin, editor, EDITOR_ID, TENANT, given } from './support.ts';

const as = (caller: UserContext['caller']): UserContext => ({ caller });
const HASH = (n: number) => n.toString(16).padStart(64, '0');
const passkey: Passkey = { credentialId: 'Y3JlZGVudGlhbC1vbmUtaWQ', publicKey: 'cHVibGljLWtleS1ieXRlcy1oZXJl', counter: 0, name: 'Laptop', transports: ['internal'], backedUp: false };
const session = { sessionId: 'b1111111-1111-4111-8111-111111111111', expiresAt: '2026-12-07T12:00:00.000Z' };

describe('second factor (pure decisions)', () => {
  const withTotp: SecondFactors = { ...NO_SECOND_FACTORS, totp: { sealedSecret: 'v1.k.a.b.c', lastStep: 100 }, recoveryCodeHashes: [HASH(1), HASH(2)] };

  it('takes each TOTP step once, and only later ones', () => {
    expect(acceptProof(withTotp, { method: 'totp', step: 101 }).totp!.lastStep).to.equal(101);
    for (const step of [100, 99]) expect(() => acceptProof(withTotp, { method: 'totp', step })).to.throw(DomainError, /not accepted/);
    expect(() => acceptProof(NO_SECOND_FACTORS, { method: 'totp', step: 101 })).to.throw(DomainError);
  });

  it('spends a recovery code', () => {
    const after = acceptProof(withTotp, { method: 'recovery-code', codeHash: HASH(2) });
    expect(after.recoveryCodeHashes).to.deep.equal([HASH(1)]);
    expect(() => acceptProof(after, { method: 'recovery-code', codeHash: HASH(2) })).to.throw(DomainError);
  });

  it("takes a passkey's answer once per challenge, and refuses a counter that does not move on", () => {
    const factors: SecondFactors = { ...NO_SECOND_FACTORS, passkeys: [passkey] };
    const first = acceptProof(factors, { method: 'passkey', credentialId: passkey.credentialId, counter: 0, challengedAt: 1000 });
    expect(() => acceptProof(first, { method: 'passkey', credentialId: passkey.credentialId, counter: 0, challengedAt: 1000 }), 'the same challenge again').to.throw(DomainError);
    const counting = acceptProof(first, { method: 'passkey', credentialId: passkey.credentialId, counter: 5, challengedAt: 2000 });
    expect(counting.passkeys[0]!.counter).to.equal(5);
    expect(() => acceptProof(counting, { method: 'passkey', credentialId: passkey.credentialId, counter: 5, challengedAt: 3000 }), 'a cloned authenticator').to.throw(DomainError);
    expect(() => acceptProof(counting, { method: 'passkey', credentialId: 'b3RoZXItY3JlZGVudGlhbC1pZA', counter: 9, challengedAt: 3000 })).to.throw(DomainError);
  });

  it('reads recovery codes as typed, and offers passkeys first', () => {
    expect(recoveryCodeValue(' abcd-efgh 2345-7abc ')).to.equal('ABCDEFGH23457ABC');
    for (const wrong of ['ABCD-EFGH-2345', 'ABCD-EFGH-2345-7AB1', '']) expect(recoveryCodeValue(wrong)).to.equal(null);
    expect(secondFactorMethods({ totp: true, passkeys: 1, recoveryCodesLeft: 2 })).to.deep.equal(['passkey', 'totp', 'recovery-code']);
  });
});

describe('user decider: second factor', () => {
  let passwordHash: string;
  before(async () => {
    passwordHash = await hashPassword('a long enough password', { N: 1024, r: 8, p: 1 });
  });
  const created = (): UserEvent => ({ type: 'user.created', data: { userId: EDITOR_ID, tenantId: TENANT, email: 'ed@example.com', role: 'tenant_user', passwordHash } });
  const enrolled = (): UserEvent[] => [created(), { type: 'user.totp-enrolled', data: { userId: EDITOR_ID, sealedSecret: 'v1.k.a.b.c' } }, { type: 'user.recovery-codes-issued', data: { userId: EDITOR_ID, codeHashes: [HASH(1)] } }];

  it('is set up by its owner only, sealed, with recovery codes the first time', () => {
    given(userDecider, [created()]).when({ type: 'enrol-totp', sealedSecret: 'v1.k.a.b.c', recoveryCodeHashes: [HASH(1)] }, as(editor)).then([
      { type: 'user.totp-enrolled', data: { userId: EDITOR_ID, sealedSecret: 'v1.k.a.b.c' } },
      { type: 'user.recovery-codes-issued', data: { userId: EDITOR_ID, codeHashes: [HASH(1)] } },
    ]);
    given(userDecider, [created()]).when({ type: 'enrol-totp', sealedSecret: 'v1.k.a.b.c', recoveryCodeHashes: [HASH(1)] }, as(admin)).thenFails('FORBIDDEN', /owner/);
    given(userDecider, [created()]).when({ type: 'enrol-totp', sealedSecret: 'JBSWY3DPEHPK3PXP', recoveryCodeHashes: [HASH(1)] }, as(editor)).thenFails('VALIDATION_ERROR', /sealed/);
    given(userDecider, [created()]).when({ type: 'enrol-totp', sealedSecret: 'v1.k.a.b.c', recoveryCodeHashes: ['ABCD-EFGH'] }, as(editor)).thenFails('VALIDATION_ERROR', /never in clear/);
    // A passkey added beside the app brings no new codes while some are left.
    given(userDecider, enrolled()).when({ type: 'register-passkey', passkey, recoveryCodeHashes: [HASH(7)] }, as(editor)).then([{ type: 'user.passkey-registered', data: { userId: EDITOR_ID, ...passkey } }]);
  });

  it('refuses a password-only sign-in of someone with a second factor, and a step used before', () => {
    given(userDecider, enrolled()).when({ type: 'record-sign-in', method: 'password', ...session }, as(editor)).thenFails('UNAUTHORIZED', /second factor/);
    const history: UserEvent[] = [...enrolled(), { type: 'user.signed-in', data: { userId: EDITOR_ID, method: 'password', ...session, secondFactor: { method: 'totp', totpStep: 500 } } }];
    given(userDecider, history).when({ type: 'record-sign-in', method: 'password', ...session, secondFactor: { method: 'totp', step: 500 } }, as(editor)).thenFails('UNAUTHORIZED');
    given(userDecider, history).when({ type: 'record-sign-in', method: 'password', ...session, secondFactor: { method: 'totp', step: 501 } }, as(editor)).then([{ type: 'user.signed-in', data: { userId: EDITOR_ID, method: 'password', ...session, secondFactor: { method: 'totp', totpStep: 501 } } }]);
  });

  it('is reset by another tenant admin, never by oneself', () => {
    given(userDecider, enrolled()).when({ type: 'reset-second-factor' }, as(admin)).then([{ type: 'user.second-factor-reset', data: { userId: EDITOR_ID } }]);
    given(userDecider, enrolled()).when({ type: 'reset-second-factor' }, as(editor)).thenFails('FORBIDDEN');
    given(userDecider, [created()]).when({ type: 'reset-second-factor' }, as(admin)).then([]);
  });
});

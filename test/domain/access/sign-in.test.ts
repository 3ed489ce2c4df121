import { expect } from 'chai';
import { DomainError } from '../../../src/domain/domain-error.ts';
import { assertConsoleAccess, decideSignIn, SIGN_IN_FAILED } from '../../../src/domain/access/sign-in.ts';
import type { User } from '../../../src/domain/access/user-decider.ts';
import type { Plan } from '../../../src/domain/plans.ts';
import { OTHER_TENANT, TENANT } from './support.ts';

const user: User = { id: 'd1111111-1111-4111-8111-111111111111', tenantId: TENANT, email: 'jane@example.com', role: 'tenant_user', passwordHash: 'scrypt$…', disabled: false };
const office = (plan: Plan) => ({ tenantId: TENANT, plan, consoleIpAllowlist: [{ id: 'x', cidr: '198.51.100.0/24', label: 'Office' }] });

function failure(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    expect(error).to.be.instanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error('expected a DomainError');
}

describe('sign-in', () => {
  it('yields the session subject for the right password', () => {
    expect(decideSignIn({ user, passwordMatches: true })).to.deep.equal({ userId: user.id, tenantId: TENANT, role: 'tenant_user' });
  });

  it('answers the same UNAUTHORIZED for an unknown e-mail, a wrong password and a foreign login page', () => {
    for (const input of [
      { user: null, passwordMatches: false },
      { user, passwordMatches: false },
      { user, passwordMatches: true, project: { ...office('free'), tenantId: OTHER_TENANT } },
    ]) {
      const error = failure(() => decideSignIn(input));
      expect(error.code).to.equal('UNAUTHORIZED');
      expect(error.message).to.equal(SIGN_IN_FAILED);
    }
  });

  it('refuses a disabled account once the password is right', () => {
    const error = failure(() => decideSignIn({ user: { ...user, disabled: true }, passwordMatches: true }));
    expect(error.code).to.equal('FORBIDDEN');
    expect(failure(() => decideSignIn({ user: { ...user, disabled: true }, passwordMatches: false })).code).to.equal('UNAUTHORIZED');
  });

  it("enforces the login page project's IP allowlist on Business and above", () => {
    expect(decideSignIn({ user, passwordMatches: true, project: office('business'), clientIp: '198.51.100.8' }).userId).to.equal(user.id);
    expect(decideSignIn({ user, passwordMatches: true, project: office('business'), clientIp: '::ffff:198.51.100.8' }).userId).to.equal(user.id);
    const error = failure(() => decideSignIn({ user, passwordMatches: true, project: office('enterprise'), clientIp: '203.0.113.1' }));
    expect(error.code).to.equal('FORBIDDEN');
    expect(error.message).not.to.contain('198.51.100');
    expect(decideSignIn({ user, passwordMatches: true, project: office('standard'), clientIp: '203.0.113.1' }).userId).to.equal(user.id);
  });

  it('checks console requests against the allowlist, refusing an unknown address when a list applies', () => {
    expect(() => assertConsoleAccess(office('business'), '198.51.100.200')).not.to.throw();
    expect(failure(() => assertConsoleAccess(office('business'), '203.0.113.1')).code).to.equal('FORBIDDEN');
    expect(failure(() => assertConsoleAccess(office('business'), undefined)).code).to.equal('FORBIDDEN');
    expect(() => assertConsoleAccess({ plan: 'business', consoleIpAllowlist: [] }, undefined)).not.to.throw();
    expect(() => assertConsoleAccess(office('solo'), '203.0.113.1')).not.to.throw();
  });
});

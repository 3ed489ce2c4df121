import { expect } from 'chai';
import { ManualClock } from '../../src/clock.ts';
import { LoginThrottle } from '../../src/security/login-throttle.ts';

describe('login throttle: exponential backoff per address, account and both (issue 12 item 6)', () => {
  const fail = (throttle: LoginThrottle, account: string, address: string): number | 'allowed' => {
    const decision = throttle.begin(account, address);
    return decision.allowed ? 'allowed' : decision.retryAfterSeconds;
  };

  it('lets 5 failures of one account at one address through, then doubles the wait up to 60 s', () => {
    const clock = new ManualClock();
    const throttle = new LoginThrottle({ clock });
    for (let i = 0; i < 5; i++) expect(fail(throttle, 'a@x', '10.0.0.1')).to.equal('allowed');
    const waits: number[] = [];
    for (let i = 0; i < 10; i++) {
      expect(fail(throttle, 'a@x', '10.0.0.1')).to.equal('allowed');
      const wait = fail(throttle, 'a@x', '10.0.0.1') as number;
      waits.push(wait);
      clock.advance(wait * 1000);
    }
    expect(waits).to.deep.equal([1, 2, 4, 8, 16, 32, 60, 60, 60, 60]);
  });

  it('a refused attempt counts nothing, a success takes its attempt back, and an idle counter is forgotten', () => {
    const clock = new ManualClock();
    const throttle = new LoginThrottle({ clock });
    for (let i = 0; i < 6; i++) fail(throttle, 'a@x', '10.0.0.1');
    for (let i = 0; i < 50; i++) expect(fail(throttle, 'a@x', '10.0.0.1')).to.equal(1);
    clock.advance(1000);
    const ok = throttle.begin('a@x', '10.0.0.1');
    expect(ok.allowed).to.equal(true);
    if (ok.allowed) ok.attempt.succeeded();
    expect(fail(throttle, 'a@x', '10.0.0.1')).to.equal('allowed');
    for (let i = 0; i < 6; i++) fail(throttle, 'b@x', '10.0.0.2');
    expect(fail(throttle, 'b@x', '10.0.0.2')).to.be.a('number');
    clock.advance(15 * 60_000);
    expect(fail(throttle, 'b@x', '10.0.0.2')).to.equal('allowed');
  });

  it('parallel guesses cannot all pass: an attempt counts when it starts', () => {
    const throttle = new LoginThrottle({ clock: new ManualClock() });
    const decisions = Array.from({ length: 100 }, () => throttle.begin('a@x', '10.0.0.1'));
    expect(decisions.filter((d) => d.allowed)).to.have.length(6);
  });

  it('keeps its memory bounded', () => {
    const throttle = new LoginThrottle({ clock: new ManualClock(), maxKeys: 100 });
    for (let i = 0; i < 1000; i++) fail(throttle, `u${i}@x`, `10.0.${i >> 8}.${i & 255}`);
    const size = throttle.size;
    expect(Math.max(size.address, size.accountAtAddress, size.account)).to.equal(100);
  });
});

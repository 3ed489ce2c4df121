import { expect } from 'chai';
import { ManualClock } from '../../src/clock.ts';
import { RateLimiter } from '../../src/security/rate-limiter.ts';

describe('rate limiter', () => {
  let clock: ManualClock;
  let limiter: RateLimiter;
  beforeEach(() => {
    clock = new ManualClock('2026-01-01T00:00:00.000Z'); // on a 60 s window boundary
    limiter = new RateLimiter({ clock });
  });

  it('allows the limit within a window, counting down remaining, then refuses with Retry-After', () => {
    for (let i = 1; i <= 60; i++) {
      const decision = limiter.hit('key-a', 60);
      expect(decision).to.deep.equal({ allowed: true, limit: 60, remaining: 60 - i, retryAfterSeconds: 0 });
    }
    const refused = limiter.hit('key-a', 60);
    expect(refused.allowed).to.equal(false);
    expect(refused.remaining).to.equal(0);
    expect(refused.retryAfterSeconds).to.equal(61);
  });

  it('lets the next request in once Retry-After has passed, and not before', () => {
    for (let i = 0; i < 60; i++) limiter.hit('key-a', 60);
    const { retryAfterSeconds } = limiter.hit('key-a', 60);
    clock.advance((retryAfterSeconds - 1) * 1000);
    expect(limiter.hit('key-a', 60).allowed).to.equal(false);
    clock.advance(1000);
    expect(limiter.hit('key-a', 60).allowed).to.equal(true);
    // the window slides: one more request per second as the old window fades
    const next = limiter.hit('key-a', 60);
    expect(next).to.include({ allowed: false, retryAfterSeconds: 1 });
  });

  it('weighs the previous window by how much of it is still inside the sliding window', () => {
    clock.advance(30_000);
    for (let i = 0; i < 30; i++) expect(limiter.hit('k', 60).allowed).to.equal(true);
    clock.advance(45_000); // 15 s into the next window: 75% of the previous 30 still count (22.5)
    let allowed = 0;
    while (limiter.hit('k', 60).allowed) allowed++;
    expect(allowed).to.equal(37);
    expect(limiter.hit('k', 60).retryAfterSeconds).to.equal(1);
    clock.advance(1000);
    expect(limiter.hit('k', 60).allowed).to.equal(true);
  });

  it('forgets a window that is more than one window old', () => {
    for (let i = 0; i < 60; i++) limiter.hit('k', 60);
    clock.advance(120_000);
    expect(limiter.hit('k', 60)).to.deep.equal({ allowed: true, limit: 60, remaining: 59, retryAfterSeconds: 0 });
  });

  it('does not count refused requests', () => {
    for (let i = 0; i < 60; i++) limiter.hit('k', 60);
    for (let i = 0; i < 1000; i++) expect(limiter.hit('k', 60).allowed).to.equal(false);
    clock.advance(61_000);
    expect(limiter.hit('k', 60).allowed).to.equal(true);
  });

  it('keeps keys apart and applies the limit given per request (300 on larger plans)', () => {
    for (let i = 0; i < 60; i++) limiter.hit('free-key', 60);
    expect(limiter.hit('free-key', 60).allowed).to.equal(false);
    for (let i = 0; i < 300; i++) expect(limiter.hit('standard-key', 300).allowed).to.equal(true);
    expect(limiter.hit('standard-key', 300).allowed).to.equal(false);
    expect(limiter.hit('third-key', 60).remaining).to.equal(59);
  });

  it('always lets a request in after the Retry-After it was given', () => {
    // A deterministic but irregular pattern of bursts and pauses.
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let round = 0; round < 200; round++) {
      clock.advance(Math.floor(random() * 20_000));
      const burst = Math.floor(random() * 40);
      for (let i = 0; i < burst; i++) {
        const decision = limiter.hit('k', 30);
        if (!decision.allowed) {
          expect(decision.retryAfterSeconds).to.be.at.least(1);
          clock.advance(decision.retryAfterSeconds * 1000);
          expect(limiter.hit('k', 30).allowed, `round ${round}`).to.equal(true);
          break;
        }
      }
    }
  });

  it('under steady overload, allows at most the limit in any 60 s span and about the limit per minute', () => {
    const times: number[] = [];
    for (let t = 0; t < 600; t++) {
      for (let i = 0; i < 10; i++) if (limiter.hit('k', 60).allowed) times.push(clock.now().getTime());
      clock.advance(1000);
    }
    let worst = 0;
    for (let i = 0; i < times.length; i++) {
      let j = i;
      while (j < times.length && times[j]! < times[i]! + 60_000) j++;
      worst = Math.max(worst, j - i);
    }
    expect(worst).to.be.at.most(60);
    expect(times.length / 10).to.be.within(55, 62); // per minute over 10 minutes
  });

  describe('memory', () => {
    it('drops keys that have been idle for two windows', () => {
      limiter.hit('a', 60);
      limiter.hit('b', 60);
      clock.advance(30_000);
      limiter.hit('c', 60);
      expect(limiter.size).to.equal(3);
      clock.advance(100_000); // a and b: last used 130 s ago; c: 100 s ago, but its window started 120 s ago
      limiter.hit('d', 60);
      expect(limiter.size).to.equal(1);
    });

    it('keeps at most maxKeys, dropping the least recently used', () => {
      const small = new RateLimiter({ clock, maxKeys: 2 });
      small.hit('a', 1);
      small.hit('b', 1);
      expect(small.hit('a', 1).allowed).to.equal(false); // touches a
      small.hit('c', 1); // evicts b, the least recently used
      expect(small.size).to.equal(2);
      expect(small.hit('b', 1).allowed).to.equal(true); // b started afresh (and evicted a)
      expect(small.hit('c', 1).allowed).to.equal(false); // c kept its count
      expect(small.size).to.equal(2);
    });

    it('forgets a key on reset', () => {
      limiter.hit('k', 1);
      expect(limiter.hit('k', 1).allowed).to.equal(false);
      limiter.reset('k');
      expect(limiter.hit('k', 1).allowed).to.equal(true);
    });

    it('stays bounded under many distinct keys', () => {
      const bounded = new RateLimiter({ clock, maxKeys: 1000 });
      for (let i = 0; i < 50_000; i++) bounded.hit(`key-${i}`, 60);
      expect(bounded.size).to.equal(1000);
    });
  });

  it('refuses nonsense configuration', () => {
    expect(() => new RateLimiter({ clock, windowMs: 0 })).to.throw(RangeError);
    expect(() => new RateLimiter({ clock, maxKeys: 0 })).to.throw(RangeError);
    expect(() => limiter.hit('k', 0)).to.throw(RangeError);
  });
});

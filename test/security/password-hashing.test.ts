import { expect } from 'chai';
import {
  DEFAULT_SCRYPT_PARAMS,
  hashPassword,
  isPasswordHash,
  needsRehash,
  passwordProblem,
  verifyPassword,
  verifyPasswordAgainstNothing,
} from '../../src/security/password-hashing.ts';

/** Cheap parameters for behaviour tests; the default (slow) ones are exercised where cost matters. */
const FAST = { N: 2 ** 10, r: 8, p: 1 };

describe('password hashing', () => {
  it('produces a self-describing scrypt string with a fresh salt every time', async () => {
    const a = await hashPassword('correct horse battery', FAST);
    const b = await hashPassword('correct horse battery', FAST);
    expect(a).to.match(/^scrypt\$1024\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(a).not.to.equal(b);
    expect(a).not.to.contain('correct horse battery');
  });

  it('uses N=2^15, r=8, p=1 by default', async () => {
    expect(DEFAULT_SCRYPT_PARAMS).to.deep.equal({ N: 32768, r: 8, p: 1 });
    const hash = await hashPassword('correct horse battery');
    expect(hash.startsWith('scrypt$32768$8$1$')).to.equal(true);
  });

  it('verifies the right password and refuses a wrong one', async () => {
    const hash = await hashPassword('correct horse battery', FAST);
    expect(await verifyPassword('correct horse battery', hash)).to.equal(true);
    expect(await verifyPassword('correct horse batterY', hash)).to.equal(false);
    expect(await verifyPassword('', hash)).to.equal(false);
  });

  it('treats canonically equivalent spellings as the same password (NFKC)', async () => {
    const hash = await hashPassword('caf\u00e9-passw0rd', FAST);
    expect(await verifyPassword('cafe\u0301-passw0rd', hash)).to.equal(true);
    const wide = await hashPassword('\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44', FAST); // full-width "password"
    expect(await verifyPassword('password', wide)).to.equal(true);
  });

  it('answers false, without throwing, for malformed or tampered hashes', async () => {
    const hash = await hashPassword('correct horse battery', FAST);
    const parts = hash.split('$');
    const key = parts[5]!;
    const flipped = [...parts.slice(0, 5), (key[0] === 'A' ? 'B' : 'A') + key.slice(1)].join('$');
    const truncated = [...parts.slice(0, 5), key.slice(0, 32)].join('$');
    const otherN = ['scrypt', '2048', ...parts.slice(2)].join('$');
    for (const stored of [flipped, truncated, otherN, 'correct horse battery', '', 'scrypt$3$8$1$x$y', 'bcrypt$2b$10$abc', `scrypt$${2 ** 30}$8$1$${parts[4]}$${key}`]) {
      expect(await verifyPassword('correct horse battery', stored), stored).to.equal(false);
    }
  });

  it('tells when a stored hash was made with other parameters', async () => {
    const fast = await hashPassword('correct horse battery', FAST);
    expect(needsRehash(fast)).to.equal(true);
    expect(needsRehash(fast, FAST)).to.equal(false);
    expect(needsRehash('not a hash')).to.equal(true);
    expect(needsRehash(await hashPassword('correct horse battery'))).to.equal(false);
  });

  it('recognises its own hashes and nothing else', async () => {
    expect(isPasswordHash(await hashPassword('correct horse battery', FAST))).to.equal(true);
    for (const value of ['correct horse battery', 'scrypt$', 'scrypt$1024$8$1$short$short', '$2b$10$abcdefghijklmnopqrstuv']) {
      expect(isPasswordHash(value), value).to.equal(false);
    }
  });

  it('refuses parameters scrypt would choke on', async () => {
    let caught: unknown;
    try {
      await hashPassword('x', { N: 1000, r: 8, p: 1 });
    } catch (error) {
      caught = error;
    }
    expect(caught).to.be.instanceOf(RangeError);
  });

  it('checks length limits', () => {
    expect(passwordProblem('short')).to.match(/at least 8/);
    expect(passwordProblem('long enough')).to.equal(null);
    expect(passwordProblem('x'.repeat(1025))).to.match(/at most 1024/);
  });

  describe('timing', () => {
    /**
     * The median CPU time (ms, every thread of this process: scrypt runs on libuv's pool) a call costs. CPU time,
     * not wall time: the other test worker and the services it starts share the machine, and would otherwise
     * decide the ratio.
     */
    async function median(run: () => Promise<unknown>, times = 5): Promise<number> {
      const samples: number[] = [];
      for (let i = 0; i < times; i++) {
        const started = process.cpuUsage();
        await run();
        const used = process.cpuUsage(started);
        samples.push((used.user + used.system) / 1000);
      }
      return samples.sort((a, b) => a - b)[Math.floor(times / 2)]!;
    }

    it('spends the KDF cost on a right password, a wrong one and an unknown user alike', async () => {
      const hash = await hashPassword('correct horse battery');
      const right = await median(() => verifyPassword('correct horse battery', hash));
      const wrongFirst = await median(() => verifyPassword('Xorrect horse battery', hash));
      const wrongLast = await median(() => verifyPassword('correct horse batterX', hash));
      const nobody = await median(() => verifyPasswordAgainstNothing('correct horse battery'));
      expect(right, 'a verification must be slow').to.be.above(20);
      for (const other of [wrongFirst, wrongLast, nobody]) {
        // Dominated by scrypt; generous bounds all the same.
        expect(other / right).to.be.within(0.4, 2.5);
      }
      expect(await verifyPasswordAgainstNothing('anything')).to.equal(false);
    });
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { acquireDataDirLock, DataDirLockedError, LOCK_FILE } from '../../src/data-dir/data-dir-lock.ts';
import { tempDir } from '../support/temp-dir.ts';
import { loadConfig } from '../../src/config/config.ts';
import { takesDataDirLock } from '../../src/service/service.ts';

describe('DATA_DIR writer lock', () => {
  it('is exclusive within one process too, names its holder, and is taken again once released', () => {
    const dataDir = path.join(tempDir(), 'data');
    const lock = acquireDataDirLock(dataDir, 'service with roles api,projector');
    expect(fs.statSync(path.join(dataDir, LOCK_FILE)).mode & 0o777).to.equal(0o600);
    expect(fs.statSync(dataDir).mode & 0o777).to.equal(0o700);
    try {
      acquireDataDirLock(dataDir, 'restore');
      expect.fail('a second holder was let in');
    } catch (error) {
      expect(error).to.be.instanceOf(DataDirLockedError);
      const refused = error as DataDirLockedError;
      expect(refused.holder).to.include({ pid: process.pid, purpose: 'service with roles api,projector' });
      expect(refused.message).to.match(/is in use by pid \d+ on .*, service with roles api,projector, since \d{4}-/);
    }
    lock.release();
    lock.release();
    const again = acquireDataDirLock(dataDir, 'restore');
    again.release();
  });

  it('is taken by the projector role wherever an embedded store lives in DATA_DIR, not with EventStoreDB and MongoDB', () => {
    const production = { EVENTSTORE_CONNECTION_STRING: 'esdb://localhost:2113?tls=false', SESSION_SECRET: 's'.repeat(40), SECRETS_KEY: Buffer.alloc(32, 1).toString('base64') };
    const cases: Array<[Record<string, string>, boolean]> = [
      [{}, true],
      [{ ROLES: 'projector' }, true],
      [{ ROLES: 'api' }, false],
      [{ MONGODB_URL: 'mongodb://localhost/annals' }, true],
      [production, true],
      [{ ...production, MONGODB_URL: 'mongodb://localhost/annals' }, false],
    ];
    for (const [env, expected] of cases) expect(takesDataDirLock(loadConfig(env)), JSON.stringify(env)).to.equal(expected);
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { acquireDataDirLock, DataDirLockedError, LOCK_FILE } from '../../src/data-dir/data-dir-lock.ts';
import { tempDir } from '../support/temp-dir.ts';

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
});

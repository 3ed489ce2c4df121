import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { SqliteWorkingCopyStore } from '../../src/working-copies/sqlite-working-copy-store.ts';
import { tempDir } from '../support/temp-dir.ts';
import { workingCopyStoreConformance } from './working-copy-store.conformance.ts';

workingCopyStoreConformance('working-copy store: SQLite file (embedded default)', {
  async create() {
    return SqliteWorkingCopyStore.open(path.join(tempDir(), 'working-copies.sqlite'));
  },
});

describe('working-copy store: SQLite file, on disk', () => {
  it('is private to the service (0600) and leaves no bytes of a deleted copy in the file', async () => {
    const file = path.join(tempDir(), 'working-copies.sqlite');
    const store = SqliteWorkingCopyStore.open(file);
    const secret = 'unsaved-typing-0d1f5c7a';
    await store.put({ projectId: 'p', entryId: 'e', owner: { type: 'user', id: 'u' }, baseRevision: 1, startedAt: '2026-12-06T00:00:00.000Z', savedAt: '2026-12-06T00:00:00.000Z', fields: { title: { en: secret } } });
    await store.delete('e', { type: 'user', id: 'u' });
    await store.close();
    expect(fs.statSync(file).mode & 0o777).to.equal(0o600);
    const bytes = Buffer.concat([file, `${file}-wal`].filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f)));
    expect(bytes.includes(Buffer.from(secret))).to.equal(false);
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { SqliteKeyStore } from '../../src/key-store/sqlite-key-store.ts';
import { tempDir } from '../support/temp-dir.ts';
import { keyStoreConformance } from './key-store.conformance.ts';

const files = new Map<object, string>();
/** The file, its WAL and shared memory: what a reader of the disk gets. */
const bytesOnDisk = (file: string) => Buffer.concat(['', '-wal', '-shm'].filter((s) => fs.existsSync(file + s)).map((s) => fs.readFileSync(file + s)));

keyStoreConformance('key store: SQLite file (embedded default)', {
  async create() {
    const file = path.join(tempDir(), 'keys.sqlite');
    const store = SqliteKeyStore.open(file);
    files.set(store, file);
    return store;
  },
  async raw(store) {
    return bytesOnDisk(files.get(store)!);
  },
});

describe('key store: SQLite file, beyond the contract', () => {
  it('keeps keys across reopening, and a destroyed key leaves no trace of its bytes in the database file or its WAL', async () => {
    const file = path.join(tempDir(), 'keys.sqlite');
    const store = SqliteKeyStore.open(file);
    const kept = randomUUID();
    const erased = randomUUID();
    const keptKey = randomBytes(32);
    const erasedKey = randomBytes(32);
    await store.put(kept, keptKey);
    await store.put(erased, erasedKey);
    expect(bytesOnDisk(file).includes(erasedKey)).to.equal(true);
    await store.destroy(erased);
    expect(bytesOnDisk(file).includes(erasedKey), 'the destroyed key is still in the file').to.equal(false);
    await store.close();
    const reopened = SqliteKeyStore.open(file);
    expect((await reopened.get(kept))?.equals(keptKey)).to.equal(true);
    expect(await reopened.destroyed(erased)).to.equal(true);
    await reopened.close();
    expect(bytesOnDisk(file).includes(erasedKey)).to.equal(false);
  });
});

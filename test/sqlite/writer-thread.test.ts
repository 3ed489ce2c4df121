import path from 'node:path';
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { SqliteWriterThread, WriterThreadError } from '../../src/sqlite/writer-thread.ts';
import { tempDir } from '../support/temp-dir.ts';

describe('SQLite writer thread', () => {
  const open = () => {
    const file = path.join(tempDir(), 'writes.sqlite');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE items (id TEXT PRIMARY KEY, n INTEGER NOT NULL)');
    return { file, db };
  };

  it('runs each transaction whole, in the order asked, and gives each statement its outcome', async () => {
    const { file, db } = open();
    const writer = new SqliteWriterThread(file, { pragmas: ['synchronous = NORMAL'], busyTimeoutMs: 1_000 });
    try {
      const first = writer.transaction([
        { sql: 'INSERT INTO items (id, n) VALUES (?, ?)', params: ['a', 1] },
        { sql: 'INSERT INTO items (id, n) VALUES (?, ?)', params: ['b', 2] },
      ]);
      const second = writer.transaction([
        { sql: 'UPDATE items SET n = n + 10', params: [] },
        { sql: 'SELECT sum(n) FROM items', params: [], read: true },
      ]);
      expect(writer.outstanding).to.equal(2);
      expect(await first).to.deep.equal({ committed: [1, 1] });
      expect(await second).to.deep.equal({ committed: [2, [23]] });
      expect(writer.outstanding).to.equal(0);
      // A failing statement rolls its whole transaction back and says why; the next one goes on.
      const failed = await writer.transaction([
        { sql: 'INSERT INTO items (id, n) VALUES (?, ?)', params: ['c', 3] },
        { sql: 'INSERT INTO items (id, n) VALUES (?, ?)', params: ['a', 4] },
      ]);
      expect(failed).to.deep.include({ failed: { code: 'SQLITE_CONSTRAINT_PRIMARYKEY', message: 'UNIQUE constraint failed: items.id' } });
      // abortUnless: a read that does not find what it must rolls the transaction back, naming the step and the row.
      const aborted = await writer.transaction([
        { sql: 'UPDATE items SET n = 0', params: [] },
        { sql: 'SELECT id FROM items WHERE n = ?', params: [0], read: true, abortUnless: 'b' },
      ]);
      expect(aborted).to.deep.equal({ aborted: { step: 1, row: ['a'] } });
      expect(db.prepare('SELECT id, n FROM items ORDER BY id').all()).to.deep.equal([{ id: 'a', n: 11 }, { id: 'b', n: 12 }]);
    } finally {
      await writer.close();
      db.close();
    }
  });

  it('fails the transactions outstanding when the thread cannot go on (here: no file), and starts a new thread for the next', async () => {
    const dir = tempDir();
    const writer = new SqliteWriterThread(path.join(dir, 'missing.sqlite'), { pragmas: [], busyTimeoutMs: 1_000 });
    const error = await writer.transaction([{ sql: 'SELECT 1', params: [], read: true }]).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(WriterThreadError);
    expect((error as Error).message).to.match(/ended before answering: SQLITE_CANTOPEN: unable to open database file/);
    new Database(path.join(dir, 'missing.sqlite')).close();
    expect(await writer.transaction([{ sql: 'SELECT 1', params: [], read: true }])).to.deep.equal({ committed: [[1]] });
    await writer.close();
    await writer.transaction([]).then(
      () => expect.fail('a closed writer runs nothing'),
      (e: unknown) => expect(e).to.be.instanceOf(WriterThreadError),
    );
  });
});

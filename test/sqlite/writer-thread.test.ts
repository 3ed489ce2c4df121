import path from 'node:path';
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { SqliteWriterThread, WriterRequestError, WriterThreadError } from '../../src/sqlite/writer-thread.ts';
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
      const first = writer.run([
        { sql: 'INSERT INTO items (id, n) VALUES (?, ?)', params: ['a', 1] },
        { sql: 'INSERT INTO items (id, n) VALUES (?, ?)', params: ['b', 2] },
      ]);
      const second = writer.run([
        { sql: 'UPDATE items SET n = n + 10', params: [] },
        { sql: 'SELECT sum(n) FROM items', params: [], read: true },
        // A value bound as its JSON text, made on the thread.
        { sql: 'INSERT INTO items (id, n) VALUES (?, json_extract(?, \'$.n\'))', params: ['j'], json: { n: 100 } },
        { sql: 'DELETE FROM items WHERE id = ?', params: ['j'] },
      ]);
      expect(writer.outstanding).to.equal(2);
      expect(await first).to.deep.equal({ committed: [1, 1] });
      expect(await second).to.deep.equal({ committed: [2, [23], 1, 1] });
      expect(writer.outstanding).to.equal(0);
      // A failing statement rolls its whole transaction back and says why; the next one goes on.
      const failed = await writer.run([
        { sql: 'INSERT INTO items (id, n) VALUES (?, ?)', params: ['c', 3] },
        { sql: 'INSERT INTO items (id, n) VALUES (?, ?)', params: ['a', 4] },
      ]);
      expect(failed).to.deep.include({ failed: { code: 'SQLITE_CONSTRAINT_PRIMARYKEY', message: 'UNIQUE constraint failed: items.id' } });
      // abortUnless: a read that does not find what it must rolls the transaction back, naming the step and the row.
      const aborted = await writer.run([
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

  it("answers with a handler of its own: its replies, and what it throws as that request's failure alone", async () => {
    const { file, db } = open();
    const handler = `(db) => {
      const insert = db.prepare('INSERT INTO items (id, n) VALUES (?, ?)');
      return (request) => {
        if (request.n < 0) throw new Error('negative: ' + request.n);
        return { changes: insert.run(request.id, request.n).changes, thread: require('node:worker_threads').isMainThread ? 'main' : 'worker' };
      };
    }`;
    const writer = new SqliteWriterThread<{ id: string; n: number }, { changes: number; thread: string }>(file, { pragmas: [], busyTimeoutMs: 1_000, handler });
    try {
      const [a, refused, duplicate, b] = await Promise.allSettled([
        writer.run({ id: 'a', n: 1 }),
        writer.run({ id: 'x', n: -1 }),
        writer.run({ id: 'a', n: 2 }),
        writer.run({ id: 'b', n: 2 }),
      ]);
      expect(a).to.deep.equal({ status: 'fulfilled', value: { changes: 1, thread: 'worker' } });
      expect((refused as PromiseRejectedResult).reason).to.be.instanceOf(WriterRequestError).and.have.property('message', 'negative: -1');
      expect((duplicate as PromiseRejectedResult).reason).to.be.instanceOf(WriterRequestError).and.have.property('code', 'SQLITE_CONSTRAINT_PRIMARYKEY');
      expect(b).to.deep.equal({ status: 'fulfilled', value: { changes: 1, thread: 'worker' } });
      expect(db.prepare('SELECT id FROM items ORDER BY id').pluck().all()).to.deep.equal(['a', 'b']);
    } finally {
      await writer.close();
      db.close();
    }
  });

  it('fails the transactions outstanding when the thread cannot go on (here: no file), and starts a new thread for the next', async () => {
    const dir = tempDir();
    const writer = new SqliteWriterThread(path.join(dir, 'missing.sqlite'), { pragmas: [], busyTimeoutMs: 1_000 });
    const error = await writer.run([{ sql: 'SELECT 1', params: [], read: true }]).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(WriterThreadError);
    expect((error as Error).message).to.match(/ended before answering: SQLITE_CANTOPEN: unable to open database file/);
    new Database(path.join(dir, 'missing.sqlite')).close();
    expect(await writer.run([{ sql: 'SELECT 1', params: [], read: true }])).to.deep.equal({ committed: [[1]] });
    await writer.close();
    await writer.run([]).then(
      () => expect.fail('a closed writer runs nothing'),
      (e: unknown) => expect(e).to.be.instanceOf(WriterThreadError),
    );
  });
});

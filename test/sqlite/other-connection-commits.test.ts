import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { OtherConnectionCommits } from '../../src/sqlite/other-connection-commits.ts';
import { tempDir } from '../support/temp-dir.ts';
import { eventually } from '../support/eventually.ts';

describe('OtherConnectionCommits: commits of other connections to a SQLite file', () => {
  let own: Database.Database;
  let other: Database.Database;
  let watch: OtherConnectionCommits;
  let reported = 0;

  beforeEach(() => {
    const file = path.join(tempDir(), 'watched.sqlite');
    own = new Database(file);
    own.pragma('journal_mode = WAL');
    own.exec('CREATE TABLE t (x INTEGER)');
    other = new Database(file);
    reported = 0;
    watch = new OtherConnectionCommits(own, () => reported++, { activeMs: 5, idleMs: 5, activeForMs: 1_000 });
  });

  afterEach(() => {
    watch.stop();
    own.close();
    other.close();
  });

  it("reports another connection's commit within an interval, once per change seen", async () => {
    watch.start();
    other.prepare('INSERT INTO t VALUES (1)').run();
    await until(() => reported > 0);
    expect(reported).to.equal(1);
    // Nothing new: nothing more reported.
    await sleep(30);
    expect(reported).to.equal(1);
    other.prepare('INSERT INTO t VALUES (2)').run();
    await until(() => reported > 1);
  });

  it("does not report the connection's own commits, nor commits made while stopped", async () => {
    watch.start();
    own.prepare('INSERT INTO t VALUES (1)').run();
    own.prepare('INSERT INTO t VALUES (2)').run();
    await sleep(40);
    expect(reported).to.equal(0);
    watch.stop();
    expect(watch.watching).to.equal(false);
    other.prepare('INSERT INTO t VALUES (3)').run();
    await sleep(40);
    expect(reported).to.equal(0);
    // Started again, it counts from now: the commit made while stopped is not reported.
    watch.start();
    await sleep(40);
    expect(reported).to.equal(0);
  });

  it('does not report commits made before seen(): those its caller made on a connection of its own and told itself', async () => {
    watch.stop();
    watch = new OtherConnectionCommits(own, () => reported++, { activeMs: 20, idleMs: 20, activeForMs: 1_000 });
    watch.start();
    other.prepare('INSERT INTO t VALUES (1)').run();
    watch.seen();
    // Three checks at least.
    await sleep(70);
    expect(reported).to.equal(0);
    other.prepare('INSERT INTO t VALUES (2)').run();
    await until(() => reported === 1);
  });

  it('checks often for a while after it saw a commit, and sparsely when the other side is quiet', async () => {
    watch.stop();
    watch = new OtherConnectionCommits(own, () => reported++, { activeMs: 2, idleMs: 400, activeForMs: 5_000 });
    watch.start();
    other.prepare('INSERT INTO t VALUES (1)').run();
    await until(() => reported === 1);
    // Active now: the next commit is seen within a few checks of 2 ms, not at the next idle check (400 ms).
    other.prepare('INSERT INTO t VALUES (2)').run();
    const committedAt = performance.now();
    await until(() => reported === 2);
    expect(performance.now() - committedAt).to.be.below(200);
  });

  it('keeps one round of checks when onCommit stops and starts it again, so that stop() stops it', async () => {
    watch.stop();
    watch = new OtherConnectionCommits(
      own,
      () => {
        reported++;
        watch.stop();
        watch.start();
      },
      { activeMs: 2, idleMs: 2, activeForMs: 1_000 },
    );
    watch.start();
    other.prepare('INSERT INTO t VALUES (1)').run();
    await until(() => reported === 1);
    watch.stop();
    other.prepare('INSERT INTO t VALUES (2)').run();
    await sleep(40);
    expect(reported).to.equal(1);
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const until = (condition: () => boolean, timeoutMs = 5_000) => eventually(condition, Boolean, timeoutMs, 'condition', 2);

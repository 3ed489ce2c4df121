import path from 'node:path';
import fs from 'node:fs';
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { encodePosition } from '../../src/event-store/position.ts';
import { SqliteReadModelStore } from '../../src/read-models/sqlite-read-model-store.ts';
import { KEPT_COMMITS } from '../../src/read-models/sqlite-deep-pages.ts';
import { foldingIndexesOf, ReadModelError } from '../../src/read-models/read-model-store.ts';
import { SqliteOpenError } from '../../src/sqlite/open-database.ts';
import { tempDir } from '../support/temp-dir.ts';
import { eventually } from '../support/eventually.ts';
import { expectWalCutBackAfterBurst, walState } from '../support/wal-state.ts';
import { CHECKPOINT_DELAY_MS, READ_MODELS_BACKSTOP_CHECKPOINT_PAGES, READ_MODELS_WAL_CUT_BACK_BYTES } from '../../src/sqlite/wal-checkpointer.ts';
import { indexText } from '../../src/search/search-tokens.ts';
import { articlesSchema, coveredSchema, readModelStoreConformance, searchSchema } from './read-model-store.conformance.ts';
import { del, put, sparseSchema } from './read-model-store.fixtures.ts';

const NOW = '2026-11-22T10:00:00.000Z';

/** How many times a 2 ms timer fired while `work` ran, and how long it took: on the event loop, no timer fires. */
async function ticking(work: () => Promise<unknown>): Promise<{ ticks: number; tookMs: number }> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 2);
  const started = performance.now();
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return { ticks, tookMs: performance.now() - started };
}

readModelStoreConformance('read models: SQLite adapter', {
  create: async () => SqliteReadModelStore.open(path.join(tempDir(), 'read-models.sqlite')),
});

describe('read models: SQLite adapter, file behaviour', () => {
  it("commits 256 documents or more on the event loop's connection, or with inlineBulkCommits false on the writer thread like every other commit; both read back alike", async () => {
    for (const inlineBulkCommits of [true, false]) {
      const store = SqliteReadModelStore.open(path.join(tempDir(), 'read-models.sqlite'), { inlineBulkCommits });
      try {
        await store.createGeneration(articlesSchema, 1, 1, NOW);
        const target = { projection: articlesSchema.projection, generation: 1 };
        const bulk = Array.from({ length: 300 }, (_, i) => ({ collection: 'articles', id: `a-${i}`, doc: { slug: `s-${i}` }, position: BigInt(i + 1) }));
        await store.commit(target, bulk, 300n, NOW);
        await store.commit(target, [{ collection: 'articles', id: 'a-300', doc: { slug: 's-300' }, position: 301n }], 301n, NOW);
        expect(store.commitsByPlace(), `inlineBulkCommits ${inlineBulkCommits}`).to.deep.equal(inlineBulkCommits ? { eventLoop: 1, writerThread: 1 } : { eventLoop: 0, writerThread: 2 });
        expect(await store.count(target, 'articles')).to.equal(301);
        expect((await store.get(target, 'articles', 'a-299'))?.['slug']).to.equal('s-299');
      } finally {
        await store.close();
      }
    }
  });

  it('goes on when the checkpointing thread cannot open the file: the store answers, writes and closes', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'read-models.sqlite');
    const tasks: Array<() => Promise<void>> = [];
    const store = SqliteReadModelStore.open(file, { schedule: (task) => {
        tasks.push(task);
        return () => undefined;
      },
    });
    try {
      await store.createGeneration(articlesSchema, 1, 1, NOW);
      const target = { projection: articlesSchema.projection, generation: 1 };
      await store.commit(target, [{ collection: 'articles', id: 'a-1', doc: { slug: 's-1' }, position: 1n }], 1n, NOW);
      // The open connection keeps the file; the thread, opening it by name, finds nothing there.
      fs.renameSync(file, path.join(dir, 'elsewhere.sqlite'));
      await tasks.shift()!();
      await store.commit(target, [{ collection: 'articles', id: 'a-2', doc: { slug: 's-2' }, position: 2n }], 2n, NOW);
      await tasks.shift()!();
      expect((await store.get(target, 'articles', 'a-2'))?.['slug']).to.equal('s-2');
    } finally {
      await store.close();
    }
  });

  it('copies the WAL into the file soon after a commit, on a thread of its own (one checkpoint pending at a time), so reads skip the WAL', async () => {
    const file = path.join(tempDir(), 'read-models.sqlite');
    const pending: Array<{ task: () => Promise<void>; ms: number; cancelled: boolean }> = [];
    const store = SqliteReadModelStore.open(file, {
      schedule: (task, ms) => {
        const entry = { task, ms, cancelled: false };
        pending.push(entry);
        return () => void (entry.cancelled = true);
      },
    });
    try {
      await store.createGeneration(articlesSchema, 1, 1, NOW);
      const target = { projection: articlesSchema.projection, generation: 1 };
      const article = (n: number) => ({ collection: 'articles', id: `a-${n}`, doc: { slug: `s-${n}`, title: 'x'.repeat(2_000) }, position: BigInt(n) });
      await store.commit(target, [1, 2, 3].map(article), 3n, NOW);
      await store.commit(target, [4, 5].map(article), 5n, NOW);
      expect(pending.map((p) => p.ms)).to.deep.equal([CHECKPOINT_DELAY_MS]);
      const before = walState(file);
      expect(before.frames).to.be.above(0);
      expect(before.backfilled).to.be.below(before.frames);
      // On a thread of its own, with a connection of its own.
      await pending.shift()!.task();
      const after = walState(file);
      expect(after).to.deep.equal({ frames: before.frames, backfilled: before.frames });
      expect((await store.get(target, 'articles', 'a-5'))?.['slug']).to.equal('s-5');
      // The next write schedules the next checkpoint; closing the store cancels it.
      await store.commit(target, [article(6)], 6n, NOW);
      expect(pending).to.have.length(1);
      await store.close();
      expect(pending[0]!.cancelled).to.equal(true);
    } finally {
      await store.close();
    }
  });

  it("leaves the WAL's copying to the thread: commits past SQLite's former 5,000-page threshold do not checkpoint on the event loop; the thread cuts the large WAL back", async function () {
    this.timeout(60_000);
    const file = path.join(tempDir(), 'read-models.sqlite');
    // The thread's checkpoint runs only when the test says: until then only SQLite's own, in a commit, could copy the WAL.
    const checkpoints: Array<() => Promise<void>> = [];
    const store = SqliteReadModelStore.open(file, { schedule: (task) => {
        checkpoints.push(task);
        return () => undefined;
      },
    });
    try {
      await store.createGeneration(articlesSchema, 1, 1, NOW);
      const target = { projection: articlesSchema.projection, generation: 1 };
      // ~900 KB a commit, ~110 pages of 8 KiB: 60 commits pass 5,000 pages and stay below the backstop.
      const body = 'x'.repeat(900_000);
      for (let n = 1; n <= 60; n++) await store.commit(target, [{ collection: 'articles', id: `a-${n}`, doc: { slug: `s-${n}`, body }, position: BigInt(n) }], BigInt(n), NOW);
      const wal = walState(file);
      expect(wal.frames).to.be.above(5_000).and.below(READ_MODELS_BACKSTOP_CHECKPOINT_PAGES);
      expect(wal.backfilled).to.equal(0);
      expect(fs.statSync(`${file}-wal`).size).to.be.above(READ_MODELS_WAL_CUT_BACK_BYTES);
      expect((await store.get(target, 'articles', 'a-60'))?.['slug']).to.equal('s-60');
      await expectWalCutBackAfterBurst(file, checkpoints, READ_MODELS_WAL_CUT_BACK_BYTES);
      await store.commit(target, [{ collection: 'articles', id: 'a-61', doc: { slug: 's-61' }, position: 61n }], 61n, NOW);
      expect((await store.get(target, 'articles', 'a-1'))?.['slug']).to.equal('s-1');
      expect((await store.get(target, 'articles', 'a-61'))?.['slug']).to.equal('s-61');
    } finally {
      await store.close();
    }
  });

  it('commits on a thread of its own (a few documents each, as live projections do): the event loop goes on meanwhile; larger commits run on the loop', async function () {
    this.timeout(60_000);
    const store = SqliteReadModelStore.open(path.join(tempDir(), 'read-models.sqlite'));
    const target = { projection: 'test-articles', generation: 1 };
    const body = 'x'.repeat(500);
    const articles = (from: number, count: number) => Array.from({ length: count }, (_, i) => ({ collection: 'articles', id: `a${from + i}`, position: BigInt(from + i + 1), doc: { slug: `s${from + i}`, status: 'published', body } }));
    try {
      await store.createGeneration(articlesSchema, 1, 1, NOW);
      // 100 commits of 200 documents, asked for at once: they run one after another on the thread.
      const live = await ticking(() => Promise.all(Array.from({ length: 100 }, (_, k) => store.commit(target, articles(k * 200, 200), BigInt((k + 1) * 200), NOW))));
      expect(live.tookMs, 'commits long enough to tell').to.be.above(50);
      // On the event loop, no timer could fire until the commits were over.
      expect(live.ticks, `${live.ticks} ticks of a 2 ms timer during ${live.tookMs.toFixed(0)} ms of commits`).to.be.at.least(Math.floor(live.tookMs / 2 / 4));
      expect(await store.count(target, 'articles')).to.equal(20_000);
      // One commit of 20,000: on the loop's connection (its reads of what it wrote stay cached there).
      const large = await ticking(() => store.commit(target, articles(20_000, 20_000), 40_000n, NOW));
      expect(large.ticks, `${large.ticks} ticks during ${large.tookMs.toFixed(0)} ms`).to.be.at.most(1);
      expect(await store.count(target, 'articles')).to.equal(40_000);
    } finally {
      await store.close();
    }
  });

  it("builds a generation's deferred indexes on its writer thread: the event loop goes on meanwhile, and the indexes serve queries after", async function () {
    this.timeout(60_000);
    const file = path.join(tempDir(), 'read-models.sqlite');
    const store = SqliteReadModelStore.open(file);
    const schema = {
      projection: 'test-indexed',
      collections: {
        articles: {
          indexes: [1, 2, 3, 4].map((n) => ({ name: `by_field_${n}`, fields: [['status', 1], [`f${n}`, -1]] as Array<[string, 1 | -1]> })),
          textField: 'search',
        },
      },
    };
    const target = { projection: 'test-indexed', generation: 1 };
    try {
      await store.createGeneration(schema, 1, 1, NOW, { deferIndexes: true });
      for (let k = 0; k < 20; k++) {
        const docs = Array.from({ length: 2_000 }, (_, i) => {
          const n = k * 2_000 + i;
          return { collection: 'articles', id: `a${n}`, position: BigInt(n + 1), doc: { status: n % 3 === 0 ? 'draft' : 'published', f1: `${(n * 7919) % 40_000}`, f2: n % 97, f3: `t${n % 1_013}`, f4: (n * 31) % 40_000, search: `word${n % 500} common` } };
        });
        await store.commit(target, docs, BigInt((k + 1) * 2_000), NOW);
      }
      const built = await ticking(() => store.createIndexes(schema, 1));
      expect(built.tookMs, 'an index build long enough to tell').to.be.above(100);
      expect(built.ticks, `${built.ticks} ticks of a 2 ms timer during ${built.tookMs.toFixed(0)} ms of building`).to.be.at.least(Math.floor(built.tookMs / 2 / 4));
      const plan = store.queryPlan(target, 'articles', { filter: { status: 'published' }, sort: [['f4', 'desc']], limit: 5 }).join(' ');
      expect(plan).to.match(/USING INDEX rm_test_indexed__articles__g1__by_field_4/);
      // The largest f4 of a published document (every third is a draft), as the index reads it.
      const largest = Math.max(...Array.from({ length: 40_000 }, (_, n) => (n % 3 === 0 ? -1 : (n * 31) % 40_000)));
      expect((await store.find(target, 'articles', { filter: { status: 'published' }, sort: [['f4', 'desc']], limit: 1 }))[0]).to.include({ f4: largest });
      expect(await store.count(target, 'articles', {}, ['word7'])).to.equal(80);
    } finally {
      await store.close();
    }
  });

  it('stores each document\'s position as an integer, guards writes by it as before in tables that hold it as text, and refuses one past 2^63 - 1', async () => {
    const file = path.join(tempDir(), 'read-models.sqlite');
    const store = SqliteReadModelStore.open(file);
    const target = { projection: 'test-articles', generation: 1 };
    const legacy = { projection: 'test-articles', generation: 2 };
    try {
      await store.createGeneration(articlesSchema, 1, 1, NOW);
      // A generation made before positions were integers: its table as that version made it.
      const raw = new Database(file);
      raw.exec(`CREATE TABLE "rm_test_articles__articles__g2" (id TEXT PRIMARY KEY, pos TEXT NOT NULL, doc BLOB NOT NULL)`);
      raw.close();
      await store.createGeneration(articlesSchema, 2, 1, NOW);
      for (const at of [target, legacy]) {
        await store.commit(at, [put('articles', 'a', 99n, { slug: 'v99' }), put('articles', 'b', 5n, { slug: 'b' })], 99n, NOW);
        // An older write of the same document (a replayed batch) changes nothing; a newer one does; a delete only of what is older.
        await store.commit(at, [put('articles', 'a', 98n, { slug: 'v98' }), put('articles', 'b', 100n, { slug: 'b100' })], 100n, NOW);
        await store.commit(at, [del('articles', 'a', 99n), del('articles', 'b', 101n)], 101n, NOW);
        expect(await store.get(at, 'articles', 'a'), JSON.stringify(at)).to.deep.include({ slug: 'v99' });
        expect(await store.get(at, 'articles', 'b'), JSON.stringify(at)).to.equal(null);
      }
      const refused = await store.commit(target, [put('articles', 'c', 1n << 63n, { slug: 'far' })], 1n << 63n, NOW).then(() => null, (e: unknown) => e);
      expect(refused).to.be.instanceOf(ReadModelError);
      expect(await store.get(target, 'articles', 'c')).to.equal(null);
    } finally {
      await store.close();
    }
    const db = new Database(file, { readonly: true });
    try {
      expect(db.prepare(`SELECT typeof(pos) AS type, pos FROM "rm_test_articles__articles__g1" WHERE id = 'a'`).get()).to.deep.equal({ type: 'integer', pos: 99 });
      expect(db.prepare(`SELECT typeof(pos) AS type FROM "rm_test_articles__articles__g2" WHERE id = 'a'`).get()).to.deep.equal({ type: 'text' });
    } finally {
      db.close();
    }
  });

  it('answers equality queries through the declared expression index', async () => {
    const file = path.join(tempDir(), 'read-models.sqlite');
    const store = SqliteReadModelStore.open(file);
    await store.createGeneration(articlesSchema, 1, 1, '2026-11-22T10:00:00.000Z');
    await store.close();
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(file, { readonly: true });
    const plan = db
      .prepare(`EXPLAIN QUERY PLAN SELECT doc FROM rm_test_articles__articles__g1 WHERE json_extract(doc, '$.slug') = ?`)
      .all('x') as Array<{ detail: string }>;
    db.close();
    expect(plan.map((p) => p.detail).join(' ')).to.match(/USING INDEX rm_test_articles__articles__g1__by_slug/);
  });

  it("tells of another connection's commits while watched (its own commits are its writer thread's connection's: they may be told too)", async () => {
    const file = path.join(tempDir(), 'read-models.sqlite');
    const store = SqliteReadModelStore.open(file);
    const other = SqliteReadModelStore.open(file);
    const target = { projection: 'test-articles', generation: 1 };
    const article = (n: number) => [{ collection: 'articles', id: `a${n}`, position: BigInt(n), doc: { slug: `s${n}` } }];
    // Four of its idle checks (every 25 ms) at least.
    const settle = () => new Promise((resolve) => setTimeout(resolve, 100));
    try {
      await store.createGeneration(articlesSchema, 1, 1, NOW);
      let told = 0;
      const unwatch = store.watchOtherCommits(() => told++);
      await store.commit(target, article(1), 1n, NOW);
      await settle();
      told = 0;
      await settle();
      expect(told, 'nothing committed').to.equal(0);
      await other.commit(target, article(2), 2n, NOW);
      await eventually(() => told, (n) => n > 0, 2_000, "the other connection's commit told", 5);
      expect(told, "the other connection's commit").to.equal(1);
      unwatch();
      await other.commit(target, article(3), 3n, NOW);
      await settle();
      expect(told, 'after the watch ended').to.equal(1);
    } finally {
      await store.close();
      await other.close();
    }
  });

  it("reads of one turn of the event loop share a read transaction: the store's own writes are seen once committed, another connection's from the next turn", async () => {
    const file = path.join(tempDir(), 'read-models.sqlite');
    const store = SqliteReadModelStore.open(file);
    const other = SqliteReadModelStore.open(file);
    // Another connection that writes without giving up the turn (the store's commits take turns: they run on its writer thread).
    const raw = new Database(file, { timeout: 5_000 });
    const otherWrites = (n: number) =>
      raw.prepare('INSERT INTO rm_test_articles__articles__g1 (id, pos, doc) VALUES (?, ?, jsonb(?))').run(`a${n}`, encodePosition(BigInt(n)), JSON.stringify({ slug: `s${n}` }));
    const target = { projection: 'test-articles', generation: 1 };
    const slugs = async (of: SqliteReadModelStore) => (await of.find(target, 'articles', { sort: [['slug', 'asc']] })).map((doc) => doc['slug']);
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    try {
      await store.createGeneration(articlesSchema, 1, 1, NOW);
      await store.commit(target, [{ collection: 'articles', id: 'a1', position: 1n, doc: { slug: 's1' } }], 1n, NOW);
      await nextTurn();
      // A read opens this turn's read transaction; a commit in the same turn ends it first, so the commit is
      // the file's at once (another connection sees it) and the next read sees it too.
      expect(await slugs(store)).to.deep.equal(['s1']);
      await store.commit(target, [{ collection: 'articles', id: 'a2', position: 2n, doc: { slug: 's2' } }], 2n, NOW);
      expect(await slugs(other)).to.deep.equal(['s1', 's2']);
      expect(await slugs(store)).to.deep.equal(['s1', 's2']);
      // Another connection's commit: this turn's reads keep the state they began with; the next turn's see it.
      await nextTurn();
      expect(await slugs(store)).to.deep.equal(['s1', 's2']);
      otherWrites(3);
      expect(await slugs(store)).to.deep.equal(['s1', 's2']);
      await nextTurn();
      expect(await slugs(store)).to.deep.equal(['s1', 's2', 's3']);
      // Anything else the store runs (here a generation's record) ends the turn's read transaction as well.
      otherWrites(4);
      raw.prepare("UPDATE projection_generations SET checkpoint = ? WHERE projection = 'test-articles'").run(encodePosition(4n));
      expect(await slugs(store)).to.deep.equal(['s1', 's2', 's3']);
      expect((await store.getGeneration('test-articles', 1))!.checkpoint).to.equal(4n);
      expect(await slugs(store)).to.deep.equal(['s1', 's2', 's3', 's4']);
      // Closing in the middle of a turn's reads ends them; the other connection can still write.
      await store.close();
      await other.commit(target, [{ collection: 'articles', id: 'a5', position: 5n, doc: { slug: 's5' } }], 5n, NOW);
      await nextTurn();
    } finally {
      raw.close();
      await store.close();
      await other.close();
    }
  });

  it('a sparse index is a partial index: it holds only the documents with a value, and lookups by a value use it', async () => {
    const file = path.join(tempDir(), 'read-models.sqlite');
    const store = SqliteReadModelStore.open(file);
    try {
      await store.createGeneration(sparseSchema, 1, 1, '2026-11-22T10:00:00.000Z');
      const target = { projection: 'test-sparse', generation: 1 };
      const writes = Array.from({ length: 500 }, (_, i) => ({ collection: 'items', id: `i${i}`, position: BigInt(i + 1), doc: { site: 'a', path: i < 3 ? `/p${i}` : null } }));
      await store.commit(target, writes, 500n, '2026-11-22T10:00:00.000Z');
      expect(store.queryPlan(target, 'items', { filter: { site: 'a', path: '/p1' } }).join(' ')).to.match(/USING (COVERING )?INDEX rm_test_sparse__items__g1__by_path/);
      const db = new Database(file, { readonly: true });
      try {
        const held = db.prepare(`SELECT count(*) AS n FROM "rm_test_sparse__items__g1" INDEXED BY "rm_test_sparse__items__g1__by_path" WHERE json_extract(doc, '$.path') IS NOT NULL`).get() as { n: number };
        expect(held.n).to.equal(3);
        expect((db.prepare(`PRAGMA index_list("rm_test_sparse__items__g1")`).all() as Array<{ name: string; partial: number }>).find((i) => i.name.endsWith('by_path'))?.partial).to.equal(1);
      } finally {
        db.close();
      }
    } finally {
      await store.close();
    }
  });

  it('reads the strings of an included field from the index alone (a covering index), and other fields from the documents', async () => {
    const store = SqliteReadModelStore.open(path.join(tempDir(), 'read-models.sqlite'));
    try {
      await store.createGeneration(coveredSchema, 1, 1, '2026-11-22T10:00:00.000Z');
      const target = { projection: 'test-covered', generation: 1 };
      const list = { filter: { list: 'a' }, sort: [['rank', 'desc']] as Array<[string, 'desc']>, limit: 20 };
      expect(store.queryPlan(target, 'items', list, 'item').join(' ')).to.match(/USING COVERING INDEX rm_test_covered__items__g1__by_list/);
      expect(store.queryPlan(target, 'items', { ...list, offset: 40 }, 'n').join(' ')).to.match(/USING COVERING INDEX rm_test_covered__items__g1__by_list/);
      for (const uncovered of [store.queryPlan(target, 'items', list, 'body'), store.queryPlan(target, 'items', { ...list, fields: ['item'] })]) {
        expect(uncovered.join(' ')).to.match(/USING INDEX rm_test_covered__items__g1__by_list/);
        expect(uncovered.join(' ')).not.to.match(/COVERING/);
      }
    } finally {
      await store.close();
    }
  });

  it('a generation with deferred indexes starts without the whileFolding indexes of content and public-content (none is unique); each collection gets its own when they are built for it', async () => {
    const { content } = await import('../../projections/content.ts');
    const { publicContent } = await import('../../projections/public-content.ts');
    const { schemaOf } = await import('../../src/projection-engine/projection.ts');
    const file = path.join(tempDir(), 'read-models.sqlite');
    const store = SqliteReadModelStore.open(file);
    const Database = (await import('better-sqlite3')).default;
    const indexes = () => {
      const db = new Database(file, { readonly: true });
      const names = (db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'index' AND name LIKE 'rm_%' ORDER BY name`).all() as Array<{ name: string }>).map((i) => i.name);
      db.close();
      return names;
    };
    await store.createGeneration(schemaOf(content), 1, 1, NOW, { deferIndexes: true });
    await store.createGeneration(schemaOf(publicContent), 1, 1, NOW, { deferIndexes: true });
    expect(indexes()).to.deep.equal([]);
    // What a projector builds before its first find in each collection (entry.deleted finds every revision of
    // the entry; a change of the project's locales finds its entries and masters, a form set change its entries).
    await store.createIndexes(foldingIndexesOf(schemaOf(content), { collection: 'revisions' }), 1);
    await store.createIndexes(foldingIndexesOf(schemaOf(publicContent), { collection: 'entries' }), 1);
    expect(indexes()).to.deep.equal(['rm_content__revisions__g1__by_entry_revision', 'rm_public_content__entries__g1__by_form_set', 'rm_public_content__entries__g1__by_project']);
    await store.createIndexes(foldingIndexesOf(schemaOf(publicContent), { collection: 'masters' }), 1);
    await store.close();
    const db = new Database(file, { readonly: true });
    const plan = db
      .prepare(`EXPLAIN QUERY PLAN SELECT d.id AS id, json(d.doc) AS doc FROM "rm_public_content__masters__g1" d WHERE json_extract(doc, '$.projectId') = ? ORDER BY d.id ASC`)
      .all('p') as Array<{ detail: string }>;
    db.close();
    expect(plan.map((p) => p.detail).join(' ')).to.match(/USING INDEX rm_public_content__masters__g1__by_project/);
  });

  it('keeps the search index in an FTS5 table whose terms are the tokens as written, dropped with the generation', async () => {
    const file = path.join(tempDir(), 'read-models.sqlite');
    const store = SqliteReadModelStore.open(file);
    const target = { projection: 'test-search', generation: 1 };
    await store.createGeneration(searchSchema, 1, 1, NOW);
    await store.createGeneration(searchSchema, 2, 1, NOW);
    await store.commit(target, [{ collection: 'pages', id: 'p1', position: 1n, doc: { site: 'a', search: indexText('Node.js と C++ foo_bar a1b2 हिन्दी 東京') } }], 1n, NOW);
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(file);
    db.exec(`CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, 'fts_test_search__pages__g1', 'row')`);
    const terms = (db.prepare('SELECT term FROM temp.vocab ORDER BY term').all() as Array<{ term: string }>).map((r) => r.term);
    expect(terms).to.have.members(['node.js', 'と', 'c', 'foo_bar', 'a1b2', 'हिन्दी', '東', '東京', '京']);
    const plan = (db
      .prepare(`EXPLAIN QUERY PLAN SELECT d.id FROM "fts_test_search__pages__g1" JOIN "rm_test_search__pages__g1" d ON d.rowid = "fts_test_search__pages__g1".rowid WHERE "fts_test_search__pages__g1" MATCH ?`)
      .all('"x"') as Array<{ detail: string }>).map((p) => p.detail).join(' | ');
    expect(plan).to.match(/VIRTUAL TABLE INDEX/).and.to.match(/SEARCH d USING INTEGER PRIMARY KEY \(rowid=\?\)/);
    db.close();
    await store.dropGeneration(searchSchema, 1);
    await store.close();
    const after = new Database(file, { readonly: true });
    const names = (after.prepare(`SELECT name FROM sqlite_schema WHERE name LIKE '%test_search%' ORDER BY name`).all() as Array<{ name: string }>).map((r) => r.name);
    after.close();
    expect(names.filter((n) => n.includes('__g1'))).to.deep.equal([]);
    expect(names).to.include.members(['rm_test_search__pages__g2', 'fts_test_search__pages__g2', 'fts_test_search__pages__g2__insert']);
  });

  it('rolls the search index back with a commit that fails', async () => {
    const store = SqliteReadModelStore.open(path.join(tempDir(), 'read-models.sqlite'));
    const target = { projection: 'test-search', generation: 1 };
    const schema = { ...searchSchema, collections: { pages: { ...searchSchema.collections['pages']!, indexes: [{ name: 'by_site', fields: [['site', 1]] as Array<[string, 1]>, unique: true }] } } };
    await store.createGeneration(schema, 1, 1, NOW);
    await store.commit(target, [{ collection: 'pages', id: 'p1', position: 1n, doc: { site: 'a', search: 'kept' } }], 1n, NOW);
    const failed = await store
      .commit(target, [
        { collection: 'pages', id: 'p1', position: 2n, doc: { site: 'a', search: 'replaced' } },
        { collection: 'pages', id: 'p2', position: 2n, doc: { site: 'a', search: 'replaced' } },
      ], 2n, NOW)
      .then(() => null, (e: unknown) => e);
    expect(failed).to.be.instanceOf(Error);
    expect(await store.count(target, 'pages', undefined, ['replaced'])).to.equal(0);
    expect(await store.count(target, 'pages', undefined, ['kept'])).to.equal(1);
    await store.close();
  });

  it('gives the pages of a dropped generation back: the file does not keep growing across rebuilds', async () => {
    const file = path.join(tempDir(), 'read-models.sqlite');
    const store = SqliteReadModelStore.open(file);
    const Database = (await import('better-sqlite3')).default;
    const pages = () => {
      const db = new Database(file);
      db.pragma('wal_checkpoint(TRUNCATE)');
      const count = db.pragma('page_count', { simple: true }) as number;
      db.close();
      return count;
    };
    const fill = async (generation: number) => {
      await store.createGeneration(articlesSchema, generation, 1, NOW);
      const body = 'x'.repeat(2000);
      await store.commit({ projection: 'test-articles', generation }, Array.from({ length: 500 }, (_, i) => ({ collection: 'articles', id: `a${i}`, position: BigInt(i + 1), doc: { slug: `s${i}`, body } })), 500n, NOW);
    };
    await fill(1);
    const one = pages();
    for (const generation of [2, 3, 4]) {
      await fill(generation);
      await store.dropGeneration(articlesSchema, generation - 1);
    }
    const after = pages();
    await store.close();
    expect(one).to.be.greaterThan(100);
    expect(after, `${after} pages after three rebuilds, ${one} with one generation`).to.be.at.most(Math.ceil(one * 1.1));
  });

  describe('deep pages', () => {
    const target = { projection: 'test-articles', generation: 1 };
    const query = (offset: number) => ({ filter: { status: 'published' }, sort: [['meta.publishedAt', 'desc']] as Array<[string, 'asc' | 'desc']>, limit: 20, offset, fields: ['slug'] });
    const article = (i: number, at = `2026-01-01T00:00:${String(i).padStart(6, '0')}`) => ({ collection: 'articles', id: `a${String(i).padStart(6, '0')}`, position: BigInt(i + 1), doc: { slug: `s${i}`, status: 'published', meta: { publishedAt: at } } });
    const load = async (store: SqliteReadModelStore, count: number) => {
      await store.createGeneration(articlesSchema, 1, 1, NOW);
      for (let i = 0; i < count; i += 5_000) await store.commit(target, Array.from({ length: Math.min(5_000, count - i) }, (_, k) => article(i + k)), BigInt(i + 5_000), NOW);
    };
    /**
     * Reads `offset` deep so that the list is counted: the first deep read of a list asks the file to record its
     * table's changes (and is answered with OFFSET), the next one counts it.
     */
    const countDeep = async (store: SqliteReadModelStore, offset: number) => {
      await store.find(target, 'articles', query(offset));
      await store.deepPagesSettled();
      await new Promise((resolve) => setImmediate(resolve));
      await store.find(target, 'articles', query(offset));
    };
    /** A store on `file` with `count` articles (30,000 unless told) whose list by publishedAt is counted. */
    const countedStore = async ({ count = 30_000, file = path.join(tempDir(), 'read-models.sqlite') } = {}) => {
      const store = SqliteReadModelStore.open(file);
      await load(store, count);
      await countDeep(store, count - 100);
      return store;
    };
    const medianMicros = async (read: () => Promise<unknown>) => {
      const times: number[] = [];
      for (let i = 0; i < 41; i++) {
        const started = process.hrtime.bigint();
        await read();
        times.push(Number(process.hrtime.bigint() - started) / 1000);
      }
      return times.sort((a, b) => a - b)[20]!;
    };
    /** The k-th article added after the load: newer than all of them (2027), slug n{k}. */
    const added = (k: number) => ({ collection: 'articles', id: `b${String(k).padStart(6, '0')}`, position: BigInt(200_000 + k), doc: { slug: `n${k}`, status: 'published', meta: { publishedAt: `2027-01-01T00:00:${String(k).padStart(6, '0')}` } } });
    /** The page at `offset`, newest first: the `newest` articles added, then s{count-1} down to s0. */
    const expectedPage = (offset: number, count: number, newest: number) =>
      Array.from({ length: 20 }, (_, j) => offset + j).filter((at) => at < count + newest).map((at) => (at < newest ? `n${newest - 1 - at}` : `s${count - 1 - (at - newest)}`));

    it('a page 30,000 entries into a list costs about what a page near its start does (OFFSET alone walks every entry before it)', async function () {
      this.timeout(60_000);
      const store = await countedStore();
      const last = await store.findWithIds(target, 'articles', query(29_980));
      expect(last.map((e) => e.doc.slug)).to.deep.equal(Array.from({ length: 20 }, (_, k) => `s${19 - k}`));
      const near = await medianMicros(() => store.find(target, 'articles', query(300)));
      const deep = await medianMicros(() => store.find(target, 'articles', query(29_900)));
      await store.close();
      // OFFSET 29,900 steps over ~100 times the entries of OFFSET 300 (~25x the time measured before the counts).
      expect(deep, `median ${deep.toFixed(0)} µs at offset 29,900, ${near.toFixed(0)} µs at offset 300`).to.be.below(near * 4);
    });

    it('records the counted fields of the written documents of counted tables only, in the commit that writes them; a dropped generation takes its record with it', async function () {
      this.timeout(60_000);
      const file = path.join(tempDir(), 'read-models.sqlite');
      const store = await countedStore({ count: 200, file });
      await store.commit(target, [added(0), { collection: 'tags', id: 't1', position: 20_001n, doc: { name: 'tag' } }, { collection: 'articles', id: 'a000005', position: 20_002n, doc: null }], 20_002n, NOW);
      // An older position changes nothing, and records nothing.
      await store.commit(target, [{ ...article(7), position: 1n }], 20_003n, NOW);
      const raw = new Database(file, { readonly: true });
      const n = Number(raw.prepare('SELECT n FROM document_commits').pluck().get());
      expect(JSON.parse(raw.prepare('SELECT fields FROM counted_fields').pluck().get() as string)).to.have.members(['status', 'meta.publishedAt']);
      expect(raw.prepare('SELECT n, name, id, before, after FROM counted_changes ORDER BY rowid').raw().all()).to.deep.equal([
        // Deletes first (see commit).
        [n - 1, 'rm_test_articles__articles__g1', 'a000005', '{"status":"published","meta.publishedAt":"2026-01-01T00:00:000005"}', null],
        [n - 1, 'rm_test_articles__articles__g1', 'b000000', null, '{"status":"published","meta.publishedAt":"2027-01-01T00:00:000000"}'],
      ]);
      raw.close();
      await store.dropGeneration(articlesSchema, 1);
      const after = new Database(file, { readonly: true });
      expect(after.prepare('SELECT count(*) FROM counted_fields').pluck().get()).to.equal(0);
      expect(after.prepare(`SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND name LIKE '%counted%'`).pluck().get()).to.equal(0);
      after.close();
      await store.close();
    });

    it('keeps a list counted right when another list of its table is dropped in the middle of a commit', async function () {
      this.timeout(60_000);
      const file = path.join(tempDir(), 'read-models.sqlite');
      const store = SqliteReadModelStore.open(file);
      await store.createGeneration(articlesSchema, 1, 1, NOW);
      const ranked = (i: number, publishedAt: string | null, position = BigInt(i + 1)) => ({ collection: 'articles', id: `a${String(i).padStart(6, '0')}`, position, doc: { slug: `s${i}`, status: 'published', meta: { rank: i % 7, publishedAt } } });
      await store.commit(target, Array.from({ length: 1_000 }, (_, i) => ranked(i, `2026-01-01T00:00:${String(i).padStart(6, '0')}`)), 1_000n, NOW);
      const byRank = (offset: number) => ({ ...query(offset), sort: [['meta.rank', 'asc'], ['meta.publishedAt', 'desc']] as Array<[string, 'asc' | 'desc']> });
      // Both lists read deep: both counted, by the fields status, meta.rank and meta.publishedAt.
      for (let round = 0; round < 2; round++) {
        await store.find(target, 'articles', byRank(500));
        await store.find(target, 'articles', query(500));
        await store.deepPagesSettled();
        await new Promise((resolve) => setImmediate(resolve));
      }
      // One commit: a document without publishedAt (a NULL in byRank's second key: that list is dropped), then
      // the newest document moved to the end.
      await store.commit(target, [ranked(1_000, null, 1_001n), ranked(999, '2025-01-01T00:00:00', 1_002n)], 1_002n, NOW);
      const offsets = [256, 300, 500, 700, 980];
      const pages = async (s: SqliteReadModelStore) => Promise.all(offsets.map(async (offset) => (await s.find(target, 'articles', query(offset))).map((d) => d['slug'])));
      const counted = await pages(store);
      // A store opened now counts nothing yet (its deep reads walk the index): what the first one's counts must agree with.
      const fresh = SqliteReadModelStore.open(file);
      expect(counted).to.deep.equal(await pages(fresh));
      expect(counted[0]![0]).to.equal('s742');
      await fresh.close();
      await store.close();
    });

    /**
     * Median times of reads at offset 300 and at 29,900 (alternately) each right after a commit by `commit(k)`:
     * both read the pages the commit changed from the WAL (a commit by another connection, the store's writer
     * thread included, empties this connection's page cache), and the deep one also reads the commit's changes.
     */
    const afterCommits = async (store: SqliteReadModelStore, commit: (k: number) => Promise<unknown>, rounds: number, check: (k: number, page: unknown[]) => void) => {
      const near: number[] = [];
      const deep: number[] = [];
      for (let k = 0; k < rounds; k++) {
        await commit(k);
        // Seen from the next turn of the event loop (this turn's reads share one read transaction).
        await new Promise((resolve) => setImmediate(resolve));
        const offset = k % 2 === 0 ? 300 : 29_900;
        const started = process.hrtime.bigint();
        const page = (await store.find(target, 'articles', query(offset))).map((d) => d['slug']);
        (offset === 300 ? near : deep).push(Number(process.hrtime.bigint() - started) / 1000);
        if (offset !== 300) check(k, page);
      }
      const median = (times: number[]) => times.sort((a, b) => a - b)[times.length >> 1]!;
      return { near: median(near), deep: median(deep) };
    };

    it("keeps the counts across the store's own commits, which run on its writer thread", async function () {
      this.timeout(60_000);
      const store = await countedStore();
      const { near, deep } = await afterCommits(store, (k) => store.commit(target, [added(k)], BigInt(40_000 + k), NOW), 82, (k, page) => {
        expect(page, `after ${k + 1} commits`).to.deep.equal(expectedPage(29_900, 30_000, k + 1));
      });
      await store.close();
      // Left to OFFSET, the deep read would cost ~30 times the near one.
      expect(deep, `median ${deep.toFixed(0)} µs at offset 29,900 after a commit, ${near.toFixed(0)} µs at offset 300`).to.be.below(near * 4);
    });

    it('answers a deep read that sees a commit before its reply has come back from the writer thread right, from the counts', async function () {
      this.timeout(60_000);
      const store = await countedStore();
      const slugs = async (offset: number) => (await store.find(target, 'articles', query(offset))).map((d) => d['slug']);
      let newest = 0;
      for (let k = 0; k < 4; k++) {
        // A turn of the event loop of its own, whose reads begin after the commit has landed.
        await new Promise((resolve) => setImmediate(resolve));
        // Ten new entries at the start of the list (every page after it moves by ten), or on odd rounds one of
        // another collection of the generation (another table).
        const own = k % 2 === 0;
        const writes = own ? Array.from({ length: 10 }, (_, j) => added(newest + j)) : [{ collection: 'tags', id: `t${k}`, position: BigInt(40_000 + k), doc: { name: `tag ${k}` } }];
        const committing = store.commit(target, writes, BigInt(40_000 + k), NOW);
        if (own) newest += 10;
        // This thread waits without giving up its turn: the writer thread commits meanwhile, the reply waits.
        const until = Date.now() + 150;
        while (Date.now() < until);
        // This turn's reads see the commit; its reply has not been handled.
        // Timed one read after another (medianMicros): they await settled promises only, so the event loop does
        // not turn between them and the commit's reply stays unhandled.
        const near = await medianMicros(() => slugs(300));
        const deep = await medianMicros(() => slugs(29_900));
        expect(await slugs(29_900), `round ${k}`).to.deep.equal(expectedPage(29_900, 30_000, newest));
        expect(await slugs(1_000), `round ${k}`).to.deep.equal(expectedPage(1_000, 30_000, newest));
        expect(deep, `round ${k}, from the counts: median ${deep.toFixed(0)} µs at offset 29,900, ${near.toFixed(0)} µs at offset 300`).to.be.below(near * 4);
        await committing;
      }
      await store.close();
    });

    it('keeps counting right through commits that land together: blocks grown past twice their size by them are cut by the next deep read', async function () {
      this.timeout(60_000);
      const store = await countedStore({ count: 2_000 });
      const expectPages = async (label: string, newest: number) => {
        for (const offset of [64, 100, 500, 1_000, 1_980 + newest]) {
          expect((await store.find(target, 'articles', query(offset))).map((d) => d['slug']), `${label} at ${offset}`).to.deep.equal(expectedPage(offset, 2_000, newest));
        }
      };
      // 120 new articles at the start of the list in 12 commits asked for at once, and one of another table after them.
      await Promise.all([
        ...Array.from({ length: 12 }, (_, c) => store.commit(target, Array.from({ length: 10 }, (_, j) => added(c * 10 + j)), BigInt(20_000 + c), NOW)),
        store.commit(target, [{ collection: 'tags', id: 't1', position: 20_100n, doc: { name: 'tag' } }], 20_100n, NOW),
      ]);
      await new Promise((resolve) => setImmediate(resolve));
      await expectPages('after the commits', 120);
      await expectPages('read again', 120);
      await store.close();
    });

    it("follows another connection's commits (a projector in another process) from the changes the file records: right, and from the counts", async function () {
      this.timeout(60_000);
      const file = path.join(tempDir(), 'read-models.sqlite');
      const store = await countedStore({ file });
      const other = SqliteReadModelStore.open(file);
      // Another process adds an entry at the start of the list (the newest) and removes the oldest one left.
      const commit = (k: number) => other.commit(target, [added(k), { collection: 'articles', id: `a${String(k).padStart(6, '0')}`, position: BigInt(99_000 + k), doc: null }], BigInt(99_000 + k), NOW);
      const { near, deep } = await afterCommits(store, commit, 82, (k, page) => {
        // 30,000 entries still: k + 1 new ones first, then s29999 down to s{k + 1}.
        expect(page, `after ${k + 1} commits`).to.deep.equal(expectedPage(29_900, 30_000, k + 1));
      });
      await other.close();
      await store.close();
      expect(deep, `median ${deep.toFixed(0)} µs at offset 29,900 after a commit of another connection, ${near.toFixed(0)} µs at offset 300`).to.be.below(near * 4);
    });

    it("follows another connection's commits on a list filtered by a boolean and sorted by numbers (JSON true and numbers as the file records them)", async function () {
      this.timeout(60_000);
      const file = path.join(tempDir(), 'read-models.sqlite');
      const store = SqliteReadModelStore.open(file);
      await store.createGeneration(articlesSchema, 1, 1, NOW);
      const doc = (i: number, round: number) => ({ slug: `s${i}`, featured: (i + round) % 3 !== 0, meta: { score: ((i * 7919 + round * 104_729) % 1_000) / 4 - 100 } });
      await store.commit(target, Array.from({ length: 3_000 }, (_, i) => ({ collection: 'articles', id: `a${String(i).padStart(6, '0')}`, position: BigInt(i + 1), doc: doc(i, 0) })), 3_000n, NOW);
      const byScore = (offset: number) => ({ filter: { featured: true }, sort: [['meta.score', 'asc']] as Array<[string, 'asc' | 'desc']>, limit: 20, offset, fields: ['slug'] });
      const pages = async (s: SqliteReadModelStore) => Promise.all([64, 500, 1_000, 1_950].map(async (offset) => (await s.find(target, 'articles', byScore(offset))).map((d) => d['slug'])));
      await store.find(target, 'articles', byScore(500));
      await store.deepPagesSettled();
      await new Promise((resolve) => setImmediate(resolve));
      const other = SqliteReadModelStore.open(file);
      for (let round = 1; round <= 3; round++) {
        // A third of the documents change: some leave the list (featured false), some join it, all move.
        await other.commit(target, Array.from({ length: 1_000 }, (_, k) => k * 3 + round - 1).map((i) => ({ collection: 'articles', id: `a${String(i).padStart(6, '0')}`, position: BigInt(round * 10_000 + i), doc: doc(i, round) })), BigInt(round * 10_000 + 3_000), NOW);
        await new Promise((resolve) => setImmediate(resolve));
        // A store opened now walks the index (it counts nothing yet): what the counts must agree with.
        const fresh = SqliteReadModelStore.open(file);
        expect(await pages(store), `round ${round}`).to.deep.equal(await pages(fresh));
        await fresh.close();
      }
      await other.close();
      await store.close();
    });

    it('keeps pages right where many entries share a sort value: adds, removes and moves within ties, by its own and by another connection\'s commits', async function () {
      this.timeout(60_000);
      const file = path.join(tempDir(), 'read-models.sqlite');
      const store = SqliteReadModelStore.open(file);
      await store.createGeneration(articlesSchema, 1, 1, NOW);
      let seed = 5;
      const random = (n: number) => (seed = (seed * 48271) % 2147483647) % n;
      /** Entries by id: the day each was published on (40 days: ~50 entries a day, a few days many more). */
      const days = new Map<string, string>();
      const day = () => `2026-02-${String(1 + Math.min(random(48), 39)).padStart(2, '0')}`;
      let position = 0n;
      const write = (id: string, publishedAt: string | null) => {
        if (publishedAt === null) days.delete(id);
        else days.set(id, publishedAt);
        return { collection: 'articles', id, position: ++position, doc: publishedAt === null ? null : { slug: id, status: 'published', meta: { publishedAt } } };
      };
      await store.commit(target, Array.from({ length: 2_000 }, (_, i) => write(`a${String(i).padStart(6, '0')}`, day())), position, NOW);
      await countDeep(store, 1_000);
      const other = SqliteReadModelStore.open(file);
      /** Newest day first, then the greater id (the store's order for a descending sort). */
      const expected = (offset: number) =>
        [...days]
          .sort(([a, dayA], [b, dayB]) => (dayA !== dayB ? (dayA < dayB ? 1 : -1) : a < b ? 1 : -1))
          .slice(offset, offset + 20)
          .map(([id]) => id);
      let added = 0;
      for (let round = 0; round < 40; round++) {
        const ids = [...days.keys()];
        const writes = Array.from({ length: 12 }, (_, j) => {
          const change = (round + j) % 3;
          // Half the new entries on one day: its blocks grow past twice their size in keys of that day, and are cut inside its ties.
          if (change === 0) return write(`b${String(added++).padStart(6, '0')}`, random(2) === 0 ? '2026-02-20' : day());
          const id = ids[random(ids.length)]!;
          return write(id, change === 1 ? null : day());
        });
        // Each id once per commit (the last write of an id is what a commit keeps).
        const once = [...new Map(writes.map((w) => [w.id, w])).values()];
        await (round % 2 === 0 ? store : other).commit(target, once, position, NOW);
        await new Promise((resolve) => setImmediate(resolve));
        for (const offset of [64, 200, 777, 1_500, days.size - 20]) {
          expect((await store.find(target, 'articles', query(offset))).map((d) => d['slug']), `round ${round} at ${offset}`).to.deep.equal(expected(offset));
        }
      }
      await other.close();
      await store.close();
    });

    it('counts again, right, when it falls further behind than the changes the file keeps', async function () {
      this.timeout(60_000);
      const file = path.join(tempDir(), 'read-models.sqlite');
      const store = await countedStore({ count: 2_000, file });
      // Another connection moves the newest entry to the end of the list, then commits KEPT_COMMITS times more
      // (here: counts them) and drops the changes recorded before, as the commits would.
      const other = new Database(file);
      other.transaction(() => {
        other.prepare(`UPDATE rm_test_articles__articles__g1 SET doc = jsonb(?) WHERE id = 'a001999'`).run(JSON.stringify({ slug: 's1999', status: 'published', meta: { publishedAt: '2025-01-01T00:00:00' } }));
        other.prepare('UPDATE document_commits SET n = n + 1').run();
      })();
      other.prepare(`UPDATE document_commits SET n = n + ${KEPT_COMMITS}`).run();
      other.prepare(`DELETE FROM counted_changes WHERE n <= (SELECT n FROM document_commits) - ${KEPT_COMMITS}`).run();
      other.close();
      await new Promise((resolve) => setImmediate(resolve));
      // Newest first: s1998 down to s0, then s1999.
      for (const offset of [64, 1_000, 1_980]) {
        const expected = Array.from({ length: 20 }, (_, j) => offset + j).map((at) => (at < 1_999 ? `s${1_998 - at}` : 's1999'));
        expect((await store.find(target, 'articles', query(offset))).map((d) => d['slug']), `at ${offset}`).to.deep.equal(expected);
      }
      await store.close();
    });
  });

  it('refuses a corrupt file with a clear message', () => {
    const file = path.join(tempDir(), 'read-models.sqlite');
    fs.writeFileSync(file, Buffer.alloc(8192, 7));
    expect(() => SqliteReadModelStore.open(file)).to.throw(SqliteOpenError, /read models file .* not a SQLite database/);
  });
});

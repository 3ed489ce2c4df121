import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { defineProjection, type Projection } from '../../src/projection-engine/projection.ts';
import { Projector } from '../../src/projection-engine/projector.ts';
import { ProjectionSupervisor } from '../../src/projection-engine/projection-supervisor.ts';
import { startRebuild, RebuildPausedError } from '../../src/projection-engine/rebuild.ts';
import { readProjectionStatus } from '../../src/projection-engine/projection-status.ts';
import { ReadModelReader } from '../../src/read-models/read-model-reader.ts';
import { ReadModelVersions } from '../../src/projection-engine/read-model-versions.ts';
import { engineFixture, eventually, silentLogger } from '../support/engine-fixture.ts';

/** Sums `by` per stream; refuses events flagged poison. `factor` lets a test change the code (version). */
function totals(version = 1, factor = 1): Projection {
  return defineProjection({
    name: 'test-totals',
    version,
    description: 'sum per stream',
    collections: { totals: {} },
    filter: { eventTypes: ['test.counted'] },
    async apply(event, view) {
      const data = event.data as { by: number; poison?: boolean };
      if (data.poison) throw new Error(`cannot fold poison in ${event.streamId}`);
      const previous = await view.get<{ total: number; events: number }>('totals', event.streamId);
      view.put('totals', event.streamId, { total: (previous?.total ?? 0) + data.by * factor, events: (previous?.events ?? 0) + 1 });
    },
  });
}

const countsAll: Projection = defineProjection({
  name: 'test-counts',
  version: 1,
  description: 'events per stream',
  collections: { counts: {} },
  async apply(event, view) {
    const previous = await view.get<{ n: number }>('counts', event.streamId);
    view.put('counts', event.streamId, { n: (previous?.n ?? 0) + 1 });
  },
});

describe('projection engine', () => {
  let f: ReturnType<typeof engineFixture>;
  let supervisor: ProjectionSupervisor | undefined;
  beforeEach(() => {
    f = engineFixture();
  });
  afterEach(async () => {
    await supervisor?.stop();
    supervisor = undefined;
    await f.close();
  });

  const start = async (projections: Projection[]) => {
    supervisor = new ProjectionSupervisor({
      projections, log: f.log, store: f.store, clock: f.clock, logger: silentLogger,
      watchIntervalMs: 50, projector: { pausePollMs: 20, flushIntervalMs: 5, batchSize: 7 },
    });
    await supervisor.start();
    return supervisor;
  };
  /** Reads the read-model file as SQLite sees it, apart from the store. */
  const inFile = <T>(read: (db: Database.Database) => T): T => {
    const db = new Database(path.join(f.dir, 'read-models.sqlite'), { readonly: true });
    try {
      return read(db);
    } finally {
      db.close();
    }
  };
  const doc = async (projection: string, collection: string, id: string) => {
    const generation = await f.store.activeGeneration(projection);
    return generation === null ? null : f.store.get({ projection, generation }, collection, id);
  };

  it('folds history, then live events, into the active generation, storing the checkpoint with the writes', async () => {
    for (let i = 1; i <= 20; i++) await f.count(`c-${i % 3}`, i);
    const s = await start([totals()]);
    const last = await f.count('c-0', 100);
    expect(await s.waitFor(last.position, 5000)).to.equal(true);
    expect(await doc('test-totals', 'totals', 'c-0')).to.deep.equal({ total: 3 + 6 + 9 + 12 + 15 + 18 + 100, events: 7 });
    expect(await doc('test-totals', 'totals', 'c-1')).to.deep.equal({ total: 1 + 4 + 7 + 10 + 13 + 16 + 19, events: 7 });
    const record = await f.store.getGeneration('test-totals', 1);
    expect(record?.checkpoint).to.equal(last.position);
    expect(record?.state).to.equal('active');
    expect(s.readiness().ready).to.equal(true);
  });

  it('a process whose projector stands by (another holds the lease) hears of the holder\'s commits, so its caches move on', async () => {
    const holder = await start([totals()]);
    const standby = new ProjectionSupervisor({
      projections: [totals()], log: f.log, store: f.store, clock: f.clock, logger: silentLogger,
      watchIntervalMs: 50, projector: { pausePollMs: 20, flushIntervalMs: 5 },
    });
    const versions = new ReadModelVersions(f.store, [totals()], { supervisor: standby });
    try {
      await standby.start();
      await versions.start();
      const heard: Array<ReadonlySet<string> | undefined> = [];
      versions.onChange(({ scopes }) => heard.push(scopes));
      const before = versions.of('test-totals');
      const { position } = await f.count('c-1', 5);
      expect(await holder.waitFor(position, 5000)).to.equal(true);
      expect(await standby.waitFor(position, 5000)).to.equal(true);
      // The holder's commit changed the read model: the standby's version of it moved, and what changed is unknown.
      await eventually(async () => versions.of('test-totals'), (version) => version !== before);
      expect(heard.at(-1)).to.equal(undefined);
      // Only the holder's versions are exact (told before a read can see the commit): what caches may rely on.
      expect([holder.foldsLive('test-totals'), standby.foldsLive('test-totals')]).to.deep.equal([true, false]);
    } finally {
      versions.stop();
      await standby.stop();
    }
  });

  it('is not ready while it folds what the log held at start, however recently that was appended; ready once it has', async () => {
    for (let i = 1; i <= 20; i++) await f.count(`g-${i % 3}`, i);
    // Folding waits at the tenth event until the test lets it go on.
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let seen = 0;
    const gated = defineProjection({
      name: 'test-gated',
      version: 1,
      description: 'waits at its tenth event',
      collections: { seen: {} },
      async apply(event, view) {
        if (++seen === 10) await gate;
        view.put('seen', event.id, { at: String(event.position) });
      },
    });
    const s = await start([gated]);
    try {
      // The events are milliseconds old, well within the lag allowed: still not ready, since this process found them unfolded.
      await eventually(async () => seen, (n) => n >= 10);
      const waiting = s.readiness();
      expect(waiting.ready).to.equal(false);
      expect(waiting.checks['projection:test-gated']?.detail).to.match(/^folding the log this process found at start: at position \d+ of 20$/);
    } finally {
      release(); // never leave the projector waiting (stop would wait on it)
    }
    expect(await s.waitFor(20n, 5000)).to.equal(true);
    expect(s.readiness().ready).to.equal(true);
    // Later events are judged by their age, as before: one just appended does not make it unready.
    await f.count('g-late', 1);
    expect(s.readiness().ready).to.equal(true);
  });

  it('pauses on a poison event with the failure visible, without blocking other projectors; retry and skip resume it', async () => {
    await f.count('c-a', 1);
    const poison = await f.count('c-a', 2, true);
    await f.count('c-a', 4);
    const s = await start([totals(), countsAll]);
    const paused = await eventually(() => f.store.getGeneration('test-totals', 1), (g) => g?.failure !== null);
    expect(paused?.failure).to.include({ eventType: 'test.counted', streamId: 'c-a', message: 'cannot fold poison in c-a' });
    expect(paused?.failure?.position).to.equal(poison.position);
    // Events before the poison are committed; the poison's position is not.
    expect(paused?.checkpoint).to.equal(poison.position - 1n);
    expect(await doc('test-totals', 'totals', 'c-a')).to.deep.equal({ total: 1, events: 1 });
    // The other projector is not held up.
    const later = await f.count('c-b', 8);
    expect(await s.waitFor(later.position, 3000, ['test-counts'])).to.equal(true);
    expect(await doc('test-counts', 'counts', 'c-a')).to.deep.equal({ n: 3 });
    const readiness = s.readiness();
    expect(readiness.ready).to.equal(false);
    expect(readiness.checks['projection:test-totals']?.detail).to.match(/paused at event .* cannot fold poison/);
    const status = (await readProjectionStatus([totals(), countsAll], f.store, f.log)).find((p) => p.name === 'test-totals');
    expect(status?.state).to.equal('paused');
    expect(status?.active?.failure?.eventId).to.equal(paused?.failure?.eventId);

    // Retry: the event still fails, and pauses again (with a new failure time).
    f.clock.advance(60_000);
    await f.store.setFailure({ projection: 'test-totals', generation: 1 }, null, f.clock.now().toISOString());
    await eventually(() => f.store.getGeneration('test-totals', 1), (g) => !!g?.failure && g.failure.failedAt !== paused?.failure?.failedAt);
    // Skip: recorded, then the projector moves past it.
    const failure = (await f.store.getGeneration('test-totals', 1))!.failure!;
    await f.store.addSkip({ projection: 'test-totals', eventId: failure.eventId, position: failure.position, reason: 'bad import', actor: 'operator:test', skippedAt: f.clock.now().toISOString() });
    await f.store.setFailure({ projection: 'test-totals', generation: 1 }, null, f.clock.now().toISOString());
    await eventually(() => doc('test-totals', 'totals', 'c-a'), (d) => (d as { total: number } | null)?.total === 5);
    expect(await doc('test-totals', 'totals', 'c-b')).to.deep.equal({ total: 8, events: 1 });
  });

  it('rebuilds into a new generation while the old one serves, swaps it in, and the live projector follows', async () => {
    for (let i = 0; i < 50; i++) await f.count(`r-${i % 5}`, 1);
    const s = await start([totals()]);
    expect(await s.waitFor((await f.log.headPosition())!, 3000)).to.equal(true);
    let servedDuringRebuild = 0;
    const handle = startRebuild({
      projection: totals(), log: f.log, store: f.store, clock: f.clock, logger: silentLogger, dropGraceMs: 100, batchSize: 9,
      onProgress: async () => {
        // The active generation keeps answering while the new one is built.
        if ((await doc('test-totals', 'totals', 'r-0')) !== null) servedDuringRebuild++;
      },
    });
    const result = await handle.result;
    expect(result).to.include({ generation: 2, previousGeneration: 1, events: 50 });
    expect(servedDuringRebuild).to.be.greaterThan(0);
    expect(await f.store.activeGeneration('test-totals')).to.equal(2);
    // The result does not wait for the drop: the replaced generation stays readable for its grace.
    expect(await f.store.getGeneration('test-totals', 1)).to.include({ state: 'retired' });
    await handle.dropped;
    expect(await f.store.getGeneration('test-totals', 1)).to.equal(null);
    await eventually(async () => s.liveGeneration('test-totals'), (g) => g === 2);
    const live = await f.count('r-0', 10);
    expect(await s.waitFor(live.position, 3000)).to.equal(true);
    expect(await doc('test-totals', 'totals', 'r-0')).to.deep.equal({ total: 20, events: 11 });
  });

  it('a rebuild commits 10,000 documents at a time (each commit rewrites the index pages it touches)', async () => {
    // One document per event, one more than a batch holds.
    const events = 10_001;
    for (let i = 0; i < events; i += 1000) {
      const n = Math.min(1000, events - i);
      await f.log.append(`bulk-${i}`, Array.from({ length: n }, () => ({ type: 'test.counted', data: { by: 1 } })), 'any', { actor: { type: 'user', id: 'u-1' } });
    }
    const perStream = defineProjection({ ...countsAll, name: 'test-bulk', apply: (event, view) => view.put('counts', event.id, { n: 1 }) });
    const commits: number[] = [];
    const result = await startRebuild({ projection: perStream, log: f.log, store: f.store, clock: f.clock, logger: silentLogger, dropGraceMs: 0, onProgress: (p) => commits.push(p.events) }).result;
    expect(result.events).to.equal(events);
    expect(commits).to.deep.equal([10_000, events]);
    expect(await f.store.count({ projection: 'test-bulk', generation: result.generation }, 'counts')).to.equal(events);
  });

  it('reads through the supervisor agree with its read-your-writes waits while it follows a swap', async () => {
    for (let i = 0; i < 20; i++) await f.count('s-1', 1);
    // A slow watch: the swap is seen late, as with the default interval and a rebuild in another process.
    supervisor = new ProjectionSupervisor({ projections: [totals()], log: f.log, store: f.store, clock: f.clock, logger: silentLogger, watchIntervalMs: 400, projector: { flushIntervalMs: 5 } });
    const s = supervisor;
    await s.start();
    expect(await s.waitFor((await f.log.headPosition())!, 3000)).to.equal(true);
    const reader = new ReadModelReader(f.store, { generations: s, cacheMs: 0 });
    const rebuild = startRebuild({ projection: totals(), log: f.log, store: f.store, clock: f.clock, logger: silentLogger, dropGraceMs: 2500 }).result;
    // A writer that reads its own write after each wait, before, during and after the swap is followed.
    let total = 20;
    const stale: number[] = [];
    const deadline = Date.now() + 8000;
    let afterFollow = 0;
    while (afterFollow < 20 && Date.now() < deadline) {
      const { position } = await f.count('s-1', 1);
      total++;
      expect(await s.waitFor(position, 3000)).to.equal(true);
      const read = await reader.get<{ total: number }>('test-totals', 'totals', 's-1');
      if (read?.total !== total) stale.push(total);
      if (s.liveGeneration('test-totals') === 2) afterFollow++;
    }
    expect(stale, 'writes not seen by the read after their wait').to.deep.equal([]);
    expect(afterFollow).to.equal(20);
    expect((await rebuild).generation).to.equal(2);
    expect(await doc('test-totals', 'totals', 's-1')).to.deep.equal({ total, events: total });
  });

  it('after a version change the new code folds into the serving generation until the rebuild swaps in, also into a collection it adds', async () => {
    for (let i = 0; i < 5; i++) await f.count('g-old', 1);
    const first = await start([totals()]);
    expect(await first.waitFor((await f.log.headPosition())!, 3000)).to.equal(true);
    await first.stop();
    supervisor = undefined;
    // Version 2 keeps a second collection, read while folding; its rebuild is held on the old events.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const v2 = defineProjection({
      name: 'test-totals',
      version: 2,
      description: 'sum per stream, and streams seen',
      collections: { totals: {}, seen: {} },
      filter: { eventTypes: ['test.counted'] },
      async apply(event, view) {
        if (event.streamId === 'g-old') await held;
        const data = event.data as { by: number };
        const previous = await view.get<{ total: number; events: number }>('totals', event.streamId);
        view.put('totals', event.streamId, { total: (previous?.total ?? 0) + data.by, events: (previous?.events ?? 0) + 1 });
        const seen = await view.get<{ events: number }>('seen', event.streamId);
        view.put('seen', event.streamId, { events: (seen?.events ?? 0) + 1 });
      },
    });
    try {
      const s = await start([v2]);
      const written = await f.count('g-new', 3);
      expect(await s.waitFor(written.position, 3000), 'folded into the serving generation').to.equal(true);
      expect(s.liveGeneration('test-totals')).to.equal(1);
      expect(await f.store.get({ projection: 'test-totals', generation: 1 }, 'seen', 'g-new')).to.deep.equal({ events: 1 });
      expect(await doc('test-totals', 'totals', 'g-new')).to.deep.equal({ total: 3, events: 1 });
      expect(s.readiness().ready).to.equal(true);
    } finally {
      release();
    }
    await eventually(async () => supervisor!.liveGeneration('test-totals'), (g) => g === 2);
    expect(await doc('test-totals', 'seen', 'g-old')).to.deep.equal({ events: 5 });
    expect(await doc('test-totals', 'totals', 'g-new')).to.deep.equal({ total: 3, events: 1 });
  });

  it('an index a release declares without changing the version is built on the serving generation at start, without a rebuild', async () => {
    for (let i = 0; i < 5; i++) await f.count(`i-${i}`, i);
    const first = await start([totals()]);
    expect(await first.waitFor((await f.log.headPosition())!, 3000)).to.equal(true);
    await first.stop();
    supervisor = undefined;
    const indexes = () => inFile((db) => (db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'index' AND name LIKE 'rm_test_totals__%'`).all() as Array<{ name: string }>).map((i) => i.name));
    expect(indexes()).to.deep.equal([]);
    const indexed = { ...totals(), collections: { totals: { indexes: [{ name: 'by_total', fields: [['total', 1]] as Array<[string, 1]> }] } } };
    const s = await start([indexed]);
    expect(indexes()).to.deep.equal(['rm_test_totals__totals__g1__by_total']);
    expect(s.liveGeneration('test-totals')).to.equal(1);
    expect(await f.store.listGenerations('test-totals')).to.have.length(1);
    expect(await doc('test-totals', 'totals', 'i-4')).to.deep.equal({ total: 4, events: 1 });
  });

  it('drops the read models of a projection the release no longer maintains (retired), every generation, and frees their pages', async () => {
    for (let i = 0; i < 1500; i++) await f.count(`r-${i}`, i);
    // An earlier release maintained test-totals, and rebuilt it once (two generations: the active and a building one).
    const first = await start([totals()]);
    expect(await first.waitFor((await f.log.headPosition())!, 10_000)).to.equal(true);
    await first.stop();
    supervisor = undefined;
    await f.store.createGeneration({ projection: 'test-totals', collections: totals().collections }, 2, 1, f.clock.now().toISOString());
    const tables = () => inFile((db) => (db.prepare(`SELECT name FROM sqlite_schema WHERE name LIKE 'rm_test_totals__%'`).all() as Array<{ name: string }>).map((t) => t.name));
    /** Pages of the file: [in the file, of the test-totals tables]. */
    const pages = () => inFile((db) => [Number(db.pragma('page_count', { simple: true })), (db.prepare(`SELECT count(*) AS n FROM dbstat WHERE name LIKE '%test_totals%'`).get() as { n: number }).n]);
    expect(tables()).to.have.members(['rm_test_totals__totals__g1', 'rm_test_totals__totals__g2']);
    const [before, ofTables] = pages();
    expect(ofTables).to.be.greaterThan(10);

    // This release maintains another projection only (one that folds none of these events), and names test-totals as retired.
    const other = defineProjection({ name: 'test-other', version: 1, description: 'folds nothing here', collections: { other: {} }, filter: { eventTypes: ['test.never'] }, apply() {} });
    supervisor = new ProjectionSupervisor({ projections: [other], retired: [{ projection: 'test-totals', collections: { totals: {} } }], log: f.log, store: f.store, clock: f.clock, logger: silentLogger, watchIntervalMs: 50 });
    await supervisor.start();
    expect(await f.store.listGenerations('test-totals')).to.deep.equal([]);
    expect(tables()).to.deep.equal([]);
    // The file gives the tables' pages back (incremental vacuum), not only marks them free.
    expect(pages()[0], 'pages of the file after the drop').to.be.at.most(before! - ofTables! + 2);
    expect(supervisor.liveGeneration('test-other')).to.equal(1);
  });

  it('rebuilds in the background when the projection code version changes', async () => {
    for (let i = 0; i < 10; i++) await f.count('v-1', 1);
    const first = await start([totals(1, 1)]);
    expect(await first.waitFor((await f.log.headPosition())!, 3000)).to.equal(true);
    await first.stop();
    supervisor = undefined;
    await start([totals(2, 10)]);
    await eventually(() => doc('test-totals', 'totals', 'v-1'), (d) => (d as { total: number } | null)?.total === 100);
    expect((await f.store.getGeneration('test-totals', 2))?.version).to.equal(2);
  });

  it('a rebuild that meets a poison event stops with the failure and leaves the active generation serving', async () => {
    await f.count('p-1', 1);
    await f.count('p-1', 1, true);
    const handle = startRebuild({ projection: totals(), log: f.log, store: f.store, clock: f.clock, logger: silentLogger, dropGraceMs: 0 });
    const error = await handle.result.then(() => null, (e: unknown) => e);
    expect(error).to.be.instanceOf(RebuildPausedError);
    expect((error as Error).message).to.match(/projections skip test-totals/);
    expect(await f.store.activeGeneration('test-totals')).to.equal(null);
  });

  it('a stopped projector resumes from its checkpoint without folding anything twice', async () => {
    for (let i = 0; i < 30; i++) await f.count('k-1', 1);
    const projection = totals();
    await f.store.createGeneration({ projection: projection.name, collections: projection.collections }, 1, 1, f.clock.now().toISOString());
    const first = new Projector({ projection, generation: 1, log: f.log, store: f.store, clock: f.clock, logger: silentLogger, batchSize: 4 });
    const running = first.run();
    await eventually(async () => first.checkpoint, (c) => c !== null && c >= 12n);
    await first.stop();
    await running;
    for (let i = 0; i < 5; i++) await f.count('k-1', 1);
    const second = new Projector({ projection, generation: 1, log: f.log, store: f.store, clock: f.clock, logger: silentLogger, stopWhenCaughtUp: true });
    await second.run();
    expect(await f.store.get({ projection: projection.name, generation: 1 }, 'totals', 'k-1')).to.deep.equal({ total: 35, events: 35 });
  });
});

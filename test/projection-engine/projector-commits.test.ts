import path from 'node:path';
import { expect } from 'chai';
import { defineProjection } from '../../src/projection-engine/projection.ts';
import { Projector } from '../../src/projection-engine/projector.ts';
import { schemaOf } from '../../src/projection-engine/projection.ts';
import { EventStoreDbEventStore } from '../../src/event-store/esdb-event-store.ts';
import { SqliteReadModelStore } from '../../src/read-models/sqlite-read-model-store.ts';
import type { ReadModelStore } from '../../src/read-models/read-model-store.ts';
import { engineFixture, eventually, silentLogger } from '../support/engine-fixture.ts';
import { EsdbStandIn } from '../support/esdb-stand-in/server.ts';
import { tempDir } from '../support/temp-dir.ts';

const rare = defineProjection({
  name: 'test-rare',
  version: 1,
  description: 'folds one event type that is rare in the log',
  collections: { seen: {} },
  filter: { eventTypes: ['test.rare'] },
  apply(event, view) {
    view.put('seen', event.streamId, { type: event.type });
  },
});

/** A read-model store that counts commits and lists the documents read by id (`collection/id`). */
function counting(store: ReadModelStore): { store: ReadModelStore; commits: () => number; reads: string[] } {
  let commits = 0;
  const reads: string[] = [];
  const wrapped = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (property === 'commit') {
        return (...args: Parameters<ReadModelStore['commit']>) => {
          commits += 1;
          return target.commit(...args);
        };
      }
      if (property === 'get') {
        return (...args: Parameters<ReadModelStore['get']>) => {
          reads.push(`${args[1]}/${args[2]}`);
          return target.get(...args);
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store: wrapped, commits: () => commits, reads };
}

/** Keeps one document per stream with a unique `name`: a test event that names an existing name collides. */
const named = defineProjection({
  name: 'test-named',
  version: 1,
  description: 'a unique name per stream',
  collections: { names: { indexes: [{ name: 'by_name', fields: [['name', 1]], unique: true }] } },
  filter: { eventTypes: ['test.counted'] },
  apply(event, view) {
    const by = (event.data as { by: number }).by;
    view.put('names', event.streamId, { name: `name-${by}` });
  },
});

/** Sums test.counted into one document, each event also reading a settings document it never writes. */
const summing = defineProjection({
  name: 'test-summing',
  version: 1,
  description: 'a running total, scaled by a stored setting',
  collections: { totals: {}, settings: {} },
  filter: { eventTypes: ['test.counted'] },
  async apply(event, view) {
    const settings = (await view.get<{ factor: number }>('settings', 'global'))!;
    const total = (await view.get<{ sum: number; factors: number[] }>('totals', 'all')) ?? { sum: 0, factors: [] };
    view.put('totals', 'all', { sum: total.sum + (event.data as { by: number }).by * settings.factor, factors: [...total.factors, settings.factor] });
    settings.factor = -1; // a projection may change what it read without writing it back
  },
});

describe('projector: when it commits', () => {
  it('reads a document it does not write from the store twice at most, and one it wrote as committed, across batches', async () => {
    const f = engineFixture();
    try {
      for (let i = 1; i <= 9; i++) await f.count(`s-${i}`, i);
      const target = { projection: 'test-summing', generation: 1 };
      await f.store.createGeneration(schemaOf(summing), 1, 1, '2026-11-22T12:00:00.000Z');
      await f.store.commit(target, [{ collection: 'settings', id: 'global', position: 0n, doc: { factor: 10 } }], 0n, '2026-11-22T12:00:00.000Z');
      const { store, reads } = counting(f.store);
      const projector = new Projector({ projection: summing, generation: 1, log: f.log, store, clock: f.clock, logger: silentLogger, stopWhenCaughtUp: true, batchSize: 2 });
      expect(await projector.run()).to.equal('live');
      expect(await f.store.get(target, 'totals', 'all')).to.deep.equal({ sum: 450, factors: Array(9).fill(10) });
      // Read from the store twice (kept from its second read on), then from memory for the other seven events.
      expect(reads.filter((r) => r === 'settings/global')).to.have.length(2);
      // The total is written by every batch (of two events): read from the store once, by the first batch; the
      // batches after it know it as their commits wrote it.
      expect(reads.filter((r) => r === 'totals/all')).to.have.length(1);
    } finally {
      await f.close();
    }
  });


  it('pauses on the event whose write breaks a unique index (found within its batch), instead of retrying the batch forever', async () => {
    const f = engineFixture();
    try {
      for (let i = 1; i <= 5; i++) await f.count(`s-${i}`, i);
      const { position: clash } = await f.count('s-clash', 3); // name-3 is s-3's
      await f.count('s-after', 9);
      await f.store.createGeneration(schemaOf(named), 1, 1, '2026-11-22T12:00:00.000Z');
      const projector = new Projector({ projection: named, generation: 1, log: f.log, store: f.store, clock: f.clock, logger: silentLogger, stopWhenCaughtUp: true, batchSize: 100, retryDelayMs: 10 });
      expect(await projector.run()).to.equal('paused');
      const generation = (await f.store.getGeneration('test-named', 1))!;
      expect(generation.failure?.streamId).to.equal('s-clash');
      expect(generation.failure?.position).to.equal(clash);
      expect(generation.failure?.message).to.match(/unique index by_name of collection names/);
      // the events before it are committed
      expect(generation.checkpoint).to.equal(clash - 1n);
      expect(await f.store.get({ projection: 'test-named', generation: 1 }, 'names', 's-5')).to.deep.equal({ name: 'name-5' });
    } finally {
      await f.close();
    }
  });

  it('live, tells its waiters at once of progress past events it does not handle, and stores it later, not per event', async () => {
    const f = engineFixture();
    const { store, commits } = counting(f.store);
    try {
      await store.createGeneration(schemaOf(rare), 1, 1, '2026-11-22T12:00:00.000Z');
      const projector = new Projector({ projection: rare, generation: 1, log: f.log, store, clock: f.clock, logger: silentLogger, commitIntervalMs: 60_000, progressQuietMs: 60_000 });
      const running = projector.run();
      const { position: first } = await f.count('noise-0', 1);
      await projector.waitFor(first, 5000);
      const stored = (await f.store.getGeneration('test-rare', 1))!.checkpoint;
      const committed = commits();
      for (let i = 1; i <= 20; i++) {
        const { position } = await f.count(`noise-${i}`, 1);
        const started = performance.now();
        expect(await projector.waitFor(position, 5000)).to.equal(true);
        // Told as soon as the subscription passes it (the SQLite store wakes it on this process's appends).
        expect(performance.now() - started).to.be.below(500);
        expect(projector.folded).to.equal(position);
      }
      expect(commits() - committed, 'commits for twenty events it does not handle').to.equal(0);
      expect((await f.store.getGeneration('test-rare', 1))!.checkpoint).to.equal(stored);
      // Stopping stores the progress.
      await projector.stop();
      await running;
      expect((await f.store.getGeneration('test-rare', 1))!.checkpoint).to.equal(await f.log.headPosition());
    } finally {
      await f.close();
    }
  });

  it('live, stores its checkpoint at once past an event it handles without writing (a write in another process waits for it)', async () => {
    const f = engineFixture();
    const ignoring = defineProjection({ ...rare, name: 'test-ignoring', filter: { eventTypes: ['test.counted'] }, apply() {} });
    try {
      await f.store.createGeneration(schemaOf(ignoring), 1, 1, '2026-11-22T12:00:00.000Z');
      const projector = new Projector({ projection: ignoring, generation: 1, log: f.log, store: f.store, clock: f.clock, logger: silentLogger, commitIntervalMs: 60_000 });
      const running = projector.run();
      try {
        await f.count('warm-up', 1);
        const { position } = await f.count('handled', 1);
        await eventually(async () => (await f.store.getGeneration('test-ignoring', 1))!.checkpoint, (checkpoint) => checkpoint === position, 5000);
      } finally {
        await projector.stop();
        await running;
      }
    } finally {
      await f.close();
    }
  });

  for (const [when, options] of [
    ['once the log has been quiet for a moment', { progressQuietMs: 50, commitIntervalMs: 60_000 }],
    ['at the commit interval while events keep coming', { progressQuietMs: 60_000, commitIntervalMs: 50 }],
  ] as const) {
    it(`live, stores progress past events it does not handle ${when}, without another event`, async () => {
      const f = engineFixture();
      try {
        await f.store.createGeneration(schemaOf(rare), 1, 1, '2026-11-22T12:00:00.000Z');
        const projector = new Projector({ projection: rare, generation: 1, log: f.log, store: f.store, clock: f.clock, logger: silentLogger, ...options });
        const running = projector.run();
        try {
          for (let i = 0; i < 3; i++) await f.count(`noise-${i}`, 1);
          const head = await f.log.headPosition();
          await eventually(async () => (await f.store.getGeneration('test-rare', 1))!.checkpoint, (checkpoint) => checkpoint === head, 5000);
        } finally {
          await projector.stop();
          await running;
        }
      } finally {
        await f.close();
      }
    });
  }

  it('catching up through a long run of events it does not handle, commits by batch or time, not at every server checkpoint', async function () {
    this.timeout(60_000);
    // The stand-in checkpoints a filtered subscription every 32 considered events, as the server does.
    const server = await EsdbStandIn.start();
    const f = engineFixture(tempDir(), { events: EventStoreDbEventStore.connect(server.connectionString()) });
    const readModels = SqliteReadModelStore.open(path.join(f.dir, 'counted.sqlite'));
    const { store, commits } = counting(readModels);
    try {
      for (let i = 0; i < 40; i++) {
        await f.log.store.append(`noise-${i}`, Array.from({ length: 50 }, () => ({ id: crypto.randomUUID(), type: 'test.counted', data: { by: 1 }, metadata: { actor: { type: 'user', id: 'u' }, correlationId: 'c', causationId: null, occurredAt: '2026-11-22T12:00:00.000Z', schemaVersion: 1 } })), 'no_stream');
      }
      await f.log.store.append('rare-1', [{ id: crypto.randomUUID(), type: 'test.rare', data: {}, metadata: { actor: { type: 'user', id: 'u' }, correlationId: 'c', causationId: null, occurredAt: '2026-11-22T12:00:00.000Z', schemaVersion: 1 } }], 'no_stream');
      await store.createGeneration(schemaOf(rare), 1, 1, '2026-11-22T12:00:00.000Z');
      const projector = new Projector({ projection: rare, generation: 1, log: f.log, store, clock: f.clock, logger: silentLogger, stopWhenCaughtUp: true });
      expect(await projector.run()).to.equal('live');
      // 2,001 events: 62 server checkpoints. One commit at caught-up (and one per elapsed second at most).
      expect(commits()).to.be.at.most(3);
      expect((await store.getGeneration('test-rare', 1))!.checkpoint).to.equal(await f.log.headPosition());
      expect(await store.get({ projection: 'test-rare', generation: 1 }, 'seen', 'rare-1')).to.deep.equal({ type: 'test.rare' });
    } finally {
      await readModels.close();
      await f.close();
      await server.stop();
    }
  });
});

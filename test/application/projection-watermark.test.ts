import { expect } from 'chai';
import { defineProjection, type Projection } from '../../src/projection-engine/projection.ts';
import { ProjectionSupervisor } from '../../src/projection-engine/projection-supervisor.ts';
import { ProjectionWatermark } from '../../src/application/projection-watermark.ts';
import { engineFixture, silentLogger } from '../support/engine-fixture.ts';
import { EventStoreDbEventStore } from '../../src/event-store/esdb-event-store.ts';
import { SUBSCRIPTION_PROGRESS_BOUND_MS } from '../../src/event-store/event-store.ts';
import { READ_YOUR_WRITES_MS } from '../../src/application/project-writes.ts';
import type { ReadModelStore } from '../../src/read-models/read-model-store.ts';
import { EsdbStandIn } from '../support/esdb-stand-in/server.ts';

type Fixture = ReturnType<typeof engineFixture>;

const seen = defineProjection({
  name: 'test-seen',
  version: 1,
  description: 'last event per stream',
  collections: { last: {} },
  apply(event, view) {
    view.put('last', event.streamId, { type: event.type });
  },
});

/** Handles only the streams named slow-*, and never gets past the first it is given (until `release`). */
function stalling(): { projection: Projection; release: () => void; reached: () => boolean } {
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  let reached = false;
  const projection = defineProjection({
    name: 'test-stalling',
    version: 1,
    description: 'stalls at its first event',
    collections: { last: {} },
    filter: { streamPrefixes: ['slow-'] },
    async apply(event, view) {
      reached = true;
      await gate;
      view.put('last', event.streamId, { type: event.type });
    },
  });
  return { projection, release, reached: () => reached };
}

/** The watermark of a process with the supervisor given (projectors in process), or of an API-only one (none). */
function watermarkOf(f: Fixture, projections: readonly Projection[], supervisor: ProjectionSupervisor | undefined, store: ReadModelStore = f.store) {
  return new ProjectionWatermark({ projections, log: f.log, store, supervisor });
}

async function withSupervisor(f: Fixture, projections: readonly Projection[], run: (supervisor: ProjectionSupervisor) => Promise<void>, options: { pausePollMs?: number } = {}): Promise<void> {
  const supervisor = new ProjectionSupervisor({ projections, log: f.log, store: f.store, clock: f.clock, logger: silentLogger, projector: { ...options } });
  await supervisor.start();
  try {
    await run(supervisor);
  } finally {
    await supervisor.stop();
    await f.close();
  }
}

describe('read your writes: waiting for projections to reach a write', () => {
  it('answers true once the write is folded, both with the supervisor in process and from the stored checkpoints', async () => {
    const f = engineFixture();
    await withSupervisor(f, [seen], async (supervisor) => {
      for (const watermark of [watermarkOf(f, [seen], supervisor), watermarkOf(f, [seen], undefined)]) {
        const { position } = await f.count(`s-${Math.random()}`, 1);
        expect(await watermark.waitFor(position, 3000)).to.equal(true);
        const generation = (await f.store.activeGeneration('test-seen'))!;
        expect((await f.store.getGeneration('test-seen', generation))!.checkpoint! >= position).to.equal(true);
        watermark.close();
      }
    });
  });

  it('a projection that does not handle a write\'s events never delays its answer, however far behind it is', async () => {
    const f = engineFixture();
    const slow = stalling();
    await withSupervisor(f, [seen, slow.projection], async (supervisor) => {
      try {
        // The stalling projection takes its first event and stays there.
        const { position: stalledAt } = await f.count('slow-1', 1);
        await supervisor.waitFor(stalledAt, 5000, ['test-seen']);
        expect(slow.reached()).to.equal(true);
        // One watermark after the other: each hears of the appends made while it exists.
        for (const inProcess of [supervisor, undefined]) {
          const watermark = watermarkOf(f, [seen, slow.projection], inProcess);
          for (let i = 0; i < 5; i++) {
            const { position } = await f.count(`fast-${i}`, 1);
            const started = performance.now();
            expect(await watermark.waitFor(position, READ_YOUR_WRITES_MS)).to.equal(true);
            // Folded by test-seen within a commit's time; the stalled projection is not waited for (3 s otherwise).
            expect(performance.now() - started).to.be.below(1000);
          }
          // A write it does handle waits for it, and says so when it does not get there in time.
          const { position } = await f.count('slow-2', 1);
          expect(await watermark.waitFor(position, 200)).to.equal(false);
          // ...as does any later write of this process, until it has folded that one (read your writes holds across writes).
          const { position: later } = await f.count('fast-later', 1);
          expect(await watermark.waitFor(later, 200)).to.equal(false);
          expect(await watermark.waitFor(later, 200, ['test-seen']), 'named projections only').to.equal(true);
          watermark.close();
        }
      } finally {
        slow.release();
      }
    });
  });

  it('a write waits for exactly the projections that handle its events, told apart by stream prefix', async () => {
    const f = engineFixture();
    const slow = stalling();
    const projections = [seen, slow.projection];
    const watermark = watermarkOf(f, projections, undefined);
    // No projector runs: every generation stays where it was created. Waits show whom a write waits for.
    for (const p of projections) {
      await f.store.createGeneration({ projection: p.name, collections: p.collections }, 1, 1, f.clock.now().toISOString());
      await f.store.activateGeneration(p.name, 1, null, f.clock.now().toISOString());
    }
    try {
      const fast = await f.count('fast-1', 1);
      expect(await watermark.waitFor(fast.position, 100, ['test-stalling']), 'a stream test-stalling does not handle').to.equal(true);
      expect(await watermark.waitFor(fast.position, 100, ['test-seen'])).to.equal(false);
      const slowWrite = await f.count('slow-1', 1);
      expect(await watermark.waitFor(slowWrite.position, 100, ['test-stalling'])).to.equal(false);
    } finally {
      watermark.close();
      slow.release();
      await f.close();
    }
  });

  it('on the EventStoreDB stand-in, a write that a filtered projection ignores settles without waiting for it', async () => {
    const server = await EsdbStandIn.start();
    const f = engineFixture(undefined, { events: EventStoreDbEventStore.connect(server.connectionString()) });
    try {
      const ignoring = defineProjection({ ...seen, name: 'test-ignoring', filter: { eventTypes: ['test.never-appended'] } });
      await withSupervisor(f, [seen, ignoring], async (supervisor) => {
        await f.count('warm-up', 1);
        for (const watermark of [watermarkOf(f, [seen, ignoring], supervisor), watermarkOf(f, [seen, ignoring], undefined)]) {
          const { position } = await f.count(`s-${Math.random()}`, 1);
          const started = Date.now();
          expect(await watermark.waitFor(position, READ_YOUR_WRITES_MS)).to.equal(true);
          expect(Date.now() - started).to.be.below(SUBSCRIPTION_PROGRESS_BOUND_MS);
          watermark.close();
        }
      });
    } finally {
      await server.stop();
    }
  });

  it('does not keep a write waiting for a projection paused on a poison event', async () => {
    const f = engineFixture();
    const refusing = defineProjection({
      ...seen,
      name: 'test-refusing',
      apply(event) {
        if (event.streamId.startsWith('poison')) throw new Error('cannot fold this');
      },
    });
    await withSupervisor(f, [seen, refusing], async (supervisor) => {
      const { position: poisoned } = await f.count('poison-1', 1);
      await supervisor.waitFor(poisoned, 1000, ['test-seen']);
      for (const watermark of [watermarkOf(f, [seen, refusing], supervisor), watermarkOf(f, [seen, refusing], undefined)]) {
        const { position } = await f.count(`s-${Math.random()}`, 1);
        const started = Date.now();
        await watermark.waitFor(position, READ_YOUR_WRITES_MS);
        expect(Date.now() - started, 'waited for the paused projection').to.be.below(1000);
        watermark.close();
      }
    }, { pausePollMs: 20 });
  });

  it('in an API-only process, writes waiting together share reads of the checkpoints, made on the store\'s commit cues', async () => {
    const f = engineFixture();
    await f.store.createGeneration({ projection: 'test-seen', collections: { last: {} } }, 1, 1, f.clock.now().toISOString());
    await f.store.activateGeneration('test-seen', 1, null, f.clock.now().toISOString());
    let reads = 0;
    const listGenerations = f.store.listGenerations.bind(f.store);
    f.store.listGenerations = (...args) => {
      reads++;
      return listGenerations(...args);
    };
    const watermark = watermarkOf(f, [seen], undefined);
    const supervisor = new ProjectionSupervisor({ projections: [seen], log: f.log, store: f.store, clock: f.clock, logger: silentLogger });
    try {
      const positions = await Promise.all(Array.from({ length: 20 }, (_, i) => f.count(`w-${i}`, 1).then((r) => r.position)));
      const waits = positions.map((position) => watermark.waitFor(position, 5_000));
      // Nothing folds for 100 ms, then the projector (standing in for another process) catches up.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const before = reads;
      await supervisor.start();
      expect(await Promise.all(waits)).to.deep.equal(positions.map(() => true));
      // 100 ms of waiting with nothing committed: a backstop read or two, not one every 5 ms (20).
      expect(before - 20, 'reads while nothing was committed (one per new waiter aside)').to.be.at.most(4);
      expect(reads - before, 'reads once commits came (the supervisor reads some itself)').to.be.below(40);
    } finally {
      watermark.close();
      await supervisor.stop();
      await f.close();
    }
  });

  it('where the store cannot tell of other processes\' commits (MongoDB without change streams), polls with a bounded backoff while a write waits', async () => {
    const f = engineFixture();
    await f.store.createGeneration({ projection: 'test-seen', collections: { last: {} } }, 1, 1, f.clock.now().toISOString());
    await f.store.activateGeneration('test-seen', 1, null, f.clock.now().toISOString());
    let reads = 0;
    const uncued = new Proxy(f.store, {
      get(target, property) {
        if (property === 'watchOtherCommits') return undefined;
        if (property === 'listGenerations') {
          return (...args: Parameters<ReadModelStore['listGenerations']>) => {
            reads++;
            return target.listGenerations(...args);
          };
        }
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const watermark = watermarkOf(f, [seen], undefined, uncued);
    const supervisor = new ProjectionSupervisor({ projections: [seen], log: f.log, store: f.store, clock: f.clock, logger: silentLogger });
    try {
      const { position } = await f.count('w-1', 1);
      const waiting = watermark.waitFor(position, 5_000);
      await new Promise((resolve) => setTimeout(resolve, 400));
      // 2, 4, 8, 16, 32, then every 50 ms: about a dozen reads in 400 ms (every 5 ms: 80).
      expect(reads).to.be.within(5, 20);
      await supervisor.start();
      const started = performance.now();
      expect(await waiting).to.equal(true);
      expect(performance.now() - started, 'found within the longest interval of the backoff').to.be.below(500);
    } finally {
      watermark.close();
      await supervisor.stop();
      await f.close();
    }
  });

  it('answers false after the bound when nothing folds the position', async () => {
    const f = engineFixture();
    await f.store.createGeneration({ projection: 'test-seen', collections: { last: {} } }, 1, 1, f.clock.now().toISOString());
    await f.store.activateGeneration('test-seen', 1, null, f.clock.now().toISOString());
    const watermark = watermarkOf(f, [seen], undefined);
    const { position } = await f.count('s-1', 1);
    const started = Date.now();
    expect(await watermark.waitFor(position, 150)).to.equal(false);
    expect(Date.now() - started).to.be.within(140, 1000);
    watermark.close();
    await f.close();
  });

  it('an as-of wait (every event up to the log head, whoever appended it) passes events the projection does not handle without waiting for their checkpoint', async () => {
    const f = engineFixture();
    const slow = stalling();
    const watermark = watermarkOf(f, [seen, slow.projection], undefined);
    for (const p of [seen, slow.projection]) {
      await f.store.createGeneration({ projection: p.name, collections: p.collections }, 1, 1, f.clock.now().toISOString());
      await f.store.activateGeneration(p.name, 1, null, f.clock.now().toISOString());
    }
    try {
      // Appended by "another process": straight to the store, not through the log this watermark follows.
      const other = await f.events.append('fast-elsewhere', [{ id: crypto.randomUUID(), type: 'test.counted', data: { by: 1 }, metadata: { actor: { type: 'user', id: 'u' }, correlationId: 'c', causationId: null, occurredAt: f.clock.now().toISOString(), schemaVersion: 1 } }], 'any');
      expect(await watermark.waitFor(other.position, 100), 'not a write of this process').to.equal(true);
      expect(await watermark.waitForLog(other.position, 100, ['test-stalling']), 'test-stalling handles none of the log').to.equal(true);
      expect(await watermark.waitForLog(other.position, 100, ['test-seen']), 'test-seen has not folded it').to.equal(false);
    } finally {
      watermark.close();
      slow.release();
      await f.close();
    }
  });
});

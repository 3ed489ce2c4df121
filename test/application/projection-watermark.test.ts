import { expect } from 'chai';
import { defineProjection } from '../../src/projection-engine/projection.ts';
import { ProjectionSupervisor } from '../../src/projection-engine/projection-supervisor.ts';
import { ProjectionWatermark } from '../../src/application/projection-watermark.ts';
import { engineFixture, silentLogger } from '../support/engine-fixture.ts';
import { EventStoreDbEventStore } from '../../src/event-store/esdb-event-store.ts';
import { SUBSCRIPTION_PROGRESS_BOUND_MS } from '../../src/event-store/event-store.ts';
import { READ_YOUR_WRITES_MS } from '../../src/application/project-writes.ts';
import { EsdbStandIn } from '../support/esdb-stand-in/server.ts';

const seen = defineProjection({
  name: 'test-seen',
  version: 1,
  description: 'last event per stream',
  collections: { last: {} },
  apply(event, view) {
    view.put('last', event.streamId, { type: event.type });
  },
});

describe('read your writes: waiting for projections to reach a write', () => {
  it('answers true once the write is folded, both with the supervisor in process and by polling checkpoints', async () => {
    const f = engineFixture();
    const supervisor = new ProjectionSupervisor({ projections: [seen], log: f.log, store: f.store, clock: f.clock, logger: silentLogger });
    await supervisor.start();
    try {
      for (const watermark of [new ProjectionWatermark(f.store, supervisor), new ProjectionWatermark(f.store, undefined)]) {
        const { position } = await f.count(`s-${Math.random()}`, 1);
        expect(await watermark.waitFor(position, 3000)).to.equal(true);
        const generation = (await f.store.activeGeneration('test-seen'))!;
        expect((await f.store.getGeneration('test-seen', generation))!.checkpoint! >= position).to.equal(true);
      }
    } finally {
      await supervisor.stop();
      await f.close();
    }
  });

  it('on the EventStoreDB stand-in, a write that a filtered projection ignores settles within the bound, not after 3 s', async () => {
    const server = await EsdbStandIn.start();
    const f = engineFixture(undefined, { events: EventStoreDbEventStore.connect(server.connectionString()) });
    const ignoring = defineProjection({ ...seen, name: 'test-ignoring', filter: { eventTypes: ['test.never-appended'] } });
    const supervisor = new ProjectionSupervisor({ projections: [seen, ignoring], log: f.log, store: f.store, clock: f.clock, logger: silentLogger });
    await supervisor.start();
    try {
      await f.count('warm-up', 1);
      for (const watermark of [new ProjectionWatermark(f.store, supervisor), new ProjectionWatermark(f.store, undefined)]) {
        const { position } = await f.count(`s-${Math.random()}`, 1);
        const started = Date.now();
        expect(await watermark.waitFor(position, READ_YOUR_WRITES_MS)).to.equal(true);
        expect(Date.now() - started).to.be.below(SUBSCRIPTION_PROGRESS_BOUND_MS + 250);
      }
    } finally {
      await supervisor.stop();
      await f.close();
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
    const supervisor = new ProjectionSupervisor({ projections: [seen, refusing], log: f.log, store: f.store, clock: f.clock, logger: silentLogger, projector: { pausePollMs: 20 } });
    await supervisor.start();
    try {
      const { position: poisoned } = await f.count('poison-1', 1);
      await supervisor.waitFor(poisoned, 1000, ['test-seen']);
      for (const watermark of [new ProjectionWatermark(f.store, supervisor), new ProjectionWatermark(f.store, undefined)]) {
        const { position } = await f.count(`s-${Math.random()}`, 1);
        const started = Date.now();
        await watermark.waitFor(position, READ_YOUR_WRITES_MS);
        expect(Date.now() - started, 'waited for the paused projection').to.be.below(1000);
      }
    } finally {
      await supervisor.stop();
      await f.close();
    }
  });

  it('in an API-only process, writes waiting together share one read of the checkpoints per poll', async () => {
    const f = engineFixture();
    await f.store.createGeneration({ projection: 'test-seen', collections: { last: {} } }, 1, 1, f.clock.now().toISOString());
    await f.store.activateGeneration('test-seen', 1, null, f.clock.now().toISOString());
    let reads = 0;
    const listGenerations = f.store.listGenerations.bind(f.store);
    f.store.listGenerations = () => (reads++, listGenerations());
    const supervisor = new ProjectionSupervisor({ projections: [seen], log: f.log, store: f.store, clock: f.clock, logger: silentLogger });
    try {
      const watermark = new ProjectionWatermark(f.store, undefined, { pollMs: 5 });
      const positions = await Promise.all(Array.from({ length: 20 }, (_, i) => f.count(`w-${i}`, 1).then((r) => r.position)));
      const waits = positions.map((position) => watermark.waitFor(position, 5_000));
      // Nothing folds for 200 ms, then the projector (standing in for another process) catches up.
      await new Promise((resolve) => setTimeout(resolve, 200));
      await supervisor.start();
      expect(await Promise.all(waits)).to.deep.equal(positions.map(() => true));
      // One read per 5 ms for all twenty (a read each per poll would be twenty times as many).
      expect(reads).to.be.within(5, 120);
    } finally {
      await supervisor.stop();
      await f.close();
    }
  });

  it('answers false after the bound when nothing folds the position', async () => {
    const f = engineFixture();
    await f.store.createGeneration({ projection: 'test-seen', collections: { last: {} } }, 1, 1, f.clock.now().toISOString());
    await f.store.activateGeneration('test-seen', 1, null, f.clock.now().toISOString());
    const { position } = await f.count('s-1', 1);
    const started = Date.now();
    expect(await new ProjectionWatermark(f.store, undefined).waitFor(position, 150)).to.equal(false);
    expect(Date.now() - started).to.be.within(140, 1000);
    await f.close();
  });
});

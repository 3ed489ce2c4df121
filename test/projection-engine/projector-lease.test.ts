import { expect } from 'chai';
import { defineProjection, schemaOf } from '../../src/projection-engine/projection.ts';
import { Projector, isDeadLocalHolder, leaseHolderName } from '../../src/projection-engine/projector.ts';
import { engineFixture, eventually, silentLogger } from '../support/engine-fixture.ts';
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { MongoReadModelStore } from '../../src/read-models/mongo-read-model-store.ts';
import type { ReadModelStore } from '../../src/read-models/read-model-store.ts';
import { mongoServer, mongoServerPending } from '../support/mongo-server.ts';

/** Counts events per stream, and records which projector folded each. */
const tally = defineProjection({
  name: 'test-tally',
  version: 1,
  description: 'events per stream',
  collections: { tallies: {} },
  filter: { eventTypes: ['test.counted'] },
  async apply(event, view) {
    const previous = await view.get<{ n: number }>('tallies', event.streamId);
    view.put('tallies', event.streamId, { n: (previous?.n ?? 0) + 1 });
  },
});

/** The lease's behaviour with the read models on `kind`: a fresh store per test from `store()`. */
function leaseSuite(kind: string, pending: string | undefined, store: () => Promise<ReadModelStore | undefined>, cleanup: () => Promise<void> = async () => {}): void {
  describe(`projector lease: one active projector per generation (${kind})${pending ? ` [pending: ${pending}]` : ''}`, () => {
    if (pending) {
      it('a second projector on the same generation stands by, follows the checkpoint, and takes over once the lease expires');
      it('takes over at once from a projector process of this host that is gone (after a crash)');
      return;
    }
    after(cleanup);
    it('a second projector on the same generation stands by, follows the checkpoint, and takes over once the lease expires', async () => {
      const f = engineFixture(undefined, { ...(await store().then((s) => (s ? { store: s } : {}))) });
      const target = { projection: 'test-tally', generation: 1 };
      await f.store.createGeneration(schemaOf(tally), 1, 1, f.clock.now().toISOString());
      const make = (holder: string) =>
        new Projector({ projection: tally, generation: 1, log: f.log, store: f.store, clock: f.clock, logger: silentLogger, holder, pausePollMs: 20, flushIntervalMs: 5, leaseTtlMs: 30_000 });
      const first = make('host-a:1:x:1');
      const second = make('host-b:2:y:1');
      const firstRun = first.run();
      await eventually(async () => first.state, (state) => state === 'live');
      const secondRun = second.run();
      await eventually(async () => second.state, (state) => state === 'standby');
      const { position } = await f.count('s-1', 1);
      expect(await second.waitFor(position, 3000)).to.equal(true); // it follows the stored checkpoint
      expect(second.eventsFolded).to.equal(0);
      expect((await f.store.getLease(target))?.holder).to.equal('host-a:1:x:1');

      await second.stop();
      await secondRun;
      await first.stop();
      await firstRun;
      expect(await f.store.getLease(target)).to.equal(null); // released on stop

      // A holder that stalls (stops renewing) without giving the lease up: a projector takes over only after the TTL.
      expect(await f.store.acquireLease(target, 'host-a:1:x:1', f.clock.now().toISOString(), 30_000)).to.equal(true);
      const third = make('host-c:3:z:1');
      const thirdRun = third.run();
      await f.count('s-1', 1);
      await eventually(async () => third.state, (state) => state === 'standby');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(third.state).to.equal('standby');
      f.clock.advance(30_001);
      await eventually(async () => third.state, (state) => state === 'live');
      const { position: later } = await f.count('s-2', 1);
      expect(await third.waitFor(later, 3000)).to.equal(true);
      expect(await f.store.get(target, 'tallies', 's-1')).to.deep.equal({ n: 2 });
      // The stalled one comes back: its lease is gone, it stands by instead of writing.
      const again = make('host-a:1:x:1');
      const againRun = again.run();
      await eventually(async () => again.state, (state) => state === 'standby');
      await again.stop();
      await againRun;
      await third.stop();
      await thirdRun;
      await f.close();
    });

    it('takes over at once from a projector process of this host that is gone (after a crash)', async () => {
      const self = leaseHolderName();
      const [host, pid, incarnation] = self.split(':');
      expect(isDeadLocalHolder(`${host}:${pid}:${incarnation}:99`, self)).to.equal(false); // this process
      expect(isDeadLocalHolder(`${host}:${pid}:earlier:1`, self)).to.equal(true); // an earlier incarnation of this pid
      expect(isDeadLocalHolder(`${host}:2147483646:x:1`, self)).to.equal(true); // no such process
      expect(isDeadLocalHolder(`other-host:2147483646:x:1`, self)).to.equal(false); // cannot tell: wait for expiry

      const f = engineFixture(undefined, { ...(await store().then((s) => (s ? { store: s } : {}))) });
      const target = { projection: 'test-tally', generation: 1 };
      await f.store.createGeneration(schemaOf(tally), 1, 1, f.clock.now().toISOString());
      await f.store.acquireLease(target, `${host}:2147483646:x:1`, f.clock.now().toISOString(), 30_000);
      const projector = new Projector({ projection: tally, generation: 1, log: f.log, store: f.store, clock: f.clock, logger: silentLogger, pausePollMs: 20 });
      const run = projector.run();
      await eventually(async () => projector.state, (state) => state === 'live');
      await projector.stop();
      await run;
      await f.close();
    });
  });
}

leaseSuite('SQLite', undefined, async () => undefined);

const mongoPending = await mongoServerPending();
let mongoClient: MongoClient | undefined;
const mongoDatabases: string[] = [];
leaseSuite(
  'MongoDB',
  mongoPending,
  async () => {
    mongoClient ??= await MongoClient.connect((await mongoServer()).url);
    const name = `annals_lease_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    mongoDatabases.push(name);
    return new MongoReadModelStore(mongoClient.db(name));
  },
  async () => {
    for (const name of mongoDatabases.splice(0)) await mongoClient?.db(name).dropDatabase();
    await mongoClient?.close();
  },
);

import path from 'node:path';
import { expect } from 'chai';
import { ManualClock } from '../../src/clock.ts';
import { EventLog } from '../../src/event-store/event-log.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { SqliteReadModelStore } from '../../src/read-models/sqlite-read-model-store.ts';
import type { Document, Query } from '../../src/read-models/read-model-store.ts';
import { schemaOf, type Projection } from '../../src/projection-engine/projection.ts';
import { Projector } from '../../src/projection-engine/projector.ts';
import { serviceEventCatalog } from '../../src/service/event-catalog.ts';
import { silentLogger } from './engine-fixture.ts';
import { tempDir } from './temp-dir.ts';

/** A real event log and read-model store on SQLite files, and a projection folded by a real Projector. */
export function projectionHarness(projection: Projection, options: { start?: string; batchSize?: number } = {}) {
  const dir = tempDir();
  const events = SqliteEventStore.open(path.join(dir, 'events.sqlite'), { pollIntervalMs: 20 });
  const store = SqliteReadModelStore.open(path.join(dir, 'read-models.sqlite'));
  const clock = new ManualClock(options.start ?? '2026-11-22T09:00:00.000Z');
  const log = new EventLog(events, serviceEventCatalog(), clock);
  const target = { projection: projection.name, generation: 1 };
  return {
    log,
    store,
    clock,
    /** Folds everything appended so far into generation 1 (created and activated on first use). */
    async project(): Promise<void> {
      if (!(await store.getGeneration(projection.name, 1))) {
        await store.createGeneration(schemaOf(projection), 1, projection.version, clock.now().toISOString());
        await store.activateGeneration(projection.name, 1, null, clock.now().toISOString());
      }
      const projector = new Projector({ projection, generation: 1, log, store, clock, logger: silentLogger, stopWhenCaughtUp: true, batchSize: options.batchSize ?? 3 });
      const outcome = await projector.run();
      expect(outcome, JSON.stringify(projector.failure)).to.equal('live');
    },
    async doc(collection: string, id: string): Promise<Document | null> {
      const generation = (await store.activeGeneration(projection.name)) ?? 1;
      return store.get({ projection: projection.name, generation }, collection, id);
    },
    async find(collection: string, query: Query = {}): Promise<Document[]> {
      const generation = (await store.activeGeneration(projection.name)) ?? 1;
      return store.find({ projection: projection.name, generation }, collection, query);
    },
    target,
    close: async () => {
      await events.close();
      await store.close();
    },
  };
}

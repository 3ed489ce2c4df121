import path from 'node:path';
import pino from 'pino';
import { z } from 'zod';
import { ManualClock } from '../../src/clock.ts';
import { EventCatalog, defineEvent } from '../../src/event-store/event-catalog.ts';
import { EventLog } from '../../src/event-store/event-log.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import type { EventStore } from '../../src/event-store/event-store.ts';
import { SqliteReadModelStore } from '../../src/read-models/sqlite-read-model-store.ts';
import type { ReadModelStore } from '../../src/read-models/read-model-store.ts';
import { tempDir } from './temp-dir.ts';

/** Test events: a counter stream that can carry a "poison" flag a test projection refuses. */
export const counted = defineEvent({
  type: 'test.counted',
  version: 1,
  schema: z.object({ by: z.number().int(), poison: z.boolean().optional() }),
});

export const silentLogger = pino({ level: 'silent' });

/** A real event log and read-model store on SQLite files in a fresh folder (or the event store and read-model store given). */
export function engineFixture(dir = tempDir(), options: { events?: EventStore; store?: ReadModelStore } = {}) {
  const events = options.events ?? SqliteEventStore.open(path.join(dir, 'events.sqlite'), { pollIntervalMs: 20 });
  const store = options.store ?? SqliteReadModelStore.open(path.join(dir, 'read-models.sqlite'));
  const clock = new ManualClock('2026-11-22T12:00:00.000Z');
  const log = new EventLog(events, new EventCatalog([counted]), clock);
  const count = (stream: string, by: number, poison = false) =>
    log.append(stream, [{ type: 'test.counted', data: poison ? { by, poison } : { by } }], 'any', { actor: { type: 'user', id: 'u-1' } });
  return {
    dir,
    events,
    store,
    clock,
    log,
    count,
    close: async () => {
      await events.close();
      await store.close();
    },
  };
}

/** The test kit's one poll (./eventually.ts), here where most suites import it from. */
export { eventually } from './eventually.ts';

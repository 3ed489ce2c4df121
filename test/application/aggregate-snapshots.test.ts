import path from 'node:path';
import { expect } from 'chai';
import { z } from 'zod';
import { ManualClock } from '../../src/clock.ts';
import { EventCatalog, defineEvent } from '../../src/event-store/event-catalog.ts';
import { EventLog } from '../../src/event-store/event-log.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { AggregateSnapshots } from '../../src/application/aggregate-snapshots.ts';
import { handleCommand, loadAggregate } from '../../src/application/command-handler.ts';
import { SqliteSnapshotStore } from '../../src/snapshots/sqlite-snapshot-store.ts';
import type { SnapshotStore } from '../../src/snapshots/snapshot-store.ts';
import type { Decider } from '../../src/domain/decider.ts';
import { tempDir } from '../support/temp-dir.ts';

const added = defineEvent({ type: 'test.added', version: 1, schema: z.object({ n: z.number() }) });
type State = { sum: number; events: number };
type Event = { type: 'test.added'; data: { n: number } };

/** Sums what is added; counts every event it folds, so a test sees how much of the stream a load read. */
function summing() {
  const folded = { count: 0 };
  const decider: Decider<State, { n: number }, Event, null> = {
    initialState: () => ({ sum: 0, events: 0 }),
    evolve: (state, event) => {
      folded.count++;
      return { sum: state.sum + event.data.n, events: state.events + 1 };
    },
    decide: (command) => [{ type: 'test.added', data: { n: command.n } }],
  };
  return { decider, folded };
}

describe('aggregate snapshots: a cached state or a stored snapshot, used only as the log confirms it', () => {
  const clock = new ManualClock('2026-11-23T10:00:00.000Z');
  let dir: string;
  let events: SqliteEventStore;
  let log: EventLog;
  let store: SqliteSnapshotStore;
  beforeEach(() => {
    dir = tempDir();
    events = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
    log = new EventLog(events, new EventCatalog([added]), clock);
    store = SqliteSnapshotStore.open(path.join(dir, 'snapshots.sqlite'));
  });
  afterEach(async () => {
    await store.close();
    await events.close();
  });
  const snapshots = (options: { store?: SnapshotStore; cacheBytes?: number; version?: number } = {}) =>
    new AggregateSnapshots<State>({ kind: 'test', version: options.version ?? 1, store: 'store' in options ? options.store : store, every: 8, cacheBytes: options.cacheBytes ?? 1_000_000, clock });
  const add = (n: number, through?: AggregateSnapshots<State>) => handleCommand(log, 'sum-1', summing().decider, { n }, null, { actor: { type: 'user', id: 'u' } }, through ? { snapshots: through } : {});

  it('folds only the events after a cached state or a stored snapshot, with the answer of folding the whole stream', async () => {
    const writer = snapshots();
    for (let i = 1; i <= 40; i++) await add(i, writer);
    const whole = await loadAggregate(log, 'sum-1', summing().decider);
    expect(whole.state).to.deep.equal({ sum: 820, events: 40 });

    // The writer's cache holds the state at the last append: a load reads one event (the one it checks).
    const cached = summing();
    expect(await writer.load(log, 'sum-1', cached.decider)).to.deep.equal(whole);
    expect(cached.folded.count).to.equal(0);

    // A process without the cache starts from the stored snapshot (taken every 8 events).
    const stored = await store.get('sum-1');
    expect(Number(stored?.revision)).to.be.at.least(32);
    const cold = summing();
    expect(await snapshots({ cacheBytes: 0 }).load(log, 'sum-1', cold.decider)).to.deep.equal(whole);
    expect(cold.folded.count).to.equal(Number(39n - stored!.revision));
  });

  it('reads the events another process appended after its cached state', async () => {
    const mine = snapshots();
    for (let i = 0; i < 5; i++) await add(1, mine);
    for (let i = 0; i < 3; i++) await add(10, snapshots({ store: undefined, cacheBytes: 0 }));
    const { decider, folded } = summing();
    expect((await mine.load(log, 'sum-1', decider)).state).to.deep.equal({ sum: 35, events: 8 });
    expect(folded.count).to.equal(3);
  });

  it('drops a snapshot the stream contradicts (another log, a restored store) and folds from the start', async () => {
    for (let i = 1; i <= 20; i++) await add(i);
    const head = (await loadAggregate(log, 'sum-1', summing().decider)).position!;
    // A snapshot claiming revision 15 at a position where the stream has no such event.
    await store.put({ streamId: 'sum-1', kind: 'test', version: 1, revision: 15n, position: head + 100n, state: { sum: -1, events: 99 }, takenAt: clock.now().toISOString() });
    const { decider, folded } = summing();
    expect((await snapshots({ cacheBytes: 0 }).load(log, 'sum-1', decider)).state).to.deep.equal({ sum: 210, events: 20 });
    expect(folded.count).to.equal(20);
    // It is gone, and a new one of the real stream takes its place.
    expect((await store.get('sum-1'))?.position).to.not.equal(head + 100n);
  });

  it('ignores a snapshot of another kind or state version', async () => {
    for (let i = 1; i <= 20; i++) await add(1, snapshots());
    const stored = await store.get('sum-1');
    await store.put({ ...stored!, state: { sum: -1, events: -1 } });
    const { decider, folded } = summing();
    expect((await snapshots({ cacheBytes: 0, version: 2 }).load(log, 'sum-1', decider)).state).to.deep.equal({ sum: 20, events: 20 });
    expect(folded.count).to.equal(20);
  });

  it('keeps cached states within their memory, least recently used out first, and none larger than a tenth of it', async () => {
    // States of about 25 bytes of JSON in 1,000 bytes: some 40 fit.
    const cache = snapshots({ store: undefined, cacheBytes: 1000 });
    for (let i = 0; i < 60; i++) await handleCommand(log, `sum-${i}`, summing().decider, { n: i }, null, { actor: { type: 'user', id: 'u' } }, { snapshots: cache });
    const foldedFor = async (streamId: string) => {
      const { decider, folded } = summing();
      await cache.load(log, streamId, decider);
      return folded.count;
    };
    expect(await foldedFor('sum-59'), 'recent: cached').to.equal(0);
    expect(await foldedFor('sum-0'), 'oldest: dropped').to.equal(1);
    // A state over a tenth of the memory is never cached.
    const big = new AggregateSnapshots<{ text: string }>({ kind: 'big', version: 1, cacheBytes: 1000, clock });
    const text = defineEvent({ type: 'test.text', version: 1, schema: z.object({ text: z.string() }) });
    const textLog = new EventLog(events, new EventCatalog([text]), clock);
    let folds = 0;
    const long = { initialState: () => ({ text: '' }), evolve: (_: { text: string }, e: { type: 'test.text'; data: { text: string } }) => {
      folds++;
      return { text: e.data.text };
    }, decide: () => [{ type: 'test.text' as const, data: { text: 'x'.repeat(500) } }] };
    await handleCommand(textLog, 'text-1', long, null, null, { actor: { type: 'user', id: 'u' } }, { snapshots: big });
    folds = 0;
    await big.load(textLog, 'text-1', long);
    expect(folds).to.equal(1);
  });

  it('still answers from the log when the snapshot store fails', async () => {
    // A store that fails every call: one already closed.
    const failing = SqliteSnapshotStore.open(path.join(dir, 'closed.sqlite'));
    await failing.close();
    for (let i = 1; i <= 20; i++) await add(2, snapshots({ store: failing, cacheBytes: 0 }));
    expect((await snapshots({ store: failing, cacheBytes: 0 }).load(log, 'sum-1', summing().decider)).state).to.deep.equal({ sum: 40, events: 20 });
  });
});

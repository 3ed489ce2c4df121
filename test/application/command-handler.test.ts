import path from 'node:path';
import { expect } from 'chai';
import { z } from 'zod';
import { ManualClock } from '../../src/clock.ts';
import { EventCatalog, defineEvent } from '../../src/event-store/event-catalog.ts';
import { EventLog } from '../../src/event-store/event-log.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { collect } from '../../src/event-store/event-store.ts';
import { handleCommand } from '../../src/application/command-handler.ts';
import { WriteContentionError } from '../../src/application/application-errors.ts';
import { jitteredBackoff } from '../../src/application/write-retry.ts';
import { revisionConflict, type DomainError } from '../../src/domain/domain-error.ts';
import type { Decider } from '../../src/domain/decider.ts';
import { tempDir } from '../support/temp-dir.ts';

const saved = defineEvent({ type: 'test.saved', version: 1, schema: z.object({ revision: z.number(), by: z.string() }) });
type State = { revision: number };
type Command = { by: string; expectedRevision?: number };
const counter: Decider<State, Command, { type: 'test.saved'; data: { revision: number; by: string } }, null> = {
  initialState: () => ({ revision: 0 }),
  evolve: (_state, event) => ({ revision: event.data.revision }),
  decide: (command, state) => {
    if (command.expectedRevision !== undefined && command.expectedRevision !== state.revision) {
      throw revisionConflict(`revision ${command.expectedRevision} is stale; the latest is ${state.revision}`);
    }
    return [{ type: 'test.saved', data: { revision: state.revision + 1, by: command.by } }];
  },
};

describe('command handler: decide and append with optimistic concurrency', () => {
  let store: SqliteEventStore;
  let log: EventLog;
  beforeEach(() => {
    store = SqliteEventStore.open(path.join(tempDir(), 'events.sqlite'));
    log = new EventLog(store, new EventCatalog([saved]), new ManualClock());
  });
  afterEach(() => store.close());
  const run = (command: Command) => handleCommand(log, 'counter-1', counter, command, null, { actor: { type: 'user', id: command.by } });

  it('many parallel saves with one expected revision: exactly one wins, the others get REVISION_CONFLICT', async () => {
    await run({ by: 'setup' });
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => run({ by: `w${i}`, expectedRevision: 1 })));
    expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(1);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as DomainError).code).to.equal('REVISION_CONFLICT');
    const events = await collect(log.readStream('counter-1'));
    expect(events.map((e) => (e.data as { revision: number }).revision)).to.deep.equal([1, 2]);
  });

  it('commands without an expectation are decided again after a concurrent write, and all land in order', async () => {
    await Promise.all(Array.from({ length: 4 }, (_, i) => run({ by: `w${i}` })));
    const events = await collect(log.readStream('counter-1'));
    expect(events.map((e) => (e.data as { revision: number }).revision)).to.deep.equal([1, 2, 3, 4]);
  });

  it('returns the state after the command and the position of its last event', async () => {
    const result = await run({ by: 'a' });
    expect(result.state).to.deep.equal({ revision: 1 });
    expect(result.position).to.equal(await log.headPosition());
    expect(result.streamRevision).to.equal(0n);
  });

  it('20 parallel commands without an expectation all land: retries wait a jittered, growing time (issue 12 item 3)', async () => {
    await run({ by: 'setup' });
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => run({ by: `w${i}` })));
    expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).to.deep.equal([]);
    const events = await collect(log.readStream('counter-1'));
    expect(events.map((e) => (e.data as { revision: number }).revision)).to.deep.equal(Array.from({ length: 21 }, (_, i) => i + 1));
  });

  it('a command that loses every round is refused with a retryable WriteContentionError and writes nothing', async () => {
    await run({ by: 'setup' });
    // A rival appends between every read and append of this command (same group commit, queued first). It names
    // the revision it read, as a command does: an append with 'any' would first read the stream's last link (hash
    // chain) and so queue behind this command's append.
    const losing: typeof counter = {
      ...counter,
      decide: (command, state) => {
        void log.append('counter-1', [{ type: 'test.saved', data: { revision: state.revision + 1, by: 'rival' } }], BigInt(state.revision - 1), { actor: { type: 'user', id: 'rival' } });
        return counter.decide(command, state, null);
      },
    };
    const waits: number[] = [];
    const retry = jitteredBackoff({ attempts: 4, baseMs: 10, capMs: 50, random: () => 0.5, sleep: async (ms) => void waits.push(ms) });
    const failure = await handleCommand(log, 'counter-1', losing, { by: 'loser' }, null, { actor: { type: 'user', id: 'loser' } }, { retry }).then(() => null, (e: unknown) => e);
    expect(failure).to.be.instanceOf(WriteContentionError);
    expect((failure as WriteContentionError).code).to.equal('CONFLICT');
    expect((failure as WriteContentionError).retryAfterSeconds).to.equal(1);
    // Half of each window (random 0.5): 10, 20, then the 50 ms cap.
    expect(waits).to.deep.equal([10, 20, 25]);
    const events = await collect(log.readStream('counter-1'));
    expect(events.map((e) => (e.data as { by: string }).by)).to.deep.equal(['setup', 'rival', 'rival', 'rival', 'rival']);
  });
});

import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { collect, MAX_APPEND_BYTES, type RecordedEvent, type SubscriptionMessage } from '../../src/event-store/event-store.ts';
import { SqliteOpenError } from '../../src/sqlite/open-database.ts';
import { entryArgs } from '../support/child-process.ts';
import { tempDir } from '../support/temp-dir.ts';
import { expectWalCutBackAfterBurst, walState } from '../support/wal-state.ts';
import { CHECKPOINT_DELAY_MS, EVENT_LOG_BACKSTOP_CHECKPOINT_PAGES, EVENT_LOG_WAL_CUT_BACK_BYTES } from '../../src/sqlite/wal-checkpointer.ts';
import { event, eventStoreConformance } from './event-store.conformance.ts';
import { UnreadableEventError } from '../../src/event-store/errors.ts';
import { dictionaryOf } from '../../src/event-store/event-frames.ts';
import { revisionEvent } from '../support/synthetic-history.ts';
import { insertPlainEvents, storedFrame } from '../support/stored-events.ts';
import Database from 'better-sqlite3';

eventStoreConformance('event store: SQLite adapter', {
  create: async () => SqliteEventStore.open(path.join(tempDir(), 'events.sqlite'), { pollIntervalMs: 50, pageSize: 4 }),
});

describe('event store: SQLite adapter, file and process behaviour', () => {
  it('copies the WAL into the file soon after appends, on a thread of its own', async () => {
    const file = path.join(tempDir(), 'events.sqlite');
    const tasks: Array<{ task: () => Promise<void>; ms: number }> = [];
    const store = SqliteEventStore.open(file, { schedule: (task, ms) => {
        tasks.push({ task, ms });
        return () => undefined;
      },
    });
    try {
      await store.append('s-1', [event('a')], 'no_stream');
      await store.append('s-1', [event('b')], 0n);
      expect(tasks.map((t) => t.ms)).to.deep.equal([CHECKPOINT_DELAY_MS]);
      const before = walState(file);
      expect(before.backfilled).to.be.below(before.frames);
      await tasks.shift()!.task();
      expect(walState(file)).to.deep.equal({ frames: before.frames, backfilled: before.frames });
      expect((await collect(store.readStream('s-1'))).map((e) => e.type)).to.deep.equal(['a', 'b']);
    } finally {
      await store.close();
    }
  });

  it('a process closing its stores while their checkpointing threads work waits for them and exits 0', async function () {
    this.timeout(30_000);
    const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [...entryArgs('test/event-store/fixtures/close-after-checkpoint.ts'), tempDir()], { stdio: ['ignore', 'pipe', 'inherit'] });
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.on('exit', (exitCode) => resolve({ code: exitCode, out: text }));
    });
    // Exit 13 is Node's "unsettled top-level await": a close that waited on a thread that kept nothing alive.
    expect({ code, out }).to.deep.equal({ code: 0, out: 'closed\n' });
  });

  it("leaves the WAL's copying to the thread: appends past SQLite's default 1,000-page threshold do not checkpoint on the event loop; the thread cuts the large WAL back", async () => {
    const file = path.join(tempDir(), 'events.sqlite');
    // The thread's checkpoint runs only when the test says: until then only SQLite's own, in a commit, could copy the WAL.
    const checkpoints: Array<() => Promise<void>> = [];
    const store = SqliteEventStore.open(file, { schedule: (task) => {
        checkpoints.push(task);
        return () => undefined;
      },
    });
    try {
      // ~900 KB an append that compresses to ~680 KB (random base64: 6 bits a character), ~165 pages of 4 KiB:
      // 12 appends pass 1,000 pages and stay below the backstop.
      const text = randomBytes(675_000).toString('base64');
      for (let n = 0; n < 12; n++) await store.append('big', [event('big', { text })], n === 0 ? 'no_stream' : BigInt(n - 1));
      const wal = walState(file);
      expect(wal.frames).to.be.above(1_000).and.below(EVENT_LOG_BACKSTOP_CHECKPOINT_PAGES);
      expect(wal.backfilled).to.equal(0);
      expect(fs.statSync(`${file}-wal`).size).to.be.above(EVENT_LOG_WAL_CUT_BACK_BYTES);
      await expectWalCutBackAfterBurst(file, checkpoints, EVENT_LOG_WAL_CUT_BACK_BYTES);
      await store.append('small', [event('small')], 'no_stream');
      expect(await collect(store.readStream('big'))).to.have.length(12);
      expect(await collect(store.readStream('small'))).to.have.length(1);
    } finally {
      await store.close();
    }
  });

  it('keeps appended events across close and reopen', async () => {
    const file = path.join(tempDir(), 'events.sqlite');
    const first = SqliteEventStore.open(file);
    await first.append('s-1', [event('a'), event('b')], 'no_stream');
    await first.close();
    const second = SqliteEventStore.open(file);
    expect((await collect(second.readStream('s-1'))).map((e) => e.type)).to.deep.equal(['a', 'b']);
    expect(await second.headPosition()).to.equal(2n);
    await second.close();
  });

  it('commits appends made together in one transaction, each with its own expectation and outcome', async () => {
    const file = path.join(tempDir(), 'events.sqlite');
    const store = SqliteEventStore.open(file);
    await store.append('existing', [event('x')], 'no_stream');
    // Made in one turn of the event loop: one group commit. The second and third claim a stream the first
    // creates; only the first may, and their refusal undoes nothing else of the batch.
    const outcomes = await Promise.allSettled([
      store.append('claim', [event('first')], 'no_stream'),
      store.append('claim', [event('second')], 'no_stream'),
      store.append('other', [event('o1'), event('o2')], 'no_stream'),
      store.append('claim', [event('third')], 0n),
      store.append('existing', [event('stale')], 5n),
    ]);
    expect(outcomes.map((o) => o.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'rejected']);
    expect((outcomes[1] as PromiseRejectedResult).reason.name).to.equal('WrongExpectedVersionError');
    expect((outcomes[4] as PromiseRejectedResult).reason.name).to.equal('WrongExpectedVersionError');
    expect((await collect(store.readStream('claim'))).map((e) => e.type)).to.deep.equal(['first', 'third']);
    expect((await collect(store.readStream('other'))).map((e) => e.type)).to.deep.equal(['o1', 'o2']);
    expect((await collect(store.readStream('existing'))).map((e) => e.type)).to.deep.equal(['x']);
    // Positions follow the order the appends were made in.
    const positions = outcomes.filter((o) => o.status === 'fulfilled').map((o) => (o as PromiseFulfilledResult<{ position: bigint }>).value.position);
    expect(positions).to.deep.equal([...positions].sort((a, b) => (a < b ? -1 : 1)));
    // Appends accepted before close are committed by it.
    const pending = store.append('late', [event('late')], 'no_stream');
    await store.close();
    expect((await pending).nextExpectedRevision).to.equal(0n);
    const reopened = SqliteEventStore.open(file);
    expect((await collect(reopened.readStream('late'))).map((e) => e.type)).to.deep.equal(['late']);
    await reopened.close();
  });

  it('commits appends on a thread of its own: the event loop goes on while a group is written and synced, and appends made meanwhile commit after it', async function () {
    this.timeout(60_000);
    const file = path.join(tempDir(), 'events.sqlite');
    const store = SqliteEventStore.open(file);
    const data = { text: 'x'.repeat(2_000) };
    try {
      let ticks = 0;
      const timer = setInterval(() => ticks++, 2);
      const started = performance.now();
      const first = Array.from({ length: 5_000 }, (_, i) => store.append(`s-${i}`, [{ ...event('big'), data }], 'no_stream'));
      // Made while the first group is on the writer thread.
      await new Promise((resolve) => setTimeout(resolve, 5));
      const later = Array.from({ length: 100 }, (_, i) => store.append(`later-${i}`, [event('small')], 'no_stream'));
      const results = await Promise.all([...first, ...later]);
      const tookMs = performance.now() - started;
      clearInterval(timer);
      expect(tookMs, 'appends long enough to tell').to.be.above(50);
      // On the event loop, no timer could fire until the group was committed: a tick or two at most. On the writer
      // thread the loop goes on; a machine busy with other work (the suite's other worker, its threads) may give it
      // a fraction of a core, so a sixteenth of the ticks a free loop would count is asked for (41 of 198 were
      // counted in one such run, 49 asked for then).
      expect(ticks, `${ticks} ticks of a 2 ms timer during ${tookMs.toFixed(0)} ms of appends`).to.be.at.least(Math.floor(tookMs / 2 / 16));
      expect(new Set(results.slice(5_000).map((r) => r.position)).size).to.equal(100);
      expect((await collect(store.readAll())).length).to.equal(5_100);
    } finally {
      await store.close();
    }
  });

  it('two processes appending to one stream with the same expectation: exactly one wins', async function () {
    this.timeout(60_000);
    const file = path.join(tempDir(), 'events.sqlite');
    const setup = SqliteEventStore.open(file);
    await setup.append('race', [event('start')], 'no_stream');
    await setup.close();
    const script = entryArgs('test/event-store/fixtures/append-once.ts');
    // Each child appends 5 rounds; in every round both race with the same expectation, from a start time
    // both are given once both have opened the store.
    const rounds = 5;
    const run = (name: string) => {
      const child = spawn(process.execPath, [...script, file, name, String(rounds)], { stdio: ['pipe', 'pipe', 'inherit'] });
      let out = '';
      let onReady: () => void;
      const ready = new Promise<void>((resolve) => (onReady = resolve));
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.startsWith('ready\n')) onReady();
      });
      const finished = new Promise<string>((resolve, reject) => child.on('exit', (code) => (code === 0 ? resolve(out.slice('ready\n'.length)) : reject(new Error(`child ${name} exited ${code}`)))));
      return { child, ready, finished };
    };
    const children = [run('p1'), run('p2')];
    await Promise.race([Promise.all(children.map((c) => c.ready)), Promise.all(children.map((c) => c.finished))]);
    const start = Date.now() + 50;
    for (const { child } of children) child.stdin!.end(`${start}\n`);
    const outputs = await Promise.all(children.map((c) => c.finished));
    const lines = outputs.flatMap((o) => o.trim().split('\n')).map((l) => JSON.parse(l) as { round: number; result: string });
    for (let round = 0; round < rounds; round++) {
      const results = lines.filter((l) => l.round === round).map((l) => l.result).sort();
      expect(results, `round ${round}`).to.deep.equal(['conflict', 'won']);
    }
    const check = SqliteEventStore.open(file);
    const events = await collect(check.readStream('race'));
    expect(events).to.have.length(1 + rounds * 2);
    // Each winner's two events are adjacent: nothing torn.
    for (let i = 1; i < events.length; i += 2) expect(events[i]!.data).to.deep.equal(events[i + 1]!.data);
    await check.close();
  });

  it("a live subscription wakes at another process's append, not at its next poll", async function () {
    this.timeout(60_000);
    const file = path.join(tempDir(), 'events.sqlite');
    // The poll is ten minutes away: only noticing the other process's commit can deliver in time.
    const store = SqliteEventStore.open(file, { pollIntervalMs: 600_000 });
    await store.append('race', [event('start')], 'no_stream');
    const subscription = store.subscribeToAll();
    const iterator = subscription[Symbol.asyncIterator]();
    try {
      for (let message = await iterator.next(); message.value?.kind !== 'caught-up'; message = await iterator.next());
      const next = iterator.next();
      const script = entryArgs('test/event-store/fixtures/append-once.ts');
      const output = await new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, [...script, file, 'other', '1'], { stdio: ['pipe', 'pipe', 'inherit'] });
        child.stdin!.end(`${Date.now()}\n`);
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.on('exit', (code) => (code === 0 ? resolve(out.replace(/^ready\n/, '')) : reject(new Error(`child exited ${code}`))));
      });
      expect(JSON.parse(output)).to.deep.equal({ round: 0, result: 'won' });
      const appendedAt = Date.now();
      const message = await Promise.race([next, new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 10_000))]);
      expect(message, 'delivered').to.not.equal('late');
      expect(Date.now() - appendedAt).to.be.below(2_000);
      const delivered = (message as IteratorResult<SubscriptionMessage>).value;
      expect(delivered.kind).to.equal('event');
      expect(delivered.kind === 'event' && delivered.event.type).to.equal('racer');
    } finally {
      await subscription.stop();
      await store.close();
    }
  });


  it('a live subscription delivers an append made while its consumer held the last message, not at its next poll', async () => {
    // The poll is ten minutes away: only the append's wake-up can deliver in time. The wake-up comes while the
    // subscription is not asleep (its consumer is busy with the message it was given), and must not be lost.
    const store = SqliteEventStore.open(path.join(tempDir(), 'events.sqlite'), { pollIntervalMs: 600_000 });
    await store.append('held', [event('first')], 'no_stream');
    const subscription = store.subscribeToAll();
    const iterator = subscription[Symbol.asyncIterator]();
    try {
      for (let message = await iterator.next(); message.value?.kind !== 'caught-up'; message = await iterator.next());
      // The consumer, holding the caught-up message, appends before asking for the next one (as a projector
      // folding a batch does while requests append).
      await store.append('held', [event('second')], 0n);
      const message = await Promise.race([iterator.next(), new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 2_000))]);
      expect(message, 'delivered at once, not at the next poll').to.not.equal('late');
      const delivered = (message as IteratorResult<SubscriptionMessage>).value;
      expect(delivered.kind === 'event' && delivered.event.type).to.equal('second');
    } finally {
      await subscription.stop();
      await store.close();
    }
  });
  it("live subscriptions take this process's appends as committed and query for the rest: what a read gives, in order, none twice, whatever the filter", async function () {
    this.timeout(60_000);
    // The poll is ten minutes away: only wake-ups deliver. The script mixes what a subscription takes from the
    // appends it is told of (single appends, group commits with a refused append among them) with what it must
    // query for: another connection's commits between two of this process's, and an append of more rows than a
    // page (the subscription keeps at most a page of them).
    const file = path.join(tempDir(), 'events.sqlite');
    const store = SqliteEventStore.open(file, { pollIntervalMs: 600_000, pageSize: 8 });
    const filters = [{}, { eventTypes: ['b', 'c'] }, { streamPrefixes: ['s-1', 'ü'] }];
    const subscriptions = filters.map((filter) => store.subscribeToAll({ filter }));
    const seen = subscriptions.map(() => [] as unknown[]);
    const asRead = (e: RecordedEvent) => ({ position: e.position, streamId: e.streamId, revision: e.revision, id: e.id, type: e.type, data: e.data, metadata: e.metadata });
    const consuming = subscriptions.map(async (subscription, i) => {
      for await (const message of subscription) if (message.kind === 'event') seen[i]!.push(asRead(message.event));
    });
    try {
      let other = 0;
      for (let round = 0; round < 40; round++) {
        const type = ['a', 'b', 'c'][round % 3]!;
        if (round % 5 === 0) {
          const group = await Promise.allSettled([
            store.append(`s-${round % 4}`, [event(type, { round }), event('b', { round, second: true })], 'any'),
            store.append(`s-${round % 4}`, [event('refused', { round })], 'no_stream'),
            store.append('ü-mine', [event('c', { text: 'ü ✓', round })], 'any'),
          ]);
          expect(group.map((outcome) => outcome.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
        } else if (round % 7 === 0) {
          insertPlainEvents(file, [{ streamId: 'ü-other', revision: other++, id: randomUUID(), type, data: { round, by: 'another connection' }, metadata: event(type).metadata }]);
          await store.append(`s-${round % 4}`, [event(type, { round, after: 'another connection' })], 'any');
        } else if (round % 11 === 0) {
          await store.append(`s-1-big`, Array.from({ length: 20 }, (_, i) => event(['a', 'b', 'c'][i % 3]!, { round, i })), 'any');
        } else {
          await store.append(`s-${round % 4}`, [event(type, { round })], 'any');
        }
        if (round % 3 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      const all = (await collect(store.readAll())).map(asRead) as Array<ReturnType<typeof asRead>>;
      const expected = [
        all,
        all.filter((e) => e.type === 'b' || e.type === 'c'),
        all.filter((e) => e.streamId.startsWith('s-1') || e.streamId.startsWith('ü')),
      ];
      expect(all.filter((e) => e.streamId === 'ü-other')).to.have.length(other);
      const deadline = Date.now() + 10_000;
      while (seen.some((s, i) => s.length < expected[i]!.length) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      for (const [i, filter] of filters.entries()) expect(seen[i], `filter ${JSON.stringify(filter)}`).to.deep.equal(expected[i]);
    } finally {
      await Promise.all(subscriptions.map((subscription) => subscription.stop()));
      await Promise.all(consuming);
      await store.close();
    }
  });

  it("a live subscription delivers another process's append that lands between this process's commit and its word of it, not at the next poll", async () => {
    const file = path.join(tempDir(), 'events.sqlite');
    const store = SqliteEventStore.open(file, { pollIntervalMs: 600_000 });
    await store.append('mine', [event('first')], 'no_stream');
    const subscription = store.subscribeToAll();
    const iterator = subscription[Symbol.asyncIterator]();
    const other = new Database(file);
    try {
      for (let message = await iterator.next(); message.value?.kind !== 'caught-up'; message = await iterator.next());
      const appended = store.append('mine', [event('second')], 0n);
      // The group commit goes to the writer thread at the next turn; this one then holds the event loop until
      // the commit is in the file and another connection has committed after it, so the thread's word comes last.
      await new Promise((resolve) => setImmediate(resolve));
      const head = other.prepare('SELECT max(position) FROM events').pluck();
      const deadline = Date.now() + 10_000;
      while (head.get() !== 2 && Date.now() < deadline);
      expect(head.get()).to.equal(2);
      insertPlainEvents(file, [{ streamId: 'theirs', revision: 0, id: randomUUID(), type: 'theirs', data: {}, metadata: event('theirs').metadata }]);
      await appended;
      const types: string[] = [];
      const late = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 3_000));
      while (types.length < 2) {
        const message = await Promise.race([iterator.next(), late]);
        if (message === 'late') break;
        if (message.value?.kind === 'event') types.push(message.value.event.type);
      }
      expect(types, 'delivered at once, not at the next poll').to.deep.equal(['second', 'theirs']);
    } finally {
      other.close();
      await subscription.stop();
      await store.close();
    }
  });

  it('refuses a file that is not a SQLite database with a clear message, leaving it untouched', () => {
    const file = path.join(tempDir(), 'events.sqlite');
    const garbage = Buffer.from('this is not a database '.repeat(300));
    fs.writeFileSync(file, garbage);
    expect(() => SqliteEventStore.open(file)).to.throw(SqliteOpenError, /not a SQLite database/);
    expect(fs.readFileSync(file).equals(garbage)).to.equal(true);
    expect(fs.existsSync(`${file}-wal`)).to.equal(false);
  });

  it('refuses a read-only data folder with a clear message', () => {
    if (process.getuid?.() === 0) {
      // root ignores permission bits; use a folder path that cannot be created instead.
      const blocker = path.join(tempDir(), 'file');
      fs.writeFileSync(blocker, '');
      expect(() => SqliteEventStore.open(path.join(blocker, 'events.sqlite'))).to.throw(SqliteOpenError, /cannot create the data folder/);
      return;
    }
    const dir = tempDir();
    fs.chmodSync(dir, 0o555);
    try {
      expect(() => SqliteEventStore.open(path.join(dir, 'events.sqlite'))).to.throw(SqliteOpenError, /not writable/);
    } finally {
      fs.chmodSync(dir, 0o755);
    }
  });
});

describe('event store: SQLite adapter, events stored as compressed frames', () => {
  it('stores each event as one zstd frame made with the log\'s dictionary, a third of its JSON or less, and reads it back as appended', async () => {
    const file = path.join(tempDir(), 'events.sqlite');
    const store = SqliteEventStore.open(file);
    const appended = Array.from({ length: 200 }, (_, i) => revisionEvent(i, 1));
    try {
      for (const e of appended) await store.append(`entry-${e.data && (e.data as { entryId: string }).entryId}`, [e], 'any');
      const read = await collect(store.readAll());
      expect(read.map((e) => ({ id: e.id, type: e.type, data: e.data, metadata: e.metadata }))).to.deep.equal(appended.map((e) => ({ id: e.id, type: e.type, data: e.data, metadata: e.metadata })));
    } finally {
      await store.close();
    }
    const db = new Database(file, { readonly: true });
    const rows = db.prepare('SELECT data, metadata FROM events').all() as Array<{ data: unknown; metadata: unknown }>;
    db.close();
    expect(rows).to.have.length(200);
    let stored = 0;
    let json = 0;
    for (const [i, row] of rows.entries()) {
      expect(Buffer.isBuffer(row.data)).to.equal(true);
      expect(row.metadata).to.equal('');
      expect(dictionaryOf(row.data as Buffer)).to.equal(32769);
      stored += (row.data as Buffer).length;
      json += Buffer.byteLength(JSON.stringify(appended[i]!.data)) + Buffer.byteLength(JSON.stringify(appended[i]!.metadata));
    }
    expect(stored / json).to.be.below(0.34);
    // Nothing of the events is in the file as text.
    expect(fs.readFileSync(file).includes(Buffer.from((appended[7]!.metadata as { correlationId: string }).correlationId))).to.equal(false);
  });

  it('reads events stored as JSON text by builds before frames, in order among framed ones: reads, stream reads and subscriptions', async () => {
    const file = path.join(tempDir(), 'events.sqlite');
    let store = SqliteEventStore.open(file);
    await store.append('s', [event('framed-before')], 'no_stream');
    await store.close();
    const plain = { streamId: 's', revision: 1, id: randomUUID(), type: 'plain', data: { text: 'written by an older build', n: 1 }, metadata: { actor: { type: 'user', id: 'u-1' }, correlationId: randomUUID(), causationId: null, occurredAt: '2026-11-01T00:00:00.000Z', schemaVersion: 1 } };
    insertPlainEvents(file, [plain]);
    store = SqliteEventStore.open(file);
    try {
      await store.append('s', [event('framed-after', { text: 'new' })], 1n);
      const all = await collect(store.readAll());
      expect(all.map((e) => e.type)).to.deep.equal(['framed-before', 'plain', 'framed-after']);
      expect(all[1]).to.deep.include({ id: plain.id, data: plain.data, metadata: plain.metadata, revision: 1n });
      expect((await collect(store.readStream('s', { direction: 'backwards' }))).map((e) => e.type)).to.deep.equal(['framed-after', 'plain', 'framed-before']);
      const subscription = store.subscribeToAll();
      const seen: string[] = [];
      for await (const message of subscription) {
        if (message.kind === 'caught-up') break;
        if (message.kind === 'event') seen.push(message.event.type);
      }
      await subscription.stop();
      expect(seen).to.deep.equal(['framed-before', 'plain', 'framed-after']);
    } finally {
      await store.close();
    }
  });

  it('stores and reads back an event of exactly MAX_APPEND_BYTES of JSON (its frame holds one byte more: the newline)', async () => {
    const store = SqliteEventStore.open(path.join(tempDir(), 'events.sqlite'));
    try {
      const probe = event('largest', { text: '' });
      const envelope = Buffer.byteLength(JSON.stringify(probe.data)) + Buffer.byteLength(JSON.stringify(probe.metadata));
      const largest = { ...probe, data: { text: 'x'.repeat(MAX_APPEND_BYTES - envelope) } };
      await store.append('largest', [largest], 'no_stream');
      const [read] = await collect(store.readStream('largest'));
      expect(Buffer.byteLength(JSON.stringify(read!.data)) + Buffer.byteLength(JSON.stringify(read!.metadata))).to.equal(MAX_APPEND_BYTES);
      expect(read!.data).to.deep.equal(largest.data);
    } finally {
      await store.close();
    }
  });

  it('names an event it cannot read back (a damaged frame, a dictionary it does not have), and reads on after it', async () => {
    const file = path.join(tempDir(), 'events.sqlite');
    let store = SqliteEventStore.open(file);
    const events = [event('one', { text: 'first' }), event('two', { text: 'second' }), event('three', { text: 'third' })];
    await store.append('s', events, 'no_stream');
    await store.close();
    const db = new Database(file);
    const damaged = storedFrame(file, events[0]!.id);
    damaged[Math.floor(damaged.length / 2)]! ^= 0x10;
    const unknown = storedFrame(file, events[1]!.id);
    // The dictionary id sits after the header's descriptor (and window byte): make it one this build does not know.
    const at = 5 + ((unknown[4]! & 0x20) ? 0 : 1);
    unknown.writeUInt16LE(40_000, at);
    const update = db.prepare('UPDATE events SET data = ? WHERE event_id = ?');
    update.run(damaged, events[0]!.id);
    update.run(unknown, events[1]!.id);
    db.close();
    store = SqliteEventStore.open(file);
    try {
      const first = await collect(store.readAll()).catch((e: unknown) => e);
      expect(first).to.be.instanceOf(UnreadableEventError);
      expect(first).to.include({ position: 1n, streamId: 's', revision: 0n, eventId: events[0]!.id, type: 'one' });
      expect((first as Error).message).to.match(/position 1 .*cannot be read: its frame is damaged/);
      const second = await collect(store.readAll({ after: 1n })).catch((e: unknown) => e);
      expect(second).to.include({ position: 2n, eventId: events[1]!.id });
      expect((second as Error).message).to.match(/needs zstd dictionary 40000, which this version of annals does not have \(it has 32769\)/);
      expect((await collect(store.readAll({ after: 2n }))).map((e) => e.data)).to.deep.equal([{ text: 'third' }]);
    } finally {
      await store.close();
    }
  });
});

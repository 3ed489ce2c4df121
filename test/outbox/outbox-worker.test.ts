import fs from 'node:fs';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import path from 'node:path';
import { expect } from 'chai';
import { z } from 'zod';
import { ManualClock } from '../../src/clock.ts';
import { EventCatalog, defineEvent } from '../../src/event-store/event-catalog.ts';
import { EventLog } from '../../src/event-store/event-log.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { SqliteReadModelStore } from '../../src/read-models/sqlite-read-model-store.ts';
import { ReadModelReader } from '../../src/read-models/read-model-reader.ts';
import { defineProjection } from '../../src/projection-engine/projection.ts';
import { ProjectionSupervisor } from '../../src/projection-engine/projection-supervisor.ts';
import { startRebuild } from '../../src/projection-engine/rebuild.ts';
import { OutboxWorker, type OutboxDefinition } from '../../src/outbox/outbox-worker.ts';
import { tempDir } from '../support/temp-dir.ts';
import { eventually, silentLogger } from '../support/engine-fixture.ts';

// A side effect that leaves a trace on disk: one line per performance in a journal file.
const noticeRequested = defineEvent({ type: 'test.notice-requested', version: 1, schema: z.object({ noticeId: z.string(), text: z.string() }) });
const noticeWritten = defineEvent({ type: 'test.notice-written', version: 1, schema: z.object({ noticeId: z.string(), ok: z.boolean(), error: z.string().optional() }) });

const notices = defineProjection({
  name: 'test-notices',
  version: 1,
  description: 'outbox of notices to write',
  collections: { items: { indexes: [{ name: 'by_status', fields: [['status', 1]] }] } },
  filter: { eventTypes: ['test.notice-requested', 'test.notice-written'] },
  async apply(event, view) {
    if (event.type === 'test.notice-requested') {
      const { noticeId, text } = event.data as { noticeId: string; text: string };
      view.put('items', noticeId, { noticeId, text, status: 'pending' });
    } else {
      const { noticeId, ok } = event.data as { noticeId: string; ok: boolean };
      const item = await view.get('items', noticeId);
      if (item) view.put('items', noticeId, { ...item, status: ok ? 'done' : 'failed' });
    }
  },
});

type Notice = { noticeId: string; text: string; status: string };

describe('outbox worker: side effects driven from the log', function () {
  this.timeout(30_000);
  let dir: string;
  let events: SqliteEventStore;
  let store: SqliteReadModelStore;
  let log: EventLog;
  let supervisor: ProjectionSupervisor;
  let worker: OutboxWorker<Notice, void> | undefined;
  const journal = () => (fs.existsSync(path.join(dir, 'journal')) ? fs.readFileSync(path.join(dir, 'journal'), 'utf8').trim().split('\n') : []);
  const outbox = (failOn?: string): OutboxDefinition<Notice, void> => ({
    name: 'test-notices',
    projection: 'test-notices',
    collection: 'items',
    idOf: (item) => item.noticeId,
    perform: async (item) => {
      if (item.text === failOn) throw new Error(`refused ${item.text}`);
      fs.appendFileSync(path.join(dir, 'journal'), `${item.noticeId}\n`);
    },
    completion: (item, result) => ({ type: noticeWritten.type, data: { noticeId: item.noticeId, ok: result.ok, ...(result.ok ? {} : { error: result.error }) } }),
  });
  const request = (noticeId: string, text = 'hello') =>
    log.append(`notice-${noticeId}`, [{ type: noticeRequested.type, data: { noticeId, text } }], 'no_stream', { actor: { type: 'user', id: 'u' } });

  beforeEach(async () => {
    dir = tempDir();
    events = SqliteEventStore.open(path.join(dir, 'events.sqlite'), { pollIntervalMs: 20 });
    store = SqliteReadModelStore.open(path.join(dir, 'read-models.sqlite'));
    log = new EventLog(events, new EventCatalog([noticeRequested, noticeWritten]), new ManualClock());
    supervisor = new ProjectionSupervisor({ projections: [notices], log, store, clock: new ManualClock(), logger: silentLogger, watchIntervalMs: 50, projector: { flushIntervalMs: 5 } });
    await supervisor.start();
  });
  afterEach(async () => {
    await worker?.stop();
    worker = undefined;
    await supervisor.stop();
    await events.close();
    await store.close();
  });
  const startWorker = (failOn?: string) => {
    worker = new OutboxWorker(outbox(failOn), { log, reader: new ReadModelReader(store, { cacheMs: 0 }), logger: silentLogger, pollIntervalMs: 20, concurrency: 3 });
    worker.start();
  };
  const statuses = async () => (await new ReadModelReader(store, { cacheMs: 0 }).find<Notice>('test-notices', 'items', { sort: [['noticeId', 'asc']] })).map((n) => `${n.noticeId}:${n.status}`);

  it('performs each requested item once and records its completion in the log', async () => {
    for (let i = 1; i <= 7; i++) await request(`n${i}`);
    startWorker();
    await eventually(statuses, (s) => s.every((x) => x.endsWith(':done')) && s.length === 7);
    // A wrongly released claim would cause a second performance by the time the worker has taken and done a later item.
    await request('n8');
    await eventually(statuses, (s) => s.includes('n8:done'));
    expect(journal().sort()).to.deep.equal(['n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7', 'n8']);
  });

  it("hearing of its projection's commits, performs an item as soon as it is listed, not at the next poll", async () => {
    worker = new OutboxWorker(outbox(), { log, reader: new ReadModelReader(store, { cacheMs: 0 }), logger: silentLogger, pollIntervalMs: 60_000, concurrency: 3, commits: supervisor });
    const heard: string[] = [];
    const stopHearing = supervisor.onCommit((commit) => heard.push(`${commit.projection}:${(commit.writes ?? []).map((w) => w.collection).join(',')}`));
    try {
      worker.start();
      // The first look at the outbox finds nothing; the next poll would come in a minute.
      await new Promise((resolve) => setTimeout(resolve, 50));
      await request('prompt');
      await eventually(statuses, (s) => s.includes('prompt:done'), 5_000);
      expect(journal()).to.deep.equal(['prompt']);
      expect(heard).to.include('test-notices:items');
    } finally {
      stopHearing();
    }
  });

  it('records a failure as the outcome instead of retrying it', async () => {
    await request('bad', 'poison');
    await request('good');
    startWorker('poison');
    await eventually(statuses, (s) => s.join() === 'bad:failed,good:done');
    // A retry of the failed one would have come by the time a later item is done.
    await request('later');
    await eventually(statuses, (s) => s.includes('later:done'));
    expect(journal()).to.deep.equal(['good', 'later']);
  });

  it('with partitioning, a partition whose items hang holds at most its share of the slots; the others go on', async () => {
    const released: Array<() => void> = [];
    let inFlightSlow = 0;
    let maxInFlightSlow = 0;
    const definition: OutboxDefinition<Notice, void> = {
      ...outbox(),
      perform: async (item) => {
        if (item.text === 'slow') {
          inFlightSlow++;
          maxInFlightSlow = Math.max(maxInFlightSlow, inFlightSlow);
          await new Promise<void>((resolve) => released.push(resolve));
          inFlightSlow--;
        }
        fs.appendFileSync(path.join(dir, 'journal'), `${item.noticeId}\n`);
      },
      partitioning: {
        field: 'text',
        concurrency: 1,
        pendingKeys: async () => [...new Set((await new ReadModelReader(store, { cacheMs: 0 }).find<Notice>('test-notices', 'items', { filter: { status: 'pending' } })).map((n) => n.text))],
      },
    };
    for (let i = 1; i <= 3; i++) await request(`s${i}`, 'slow');
    for (let i = 1; i <= 4; i++) await request(`f${i}`, 'fast');
    worker = new OutboxWorker(definition, { log, reader: new ReadModelReader(store, { cacheMs: 0 }), logger: silentLogger, pollIntervalMs: 20, concurrency: 2 });
    worker.start();
    await eventually(statuses, (s) => ['f1', 'f2', 'f3', 'f4'].every((n) => s.includes(`${n}:done`)));
    expect(maxInFlightSlow).to.equal(1);
    expect(journal().filter((n) => n.startsWith('s'))).to.deep.equal([]);
    // Released one by one, the slow partition drains too, each item once.
    await eventually(() => {
      released.shift()?.();
      return journal().filter((n) => n.startsWith('s')).length;
    }, (n) => n === 3);
    await eventually(statuses, (s) => s.every((x) => x.endsWith(':done')) && s.length === 7);
    expect(maxInFlightSlow).to.equal(1);
    expect(journal().sort()).to.deep.equal(['f1', 'f2', 'f3', 'f4', 's1', 's2', 's3']);
  });

  it('an error marked retryLater records nothing and the item is performed again later', async () => {
    let failures = 1;
    const transient = new Error('store briefly unavailable');
    const definition: OutboxDefinition<Notice, void> = {
      ...outbox(),
      perform: async (item) => {
        if (failures-- > 0) throw transient;
        fs.appendFileSync(path.join(dir, 'journal'), `${item.noticeId}\n`);
      },
      retryLater: (error) => error === transient,
    };
    await request('t1');
    worker = new OutboxWorker(definition, { log, reader: new ReadModelReader(store, { cacheMs: 0 }), logger: silentLogger, pollIntervalMs: 20, concurrency: 1 });
    worker.start();
    await eventually(statuses, (s) => s.join() === 't1:done');
    expect(journal()).to.deep.equal(['t1']);
  });

  it('a full rebuild of the outbox projection performs nothing again', async () => {
    for (let i = 1; i <= 5; i++) await request(`r${i}`);
    startWorker();
    await eventually(statuses, (s) => s.length === 5 && s.every((x) => x.endsWith(':done')));
    const before = journal().length;
    await startRebuild({ projection: notices, log, store, clock: new ManualClock(), logger: silentLogger, dropGraceMs: 0 }).result;
    await eventually(async () => supervisor.liveGeneration('test-notices'), (g) => g === 2);
    // Work asked for after the rebuild is still done, once; by then a performance again of r1..r5 would have come too.
    await request('r6');
    await eventually(statuses, (s) => s.includes('r6:done'));
    expect(await statuses()).to.deep.equal(['r1:done', 'r2:done', 'r3:done', 'r4:done', 'r5:done', 'r6:done']);
    expect(journal()).to.have.length(before + 1);
    expect(journal().filter((l) => l === 'r6')).to.have.length(1);
  });
  it('waits quietly, with one info line, until the generation read from was built by the projection version it needs', async () => {
    // After an upgrade the generation the old code built serves until the background rebuild swaps in; the
    // new version keeps the outbox's items in a collection the old one never had.
    const upgraded = defineProjection({
      ...notices,
      version: 2,
      collections: { ...notices.collections, queue: { indexes: [{ name: 'by_status', fields: [['status', 1]] }] } },
      async apply(event, view) {
        if (event.type !== 'test.notice-requested') return notices.apply(event, view);
        const { noticeId, text } = event.data as { noticeId: string; text: string };
        view.put('queue', noticeId, { noticeId, text, status: 'pending' });
      },
    });
    const lines: Array<{ level: number; msg: string }> = [];
    const logger = pino({ level: 'debug' }, new Writable({
      write: (chunk, _enc, done) => {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    }));
    await request('u1');
    worker = new OutboxWorker({ ...outbox(), collection: 'queue', order: [['noticeId', 'asc']], projectionVersion: 2 }, { log, reader: new ReadModelReader(store, { cacheMs: 0 }), logger, pollIntervalMs: 20 });
    worker.start();
    await eventually(async () => lines.filter((l) => l.level === 30).length, (n) => n === 1);
    // A few of its polls (every 20 ms) later, still nothing taken.
    await new Promise((r) => setTimeout(r, 100));
    expect(journal()).to.deep.equal([]);
    expect(lines.filter((l) => l.level >= 40).map((l) => l.msg)).to.deep.equal([]);
    expect(lines.filter((l) => l.level === 30).map((l) => l.msg)).to.deep.equal(['outbox: waiting for the projection to be rebuilt by the current code before taking items']);

    await startRebuild({ projection: upgraded, log, store, clock: new ManualClock(), logger: silentLogger, dropGraceMs: 0 }).result;
    await eventually(async () => journal(), (j) => j.length === 1);
    expect(journal()).to.deep.equal(['u1']);
    expect(lines.filter((l) => l.level >= 30).map((l) => l.msg)).to.have.length(1);
  });
});

import path from 'node:path';
import { expect } from 'chai';
import { ManualClock } from '../../src/clock.ts';
import { EventLog } from '../../src/event-store/event-log.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { StreamNotFoundError } from '../../src/event-store/errors.ts';
import type { RecordedEvent } from '../../src/event-store/event-store.ts';
import { serviceEventCatalog } from '../../src/service/event-catalog.ts';
import { RefusalRecorder, type Refusal } from '../../src/application/refusal-recorder.ts';
import { projectRefusalsStream, tenantRefusalsStream, type WriteRefused } from '../../src/domain/refusal-events.ts';
import { entryStream } from '../../src/domain/content/entry/entry-events.ts';
import { silentLogger } from '../support/engine-fixture.ts';
import { tempDir } from '../support/temp-dir.ts';

const TENANT = '0b7e4c6a-6f3e-4d5c-9a51-3b1f9f5b2c01';
const PROJECT = '7d2a9c1e-2b44-4e8a-8f0a-6c1d2e3f4a01';
const ENTRY = '00000000-0000-4000-8000-000000000001';
const REVISION = '00000000-0000-4000-8000-000000000101';
const EDITOR = 'a2222222-2222-4222-8222-222222222222';

/**
 * The refusal recorder on a real SQLite log: the first refusal of a window is in the log when record returns,
 * further ones are counted and appended once per window (or at a clean stop), so the log grows with time and
 * with distinct (actor, operation, code), never with the number of refusals; memory stays bounded.
 */
describe('refusal recorder', () => {
  let store: SqliteEventStore;
  let log: EventLog;
  let clock: ManualClock;
  beforeEach(() => {
    store = SqliteEventStore.open(path.join(tempDir(), 'events.sqlite'), { pollIntervalMs: 20 });
    clock = new ManualClock('2026-11-22T09:00:00.000Z');
    log = new EventLog(store, serviceEventCatalog(), clock);
  });
  afterEach(async () => {
    await store.close();
  });

  const refusal = (overrides: Partial<Refusal> = {}): Refusal => ({
    tenantId: TENANT,
    projectId: PROJECT,
    actor: { type: 'user', id: EDITOR },
    operation: 'setApprovalPolicy',
    code: 'FORBIDDEN',
    reason: 'role',
    message: 'Only a tenant_admin can change the approval policy.',
    ...overrides,
  });
  const eventsOf = async (streamId: string): Promise<Array<RecordedEvent & { data: WriteRefused }>> => {
    const events: Array<RecordedEvent & { data: WriteRefused }> = [];
    try {
      for await (const event of log.readStream(streamId)) events.push(event as RecordedEvent & { data: WriteRefused });
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
    }
    return events;
  };

  it('appends the first refusal of a window at once; counts the rest into one event when the window ends', async () => {
    const recorder = new RefusalRecorder({ log, clock, logger: silentLogger, windowMs: 60_000 });
    const position = await recorder.record(refusal());
    expect(position).to.be.a('bigint');
    for (let i = 0; i < 200; i++) {
      clock.advance(100);
      expect(await recorder.record(refusal())).to.equal(null);
    }
    expect((await eventsOf(projectRefusalsStream(PROJECT))).map((e) => e.data.count)).to.deep.equal([1]);
    clock.set('2026-11-22T09:01:00.000Z');
    await recorder.flushDue();
    const events = await eventsOf(projectRefusalsStream(PROJECT));
    expect(events.map((e) => [e.data.count, e.data.repeated, e.data.firstAt, e.data.lastAt])).to.deep.equal([
      [1, false, '2026-11-22T09:00:00.000Z', '2026-11-22T09:00:00.000Z'],
      [200, true, '2026-11-22T09:00:00.100Z', '2026-11-22T09:00:20.000Z'],
    ]);
    expect(events.every((e) => e.metadata.actor.id === EDITOR && e.metadata.projectId === PROJECT)).to.equal(true);
  });

  it('aggregates per actor, operation and code: another of any of them opens its own window', async () => {
    const recorder = new RefusalRecorder({ log, clock, logger: silentLogger });
    await recorder.record(refusal());
    await recorder.record(refusal({ operation: 'publishRevision' }));
    await recorder.record(refusal({ actor: { type: 'agent', id: 'b1111111-1111-4111-8111-111111111111' }, reason: 'scope' }));
    await recorder.record(refusal({ code: 'FOUR_EYES_REQUIRED', reason: 'policy', rule: 'fourEyes' }));
    await recorder.record(refusal());
    await recorder.stop();
    const events = await eventsOf(projectRefusalsStream(PROJECT));
    expect(events.map((e) => [e.metadata.actor.id, e.data.operation, e.data.code, e.data.count])).to.deep.equal([
      [EDITOR, 'setApprovalPolicy', 'FORBIDDEN', 1],
      [EDITOR, 'publishRevision', 'FORBIDDEN', 1],
      ['b1111111-1111-4111-8111-111111111111', 'setApprovalPolicy', 'FORBIDDEN', 1],
      [EDITOR, 'setApprovalPolicy', 'FOUR_EYES_REQUIRED', 1],
      // The stop appended the count of the one window that had more than its first.
      [EDITOR, 'setApprovalPolicy', 'FORBIDDEN', 1],
    ]);
    expect(events[3]!.data).to.deep.include({ reason: 'policy', rule: 'fourEyes' });
    expect(events.map((e) => e.data.repeated)).to.deep.equal([false, false, false, false, true]);
  });

  it("files a first refusal about an entry the service loaded in the entry's stream, one the request only named in the project's, one without a project in the tenant's", async () => {
    const recorder = new RefusalRecorder({ log, clock, logger: silentLogger });
    await recorder.record(refusal({ operation: 'approveRevision', subject: { ids: { entryId: ENTRY, revisionId: REVISION, revision: 1 }, verified: true } }));
    await recorder.record(refusal({ operation: 'deleteEntry', subject: { ids: { entryId: ENTRY }, verified: false } }));
    await recorder.record(refusal({ operation: 'createUser', projectId: undefined }));
    expect((await eventsOf(entryStream(ENTRY))).map((e) => [e.data.operation, e.data.subject])).to.deep.equal([['approveRevision', { entryId: ENTRY, revisionId: REVISION, revision: 1 }]]);
    expect((await eventsOf(projectRefusalsStream(PROJECT))).map((e) => [e.data.operation, e.data.subject])).to.deep.equal([['deleteEntry', { entryId: ENTRY }]]);
    const tenant = await eventsOf(tenantRefusalsStream(TENANT));
    expect(tenant.map((e) => e.data.operation)).to.deep.equal(['createUser']);
    expect(tenant[0]!.data).not.to.have.property('projectId');
  });

  it('keeps at most ten of the subjects the counted refusals named', async () => {
    const recorder = new RefusalRecorder({ log, clock, logger: silentLogger });
    for (let i = 0; i < 30; i++) await recorder.record(refusal({ operation: 'deleteEntry', subject: { ids: { entryId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` }, verified: false } }));
    await recorder.stop();
    const [, repeated] = await eventsOf(projectRefusalsStream(PROJECT));
    expect(repeated!.data.count).to.equal(29);
    expect(repeated!.data.subjects).to.have.length(10);
  });

  it('bounds memory: beyond its open windows it closes the oldest early, appending its count', async () => {
    const recorder = new RefusalRecorder({ log, clock, logger: silentLogger, maxOpenWindows: 2 });
    await recorder.record(refusal({ operation: 'a' }));
    await recorder.record(refusal({ operation: 'a' }));
    await recorder.record(refusal({ operation: 'b' }));
    await recorder.record(refusal({ operation: 'c' }));
    await recorder.flushDue();
    const events = await eventsOf(projectRefusalsStream(PROJECT));
    expect(events.map((e) => [e.data.operation, e.data.count, e.data.repeated])).to.deep.equal([
      ['a', 1, false],
      ['b', 1, false],
      ['a', 1, true],
      ['c', 1, false],
    ]);
  });

  it('a crash loses at most the counts of the open windows: every first refusal was in the log before it was answered', async () => {
    const recorder = new RefusalRecorder({ log, clock, logger: silentLogger });
    for (let i = 0; i < 50; i++) await recorder.record(refusal());
    await recorder.record(refusal({ operation: 'publishRevision' }));
    // No stop: the process dies here. What the log holds is what was answered first.
    const events = await eventsOf(projectRefusalsStream(PROJECT));
    expect(events.map((e) => [e.data.operation, e.data.count])).to.deep.equal([
      ['setApprovalPolicy', 1],
      ['publishRevision', 1],
    ]);
  });

  it('a store that refuses the append is logged, not thrown; the next refusal opens the window again and is recorded', async () => {
    let refuse = true;
    // The real store, refusing appends while `refuse` is set (a store that is down).
    const flaky = new Proxy(store, {
      get(target, property, receiver) {
        if (property === 'append' && refuse) return () => Promise.reject(new Error('the store is down'));
        const value = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const recorder = new RefusalRecorder({ log: new EventLog(flaky, serviceEventCatalog(), clock), clock, logger: silentLogger });
    expect(await recorder.record(refusal())).to.equal(null);
    refuse = false;
    expect(await recorder.record(refusal())).to.be.a('bigint');
    expect((await eventsOf(projectRefusalsStream(PROJECT))).map((e) => [e.data.count, e.data.repeated])).to.deep.equal([[1, false]]);
  });
});

import path from 'node:path';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { z } from 'zod';
import { ManualClock } from '../../src/clock.ts';
import { EventCatalog, defineEvent } from '../../src/event-store/event-catalog.ts';
import { EventLog } from '../../src/event-store/event-log.ts';
import { WrongExpectedVersionError } from '../../src/event-store/errors.ts';
import { collect, type EventStore } from '../../src/event-store/event-store.ts';
import { chainLink, genesisLink, LEGACY_PREV } from '../../src/event-store/hash-chain.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { EventStoreDbEventStore } from '../../src/event-store/esdb-event-store.ts';
import { exportLog, importLog } from '../../src/event-store/log-transfer.ts';
import { SqliteKeyStore } from '../../src/key-store/sqlite-key-store.ts';
import { AuditSigner } from '../../src/audit/audit-signer.ts';
import { openKeyStoreAuditKeyRing } from '../../src/audit/key-store-audit-key-ring.ts';
import { auditEvents } from '../../src/audit/audit-events.ts';
import { anchorUnlinkedEvents } from '../../src/audit/legacy-anchor.ts';
import { verifyLog } from '../../src/audit/chain-verifier.ts';
import { EsdbStandIn } from '../support/esdb-stand-in/server.ts';
import { rewriteStoredEvent } from '../support/stored-events.ts';
import { tempDir } from '../support/temp-dir.ts';

const noted = defineEvent({ type: 'note.added', version: 1, schema: z.object({ projectId: z.string().optional(), text: z.string(), n: z.number().optional() }) });
const catalog = () => new EventCatalog([noted, ...auditEvents]);
const actor = { type: 'system' as const, id: 'test' };

describe('tamper-evident log: the hash chain the event log wrote (chains: true; logs written before the Merkle tree)', () => {
  const clock = new ManualClock('2026-11-24T08:00:00.000Z');
  let dir: string;
  let file: string;
  let store: SqliteEventStore;
  let log: EventLog;
  beforeEach(() => {
    dir = tempDir();
    file = path.join(dir, 'events.sqlite');
    store = SqliteEventStore.open(file);
    log = new EventLog(store, catalog(), clock, { chains: true });
  });
  afterEach(() => store.close());

  it('links each event to the one before it in its stream, the first to the stream\'s genesis; the links recompute from what the store gives back', async () => {
    await log.append('note-a', [{ type: 'note.added', data: { text: 'one', n: 1 } }, { type: 'note.added', data: { text: 'two' } }], 'no_stream', { actor });
    await log.append('note-b', [{ type: 'note.added', data: { text: 'other stream' } }], 'no_stream', { actor });
    await log.append('note-a', [{ type: 'note.added', data: { text: 'three', n: 3 } }], 1n, { actor });
    const events = await collect(store.readStream('note-a'));
    let prev = genesisLink('note-a');
    for (const event of events) {
      expect(event.metadata.chain).to.equal(chainLink(prev, event));
      prev = event.metadata.chain!;
    }
    const [b] = await collect(store.readStream('note-b'));
    expect(b!.metadata.chain).to.equal(chainLink(genesisLink('note-b'), b!));
    const report = await verifyLog(store, { keys: null });
    expect(report).to.include({ verified: true, chainedEvents: 4, unlinkedEvents: 0, streams: 2 });
  });

  it('two appends checked against the same revision: one is refused, and the chain never forks', async () => {
    await log.append('note-a', [{ type: 'note.added', data: { text: 'base' } }], 'no_stream', { actor });
    const outcomes = await Promise.allSettled([
      log.append('note-a', [{ type: 'note.added', data: { text: 'left' } }], 0n, { actor }),
      log.append('note-a', [{ type: 'note.added', data: { text: 'right' } }], 0n, { actor }),
    ]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).to.have.length(1);
    expect((outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason).to.be.instanceOf(WrongExpectedVersionError);
    expect(await collect(store.readStream('note-a'))).to.have.length(2);
    expect((await verifyLog(store, { keys: null })).verified).to.equal(true);
  });

  for (const chainTips of [10_000, 0]) {
    it(`appends with the expectation 'any' from two processes on one file interleave without a fork (${chainTips ? 'with' : 'without'} remembered tips)`, async () => {
      const other = SqliteEventStore.open(file);
      try {
        const logs = [new EventLog(store, catalog(), clock, { chainTips, chains: true }), new EventLog(other, catalog(), clock, { chainTips, chains: true })];
        await Promise.all(
          Array.from({ length: 60 }, (_, i) => logs[i % 2]!.append('busy', [{ type: 'note.added', data: { text: `append ${i}`, n: i } }], 'any', { actor })),
        );
        const events = await collect(store.readStream('busy'));
        expect(events).to.have.length(60);
        expect(new Set(events.map((e) => e.metadata.chain)).size).to.equal(60);
        const report = await verifyLog(store, { keys: null });
        expect(report, JSON.stringify(report.breaks)).to.include({ verified: true, chainedEvents: 60 });
      } finally {
        await other.close();
      }
    });
  }

  it("an exact expectation that is not the stream's last revision is refused before anything is appended", async () => {
    await log.append('note-a', [{ type: 'note.added', data: { text: 'one' } }, { type: 'note.added', data: { text: 'two' } }], 'no_stream', { actor });
    const stale = new EventLog(store, catalog(), clock, { chainTips: 0, chains: true });
    const error = await stale.append('note-a', [{ type: 'note.added', data: { text: 'late' } }], 0n, { actor }).then(() => null, (e: unknown) => e);
    expect(error).to.be.instanceOf(WrongExpectedVersionError);
    expect(error).to.include({ actual: 1n });
    expect(await collect(store.readStream('note-a'))).to.have.length(2);
  });

  it('finds an event changed in place and events removed from the middle of a stream, naming each', async () => {
    for (let i = 0; i < 5; i++) await log.append('note-a', [{ type: 'note.added', data: { text: `line ${i}` } }], i === 0 ? 'no_stream' : BigInt(i - 1), { actor });
    await log.append('note-b', [{ type: 'note.added', data: { text: 'untouched' } }], 'no_stream', { actor });
    const events = await collect(store.readStream('note-a'));
    await store.close();
    rewriteStoredEvent(file, events[1]!.id, ({ data, metadata }) => ({ data: data.replace('line 1', 'line X'), metadata }));
    const db = new Database(file);
    db.prepare('DELETE FROM events WHERE event_id = ?').run(events[3]!.id);
    db.close();
    store = SqliteEventStore.open(file);
    const report = await verifyLog(store, { keys: null });
    expect(report.verified).to.equal(false);
    expect(report.breaks.map((b) => [b.reason, b.streamId, b.revision, b.eventId])).to.deep.equal([
      ['link-mismatch', 'note-a', '1', events[1]!.id],
      ['revision-gap', 'note-a', '4', events[4]!.id],
      ['link-mismatch', 'note-a', '4', events[4]!.id],
    ]);
    expect(report.firstBreak).to.include({ eventId: events[1]!.id });
  });

  it('events written before chains: the next event links to the last one\'s legacy link; one signed anchor covers them, never rewritten; a later change to one is found', async () => {
    const legacy = (text: string) => ({ id: randomUUID(), type: 'note.added', data: { text }, metadata: { actor, correlationId: randomUUID(), causationId: null, occurredAt: '2025-01-01T00:00:00.000Z', schemaVersion: 1 } });
    await store.append('old', [legacy('before chains 1'), legacy('before chains 2')], 'no_stream');
    await store.append('old-2', [legacy('elsewhere')], 'no_stream');
    const before = await collect(store.readAll());
    // Not a break: they are covered by an anchor, or by the log tree's checkpoints.
    expect((await verifyLog(store, { keys: null })).breaks).to.deep.equal([]);

    const keys = SqliteKeyStore.open(path.join(dir, 'keys.sqlite'));
    try {
      const ring = await openKeyStoreAuditKeyRing(keys, clock);
      const signer = new AuditSigner(ring, clock);
      const anchored = await anchorUnlinkedEvents({ log, signer, mode: 'once' });
      expect(anchored).to.include({ anchored: true, coveredEvents: 3 });
      expect(await anchorUnlinkedEvents({ log, signer, mode: 'once' })).to.deep.equal({ anchored: false, reason: 'the log was anchored before' });
      await log.append('old', [{ type: 'note.added', data: { text: 'after chains' } }], 1n, { actor });
      const [, second, third] = await collect(store.readStream('old'));
      expect(third!.metadata.chain).to.equal(chainLink(chainLink(LEGACY_PREV, second!), third!));
      // The events written before are as they were.
      expect((await collect(store.readAll())).slice(0, 3)).to.deep.equal(before);
      const report = await verifyLog(store, { keys: ring.publicKeys() });
      expect(report, JSON.stringify(report.breaks)).to.include({ verified: true, unlinkedEvents: 3, chainedEvents: 2 });
      expect(report.anchors).to.have.length(1);
      expect(report.anchors[0]).to.include({ coveredEvents: 3, valid: true });

      await store.close();
      rewriteStoredEvent(file, before[2]!.id, ({ data, metadata }) => ({ data: data.replace('elsewhere', 'elsewhare'), metadata }));
      store = SqliteEventStore.open(file);
      const altered = await verifyLog(store, { keys: ring.publicKeys() });
      expect(altered.verified).to.equal(false);
      expect(altered.breaks.map((b) => b.reason)).to.deep.equal(['anchor-digest']);
      // Checked against another key, the signature fails too.
      const stranger = await openKeyStoreAuditKeyRing(SqliteKeyStore.open(path.join(tempDir(), 'keys.sqlite')), clock);
      expect((await verifyLog(store, { keys: stranger.publicKeys() })).breaks.map((b) => b.reason)).to.deep.equal(['anchor-digest', 'anchor-signature']);
    } finally {
      await keys.close();
    }
  });

  it('the same chains verify on the EventStoreDB adapter: appended there, and moved there by log import', async () => {
    const server = await EsdbStandIn.start();
    const esdb: EventStore = EventStoreDbEventStore.connect(server.connectionString());
    const other = await EsdbStandIn.start();
    try {
      const remote = new EventLog(esdb, catalog(), clock, { chains: true });
      await remote.append('note-a', [{ type: 'note.added', data: { projectId: randomUUID(), text: 'on EventStoreDB', n: 1 } }], 'no_stream', { actor, causationId: randomUUID() });
      await Promise.all(Array.from({ length: 10 }, (_, i) => remote.append('note-a', [{ type: 'note.added', data: { text: `any ${i}` } }], 'any', { actor })));
      expect(await verifyLog(esdb, { keys: null })).to.include({ verified: true, chainedEvents: 11 });

      for (let i = 0; i < 20; i++) await log.append(`note-${i % 3}`, [{ type: 'note.added', data: { text: `local ${i}` } }], 'any', { actor, correlationId: randomUUID() });
      const exported = path.join(dir, 'log.ndjson');
      await exportLog(store, exported, { now: () => clock.now() });
      const target = EventStoreDbEventStore.connect(other.connectionString());
      try {
        await importLog(target, exported, {});
        expect(await verifyLog(store, { keys: null })).to.include({ verified: true, chainedEvents: 20 });
        expect(await verifyLog(target, { keys: null })).to.include({ verified: true, chainedEvents: 20 });
      } finally {
        await target.close();
      }
    } finally {
      await esdb.close();
      await server.stop();
      await other.stop();
    }
  });
});

import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { pino } from 'pino';
import { MongoClient } from 'mongodb';
import { loadConfig } from '../../src/config/config.ts';
import { systemClock } from '../../src/clock.ts';
import { EventLog } from '../../src/event-store/event-log.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { SqliteReadModelStore } from '../../src/read-models/sqlite-read-model-store.ts';
import { serviceEventCatalog } from '../../src/service/event-catalog.ts';
import { gatedAppends, WriteGate, WritesRefusedError } from '../../src/audit/log-integrity.ts';
import { startLogTree, type LogTreeRuntime } from '../../src/audit/log-tree-runtime.ts';
import { LogTreeFollower } from '../../src/audit/log-tree-follower.ts';
import { MongoLogTreeStore } from '../../src/audit/mongo-log-tree-store.ts';
import { eventLeafHash } from '../../src/audit/log-leaf.ts';
import { verifyInclusion } from '../../src/audit/merkle-tree.ts';
import { treeRoot } from '../../src/audit/log-checkpoints.ts';
import { collect } from '../../src/event-store/event-store.ts';
import { mongoServer, mongoServerPending } from '../support/mongo-server.ts';
import { eventually } from '../support/engine-fixture.ts';
import { tempDir } from '../support/temp-dir.ts';

const pending = await mongoServerPending();
const metadata = () => ({ actor: { type: 'system' as const, id: 'test' }, occurredAt: new Date().toISOString(), schemaVersion: 1, correlationId: randomUUID(), causationId: null });

/**
 * With the read models on MongoDB the log tree is kept there too, so an API-only process on another host than
 * the projector's reads the one tree: it follows the start-up check's finding (writes refused while the
 * projector process found the log does not extend its published checkpoint, taken again once a later start found
 * it does) and serves proofs from the tree the projector's follower keeps.
 */
describe('log tree on MongoDB: an API-only process on another host follows the projector\'s tree', function () {
  if (pending) {
    it(`refuses writes on the projector's finding and serves its proofs [pending: ${pending}]`);
    return;
  }
  this.timeout(60_000);
  let url: string;
  let database: string;
  let events: SqliteEventStore;
  let replica: LogTreeRuntime | undefined;
  let projector: MongoLogTreeStore;
  const logger = pino({ level: 'silent' });

  before(async () => {
    const server = new URL((await mongoServer()).url);
    database = `annals_replica_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    server.pathname = `/${database}`;
    url = server.toString();
    const dir = tempDir();
    events = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
    const note = (i: number) => ({ id: randomUUID(), type: 'test.noted', data: { i }, metadata: metadata() });
    for (let i = 0; i < 5; i++) await events.append(`notes-${i}`, [note(i)], 'no_stream');
    // The projector process's store: its follower fills the tree from the log.
    projector = await MongoLogTreeStore.connect(url);
    await new LogTreeFollower({ events, tree: projector, logger, stopWhenCaughtUp: true, retryMs: 50 }).run();
  });
  after(async () => {
    await replica?.stop();
    await projector?.close();
    await events?.close();
    const client = new MongoClient(url);
    await client.db(database).dropDatabase().finally(() => client.close());
  });

  it('refuses writes while the tree store says the log does not extend its published checkpoint, and takes them again after; proofs come from the projector\'s tree', async () => {
    const dataDir = path.join(tempDir(), 'replica-data');
    const config = loadConfig({ DATA_DIR: dataDir, MONGODB_URL: url, ROLES: 'api' });
    const gate = new WriteGate();
    const gated = gatedAppends(events, gate);
    replica = await startLogTree(config, {
      events,
      ungatedLog: new EventLog(events, serviceEventCatalog(), systemClock),
      log: new EventLog(gated, serviceEventCatalog(), systemClock),
      readModels: SqliteReadModelStore.open(path.join(tempDir(), 'read-models.sqlite')),
      ring: undefined,
      clock: systemClock,
      logger,
      projector: false,
      gate,
      integrityPollMs: 50,
    });
    expect(await replica.integrity).to.equal(null);
    expect(gate.refusal).to.equal(null);

    // The projector process's start-up check, on its own host, finds a mismatch.
    await projector.setIntegrity({ state: 'mismatch', detail: 'the log differs from the checkpoint of size 5 between positions 2 and 3', firstLeaf: 2, checkedAt: new Date().toISOString() });
    await eventually(async () => gate.refusal, (refusal) => refusal !== null);
    let refused: unknown;
    await gated.append('notes-refused', [{ id: randomUUID(), type: 'test.noted', data: {}, metadata: metadata() }], 'any').catch((error: unknown) => (refused = error));
    expect(refused).to.be.instanceOf(WritesRefusedError);
    expect((refused as Error).message).to.contain('between positions 2 and 3');

    // Restarted with an override (or on a restored log), the projector records it: the replica takes writes again.
    await projector.setIntegrity({ state: 'overridden', detail: 'the log differs ...', firstLeaf: 2, checkedAt: new Date().toISOString() });
    await eventually(async () => gate.refusal, (refusal) => refusal === null);

    // Proofs: a checkpoint the projector signed, an event's inclusion in it, read by the replica.
    const { size } = await projector.state();
    const rootHash = await treeRoot(projector, size);
    await projector.putCheckpoint({ size, rootHash, note: `test.example/log\n${size}\n${Buffer.from(rootHash).toString('base64')}\n\n— test.example/log AAAAAA==\n`, signedAt: new Date().toISOString(), cosignatures: {}, timestampToken: null });
    const [event] = await collect(events.readAll({ maxCount: 1 }));
    const proof = await replica.proofs.inclusion(event!.id);
    expect(proof).to.include({ leafIndex: 0, treeSize: size });
    expect(verifyInclusion(eventLeafHash(event!), 0, size, proof.proof.map((h) => new Uint8Array(Buffer.from(h, 'base64'))), rootHash)).to.equal(true);
  });
});

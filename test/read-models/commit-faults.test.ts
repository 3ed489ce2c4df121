/**
 * No commit lands in part, on any store: the read-model conformance suite run over a store that puts each
 * commit through a fault at every write in turn (test/support/fault-checked-store.ts), in each fault mode
 * (test/support/write-faults.ts), on SQLite and on MongoDB (MONGODB_URL, a container or FerretDB: on
 * FerretDB and standalone servers through the journal, on a replica set in transactions).
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import { MongoReadModelStore } from '../../src/read-models/mongo-read-model-store.ts';
import { SqliteReadModelStore } from '../../src/read-models/sqlite-read-model-store.ts';
import type { ReadModelStore } from '../../src/read-models/read-model-store.ts';
import type { AdapterHarness, HarnessOrPending } from '../support/conformance.ts';
import { FaultCheckedStore, type FaultStats } from '../support/fault-checked-store.ts';
import { lacksOn, mongoServer, mongoServerPending, type MongoServer } from '../support/mongo-server.ts';
import { tempDir } from '../support/temp-dir.ts';
import { FAULT_MODES, MongoWriteFaults, SqliteWriteFaults, type FaultMode } from '../support/write-faults.ts';
import { BULK_WRITES, readModelStoreConformance } from './read-model-store.conformance.ts';

/** Sums the stats of the stores a suite made, and checks after it that faults were injected and some commits landed through them. */
function tally(title: string, landing: boolean): { add(store: FaultCheckedStore): void; check(): void } {
  const stores: FaultCheckedStore[] = [];
  return {
    add: (store) => stores.push(store),
    check() {
      const total = stores.reduce<FaultStats>((sum, s) => ({ commits: sum.commits + s.stats.commits, faults: sum.faults + s.stats.faults, landed: sum.landed + s.stats.landed, maxWrites: Math.max(sum.maxWrites, s.stats.maxWrites) }), { commits: 0, faults: 0, landed: 0, maxWrites: 0 });
      // A suite whose faults never fire proves nothing.
      expect(total.faults, `${title}: faults injected`).to.be.greaterThan(total.commits);
      // A transaction lands whole or not at all: only a journal's commit point, or a lost acknowledgement, lets one land through a fault.
      if (landing) expect(total.landed, `${title}: commits that landed through a fault after their commit point`).to.be.greaterThan(0);
      else expect(total.landed, `${title}: commits that landed through a fault`).to.equal(0);
      if (process.env['FAULT_STATS']) console.log(`${title}: ${JSON.stringify(total)}`);
    },
  };
}

/** Not for these runs: a commit of 20,000 documents gets dozens of faults, each followed by a read of the whole generation. */
const HEAVY = 'commits of thousands of documents under faults (each fault reads the generation back)';
const heavy = (feature: string) => (feature === BULK_WRITES ? `not run under faults: ${HEAVY}` : undefined);

function sqliteHarness(mode: FaultMode): AdapterHarness<ReadModelStore> {
  const stats = tally(`SQLite, ${mode}`, mode === 'lost-ack');
  const faults: SqliteWriteFaults[] = [];
  return {
    async create() {
      const dir = tempDir();
      const file = path.join(dir, 'subject.sqlite');
      const open = async () => {
        const store = SqliteReadModelStore.open(file);
        const injector = new SqliteWriteFaults(file);
        faults.push(injector);
        return { store, faults: injector, call: <T>(run: () => Promise<T>) => injector.faultCall(run) };
      };
      const store = new FaultCheckedStore(await open(), open, SqliteReadModelStore.open(path.join(dir, 'reference.sqlite')), mode);
      stats.add(store);
      return store;
    },
    async teardown() {
      for (const injector of faults.splice(0)) injector.close();
      stats.check();
    },
    lacks: heavy,
  };
}

async function mongoHarness(mode: FaultMode): Promise<HarnessOrPending<ReadModelStore>> {
  const pending = await mongoServerPending();
  if (pending) return { pending };
  const stats = tally(`MongoDB, ${mode}`, true);
  let server: MongoServer | undefined;
  let client: MongoClient | undefined;
  const databases: string[] = [];
  return {
    async setup() {
      server = await mongoServer();
      client = await MongoClient.connect(server.url);
    },
    async create() {
      const name = `annals_faults_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
      databases.push(name, `${name}_ref`);
      const open = async () => {
        const injector = new MongoWriteFaults();
        return { store: new MongoReadModelStore(injector.wrap(client!.db(name))) as ReadModelStore, faults: injector };
      };
      const store = new FaultCheckedStore(await open(), open, new MongoReadModelStore(client!.db(`${name}_ref`)), mode);
      stats.add(store);
      return store;
    },
    async teardown() {
      try {
        for (const name of databases.splice(0)) await client?.db(name).dropDatabase();
      } finally {
        await client?.close();
      }
      stats.check();
    },
    lacks: (feature) => lacksOn(server!, feature) ?? heavy(feature),
  };
}

const harnesses = await Promise.all(FAULT_MODES.map(async (mode) => ({ mode, mongo: await mongoHarness(mode) })));
for (const { mode, mongo } of harnesses) {
  describe(`commits under faults (${mode} at every write in turn)`, function () {
    this.timeout(120_000);
    readModelStoreConformance(`read models under faults (${mode}): SQLite`, sqliteHarness(mode));
    readModelStoreConformance(`read models under faults (${mode}): MongoDB`, mongo);
  });
}

/**
 * The service's projections folded under faults equal a clean rebuild, byte for byte. Every projection folds
 * a log of real domain events (test/support/domain-history.ts) with small batches; each commit's first
 * attempt faults at its k-th write, k taking every value from 1 to K in turn over the commits; after each
 * fault the projector is stopped and a new one started (on a store opened anew after a `kill`, as a restarted
 * process), which completes an interrupted commit and folds on. Then the read models are dumped and compared
 * with those of an uninterrupted fold into a fresh store of the same kind.
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { expect } from 'chai';
import { MongoClient } from 'mongodb';
import { ManualClock } from '../../src/clock.ts';
import { EventLog } from '../../src/event-store/event-log.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { schemaOf, type Projection } from '../../src/projection-engine/projection.ts';
import { Projector } from '../../src/projection-engine/projector.ts';
import { MongoReadModelStore } from '../../src/read-models/mongo-read-model-store.ts';
import { SqliteReadModelStore } from '../../src/read-models/sqlite-read-model-store.ts';
import type { CommitOptions, DocumentWrite, ModelTarget, ReadModelStore } from '../../src/read-models/read-model-store.ts';
import { serviceEventCatalog } from '../../src/service/event-catalog.ts';
import { projections } from '../../projections/index.ts';
import { DelegatingStore } from '../support/delegating-store.ts';
import { writeDomainHistory, type DomainHistory } from '../support/domain-history.ts';
import { dumpReadModels } from '../support/dump-read-models.ts';
import { silentLogger } from '../support/engine-fixture.ts';
import { mongoServer, mongoServerPending } from '../support/mongo-server.ts';
import { tempDir } from '../support/temp-dir.ts';
import { FAULT_MODES, MongoWriteFaults, SqliteWriteFaults, type FaultMode, type WriteFaults } from '../support/write-faults.ts';

/** k runs from 1 to this over the commits, again and again. */
const K = 12;
const NOW = '2026-11-22T12:00:00.000Z';

interface Opened {
  store: ReadModelStore;
  faults: WriteFaults;
  call?: <T>(run: () => Promise<T>) => Promise<T>;
}

/** Faults each commit's first attempt at its k-th write, k = 1, 2, ... K, 1, 2, ...; `faulted` resolves at each fault. */
class FaultingStore extends DelegatingStore {
  #opened: Opened;
  readonly #open: () => Promise<Opened>;
  readonly #mode: FaultMode;
  readonly #attempted = new Set<string>();
  #commits = 0;
  faults = 0;
  #onFault: (() => void) | undefined;

  constructor(opened: Opened, open: () => Promise<Opened>, mode: FaultMode) {
    super();
    this.#opened = opened;
    this.#open = open;
    this.#mode = mode;
  }

  protected override get inner(): ReadModelStore {
    return this.#opened.store;
  }

  get dead(): boolean {
    return this.#opened.faults.dead;
  }

  /** Resolves at the next fault. */
  nextFault(): Promise<void> {
    return new Promise((resolve) => (this.#onFault = resolve));
  }

  /** A store opened anew on the same data, as a restarted process. */
  async reopen(): Promise<void> {
    await this.#opened.store.close().catch(() => undefined);
    this.#opened = await this.#open();
  }

  override async commit(target: ModelTarget, writes: readonly DocumentWrite[], checkpoint: bigint, now: string, options?: CommitOptions): Promise<void> {
    const key = `${target.projection}:${checkpoint}`;
    const run = () => this.#opened.store.commit(target, writes, checkpoint, now, options);
    if (this.#attempted.has(key)) return run();
    this.#attempted.add(key);
    const k = 1 + (this.#commits++ % K);
    this.#opened.faults.arm(k, this.#mode);
    try {
      await (this.#opened.call ? this.#opened.call(run) : run());
    } finally {
      if (this.#opened.faults.disarm().fired) {
        this.faults += 1;
        this.#onFault?.();
      }
    }
  }
}

/** Folds a projection into generation 1 to the end of the log, starting a new projector after each fault. */
async function fold(projection: Projection, log: EventLog, store: ReadModelStore, clock: ManualClock): Promise<number> {
  const faulting = store instanceof FaultingStore ? store : undefined;
  for (let restarts = 0; ; restarts++) {
    expect(restarts, `${projection.name}: restarts`).to.be.below(2_000);
    const projector = new Projector({ projection, generation: 1, log, store, clock, logger: silentLogger, stopWhenCaughtUp: true, batchSize: 4, holder: `test:${projection.name}`, retryDelayMs: 1, pausePollMs: 5 });
    const run = projector.run();
    const outcome = await Promise.race([run.then((state) => ({ state })), faulting ? faulting.nextFault().then(() => ({ fault: true })) : new Promise<never>(() => {})]);
    if ('state' in outcome) {
      expect(outcome.state, `${projection.name}: ${JSON.stringify(projector.failure)}`).to.equal('live');
      return restarts;
    }
    await projector.stop();
    await run.catch(() => undefined);
    if (faulting?.dead) await faulting.reopen();
  }
}

async function foldAll(history: DomainHistory, store: ReadModelStore): Promise<Record<string, unknown>> {
  const eventsFile = path.join(tempDir(), 'events.sqlite');
  for (const suffix of ['', '-wal']) if (fs.existsSync(history.eventsFile + suffix)) fs.copyFileSync(history.eventsFile + suffix, eventsFile + suffix);
  const events = SqliteEventStore.open(eventsFile);
  const clock = new ManualClock(NOW);
  const log = new EventLog(events, serviceEventCatalog(), clock);
  try {
    for (const projection of projections) {
      await store.createGeneration(schemaOf(projection), 1, projection.version, NOW);
      await store.activateGeneration(projection.name, 1, null, NOW);
      await fold(projection, log, store, clock);
    }
    return await dumpReadModels(store, projections);
  } finally {
    await events.close();
  }
}

interface StoreKind {
  name: string;
  pending?: string;
  setup?(): Promise<void>;
  /** A fresh store, and a way to open it anew with faults. */
  fresh(): Promise<{ clean: ReadModelStore; faulty(): Promise<Opened> }>;
  teardown?(): Promise<void>;
}

const sqlite: StoreKind = {
  name: 'SQLite',
  async fresh() {
    const dir = tempDir();
    const file = path.join(dir, 'faulty.sqlite');
    return {
      clean: SqliteReadModelStore.open(path.join(dir, 'clean.sqlite')),
      async faulty() {
        const store = SqliteReadModelStore.open(file);
        const faults = new SqliteWriteFaults(file);
        return { store, faults, call: (run) => faults.faultCall(run) };
      },
    };
  },
};

let mongoClient: MongoClient | undefined;
const mongoDatabases: string[] = [];
const mongo: StoreKind = {
  name: 'MongoDB',
  ...((await mongoServerPending()) ? { pending: (await mongoServerPending())! } : {}),
  async setup() {
    mongoClient = await MongoClient.connect((await mongoServer()).url);
  },
  async fresh() {
    const name = `annals_pfaults_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
    mongoDatabases.push(name, `${name}_clean`);
    return {
      clean: new MongoReadModelStore(mongoClient!.db(`${name}_clean`)),
      async faulty() {
        const faults = new MongoWriteFaults();
        return { store: new MongoReadModelStore(faults.wrap(mongoClient!.db(name))), faults };
      },
    };
  },
  async teardown() {
    for (const name of mongoDatabases.splice(0)) await mongoClient?.db(name).dropDatabase();
    await mongoClient?.close();
  },
};

describe('projectors under faults: the read models equal a clean fold, byte for byte', function () {
  this.timeout(600_000);
  let history: DomainHistory;
  before(async () => {
    history = await writeDomainHistory();
  });

  for (const kind of [sqlite, mongo]) {
    describe(kind.pending ? `${kind.name} [pending: ${kind.pending}]` : kind.name, () => {
      if (kind.pending) {
        for (const mode of FAULT_MODES) it(`${mode} at the k-th write of every commit, k = 1..${K} in turn`);
        return;
      }
      let clean: string;
      before(async () => {
        await kind.setup?.();
        const { clean: store } = await kind.fresh();
        try {
          clean = JSON.stringify(await foldAll(history, store));
        } finally {
          await store.close();
        }
      });
      after(async () => {
        await kind.teardown?.();
      });

      for (const mode of FAULT_MODES) {
        it(`${mode} at the k-th write of every commit, k = 1..${K} in turn`, async () => {
          const { faulty } = await kind.fresh();
          const store = new FaultingStore(await faulty(), faulty, mode);
          try {
            const dump = JSON.stringify(await foldAll(history, store));
            expect(store.faults, 'faults injected').to.be.greaterThan(50);
            if (process.env['FAULT_STATS']) console.log(`${kind.name}, ${mode}: ${store.faults} faults over ${history.events} events`);
            expect(dump === clean, 'the read models differ from a clean fold').to.equal(true);
          } finally {
            await store.close();
          }
        });
      }
    });
  }
});

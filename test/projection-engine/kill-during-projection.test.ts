import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { SqliteReadModelStore } from '../../src/read-models/sqlite-read-model-store.ts';
import { projections } from '../../projections/index.ts';
import { entryArgs } from '../support/child-process.ts';
import { tempDir } from '../support/temp-dir.ts';
import { writeHistory } from '../support/synthetic-history.ts';
import { dumpReadModels } from '../support/dump-read-models.ts';
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { MongoReadModelStore } from '../../src/read-models/mongo-read-model-store.ts';
import { mongoServer, mongoServerPending } from '../support/mongo-server.ts';
import { writeDomainHistory } from '../support/domain-history.ts';


/** Runs the projection child; kills it with SIGKILL `killAfterMs` after it reports "started" (or lets it finish). */
function runChild(dir: string, killAfterMs?: number, options: { env?: Record<string, string>; batch?: number } = {}): Promise<'killed' | 'done'> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...entryArgs('test/projection-engine/fixtures/run-projections.ts'), dir, String(options.batch ?? 97)], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...options.env } });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (killAfterMs !== undefined && out.includes('started')) {
        killAfterMs !== -1 && setTimeout(() => child.kill('SIGKILL'), killAfterMs);
        killAfterMs = -1;
      }
    });
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve('killed');
      else if (code === 0 && out.includes('done')) resolve('done');
      else reject(new Error(`projection child exited with ${code ?? signal}`));
    });
  });
}

async function dump(dir: string) {
  const store = SqliteReadModelStore.open(path.join(dir, 'read-models.sqlite'));
  try {
    return await dumpReadModels(store, projections);
  } finally {
    await store.close();
  }
}

async function checkpoints(dir: string): Promise<bigint[]> {
  const store = SqliteReadModelStore.open(path.join(dir, 'read-models.sqlite'));
  try {
    return (await store.listGenerations()).map((g) => g.checkpoint ?? 0n);
  } finally {
    await store.close();
  }
}

describe('projection engine: SIGKILL at random points during projection', function () {
  this.timeout(180_000);

  it('read models after kills and restarts equal those of an uninterrupted run', async () => {
    const source = tempDir();
    const events = SqliteEventStore.open(path.join(source, 'events.sqlite'));
    const total = 30_000;
    await writeHistory(events, total, { entries: 700, batch: 7, concurrency: 32 });
    await events.close();

    const reference = tempDir();
    const interrupted = tempDir();
    for (const dir of [reference, interrupted]) fs.copyFileSync(path.join(source, 'events.sqlite'), path.join(dir, 'events.sqlite'));

    expect(await runChild(reference)).to.equal('done');
    const expected = await dump(reference);

    const seed = Number(process.env.KILL_TEST_SEED ?? Date.now() % 100_000);
    let state = seed;
    const random = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const progress: string[] = [];
    let midway = 0;
    for (let kill = 0; kill < 8; kill++) {
      const outcome = await runChild(interrupted, Math.floor(random() * 400));
      const reached = await checkpoints(interrupted);
      progress.push(`${outcome}@${reached.join('/')}`);
      if (outcome === 'killed' && reached.some((c) => c > 0n && c < BigInt(total))) midway++;
    }
    expect(await runChild(interrupted)).to.equal('done');
    const actual = await dump(interrupted);
    // The kills must have landed mid-projection for the test to mean anything.
    expect(midway, `seed ${seed}: ${progress.join(', ')}`).to.be.greaterThan(0);
    expect(actual, `seed ${seed}: ${progress.join(', ')}`).to.deep.equal(expected);
    expect((expected['audit-trail'] as { collections: { records: unknown[] } }).collections.records).to.have.length(total);
  });
});

describe('projection engine: SIGKILL at random points during projection, read models on MongoDB', function () {
  this.timeout(600_000);
  let client: MongoClient | undefined;
  let url: string;
  const databases: string[] = [];
  before(async function () {
    const pending = await mongoServerPending();
    if (pending) {
      this.test!.parent!.title += ` [pending: ${pending}]`;
      this.skip();
    }
    url = (await mongoServer()).url;
    client = await MongoClient.connect(url);
  });
  after(async () => {
    for (const name of databases) await client?.db(name).dropDatabase();
    await client?.close();
  });

  const dumpOf = async (database: string) => dumpReadModels(new MongoReadModelStore(client!.db(database)), projections);
  const checkpointsOf = async (database: string) => (await new MongoReadModelStore(client!.db(database)).listGenerations()).map((g) => g.checkpoint ?? 0n);

  it('read models after kills and restarts equal those of an uninterrupted run, byte for byte', async () => {
    // Real domain events: FerretDB scans a collection for each guarded write, so the synthetic history of the
    // SQLite test (30,000 events) would take hours; the kills land in the middle of this one as they do there.
    const history = await writeDomainHistory(8);
    const source = tempDir();
    fs.copyFileSync(history.eventsFile, path.join(source, 'events.sqlite'));
    const name = `annals_kill_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    databases.push(`${name}_reference`, `${name}_killed`);
    const env = (database: string) => ({ MONGODB_URL: url, MONGODB_DATABASE: database });

    expect(await runChild(source, undefined, { env: env(`${name}_reference`), batch: 7 })).to.equal('done');
    const expected = JSON.stringify(await dumpOf(`${name}_reference`));

    const seed = Number(process.env.KILL_TEST_SEED ?? Date.now() % 100_000);
    let state = seed;
    const random = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const progress: string[] = [];
    let midway = 0;
    for (let kill = 0; kill < 5; kill++) {
      const outcome = await runChild(source, 100 + Math.floor(random() * 2_000), { env: env(`${name}_killed`), batch: 7 });
      const reached = await checkpointsOf(`${name}_killed`);
      progress.push(`${outcome}@${reached.join('/')}`);
      if (outcome === 'killed' && reached.some((c) => c > 0n && c < BigInt(history.events))) midway++;
    }
    expect(await runChild(source, undefined, { env: env(`${name}_killed`), batch: 7 })).to.equal('done');
    const actual = JSON.stringify(await dumpOf(`${name}_killed`));
    expect(midway, `seed ${seed}: ${progress.join(', ')}`).to.be.greaterThan(0);
    if (process.env['FAULT_STATS']) console.log(`seed ${seed}: ${progress.join(', ')} (of ${history.events} events)`);
    expect(actual === expected, `seed ${seed}: the read models differ from an uninterrupted run (${progress.join(', ')})`).to.equal(true);
  });
});

/**
 * Moving a log between event stores (src/event-store/log-transfer.ts): SQLite to SQLite, SQLite to EventStoreDB
 * (test/support/esdb-server.ts: the server EVENTSTORE_CONNECTION_STRING names, a container, or the gRPC
 * stand-in, which the title names), and the operator commands `log export` / `log import` / `log verify` as
 * real processes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { SqliteKeyStore } from '../../src/key-store/sqlite-key-store.ts';
import { EventStoreDbEventStore } from '../../src/event-store/esdb-event-store.ts';
import { collect, type EventStore } from '../../src/event-store/event-store.ts';
import { StreamNotFoundError } from '../../src/event-store/errors.ts';
import { digestStore, exportLog, ImportTargetError, importLog } from '../../src/event-store/log-transfer.ts';
import { LogFileError } from '../../src/event-store/log-file.ts';
import { tempDir } from '../support/temp-dir.ts';
import { writeHistory } from '../support/synthetic-history.ts';
import { runEntry } from '../support/child-process.ts';
import { describeEsdbTarget, resolveEsdbTarget, startEsdbServer, type StartedEsdbServer } from '../support/esdb-server.ts';
import { event } from './event-store.conformance.ts';

const now = () => new Date('2026-11-23T10:00:00.000Z');
const SUBMISSIONS = ['7d9e5d9a-3f3a-4c47-9a55-0a4f2f1d0001', '7d9e5d9a-3f3a-4c47-9a55-0a4f2f1d0002'];

/** A source log with interleaved streams, unicode, a deleted stream and a deleted-then-recreated one. */
async function sourceLog(store: EventStore): Promise<void> {
  await writeHistory(store, 400, { entries: 17, batch: 3 });
  await store.append('gone-1', [event('thing.created', { text: 'héllo 漢字 😀' }), event('thing.renamed', { n: 2 })], 'no_stream');
  await store.deleteStream('gone-1');
  await store.append('again-1', [event('a'), event('b')], 'no_stream');
  await store.deleteStream('again-1');
  await store.append('again-1', [event('c', { nested: { list: [1, null, 'x'] } })], 'any');
  await store.append('submission-1', [event('contact-submission.received', { submissionId: SUBMISSIONS[0], sealedValues: 'b64:AAECAw==' }, { causationId: 'cause-1' })], 'no_stream');
  await store.append('submission-2', [event('contact-submission.received', { submissionId: SUBMISSIONS[1], sealedValues: 'b64:BAUGBw==' })], 'no_stream');
}

/** A source SQLite log (sourceLog) exported to a file, and a target store; both closed after `body`. */
async function withExport(target: (dir: string) => EventStore, body: (t: { dir: string; source: EventStore; target: EventStore; file: string }) => Promise<void>): Promise<void> {
  const dir = tempDir();
  const source = SqliteEventStore.open(path.join(dir, 'source.sqlite'));
  const into = target(dir);
  try {
    await sourceLog(source);
    const file = path.join(dir, 'log.ndjson');
    await exportLog(source, file, { now });
    await body({ dir, source, target: into, file });
  } finally {
    await source.close();
    await into.close();
  }
}

const sqliteTarget = (dir: string) => SqliteEventStore.open(path.join(dir, 'target.sqlite'));

describe('moving a log between event stores', () => {
  it('SQLite to SQLite: the same events, ids, revisions, order, metadata and deletions; verified by digest', async () => {
    await withExport(sqliteTarget, async ({ dir, source, target, file }) => {
      const progress: number[] = [];
      const exported = await exportLog(source, path.join(dir, 'again.ndjson'), { now, onProgress: (p) => progress.push(p.fraction) });
      expect(exported.events).to.equal(407);
      expect(progress.at(-1)).to.equal(1);
      expect(fs.readFileSync(path.join(dir, 'again.ndjson'), 'utf8')).to.equal(fs.readFileSync(file, 'utf8'));
      const result = await importLog(target, file);
      expect(result).to.include({ events: 407, alreadyPresent: 0, appended: 407, verified: true });
      expect(result.target).to.deep.equal(await digestStore(source));
      const [from, to] = [await collect(source.readAll()), await collect(target.readAll())];
      expect(to.map((e) => [e.id, e.streamId, e.revision, e.type, e.data, e.metadata])).to.deep.equal(from.map((e) => [e.id, e.streamId, e.revision, e.type, e.data, e.metadata]));
      const missing = await collect(target.readStream('gone-1')).then(() => null, (e: unknown) => e);
      expect(missing).to.be.instanceOf(StreamNotFoundError);
      expect((await collect(target.readStream('again-1'))).map((e) => [e.revision, e.type])).to.deep.equal([[2n, 'c']]);
    });
  });

  it('an interrupted import resumes where it stopped, without duplicates; a store holding another log is refused', async () => {
    await withExport(sqliteTarget, async ({ dir, target, file }) => {
      const first = await importLog(target, file, { stopAfter: 150 });
      expect(first).to.include({ appended: 150, verified: false });
      const second = await importLog(target, file);
      expect(second).to.include({ alreadyPresent: 150, appended: 257, verified: true });
      const third = await importLog(target, file);
      expect(third).to.include({ alreadyPresent: 407, appended: 0, verified: true });
      expect(await collect(target.readAll())).to.have.length(407);

      const other = SqliteEventStore.open(path.join(dir, 'other.sqlite'));
      await other.append('elsewhere', [event('x')], 'no_stream');
      const refused = await importLog(other, file).then(() => null, (e: unknown) => e);
      expect(refused).to.be.instanceOf(ImportTargetError);
      expect(await collect(other.readAll())).to.have.length(1);
      await other.close();
    });
  });

  it('refuses a file that was cut or changed, before writing anything', async () => {
    await withExport(sqliteTarget, async ({ dir, target, file }) => {
      const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
      fs.writeFileSync(path.join(dir, 'cut.ndjson'), `${lines.slice(0, 100).join('\n')}\n`);
      fs.writeFileSync(path.join(dir, 'changed.ndjson'), `${lines.map((l, i) => (i === 5 ? l.replace('"revision.saved"', '"revision.forged"') : l)).join('\n')}\n`);
      for (const bad of ['cut.ndjson', 'changed.ndjson']) {
        const error = await importLog(target, path.join(dir, bad)).then(() => null, (e: unknown) => e);
        expect(error, bad).to.be.instanceOf(LogFileError);
      }
      expect(await target.headPosition()).to.equal(null);
    });
  });

  it('the operator commands: log export, log import (then again: nothing twice) and log verify, as processes', async function () {
    this.timeout(120_000);
    const from = tempDir();
    const to = tempDir();
    const source = SqliteEventStore.open(path.join(from, 'events.sqlite'));
    await sourceLog(source);
    await source.close();
    const keys = SqliteKeyStore.open(path.join(from, 'keys.sqlite'));
    const key = Buffer.alloc(32, 7);
    await keys.put(SUBMISSIONS[0]!, key);
    await keys.put(SUBMISSIONS[1]!, Buffer.alloc(32, 9));
    await keys.destroy(SUBMISSIONS[1]!); // erased before the move: stays erased after it
    await keys.close();
    const file = path.join(tempDir(), 'moved.ndjson');
    const cli = (dataDir: string, ...args: string[]) => runEntry('src/cli/main.ts', args, { DATA_DIR: dataDir });

    const exported = await cli(from, 'log', 'export', '--to', file);
    expect(exported.code, exported.stderr).to.equal(0);
    expect(exported.stderr).to.match(/export .*\| 407 events \| \d+ events\/s/);
    const summary = JSON.parse(exported.stdout) as { events: number; streams: number; digest: string; eventsPerSecond: number };
    expect(summary).to.include({ events: 407, streams: 21 });
    // The whole log: readable by the exporting user only (issue 41).
    expect(fs.statSync(file).mode & 0o777).to.equal(0o600);

    const imported = await cli(to, 'log', 'import', file, '--keys-from', path.join(from, 'keys.sqlite'));
    expect(imported.code, imported.stderr).to.equal(0);
    expect(imported.stderr).to.match(/import .*\| 407 events/);
    expect(imported.stderr).to.include('verified: 407 events of 21 streams');
    const result = JSON.parse(imported.stdout) as { verified: boolean; appended: number; target: { digest: string }; keys: unknown };
    expect(result).to.include({ verified: true, appended: 407 });
    expect(result.keys).to.deep.equal({ copied: 1, erased: 1, missing: 0 });
    const moved = SqliteKeyStore.open(path.join(to, 'keys.sqlite'));
    expect((await moved.get(SUBMISSIONS[0]!))?.equals(key)).to.equal(true);
    expect(await moved.destroyed(SUBMISSIONS[1]!)).to.equal(true);
    await moved.close();
    expect(result.target.digest).to.equal(summary.digest);

    const rerun = JSON.parse((await cli(to, 'log', 'import', file, '--json')).stdout) as { alreadyPresent: number; appended: number; verified: boolean };
    expect(rerun).to.include({ alreadyPresent: 407, appended: 0, verified: true });
    const verify = await cli(to, 'log', 'verify', file);
    expect(verify.code, verify.stderr).to.equal(0);
    expect(JSON.parse(verify.stdout)).to.include({ verified: true });

    const refused = await cli(from, 'log', 'export', '--to', file);
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.include('exists already');
    const elsewhere = await cli(tempDir(), 'log', 'verify', file);
    expect(elsewhere.code).to.equal(1);
  });
});

const target = await resolveEsdbTarget();

describe(`moving a log: SQLite to EventStoreDB on ${describeEsdbTarget(target)}`, function () {
  this.timeout(240_000);
  let server: StartedEsdbServer;
  before(async () => {
    server = await startEsdbServer(target);
  });
  after(async () => {
    await server?.stop();
  });

  it('exports from SQLite, imports into an empty server (resuming after an interruption), verifies by digest, and exports back the same log', async function () {
    const store = EventStoreDbEventStore.connect(server.connectionString);
    try {
      if (target.kind === 'existing' && (await store.headPosition()) !== null) this.skip(); // an import needs an empty server: this one holds events
      await withExport(() => store, async ({ dir, source, target: into, file }) => {
        const first = await importLog(into, file, { stopAfter: 99 });
        expect(first).to.include({ appended: 99, verified: false });
        const resumed = await importLog(into, file);
        expect(resumed).to.include({ alreadyPresent: 99, appended: 308, verified: true });
        expect(resumed.target.digest).to.equal((await digestStore(source)).digest);
        // deletions and recreations moved as such
        expect(await collect(into.readStream('gone-1')).then(() => null, (e: unknown) => e)).to.be.instanceOf(StreamNotFoundError);
        expect((await collect(into.readStream('again-1'))).map((e) => [e.revision, e.type])).to.deep.equal([[2n, 'c']]);
        // and back: the server's log exported is the same log
        const back = path.join(dir, 'back.ndjson');
        expect((await exportLog(into, back, { now })).digest).to.equal(resumed.source.digest);
        // the server holds the correlation ids under its own names (what its $by_correlation_id projection reads)
        for await (const raw of (into as EventStoreDbEventStore).client.readStream('submission-1')) {
          expect(raw.event!.metadata).to.include({ $causationId: 'cause-1' });
        }
      });
    } finally {
      await store.close();
    }
  });
});

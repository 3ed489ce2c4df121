/**
 * Event store and rebuild throughput on the embedded default (SQLite), with realistic ~1 KB events.
 *
 *   npm run bench:eventstore -- [--sizes 100000,1000000] [--batch 100] [--singles 2000] [--json]
 *   npm run bench:eventstore -- --log SEED_DIR [--only public-content,content] [--json]
 *
 * With --log, only the rebuild of every projection, on a realistic content log: the events.sqlite of a
 * folder made by `npm run bench:public:seed` (entries created, saved, submitted and published, in two
 * locales), copied first. Prints each projection's events/s against reading the log, the wall time of
 * rebuilding them all (one after another, as `annals projections rebuild` does), and the bytes on disk of the
 * log and of the read models, with what each collection, index and search table of them costs.
 *
 * Measures, for each size:
 * - append, single events (one durable commit each), and batched (`--batch` events per append);
 * - baseline: the same rows inserted with bare better-sqlite3 in the same transactions (the floor);
 * - rebuild of every projection into a new generation, events/s, and the baseline of merely reading
 *   the log (readAll) in the same run.
 * Prints events/s and ratios to the baselines; absolute numbers on shared machines are noisy.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { systemClock } from '../../src/clock.ts';
import { EventLog } from '../../src/event-store/event-log.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { SqliteReadModelStore } from '../../src/read-models/sqlite-read-model-store.ts';
import { startRebuild } from '../../src/projection-engine/rebuild.ts';
import { serviceEventCatalog } from '../../src/service/event-catalog.ts';
import { projections } from '../../projections/index.ts';
import { revisionEvent } from '../../test/support/synthetic-history.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '100000,1000000' },
    batch: { type: 'string', default: '100' },
    singles: { type: 'string', default: '2000' },
    json: { type: 'boolean', default: false },
    log: { type: 'string' },
    only: { type: 'string' },
  },
});
const sizes = values.sizes.split(',').map(Number);
const batch = Number(values.batch);
const singles = Number(values.singles);
const say = (line: string) => process.stderr.write(`${line}\n`);
const perSecond = (n: number, ms: number) => Math.round((n * 1000) / ms);
const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

interface SizeResult {
  events: number;
  eventBytes: number;
  appendSingle: { events: number; perSecond: number; baselinePerSecond: number; ratio: number };
  appendBatched: { batch: number; perSecond: number; baselinePerSecond: number; ratio: number };
  readAll: { perSecond: number };
  /** perSecond: events of the log replayed per second (perCpuSecond: per second of the process's CPU time); folded: how many of them the projection handles. */
  rebuild: Array<{ projection: string; folded: number; perSecond: number; ratioToReadAll: number; cpuMs: number; perCpuSecond: number }>;
}

if (values.log) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'annals-bench-'));
  try {
    fs.copyFileSync(path.join(values.log, 'events.sqlite'), path.join(dir, 'events.sqlite'));
    const store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
    const t = performance.now();
    let read = 0;
    for await (const _ of store.readAll()) read++;
    const readAll = perSecond(read, performance.now() - t);
    say(`content log of ${values.log}: ${read.toLocaleString('en')} events; readAll ${readAll.toLocaleString('en')} events/s`);
    const t0 = performance.now();
    const rebuild = await rebuildEvery(store, path.join(dir, 'read-models.sqlite'), read, readAll);
    const wallMs = performance.now() - t0;
    say(`all ${rebuild.length} projections rebuilt in ${(wallMs / 1000).toFixed(1)} s wall (${perSecond(read * rebuild.length, wallMs).toLocaleString('en')} log events/s over all)`);
    await store.close();
    const disk = diskUse(dir);
    // The seed's entries (bench-seed.json beside its log): what each part costs per entry.
    const entries = seedEntries(values.log);
    const perEntry = (bytes: number) => (entries ? `${(bytes / entries / 1000).toFixed(2).padStart(6)} KB/entry` : '');
    say(`disk: events ${megabytes(disk.eventsBytes)}, read models ${megabytes(disk.readModelBytes)}${entries ? ` (${entries.toLocaleString('en')} entries: ${((disk.eventsBytes + disk.readModelBytes) / entries / 1000).toFixed(2)} KB per entry, the log ${(disk.eventsBytes / entries / 1000).toFixed(2)}, the read models ${(disk.readModelBytes / entries / 1000).toFixed(2)})` : ''}; every part of the read models (table, index or search table), largest first:`);
    for (const part of disk.readModelParts.filter((p) => p.bytes > 8192 * 2)) say(`  ${megabytes(part.bytes).padStart(9)}  ${perEntry(part.bytes)}  ${part.name}`);
    if (values.json) process.stdout.write(`${JSON.stringify({ log: values.log, events: read, entries, readAll: { perSecond: readAll }, rebuild, wallMs: Math.round(wallMs), disk }, null, 2)}\n`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  process.exit(0);
}

/** How many entries the seed in `folder` holds (its bench-seed.json), or undefined for a log without one. */
function seedEntries(folder: string): number | undefined {
  try {
    const seed = JSON.parse(fs.readFileSync(path.join(folder, 'bench-seed.json'), 'utf8')) as { entries?: unknown[] };
    return Array.isArray(seed.entries) ? seed.entries.length : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Bytes on disk of the log and the read models (WAL checkpointed), and what each read-model table, index and
 * search table costs (SQLite's dbstat), grouped by projection and collection, largest first.
 */
function diskUse(dir: string) {
  const size = (name: string) => {
    const file = path.join(dir, name);
    const db = new Database(file);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    return fs.statSync(file).size;
  };
  const eventsBytes = size('events.sqlite');
  const readModelBytes = size('read-models.sqlite');
  const db = new Database(path.join(dir, 'read-models.sqlite'), { readonly: true });
  const rows = db.prepare('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name').all() as Array<{ name: string; bytes: number }>;
  db.close();
  const parts = new Map<string, number>();
  for (const { name, bytes } of rows) {
    // rm_<projection>__<collection>__g<n>[__<index>], its primary key sqlite_autoindex_rm_..._1, and
    // fts_<projection>__<collection>__g<n>[_data...]: per collection, its table, each index, its search table.
    const match = /^(sqlite_autoindex_rm|rm|fts)_(.+?)__(.+?)__g\d+(?:__(.+)|_\w+)?$/.exec(name);
    const part = match?.[1] === 'fts' ? ' (search)' : match?.[1] === 'sqlite_autoindex_rm' ? ' (index of ids)' : match?.[4] ? ` (index ${match[4]})` : '';
    const key = match ? `${match[2]!.replaceAll('_', '-')}/${match[3]}${part}` : name;
    parts.set(key, (parts.get(key) ?? 0) + bytes);
  }
  const readModelParts = [...parts].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes);
  return { eventsBytes, readModelBytes, readModelParts };
}

/** Rebuilds every projection in turn into `file`, each timed from its start to its swap. */
async function rebuildEvery(store: SqliteEventStore, file: string, read: number, readAll: number) {
  const readModels = SqliteReadModelStore.open(file);
  const log = new EventLog(store, serviceEventCatalog(), systemClock);
  const rebuild: Array<{ projection: string; folded: number; perSecond: number; ratioToReadAll: number; ms: number; cpuMs: number; perCpuSecond: number }> = [];
  const only = values.only?.split(',');
  for (const projection of projections.filter((p) => only === undefined || only.includes(p.name))) {
    let last = 0;
    const cpu = process.cpuUsage();
    const handle = startRebuild({
      projection, log, store: readModels, clock: systemClock, logger: pino({ level: 'silent' }), dropGraceMs: 0,
      onProgress: (p) => {
        if (p.events - last >= 50_000) {
          last = p.events;
          process.stderr.write(`\r  rebuilding ${projection.name}: ${(p.fraction * 100).toFixed(0)}%`);
        }
      },
    });
    const result = await handle.result;
    // On a shared machine the process's CPU time (user and system) varies less than the wall time.
    const used = process.cpuUsage(cpu);
    const cpuMs = Math.round((used.user + used.system) / 1000);
    process.stderr.write('\r');
    // Rate over the whole log replayed: a projection filtered to a few event types still reads past the rest.
    const rate = perSecond(read, result.durationMs);
    const perCpuSecond = perSecond(read, cpuMs);
    rebuild.push({ projection: projection.name, folded: result.events, perSecond: rate, ratioToReadAll: Number((rate / readAll).toFixed(2)), ms: result.durationMs, cpuMs, perCpuSecond });
    say(
      `rebuild ${projection.name.padEnd(15)} ${rate.toLocaleString('en')} log events/s, ${result.events.toLocaleString('en')} folded, ${result.durationMs} ms ` +
        `(${cpuMs} ms CPU: ${perCpuSecond.toLocaleString('en')} log events per CPU second)  (ratio to readAll ${(rate / readAll).toFixed(2)})`,
    );
  }
  await readModels.close();
  return rebuild;
}

const results: SizeResult[] = [];
for (const size of sizes) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'annals-bench-'));
  try {
    say(`\n== ${size.toLocaleString('en')} events, ~${JSON.stringify(revisionEvent(1, 1)).length} bytes each (${dir})`);
    const store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));

    // Single-event appends: each a durable commit (fsync). Measured on a bounded count.
    const singleCount = Math.min(singles, size);
    let t = performance.now();
    for (let i = 0; i < singleCount; i++) await store.append(`single-${i}`, [revisionEvent(i, 0)], 'no_stream');
    const single = perSecond(singleCount, performance.now() - t);
    const singleBaseline = baselineInsert(path.join(dir, 'baseline-single.sqlite'), singleCount, 1);
    say(`append, single events:  ${single.toLocaleString('en')} events/s  (bare SQLite insert+commit: ${singleBaseline.toLocaleString('en')}/s, ratio ${(single / singleBaseline).toFixed(2)})`);

    // Batched appends up to `size` events in all: entries of `batch` revisions each.
    const remaining = size - singleCount;
    t = performance.now();
    for (let written = 0, entry = 0; written < remaining; entry++) {
      const n = Math.min(batch, remaining - written);
      await store.append(`entry-${entry}`, Array.from({ length: n }, (_, i) => revisionEvent(entry, i)), 'no_stream');
      written += n;
      if (entry % 1000 === 0) process.stderr.write(`\r  appending ${written.toLocaleString('en')} / ${remaining.toLocaleString('en')}`);
    }
    const batched = perSecond(remaining, performance.now() - t);
    process.stderr.write('\r');
    const batchedBaseline = baselineInsert(path.join(dir, 'baseline-batched.sqlite'), Math.min(remaining, 200_000), batch);
    say(`append, batches of ${batch}: ${batched.toLocaleString('en')} events/s  (bare SQLite: ${batchedBaseline.toLocaleString('en')}/s, ratio ${(batched / batchedBaseline).toFixed(2)})`);

    // Baseline for rebuilds: reading the whole log through the port.
    t = performance.now();
    let read = 0;
    for await (const _ of store.readAll()) read++;
    const readAll = perSecond(read, performance.now() - t);
    say(`readAll:                ${readAll.toLocaleString('en')} events/s`);

    const rebuild = (await rebuildEvery(store, path.join(dir, 'read-models.sqlite'), read, readAll)).map(({ ms: _, ...r }) => r);
    await store.close();
    results.push({
      events: size,
      eventBytes: JSON.stringify(revisionEvent(1, 1)).length,
      appendSingle: { events: singleCount, perSecond: single, baselinePerSecond: singleBaseline, ratio: Number((single / singleBaseline).toFixed(2)) },
      appendBatched: { batch, perSecond: batched, baselinePerSecond: batchedBaseline, ratio: Number((batched / batchedBaseline).toFixed(2)) },
      readAll: { perSecond: readAll },
      rebuild,
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
if (values.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);

/** Inserts `count` rows of the same shape with bare better-sqlite3, `perCommit` rows per durable commit. */
function baselineInsert(file: string, count: number, perCommit: number): number {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE events (position INTEGER PRIMARY KEY AUTOINCREMENT, stream_id TEXT, revision INTEGER, event_id TEXT, type TEXT, data TEXT, metadata TEXT, UNIQUE (stream_id, revision))');
  const insert = db.prepare('INSERT INTO events (stream_id, revision, event_id, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)');
  const commit = db.transaction((rows: ReturnType<typeof revisionEvent>[], stream: string) => {
    for (const [i, e] of rows.entries()) insert.run(stream, i, e.id, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata));
  });
  const t = performance.now();
  for (let done = 0, n = 0; done < count; n++) {
    const k = Math.min(perCommit, count - done);
    commit(Array.from({ length: k }, (_, i) => revisionEvent(n, i)), `s-${n}`);
    done += k;
  }
  const rate = perSecond(count, performance.now() - t);
  db.close();
  return rate;
}

/**
 * What a read-model document read costs on the event loop's connection right after another connection (the
 * writer thread's) has committed, with and without a memory map of the file: why the read models' connection
 * reads through its page cache only (src/read-models/sqlite-read-model-schema.ts, CONNECTION).
 *
 *   npm run bench:read-after-commit -- [--docs 2000] [--reads 1000] [--rounds 5] [--json]
 *
 * A file of `--docs` documents of ~1.5 KB (JSONB, as the read models store them), 8 KiB pages, WAL. For each
 * setting (mmap_size 0, then 1 GiB; rounds alternate the order), a reader connection with a 64 MiB page cache
 * warmed on every document, and a writer connection that inserts one row into another table before each read,
 * as a projector's commit does between two turns' reads: per read, the first document read after the commit
 * and a second one, each in the turn's read transaction; then the same reads with no commit between them.
 * Prints the median µs of each per setting and the ratio of the map's to the page cache's.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { median } from './support/percentile.ts';

const { values } = parseArgs({
  options: {
    docs: { type: 'string', default: '2000' },
    reads: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '5' },
    json: { type: 'boolean', default: false },
  },
});
const DOCS = Number(values.docs);
const READS = Number(values.reads);
const ROUNDS = Number(values.rounds);
const SETTINGS = { 'page cache': 0, 'memory map': 1024 ** 3 } as const;
type Setting = keyof typeof SETTINGS;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'annals-bench-read-after-commit-'));
const file = path.join(dir, 'read-models.sqlite');
{
  const db = new Database(file);
  db.pragma('page_size = 8192');
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE docs (id TEXT PRIMARY KEY, doc BLOB NOT NULL) WITHOUT ROWID; CREATE TABLE commits (n INTEGER)');
  const insert = db.prepare('INSERT INTO docs (id, doc) VALUES (?, jsonb(?))');
  db.transaction(() => {
    for (let i = 0; i < DOCS; i++) {
      const doc = { id: `entry-${i}`, title: { en: `Title ${i}`, ja: `タイトル ${i}` }, body: 'x'.repeat(1200), revisions: [{ n: 1, at: new Date(0).toISOString() }], i };
      insert.run(`entry-${i}`, JSON.stringify(doc));
    }
  })();
  db.close();
}
const ids = Array.from({ length: DOCS }, (_, i) => `entry-${i}`);

/** One setting's run: µs of the first and second read after a commit, and of a read with no commit before it. */
function measure(setting: Setting): { first: number; second: number; quiet: number } {
  const reader = new Database(file);
  reader.pragma(`mmap_size = ${SETTINGS[setting]}`);
  reader.pragma('cache_size = -65536');
  const writer = new Database(file);
  writer.pragma('mmap_size = 0');
  writer.pragma('synchronous = NORMAL');
  const get = reader.prepare('SELECT json(doc) FROM docs WHERE id = ?').pluck();
  const begin = reader.prepare('BEGIN');
  const end = reader.prepare('COMMIT');
  const commit = writer.prepare('INSERT INTO commits (n) VALUES (?)');
  for (const id of ids) JSON.parse(get.get(id) as string);
  const first: number[] = [];
  const second: number[] = [];
  const quiet: number[] = [];
  for (let i = 0; i < READS; i++) {
    commit.run(i);
    begin.run();
    let at = performance.now();
    JSON.parse(get.get(ids[(i * 7) % DOCS]) as string);
    first.push(performance.now() - at);
    at = performance.now();
    JSON.parse(get.get(ids[(i * 13 + 5) % DOCS]) as string);
    second.push(performance.now() - at);
    end.run();
  }
  for (let i = 0; i < READS; i++) {
    const at = performance.now();
    JSON.parse(get.get(ids[(i * 11) % DOCS]) as string);
    quiet.push(performance.now() - at);
  }
  reader.close();
  writer.close();
  const us = (samples: number[]) => Math.round(median(samples) * 10_000) / 10;
  return { first: us(first), second: us(second), quiet: us(quiet) };
}

const results: Record<Setting, Array<ReturnType<typeof measure>>> = { 'page cache': [], 'memory map': [] };
for (let round = 0; round < ROUNDS; round++) {
  const order: Setting[] = round % 2 === 0 ? ['page cache', 'memory map'] : ['memory map', 'page cache'];
  for (const setting of order) results[setting].push(measure(setting));
}
fs.rmSync(dir, { recursive: true, force: true });

const summary = Object.fromEntries(
  (Object.keys(SETTINGS) as Setting[]).map((setting) => [
    setting,
    {
      firstReadAfterCommitUs: median(results[setting].map((r) => r.first)),
      secondReadAfterCommitUs: median(results[setting].map((r) => r.second)),
      readWithoutCommitUs: median(results[setting].map((r) => r.quiet)),
    },
  ]),
) as Record<Setting, { firstReadAfterCommitUs: number; secondReadAfterCommitUs: number; readWithoutCommitUs: number }>;
if (values.json) {
  process.stdout.write(`${JSON.stringify({ docs: DOCS, reads: READS, rounds: ROUNDS, ...summary })}\n`);
} else {
  console.log(`document reads (json(doc) + JSON.parse, ~1.5 KB), ${DOCS} documents, ${READS} reads per setting, median of ${ROUNDS} interleaved rounds`);
  console.log('setting | first read after a commit | second read | read with no commit before it');
  for (const [setting, s] of Object.entries(summary)) console.log(`${setting} | ${s.firstReadAfterCommitUs} µs | ${s.secondReadAfterCommitUs} µs | ${s.readWithoutCommitUs} µs`);
  const map = summary['memory map'];
  const cache = summary['page cache'];
  console.log(`memory map / page cache: first read ×${(map.firstReadAfterCommitUs / cache.firstReadAfterCommitUs).toFixed(2)}, second ×${(map.secondReadAfterCommitUs / cache.secondReadAfterCommitUs).toFixed(2)}, with no commit ×${(map.readWithoutCommitUs / cache.readWithoutCommitUs).toFixed(2)}`);
}

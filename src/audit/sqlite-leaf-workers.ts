/**
 * The leaves of the embedded log (events.sqlite), recomputed for `annals audit verify` on worker threads, each
 * over its own range of positions and its own read-only connection: the log's events as stored (frames), hashed
 * without parsing their data (the leaf takes the data's JSON text as it is, ./log-leaf.ts; only the metadata is
 * parsed and written canonically). One pass, no object per event beyond its metadata, one buffer of hashes per
 * 8,192 events handed back whole. Through the port (EventStoreDB) the same leaves come from chain-verifier's
 * onLeaf, one event at a time.
 *
 * The thread's source is CommonJS run with `eval`, so that it loads the same under tsx and from dist/ (as the
 * SQLite writer thread's), and it needs only packages: better-sqlite3, zstd-napi's binding, safe-stable-stringify.
 */
import os from 'node:os';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { EVENT_LOG_DICTIONARY_32769 } from '../event-store/event-log-dictionary-32769.ts';
import { HASH_SIZE } from './merkle-tree.ts';
import { LEAF_FORMAT } from './log-leaf.ts';

const CHUNK = 8192;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const Database = require(workerData.driver);
const binding = require(workerData.zstd);
const { configure } = require(workerData.stringify);
const canonical = configure({ bigint: false, circularValue: Error, deterministic: true, strict: false });
const db = new Database(workerData.file, { readonly: true, fileMustExist: true });
const dctx = new binding.DCtx();
const dictionaries = new Map(workerData.dictionaries.map((d) => [d.id, new binding.DDict(Buffer.from(d.base64, 'base64'))]));
const LEAF = Buffer.from([0]);
let out = Buffer.allocUnsafe(64 * 1024);
let chunk = Buffer.alloc(${CHUNK} * ${HASH_SIZE});
let filled = 0;
let index = 0;
const unreadable = [];
// What the chain pass would otherwise read the whole log for: links, anchors, streams, backdated events.
let chained = 0;
let anchors = 0;
const streams = new Set();
const backdated = [];
const after = workerData.checkAfter;
const send = () => {
  const hashes = chunk.subarray(0, filled * ${HASH_SIZE});
  parentPort.postMessage({ hashes }, [hashes.buffer]);
  chunk = Buffer.alloc(${CHUNK} * ${HASH_SIZE});
  filled = 0;
};
const rows = db.prepare('SELECT position, stream_id, revision, event_id, type, data, metadata FROM events WHERE position > ? AND position <= ? ORDER BY position').raw(true);
for (const [position, streamId, revision, id, type, stored, storedMetadata] of rows.iterate(workerData.after, workerData.upTo)) {
  streams.add(streamId);
  if (type === 'audit.log-anchored') anchors++;
  try {
    let data;
    let metadataText;
    if (typeof stored === 'string') {
      data = Buffer.from(stored, 'utf8');
      metadataText = storedMetadata;
    } else {
      const dictionary = dictionaries.get(binding.getDictIDFromFrame(stored));
      if (!dictionary) throw new Error('unknown dictionary');
      const size = binding.getFrameContentSize(stored);
      if (size === null || size > ${1_000_001}) throw new Error('bad frame');
      if (size > out.length) out = Buffer.allocUnsafe(size);
      const length = dctx.decompressUsingDDict(out, stored, dictionary);
      const split = out.indexOf(10);
      if (split < 0 || split >= length) throw new Error('no metadata');
      data = out.subarray(0, split);
      metadataText = out.toString('utf8', split + 1, length);
    }
    const metadata = JSON.parse(metadataText);
    if (typeof metadata.chain === 'string') chained++;
    const leaf = workerData.offset + index;
    if (after && leaf >= after.size && backdated.length < 100 && Date.parse(metadata.occurredAt) < after.beforeMs) {
      backdated.push({ leaf, eventId: id, streamId, revision: String(revision), occurredAt: metadata.occurredAt });
    }
    const head = ${JSON.stringify(LEAF_FORMAT)} + '\\n' + JSON.stringify(streamId) + '\\n' + revision + '\\n' + JSON.stringify(id) + '\\n' + JSON.stringify(type) + '\\n' + canonical(metadata) + '\\n';
    createHash('sha256').update(LEAF).update(head).update(data).digest().copy(chunk, filled * ${HASH_SIZE});
  } catch (error) {
    unreadable.push({ index, position: String(position), streamId, revision: String(revision), eventId: id, type, reason: String(error && error.message || error) });
  }
  filled++;
  index++;
  if (filled === ${CHUNK}) send();
}
send();
db.close();
parentPort.postMessage({ done: true, count: index, unreadable, chained, anchors, streams: [...streams], backdated });
`;

/** An event whose stored frame cannot be read back. */
export interface UnreadableRow {
  index: number;
  position: string;
  streamId: string;
  revision: string;
  eventId: string;
  type: string;
  reason: string;
}

export interface SqliteLeaves {
  /** count × 32 bytes, in log order. */
  hashes: Buffer;
  count: number;
  /** Events whose stored frame cannot be read (their hash is zeros), by leaf index. */
  unreadable: UnreadableRow[];
  /** Events that carry a hash-chain link, and signed anchors: when there are none, no chain needs checking. */
  chainedEvents: number;
  anchors: number;
  streams: number;
  /** Events from leaf `checkAfter.size` on that say they occurred before `checkAfter.beforeMs`. */
  backdated: Array<{ leaf: number; eventId: string; streamId: string; revision: string; occurredAt: string }>;
}

/** Every leaf of the embedded log up to its head now, on `threads` worker threads (default: the CPUs). */
export async function sqliteLeaves(file: string, options: { threads?: number; onProgress?: (events: number) => void; checkAfter?: { size: number; beforeMs: number } } = {}): Promise<SqliteLeaves> {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  let bounds: { first: number | null; last: number | null };
  const threads = Math.max(1, Math.min(options.threads ?? os.availableParallelism(), 8));
  let ranges: Array<{ after: number; upTo: number; offset: number }>;
  try {
    bounds = db.prepare('SELECT min(position) AS first, max(position) AS last FROM events').get() as { first: number | null; last: number | null };
    if (bounds.first === null || bounds.last === null) return { hashes: Buffer.alloc(0), count: 0, unreadable: [], chainedEvents: 0, anchors: 0, streams: 0, backdated: [] };
    const span = bounds.last - bounds.first + 1;
    // Each range's first leaf, counted up front (rowid ranges: quick), so that a thread knows its events' leaves.
    const count = db.prepare('SELECT count(*) AS n FROM events WHERE position > ? AND position <= ?').pluck(true);
    let offset = 0;
    ranges = Array.from({ length: threads }, (_, i) => {
      const range = { after: bounds.first! - 1 + Math.floor((span * i) / threads), upTo: bounds.first! - 1 + Math.floor((span * (i + 1)) / threads), offset };
      offset += Number(count.get(range.after, range.upTo));
      return range;
    });
  } finally {
    db.close();
  }
  const require = createRequire(import.meta.url);
  let progress = 0;
  const parts = await Promise.all(
    ranges.map(
      (range) =>
        new Promise<{ chunks: Buffer[]; count: number; unreadable: UnreadableRow[]; chained: number; anchors: number; streams: string[]; backdated: SqliteLeaves['backdated'] }>((resolve, reject) => {
          const chunks: Buffer[] = [];
          const worker = new Worker(WORKER_SOURCE, {
            eval: true,
            execArgv: [],
            workerData: {
              file,
              ...range,
              checkAfter: options.checkAfter,
              driver: require.resolve('better-sqlite3'),
              zstd: require.resolve('zstd-napi/binding.js'),
              stringify: require.resolve('safe-stable-stringify'),
              dictionaries: [{ id: EVENT_LOG_DICTIONARY_32769.id, base64: EVENT_LOG_DICTIONARY_32769.base64 }],
            },
          });
          worker.on('message', (message: { hashes?: Uint8Array; done?: boolean; count?: number; unreadable?: UnreadableRow[]; chained?: number; anchors?: number; streams?: string[]; backdated?: SqliteLeaves['backdated'] }) => {
            if (message.hashes) {
              chunks.push(Buffer.from(message.hashes.buffer, message.hashes.byteOffset, message.hashes.byteLength));
              progress += message.hashes.byteLength / HASH_SIZE;
              options.onProgress?.(progress);
            } else if (message.done) resolve({ chunks, count: message.count!, unreadable: message.unreadable!, chained: message.chained!, anchors: message.anchors!, streams: message.streams!, backdated: message.backdated! });
          });
          worker.on('error', reject);
          worker.on('exit', (code) => {
            if (code !== 0) reject(new Error(`a leaf thread stopped with exit code ${code}`));
          });
        }),
    ),
  );
  const unreadable: UnreadableRow[] = [];
  const streams = new Set<string>();
  let offset = 0;
  for (const part of parts) {
    for (const row of part.unreadable) unreadable.push({ ...row, index: offset + row.index });
    for (const stream of part.streams) streams.add(stream);
    offset += part.count;
  }
  return {
    hashes: Buffer.concat(parts.flatMap((part) => part.chunks)),
    count: offset,
    unreadable,
    chainedEvents: parts.reduce((n, part) => n + part.chained, 0),
    anchors: parts.reduce((n, part) => n + part.anchors, 0),
    streams: streams.size,
    backdated: parts.flatMap((part) => part.backdated).slice(0, 100),
  };
}

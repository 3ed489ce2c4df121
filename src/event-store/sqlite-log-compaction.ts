/**
 * `annals log compact`: rewrites the events an embedded log holds as JSON text (written before frames,
 * 2026-11-28) as frames (event-frames.ts), in place: same positions, ids, revisions, types and content, so the
 * read models, their checkpoints and the hash chains stay as they are. Safe while the service runs: each
 * batch is one short IMMEDIATE transaction (the service's appends wait for it, as for any other writer), and
 * readers see every event either way. Each frame is read back and compared with the texts it replaces before
 * its batch commits.
 *
 * The rows shrink in place, so the file does not: the space the texts took stays inside its pages, which
 * appends (always at the end of the log) never reuse. `vacuum` gives it back to the file system (VACUUM: it
 * needs the file to itself, so the service stopped, and free disk about the size of the log for its copy).
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { openSqliteDatabase } from '../sqlite/open-database.ts';
import { EventFrames } from './event-frames.ts';
import { EVENT_LOG_CONNECTION } from './sqlite-event-store.ts';

export interface CompactionOptions {
  /** Events rewritten per transaction. */
  batch?: number;
  /** VACUUM after the rewrite (the caller holds the data folder). */
  vacuum?: boolean;
  onProgress?: (progress: { events: number; fraction: number }) => void;
}

export interface CompactionResult {
  /** Events rewritten as frames by this run. */
  rewritten: number;
  /** The events' JSON texts this run replaced, and the frames it wrote, in bytes. */
  textBytes: number;
  frameBytes: number;
  /** The file's pages before and after, in bytes (the same unless vacuumed). */
  fileBytesBefore: number;
  fileBytesAfter: number;
  vacuumed: boolean;
  durationMs: number;
}

/** A compaction that found a frame not reading back as the texts it replaces: nothing of its batch was written. */
export class CompactionMismatchError extends Error {
  override name = 'CompactionMismatchError';
}

type PlainRow = [position: bigint, data: string, metadata: string];

export async function compactEventLog(file: string, options: CompactionOptions = {}): Promise<CompactionResult> {
  const started = performance.now();
  const batch = BigInt(options.batch ?? 1000);
  const db = openSqliteDatabase(file, { ...EVENT_LOG_CONNECTION, purpose: 'event log compaction' });
  try {
    db.defaultSafeIntegers(true);
    const fileBytesBefore = fileBytes(db);
    const head = (db.prepare('SELECT max(position) AS head FROM events').get() as { head: bigint | null }).head ?? 0n;
    const plain = db.prepare<[bigint, bigint], PlainRow>("SELECT position, data, metadata FROM events WHERE position > ? AND typeof(data) = 'text' ORDER BY position LIMIT ?").raw(true);
    const rewrite = db.prepare<[Buffer, bigint], never>("UPDATE events SET data = ?, metadata = '' WHERE position = ? AND typeof(data) = 'text'");
    const frames = new EventFrames();
    const result = { rewritten: 0, textBytes: 0, frameBytes: 0 };
    const rewriteBatch = db.transaction((after: bigint): bigint | null => {
      const rows = plain.all(after, batch);
      for (const [position, data, metadata] of rows) {
        const frame = frames.write(data, metadata);
        const back = frames.read(frame);
        if (back.data !== data || back.metadata !== metadata) throw new CompactionMismatchError(`the frame of the event at position ${position} does not read back as its text: nothing of this batch was written`);
        rewrite.run(frame, position);
        result.rewritten += 1;
        result.textBytes += Buffer.byteLength(data) + Buffer.byteLength(metadata);
        result.frameBytes += frame.length;
      }
      return rows.length === 0 ? null : rows[rows.length - 1]![0];
    });
    let after: bigint | null = 0n;
    while (after !== null) {
      after = rewriteBatch.immediate(after);
      options.onProgress?.({ events: result.rewritten, fraction: after === null || head === 0n ? 1 : Number(after) / Number(head) });
      // Let the progress bar draw, and other work of this process run, between batches.
      await yieldToEventLoop();
    }
    if (options.vacuum) {
      db.exec('VACUUM');
      db.pragma('wal_checkpoint(TRUNCATE)');
    }
    return {
      ...result,
      fileBytesBefore,
      fileBytesAfter: fileBytes(db),
      vacuumed: options.vacuum ?? false,
      durationMs: Math.round(performance.now() - started),
    };
  } finally {
    db.close();
  }
}

function fileBytes(db: Database.Database): number {
  return Number(db.pragma('page_count', { simple: true })) * Number(db.pragma('page_size', { simple: true }));
}

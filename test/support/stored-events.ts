/**
 * Reaching into an embedded log file the way an intruder with the file (or a failing disk) would: events as
 * they are stored (frames: event-frames.ts), changed in place. Only with the store closed.
 */
import Database from 'better-sqlite3';
import { EventFrames } from '../../src/event-store/event-frames.ts';

const frames = new EventFrames();

/** An event's stored frame (its data and metadata, compressed). */
export function storedFrame(file: string, eventId: string): Buffer {
  const db = new Database(file, { readonly: true });
  try {
    const row = db.prepare('SELECT data FROM events WHERE event_id = ?').get(eventId) as { data: unknown } | undefined;
    if (!row || !Buffer.isBuffer(row.data)) throw new Error(`event ${eventId} is not stored as a frame`);
    return row.data;
  } finally {
    db.close();
  }
}

/** Changes an event's stored JSON texts and writes it back as a well-formed frame (only a hash chain can tell). */
export function rewriteStoredEvent(file: string, eventId: string, edit: (texts: { data: string; metadata: string }) => { data: string; metadata: string }): void {
  const edited = edit(frames.read(storedFrame(file, eventId)));
  const db = new Database(file);
  try {
    db.prepare('UPDATE events SET data = ? WHERE event_id = ?').run(frames.write(edited.data, edited.metadata), eventId);
  } finally {
    db.close();
  }
}

/** Stores events as builds before frames did: the two JSON texts in the data and metadata columns. */
export function insertPlainEvents(file: string, rows: ReadonlyArray<{ streamId: string; revision: number; id: string; type: string; data: unknown; metadata: unknown }>): void {
  const db = new Database(file);
  try {
    const insert = db.prepare('INSERT INTO events (stream_id, revision, event_id, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)');
    const stream = db.prepare('INSERT INTO streams (stream_id, last_revision) VALUES (?, ?) ON CONFLICT (stream_id) DO UPDATE SET last_revision = excluded.last_revision');
    db.transaction(() => {
      for (const row of rows) {
        insert.run(row.streamId, row.revision, row.id, row.type, JSON.stringify(row.data), JSON.stringify(row.metadata));
        stream.run(row.streamId, row.revision);
      }
    })();
  } finally {
    db.close();
  }
}

/** Stores every framed event of the file as builds before frames did (both JSON texts): a log as an older build left it. */
export function storeAllAsPlainText(file: string): number {
  const db = new Database(file);
  try {
    const rows = db.prepare("SELECT position, data FROM events WHERE typeof(data) = 'blob'").all() as Array<{ position: number; data: Buffer }>;
    const update = db.prepare('UPDATE events SET data = ?, metadata = ? WHERE position = ?');
    db.transaction(() => {
      for (const row of rows) {
        const { data, metadata } = frames.read(row.data);
        update.run(data, metadata, row.position);
      }
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
    return rows.length;
  } finally {
    db.close();
  }
}

/** How the file's events are stored: as frames, and as JSON text. */
export function storedForms(file: string): { frames: number; texts: number } {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare("SELECT count(*) FILTER (WHERE typeof(data) = 'blob') AS frames, count(*) FILTER (WHERE typeof(data) = 'text') AS texts FROM events").get() as { frames: number; texts: number };
  } finally {
    db.close();
  }
}

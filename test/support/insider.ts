/**
 * An insider with write access to a stopped service's SQLite files: reads and rewrites the embedded log as it is
 * stored (rows of `events`, each event's data and metadata one zstd frame, src/event-store/event-frames.ts), and
 * recomputes hash-chain links with the documented formula (docs/audit.md) so that `annals audit verify`'s chain
 * check passes again. What such a rewrite cannot reproduce is a checkpoint published before it.
 */
import Database from 'better-sqlite3';
import { EventFrames } from '../../src/event-store/event-frames.ts';
import { chainLink, genesisLink } from '../../src/event-store/hash-chain.ts';

const frames = new EventFrames();

export interface StoredEvent {
  position: number;
  streamId: string;
  revision: number;
  eventId: string;
  type: string;
  data: unknown;
  metadata: Record<string, unknown>;
}

function open(file: string): Database.Database {
  const db = new Database(file);
  db.pragma('wal_checkpoint(TRUNCATE)');
  return db;
}

/** Every event of the log, in order, decoded. */
export function storedEvents(file: string): StoredEvent[] {
  const db = open(file);
  try {
    const rows = db.prepare('SELECT position, stream_id, revision, event_id, type, data, metadata FROM events ORDER BY position').all() as Array<{ position: number; stream_id: string; revision: number; event_id: string; type: string; data: Buffer | string; metadata: string }>;
    return rows.map((row) => {
      const texts = typeof row.data === 'string' ? { data: row.data, metadata: row.metadata } : frames.read(row.data);
      return { position: row.position, streamId: row.stream_id, revision: row.revision, eventId: row.event_id, type: row.type, data: JSON.parse(texts.data), metadata: JSON.parse(texts.metadata) as Record<string, unknown> };
    });
  } finally {
    db.close();
  }
}

/** Recomputes the links of a stream's events in order, where they carry one (as the documented formula says). */
export function relink(events: StoredEvent[]): StoredEvent[] {
  let prev = events[0] ? genesisLink(events[0].streamId) : '';
  return events.map((event) => {
    if (typeof event.metadata['chain'] !== 'string') return event;
    const { chain: _old, ...metadata } = event.metadata;
    const link = chainLink(prev, { id: event.eventId, type: event.type, data: event.data, metadata });
    prev = link;
    return { ...event, metadata: { ...metadata, chain: link } };
  });
}

/** Replaces the log's rows of these positions (and only those), in one transaction; the streams table follows. */
export function writeEvents(file: string, remove: readonly number[], put: readonly StoredEvent[]): void {
  const db = open(file);
  try {
    db.transaction(() => {
      const del = db.prepare('DELETE FROM events WHERE position = ?');
      for (const position of remove) del.run(position);
      const insert = db.prepare('INSERT INTO events (position, stream_id, revision, event_id, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)');
      for (const event of put) insert.run(event.position, event.streamId, event.revision, event.eventId, event.type, frames.write(JSON.stringify(event.data), JSON.stringify(event.metadata)), '');
      db.exec(`DELETE FROM streams WHERE stream_id NOT IN (SELECT stream_id FROM events);
        INSERT INTO streams (stream_id, last_revision) SELECT stream_id, max(revision) FROM events GROUP BY stream_id
        ON CONFLICT (stream_id) DO UPDATE SET last_revision = excluded.last_revision`);
    })();
  } finally {
    db.close();
  }
}

/** Rewrites one stream: `edit` returns its new events (renumbered from 0, links recomputed), kept at the old positions in order. */
export function rewriteStream(file: string, streamId: string, edit: (events: StoredEvent[]) => StoredEvent[]): void {
  const all = storedEvents(file).filter((event) => event.streamId === streamId);
  const edited = edit(all.map((event) => ({ ...event, metadata: { ...event.metadata } })));
  const positions = all.map((event) => event.position);
  const end = Math.max(...storedEvents(file).map((event) => event.position));
  const renumbered = relink(edited.map((event, i) => ({ ...event, revision: i, position: positions[i] ?? end + 1 + i - positions.length })));
  writeEvents(file, positions, renumbered);
}

/** Deletes every event after `position`: the log as it was then. */
export function truncateLog(file: string, position: number): void {
  const db = open(file);
  try {
    db.transaction(() => {
      db.prepare('DELETE FROM events WHERE position > ?').run(position);
      db.exec(`DELETE FROM streams WHERE stream_id NOT IN (SELECT stream_id FROM events);
        UPDATE streams SET last_revision = (SELECT max(revision) FROM events WHERE events.stream_id = streams.stream_id)`);
    })();
  } finally {
    db.close();
  }
}

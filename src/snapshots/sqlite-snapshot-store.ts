import type Database from 'better-sqlite3';
import { decodePosition, encodePosition } from '../event-store/position.ts';
import { openSqliteDatabase } from '../sqlite/open-database.ts';
import { assertSnapshot, SnapshotStoreError, type AggregateSnapshot, type SnapshotStore } from './snapshot-store.ts';

interface Row {
  stream_id: string;
  kind: string;
  version: number;
  revision: string;
  position: string;
  state: string;
  taken_at: string;
}

/**
 * The embedded snapshot store: a SQLite file of its own (DATA_DIR/snapshots.sqlite), one row per stream.
 * Commits are not synced to disk one by one (synchronous=NORMAL): a snapshot lost to a power failure
 * is taken again from the log.
 */
export class SqliteSnapshotStore implements SnapshotStore {
  readonly #db: Database.Database;
  readonly #statements;
  #closed = false;

  private constructor(db: Database.Database) {
    this.#db = db;
    db.exec(`CREATE TABLE IF NOT EXISTS snapshots (
      stream_id TEXT PRIMARY KEY,
      kind TEXT NOT NULL,
      version INTEGER NOT NULL,
      revision TEXT NOT NULL,
      position TEXT NOT NULL,
      state TEXT NOT NULL,
      taken_at TEXT NOT NULL
    ) WITHOUT ROWID`);
    this.#statements = {
      get: db.prepare<[string], Row>('SELECT * FROM snapshots WHERE stream_id = ?'),
      // Revisions are 20-digit strings: text order is numeric order. Another kind or version replaces.
      put: db.prepare(
        `INSERT INTO snapshots (stream_id, kind, version, revision, position, state, taken_at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (stream_id) DO UPDATE SET kind = excluded.kind, version = excluded.version, revision = excluded.revision,
           position = excluded.position, state = excluded.state, taken_at = excluded.taken_at
         WHERE snapshots.kind <> excluded.kind OR snapshots.version <> excluded.version OR snapshots.revision <= excluded.revision`,
      ),
      delete: db.prepare<[string]>('DELETE FROM snapshots WHERE stream_id = ?'),
      clear: db.prepare('DELETE FROM snapshots'),
    };
  }

  static open(file: string): SqliteSnapshotStore {
    return new SqliteSnapshotStore(openSqliteDatabase(file, { purpose: 'snapshot store', durability: 'normal' }));
  }

  async get(streamId: string): Promise<AggregateSnapshot | null> {
    this.#open();
    const row = this.#statements.get.get(streamId);
    if (!row) return null;
    return { streamId: row.stream_id, kind: row.kind, version: Number(row.version), revision: decodePosition(row.revision), position: decodePosition(row.position), state: JSON.parse(row.state), takenAt: row.taken_at };
  }

  async put(snapshot: AggregateSnapshot): Promise<void> {
    assertSnapshot(snapshot);
    this.#open();
    const s = snapshot;
    this.#statements.put.run(s.streamId, s.kind, s.version, encodePosition(s.revision), encodePosition(s.position), JSON.stringify(s.state), s.takenAt);
  }

  async delete(streamId: string): Promise<void> {
    this.#open();
    this.#statements.delete.run(streamId);
  }

  async clear(): Promise<void> {
    this.#open();
    this.#statements.clear.run();
  }

  async ping(): Promise<void> {
    this.#open();
    this.#db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#db.close();
  }

  #open(): void {
    if (this.#closed) throw new SnapshotStoreError('the snapshot store is closed');
  }
}

import type Database from 'better-sqlite3';
import { openSqliteDatabase } from '../sqlite/open-database.ts';
import { storedHashIndex } from './merkle-tree.ts';
import { TreeConflictError, type IntegrityRecord, type LogTreeStore, type StoredCheckpoint, type TreeLeaf, type TreeState } from './log-tree-store.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS tree_hashes (idx INTEGER PRIMARY KEY, hash BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS tree_leaves (leaf INTEGER PRIMARY KEY, position INTEGER NOT NULL, event_id TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS tree_leaves_by_event ON tree_leaves (event_id);
CREATE TABLE IF NOT EXISTS tree_checkpoints (
  size INTEGER PRIMARY KEY, root_hash BLOB NOT NULL, note TEXT NOT NULL, signed_at TEXT NOT NULL,
  cosignatures TEXT NOT NULL DEFAULT '{}', timestamp_token TEXT
);
CREATE TABLE IF NOT EXISTS tree_integrity (id INTEGER PRIMARY KEY CHECK (id = 1), record TEXT NOT NULL);
`;

/** Rows a multi-row INSERT carries (3 values each at most: well under SQLite's 32,766 variables). */
const ROWS_PER_INSERT = 128;

interface CheckpointRow {
  size: bigint;
  root_hash: Buffer;
  note: string;
  signed_at: string;
  cosignatures: string;
  timestamp_token: string | null;
}

/**
 * The embedded log tree store: DATA_DIR/log-tree.sqlite, apart from the log (the tree is derived from it and
 * rebuilt from it, so commits are synchronous=NORMAL: a power loss may lose the last leaves, which the follower
 * appends again). Hashes are rows of an INTEGER PRIMARY KEY table keyed by stored-hash index: appends go to the
 * end of the b-tree, reads are point lookups.
 */
export class SqliteLogTreeStore implements LogTreeStore {
  readonly #db: Database.Database;
  readonly #s;
  readonly #inserts = new Map<string, Database.Statement>();

  static open(file: string): SqliteLogTreeStore {
    return new SqliteLogTreeStore(openSqliteDatabase(file, { purpose: 'log tree', durability: 'normal' }));
  }

  private constructor(db: Database.Database) {
    this.#db = db;
    db.defaultSafeIntegers(true);
    db.exec(SCHEMA);
    this.#s = {
      last: db.prepare<[], { leaf: bigint; position: bigint }>('SELECT leaf, position FROM tree_leaves ORDER BY leaf DESC LIMIT 1'),
      hash: db.prepare<[number], Buffer>('SELECT hash FROM tree_hashes WHERE idx = ?').pluck(true),
      byEvent: db.prepare<[string], { leaf: bigint; position: bigint }>('SELECT leaf, position FROM tree_leaves WHERE event_id = ?'),
      leaves: db.prepare<[number, number], { position: bigint; event_id: string }>('SELECT position, event_id FROM tree_leaves WHERE leaf >= ? ORDER BY leaf LIMIT ?'),
      putCheckpoint: db.prepare('INSERT INTO tree_checkpoints (size, root_hash, note, signed_at, cosignatures, timestamp_token) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (size) DO NOTHING'),
      checkpoint: db.prepare<[number], CheckpointRow>('SELECT * FROM tree_checkpoints WHERE size = ?'),
      latest: db.prepare<[], CheckpointRow>('SELECT * FROM tree_checkpoints ORDER BY size DESC LIMIT 1'),
      cosignatures: db.prepare<[number], string>('SELECT cosignatures FROM tree_checkpoints WHERE size = ?').pluck(true),
      setCosignatures: db.prepare<[string, number]>('UPDATE tree_checkpoints SET cosignatures = ? WHERE size = ?'),
      setToken: db.prepare<[string, number]>('UPDATE tree_checkpoints SET timestamp_token = ? WHERE size = ?'),
      prune: db.prepare<[number]>(`DELETE FROM tree_checkpoints WHERE cosignatures = '{}' AND size < (SELECT min(size) FROM (SELECT size FROM tree_checkpoints ORDER BY size DESC LIMIT ?))`),
      integrity: db.prepare<[], string>('SELECT record FROM tree_integrity WHERE id = 1').pluck(true),
      setIntegrity: db.prepare<[string]>('INSERT INTO tree_integrity (id, record) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET record = excluded.record'),
    };
  }

  async state(): Promise<TreeState> {
    const last = this.#s.last.get();
    return last ? { size: Number(last.leaf) + 1, lastPosition: last.position } : { size: 0, lastPosition: null };
  }

  async append(from: number, leaves: readonly TreeLeaf[], hashes: readonly Uint8Array[]): Promise<void> {
    this.#db
      .transaction(() => {
        const { size } = this.#stateNow();
        if (size !== from) throw new TreeConflictError(`the tree holds ${size} leaves, not ${from}: another follower appended, or it was reset`);
        // Rows go in by ROWS_PER_INSERT a statement: one call per row cost more than the rows themselves.
        const first = storedHashIndex(0, from);
        this.#insertRows('tree_hashes (idx, hash)', 2, hashes.length, (i, values) => values.push(first + i, hashes[i]!));
        this.#insertRows('tree_leaves (leaf, position, event_id)', 3, leaves.length, (i, values) => values.push(from + i, leaves[i]!.position, leaves[i]!.eventId));
      })
      .immediate();
  }

  /** Inserts `count` rows of `columns` values each into `table`, ROWS_PER_INSERT a statement. */
  #insertRows(table: string, columns: number, count: number, row: (i: number, values: unknown[]) => void): void {
    for (let start = 0; start < count; start += ROWS_PER_INSERT) {
      const rows = Math.min(ROWS_PER_INSERT, count - start);
      const key = `${table}/${rows}`;
      let statement = this.#inserts.get(key);
      if (!statement) {
        const tuple = `(${Array.from({ length: columns }, () => '?').join(', ')})`;
        statement = this.#db.prepare(`INSERT INTO ${table} VALUES ${Array.from({ length: rows }, () => tuple).join(', ')}`);
        this.#inserts.set(key, statement);
      }
      const values: unknown[] = [];
      for (let i = start; i < start + rows; i++) row(i, values);
      statement.run(values);
    }
  }

  #stateNow(): TreeState {
    const last = this.#s.last.get();
    return last ? { size: Number(last.leaf) + 1, lastPosition: last.position } : { size: 0, lastPosition: null };
  }

  async readHashes(indexes: readonly number[]): Promise<Uint8Array[]> {
    return this.#db.transaction(() =>
      indexes.map((index) => {
        const hash = this.#s.hash.get(index);
        if (!hash) throw new Error(`the log tree holds no hash at index ${index}`);
        return new Uint8Array(hash);
      }),
    )();
  }

  async leafOfEvent(eventId: string): Promise<{ leaf: number; position: bigint } | null> {
    const row = this.#s.byEvent.get(eventId);
    return row ? { leaf: Number(row.leaf), position: row.position } : null;
  }

  async leavesOfEvents(eventIds: readonly string[]): Promise<Map<string, { leaf: number; position: bigint }>> {
    const found = new Map<string, { leaf: number; position: bigint }>();
    this.#db.transaction(() => {
      for (const eventId of eventIds) {
        const row = this.#s.byEvent.get(eventId);
        if (row) found.set(eventId, { leaf: Number(row.leaf), position: row.position });
      }
    })();
    return found;
  }

  async leaves(from: number, count: number): Promise<TreeLeaf[]> {
    return this.#s.leaves.all(from, count).map((row) => ({ position: row.position, eventId: row.event_id }));
  }

  async putCheckpoint(c: StoredCheckpoint): Promise<void> {
    this.#s.putCheckpoint.run(c.size, c.rootHash, c.note, c.signedAt, JSON.stringify(c.cosignatures), c.timestampToken);
  }

  async addCosignature(size: number, witness: string, line: string): Promise<void> {
    this.#db
      .transaction(() => {
        const current = this.#s.cosignatures.get(size);
        if (current === undefined) return;
        this.#s.setCosignatures.run(JSON.stringify({ ...(JSON.parse(current) as Record<string, string>), [witness]: line }), size);
      })
      .immediate();
  }

  async setTimestampToken(size: number, token: string): Promise<void> {
    this.#s.setToken.run(token, size);
  }

  async latestCheckpoint(): Promise<StoredCheckpoint | null> {
    return checkpointOf(this.#s.latest.get());
  }

  async checkpointOfSize(size: number): Promise<StoredCheckpoint | null> {
    return checkpointOf(this.#s.checkpoint.get(size));
  }

  async pruneCheckpoints(keep: number): Promise<void> {
    this.#s.prune.run(keep);
  }

  async integrity(): Promise<IntegrityRecord | null> {
    const text = this.#s.integrity.get();
    return text === undefined ? null : (JSON.parse(text) as IntegrityRecord);
  }

  async setIntegrity(record: IntegrityRecord): Promise<void> {
    this.#s.setIntegrity.run(JSON.stringify(record));
  }

  async reset(): Promise<void> {
    this.#db.exec('DELETE FROM tree_hashes; DELETE FROM tree_leaves; DELETE FROM tree_checkpoints; DELETE FROM tree_integrity;');
  }

  async close(): Promise<void> {
    if (this.#db.open) this.#db.close();
  }
}

function checkpointOf(row: CheckpointRow | undefined): StoredCheckpoint | null {
  if (!row) return null;
  return {
    size: Number(row.size),
    rootHash: new Uint8Array(row.root_hash),
    note: row.note,
    signedAt: row.signed_at,
    cosignatures: JSON.parse(row.cosignatures) as Record<string, string>,
    timestampToken: row.timestamp_token,
  };
}

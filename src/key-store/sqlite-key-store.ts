import type Database from 'better-sqlite3';
import { openSqliteDatabase } from '../sqlite/open-database.ts';
import { assertKey, assertSigningKeyRecord, KeyStoreError, type KeyStore, type SigningKeyRecord } from './key-store.ts';

/**
 * The embedded key store: a SQLite file of its own (DATA_DIR/keys.sqlite), apart from the event log and the
 * read models, with durable commits.
 *
 * Destroying a key overwrites it where SQLite keeps it: `secure_delete` makes SQLite zero the bytes of
 * deleted content, and a WAL checkpoint (TRUNCATE) right after the destroy copies the zeroed page into the
 * database file and empties the write-ahead log, which still held the page as it was. What the file
 * system or the disk keep of blocks once written (snapshots, SSD wear levelling) and backups of the file
 * are beyond the process: back this file up on a shorter retention than the erasure promise you make.
 */
export class SqliteKeyStore implements KeyStore {
  readonly #db: Database.Database;
  readonly #statements;
  #closed = false;

  private constructor(db: Database.Database) {
    this.#db = db;
    db.pragma('secure_delete = ON');
    db.exec(`CREATE TABLE IF NOT EXISTS keys (
      id TEXT PRIMARY KEY,
      key BLOB,
      destroyed INTEGER NOT NULL DEFAULT 0
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS signing_keys (
      name TEXT PRIMARY KEY,
      key_id TEXT NOT NULL,
      private_jwk TEXT NOT NULL,
      public_jwk TEXT NOT NULL,
      created_at TEXT NOT NULL
    ) WITHOUT ROWID`);
    this.#statements = {
      signingKey: db.prepare<[string], { name: string; key_id: string; private_jwk: string; public_jwk: string; created_at: string }>(
        'SELECT name, key_id, private_jwk, public_jwk, created_at FROM signing_keys WHERE name = ?',
      ),
      insertSigningKey: db.prepare<[string, string, string, string, string]>(
        'INSERT INTO signing_keys (name, key_id, private_jwk, public_jwk, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT(name) DO NOTHING',
      ),
      get: db.prepare<[string], { key: Buffer | null; destroyed: number }>('SELECT key, destroyed FROM keys WHERE id = ?'),
      insert: db.prepare<[string, Buffer]>('INSERT INTO keys (id, key, destroyed) VALUES (?, ?, 0) ON CONFLICT(id) DO NOTHING'),
      destroy: db.prepare<[string]>('INSERT INTO keys (id, key, destroyed) VALUES (?, NULL, 1) ON CONFLICT(id) DO UPDATE SET key = NULL, destroyed = 1'),
    };
  }

  static open(file: string): SqliteKeyStore {
    return new SqliteKeyStore(openSqliteDatabase(file, { purpose: 'key store' }));
  }

  async put(id: string, key: Buffer): Promise<void> {
    assertKey(id, key);
    this.#open();
    this.#statements.insert.run(id, key);
    const row = this.#statements.get.get(id)!;
    if (row.destroyed) throw new KeyStoreError(`the key ${id} was destroyed; it cannot be given a key again`);
    if (!row.key?.equals(key)) throw new KeyStoreError(`the id ${id} already holds another key; keys are never replaced`);
  }

  async get(id: string): Promise<Buffer | null> {
    this.#open();
    const row = this.#statements.get.get(id);
    return row?.key ? Buffer.from(row.key) : null;
  }

  async getMany(ids: readonly string[]): Promise<Map<string, Buffer>> {
    this.#open();
    const found = new Map<string, Buffer>();
    for (const id of new Set(ids)) {
      const row = this.#statements.get.get(id);
      if (row?.key) found.set(id, Buffer.from(row.key));
    }
    return found;
  }

  async destroy(id: string): Promise<void> {
    this.#open();
    this.#statements.destroy.run(id);
    this.#db.pragma('wal_checkpoint(TRUNCATE)');
  }

  async destroyed(id: string): Promise<boolean> {
    this.#open();
    return this.#statements.get.get(id)?.destroyed === 1;
  }

  async signingKey(name: string): Promise<SigningKeyRecord | null> {
    this.#open();
    const row = this.#statements.signingKey.get(name);
    return row ? { name: row.name, keyId: row.key_id, privateJwk: row.private_jwk, publicJwk: row.public_jwk, createdAt: row.created_at } : null;
  }

  async putSigningKey(record: SigningKeyRecord): Promise<SigningKeyRecord> {
    assertSigningKeyRecord(record);
    this.#open();
    this.#statements.insertSigningKey.run(record.name, record.keyId, record.privateJwk, record.publicJwk, record.createdAt);
    return (await this.signingKey(record.name))!;
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
    if (this.#closed) throw new KeyStoreError('the key store is closed');
  }
}

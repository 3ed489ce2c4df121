import type Database from 'better-sqlite3';
import { openSqliteDatabase } from '../sqlite/open-database.ts';
import { assertOwner, assertWorkingCopy, WorkingCopyStoreError, type WorkingCopy, type WorkingCopyHead, type WorkingCopyOwner, type WorkingCopyStore } from './working-copy-store.ts';

interface Row {
  entry_id: string;
  owner_type: 'user' | 'agent';
  owner_id: string;
  project_id: string;
  base_revision: number;
  started_at: string;
  saved_at: string;
  fields?: string;
}

/**
 * The embedded working-copy store: a SQLite file of its own (DATA_DIR/working-copies.sqlite), one row per entry
 * and owner. Durable commits (what was typed is acknowledged only once on disk), and `secure_delete`: a copy
 * deleted or replaced leaves no readable bytes in the file.
 */
export class SqliteWorkingCopyStore implements WorkingCopyStore {
  readonly #db: Database.Database;
  readonly #statements;
  #closed = false;

  private constructor(db: Database.Database) {
    this.#db = db;
    db.pragma('secure_delete = ON');
    db.exec(`CREATE TABLE IF NOT EXISTS working_copies (
      entry_id TEXT NOT NULL,
      owner_type TEXT NOT NULL,
      owner_id TEXT NOT NULL,
      project_id TEXT NOT NULL,
      base_revision INTEGER NOT NULL,
      started_at TEXT NOT NULL,
      saved_at TEXT NOT NULL,
      fields TEXT NOT NULL,
      PRIMARY KEY (entry_id, owner_type, owner_id)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS working_copies_saved_at ON working_copies (saved_at)`);
    this.#statements = {
      get: db.prepare<[string, string, string], Row>('SELECT * FROM working_copies WHERE entry_id = ? AND owner_type = ? AND owner_id = ?'),
      put: db.prepare<[string, string, string, string, number, string, string, string]>(
        `INSERT INTO working_copies (entry_id, owner_type, owner_id, project_id, base_revision, started_at, saved_at, fields) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (entry_id, owner_type, owner_id) DO UPDATE SET project_id = excluded.project_id, base_revision = excluded.base_revision,
           started_at = min(working_copies.started_at, excluded.started_at), saved_at = excluded.saved_at, fields = excluded.fields`,
      ),
      list: db.prepare<[string], Row>('SELECT entry_id, owner_type, owner_id, project_id, base_revision, started_at, saved_at FROM working_copies WHERE entry_id = ? ORDER BY saved_at, owner_type, owner_id'),
      delete: db.prepare<[string, string, string]>('DELETE FROM working_copies WHERE entry_id = ? AND owner_type = ? AND owner_id = ?'),
      deleteEntry: db.prepare<[string]>('DELETE FROM working_copies WHERE entry_id = ?'),
      deleteSavedBefore: db.prepare<[string]>('DELETE FROM working_copies WHERE saved_at < ?'),
    };
  }

  static open(file: string): SqliteWorkingCopyStore {
    return new SqliteWorkingCopyStore(openSqliteDatabase(file, { purpose: 'working-copy store' }));
  }

  async get(entryId: string, owner: WorkingCopyOwner): Promise<WorkingCopy | null> {
    this.#open();
    const row = this.#statements.get.get(entryId, owner.type, owner.id);
    return row ? { ...headOf(row), fields: JSON.parse(row.fields!) as Record<string, unknown> } : null;
  }

  async put(copy: WorkingCopy): Promise<void> {
    assertWorkingCopy(copy);
    this.#open();
    this.#statements.put.run(copy.entryId, copy.owner.type, copy.owner.id, copy.projectId, copy.baseRevision, copy.startedAt, copy.savedAt, JSON.stringify(copy.fields));
  }

  async list(entryId: string): Promise<WorkingCopyHead[]> {
    this.#open();
    return this.#statements.list.all(entryId).map(headOf);
  }

  async delete(entryId: string, owner: WorkingCopyOwner): Promise<boolean> {
    assertOwner(owner);
    this.#open();
    return this.#statements.delete.run(entryId, owner.type, owner.id).changes > 0;
  }

  async deleteEntry(entryId: string): Promise<number> {
    this.#open();
    return this.#statements.deleteEntry.run(entryId).changes;
  }

  async deleteSavedBefore(savedAt: string): Promise<number> {
    this.#open();
    return this.#statements.deleteSavedBefore.run(savedAt).changes;
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
    if (this.#closed) throw new WorkingCopyStoreError('the working-copy store is closed');
  }
}

function headOf(row: Row): WorkingCopyHead {
  return { projectId: row.project_id, entryId: row.entry_id, owner: { type: row.owner_type, id: row.owner_id }, baseRevision: Number(row.base_revision), startedAt: row.started_at, savedAt: row.saved_at };
}

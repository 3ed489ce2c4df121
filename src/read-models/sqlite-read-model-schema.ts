/**
 * The SQLite read-model file's own tables and DDL: the registry tables (generations, leases, skips, the
 * deep-page counts' bookkeeping), the connection's settings, and the statements that give a generation its
 * declared indexes, search tables and recording triggers.
 */
import type Database from 'better-sqlite3';
import type { OpenOptions } from '../sqlite/open-database.ts';
import { READ_MODELS_BACKSTOP_CHECKPOINT_PAGES } from '../sqlite/wal-checkpointer.ts';
import { fieldExpression, searchTableName, tableName, textExpression } from './sqlite-document-sql.ts';
import { assertCollectionName, assertIndexOptions, type CollectionSpec, type ModelTarget, type ReadModelSchema } from './read-model-store.ts';

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS projection_generations (
  projection TEXT    NOT NULL,
  generation INTEGER NOT NULL,
  version    INTEGER NOT NULL,
  state      TEXT    NOT NULL CHECK (state IN ('building', 'active', 'retired')),
  checkpoint TEXT,
  failure    TEXT,
  created_at TEXT    NOT NULL,
  updated_at TEXT    NOT NULL,
  PRIMARY KEY (projection, generation)
);
CREATE UNIQUE INDEX IF NOT EXISTS one_active_generation ON projection_generations (projection) WHERE state = 'active';
CREATE TABLE IF NOT EXISTS projection_leases (
  projection TEXT    NOT NULL,
  generation INTEGER NOT NULL,
  holder     TEXT    NOT NULL,
  expires_at TEXT    NOT NULL,
  PRIMARY KEY (projection, generation)
);
CREATE TABLE IF NOT EXISTS projection_skips (
  projection TEXT NOT NULL,
  event_id   TEXT NOT NULL,
  position   TEXT NOT NULL,
  reason     TEXT NOT NULL,
  actor      TEXT NOT NULL,
  skipped_at TEXT NOT NULL,
  PRIMARY KEY (projection, event_id)
);
-- How many commits of documents the file has had (each commit adds one): what tells the deep-page counts
-- which commits a read sees (see SqliteDeepPages).
CREATE TABLE IF NOT EXISTS document_commits (
  id INTEGER PRIMARY KEY CHECK (id = 0),
  n  INTEGER NOT NULL
);
INSERT OR IGNORE INTO document_commits (id, n) VALUES (0, 0);
-- The number (document_commits) of the last commit that wrote each document table. Read by the deep-page
-- counts of the previous version (until 2026-11-28), which may still serve from this file during an upgrade;
-- nothing of this version reads it.
CREATE TABLE IF NOT EXISTS table_commits (
  name TEXT PRIMARY KEY,
  n    INTEGER NOT NULL
) WITHOUT ROWID;
-- The document tables whose deep pages some process counts, and the fields (a JSON array) their lists are
-- counted by: triggers on each of them (see recordingTriggers) record those fields of every document a
-- commit writes there, before and after, so that every process can keep its counts exact (SqliteDeepPages).
CREATE TABLE IF NOT EXISTS counted_fields (
  name   TEXT PRIMARY KEY,
  fields TEXT NOT NULL
) WITHOUT ROWID;
-- The recorded writes, numbered with their commit (document_commits after it), those of the last
-- KEPT_COMMITS commits kept. before and after are JSON objects of the fields' values (json_extract's), NULL
-- where the document was not or is no more.
CREATE TABLE IF NOT EXISTS counted_changes (
  n      INTEGER NOT NULL,
  name   TEXT    NOT NULL,
  id     TEXT    NOT NULL,
  before TEXT,
  after  TEXT
);
CREATE INDEX IF NOT EXISTS counted_changes_by_commit ON counted_changes (n);
`;

/**
 * The read models' connections. Read models are rebuilt from the log, and each checkpoint commits with its
 * writes: losing the last commits to a power failure only means folding those events again.
 * The WAL is copied into the file by the checkpointing thread (WalCheckpointer); SQLite's own checkpoint,
 * which runs in the commit that passes its threshold (on the writer thread), is the backstop.
 * Reads through a 64 MiB page cache, not a memory map: a connection with a map unmaps it whenever another
 * connection has committed (here: every commit of the writer thread, a dozen per write), and its next read
 * maps and faults the pages in again: the first document read of a turn after a commit cost ~180 µs instead
 * of ~25 µs (scripts/bench, 2026-12-07), a write's projections ~0.3 ms of CPU, and reads during 20 publishes
 * a second 15-80% more CPU each; with no writes at all the map saved ~10 µs of a single-entry read.
 * 8 KiB pages (new files): documents of 2-3 KB (entry views) fill them three to a page where 4 KiB pages hold
 * one, half empty (15% smaller on the bench's content).
 */
export const CONNECTION = {
  purpose: 'read models',
  durability: 'normal',
  walAutocheckpointPages: READ_MODELS_BACKSTOP_CHECKPOINT_PAGES,
  cacheKiB: 65_536,
  incrementalVacuum: true,
  pageBytes: 8192,
} as const satisfies OpenOptions;
export const BUSY_TIMEOUT_MS = 10_000;

/** The statements that give a generation its declared indexes and search tables (idempotent). */
export function indexStatements(db: Database.Database, schema: ReadModelSchema, generation: number): string[] {
  const statements: string[] = [];
  for (const [collection, spec] of Object.entries(schema.collections)) {
    const target = { projection: schema.projection, generation };
    const table = tableName(target, collection);
    for (const index of spec.indexes ?? []) {
      assertCollectionName(index.name);
      assertIndexOptions(index);
      const columns = index.fields.map(([field, direction]) => `${fieldExpression(field)} ${direction === 1 ? 'ASC' : 'DESC'}`);
      // The id tie-break of sorted queries (see Query.sort), so that the index serves the whole ORDER BY.
      if (!index.unique) columns.push(`id ${index.fields[index.fields.length - 1]![1] === 1 ? 'ASC' : 'DESC'}`);
      // The very expression findStrings selects (stringColumn): SQLite reads it from the index when every
      // column a query needs is there (a covering index).
      for (const field of index.include ?? []) columns.push(textExpression('doc', field));
      // A partial index: SQLite uses it for a query with a comparison on the same expression (which implies it).
      const where = index.sparse ? ` WHERE ${fieldExpression(index.fields[index.fields.length - 1]![0])} IS NOT NULL` : '';
      statements.push(`CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS "${table}__${index.name}" ON "${table}" (${columns.join(', ')})${where}`);
    }
    if (spec.textField !== undefined) statements.push(...searchTableStatements(db, target, collection, spec));
  }
  return statements;
}

/**
 * What makes the collection's search table follow its documents: when the triggers are missing (deferred
 * indexes) or were made for another textField, the table filled from the stored documents and the triggers
 * (re)created; nothing when they are in place.
 */
function searchTableStatements(db: Database.Database, target: ModelTarget, collection: string, spec: CollectionSpec): string[] {
  const table = tableName(target, collection);
  const search = searchTableName(target, collection);
  const triggers = searchTriggersSql(table, search, spec.textField!);
  const existing = db
    .prepare(`SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = ?`)
    .all(table) as Array<{ name: string; sql: string }>;
  const current = new Map(existing.map((t) => [t.name, t.sql]));
  if (triggers.every((t) => current.get(t.name) === t.sql)) return [];
  const tokens = textExpression('doc', spec.textField!);
  return [
    ...triggers.map((t) => `DROP TRIGGER IF EXISTS "${t.name}"`),
    createSearchTableSql(search),
    `INSERT INTO "${search}" ("${search}") VALUES ('delete-all')`,
    `INSERT INTO "${search}" (rowid, tokens) SELECT rowid, ${tokens} FROM "${table}" WHERE ${tokens} IS NOT NULL`,
    ...triggers.map((t) => t.sql),
  ];
}

/**
 * Contentless (the tokens are in the document already) with deletes by rowid. The tokenizer keeps every
 * character but spaces and controls inside a token (every Unicode category but Zs and Cc), so a token of
 * indexTokens (which holds no whitespace) is one term exactly as written: "node.js", "c++", "foo_bar",
 * "東京", Devanagari with its combining marks. Diacritics are kept: tokens are already NFKC.
 */
export function createSearchTableSql(search: string): string {
  const tokenizer = "unicode61 remove_diacritics 0 categories 'L* N* Co M* P* S* Cf Cs Cn Zl Zp'";
  return `CREATE VIRTUAL TABLE IF NOT EXISTS "${search}" USING fts5(tokens, content='', contentless_delete=1, tokenize="${tokenizer.replaceAll('"', '""')}")`;
}

/** The triggers that keep a search table in step with its document table, in the same transaction. */
export function searchTriggersSql(table: string, search: string, textField: string): Array<{ name: string; sql: string }> {
  const tokens = (row: string) => textExpression(`${row}.doc`, textField);
  return [
    {
      name: `${search}__insert`,
      sql: `CREATE TRIGGER "${search}__insert" AFTER INSERT ON "${table}" BEGIN INSERT INTO "${search}" (rowid, tokens) SELECT new.rowid, ${tokens('new')} WHERE ${tokens('new')} IS NOT NULL; END`,
    },
    {
      name: `${search}__update`,
      sql: `CREATE TRIGGER "${search}__update" AFTER UPDATE OF doc ON "${table}" BEGIN DELETE FROM "${search}" WHERE rowid = old.rowid; INSERT INTO "${search}" (rowid, tokens) SELECT new.rowid, ${tokens('new')} WHERE ${tokens('new')} IS NOT NULL; END`,
    },
    {
      name: `${search}__delete`,
      sql: `CREATE TRIGGER "${search}__delete" AFTER DELETE ON "${table}" BEGIN DELETE FROM "${search}" WHERE rowid = old.rowid; END`,
    },
  ];
}

/**
 * The triggers that record, for the deep pages' counts (SqliteDeepPages), the counted fields (counted_fields)
 * of each document written to a table, before and after the write, in the writing transaction whichever
 * connection writes. The row takes the number the commit is about to take (document_commits is counted up as
 * a commit's last step). An upsert that changes nothing (an older position) fires none.
 */
export function recordingTriggers(table: string): string[] {
  const values = (row: 'OLD' | 'NEW') =>
    `(SELECT json_group_object(f.value, json_extract(${row}.doc, '$.' || f.value)) FROM counted_fields c, json_each(c.fields) f WHERE c.name = '${table}')`;
  const record = (id: string, before: string, after: string) =>
    `INSERT INTO counted_changes (n, name, id, before, after) SELECT n + 1, '${table}', ${id}, ${before}, ${after} FROM document_commits WHERE id = 0;`;
  return [
    `CREATE TRIGGER IF NOT EXISTS "${table}__counted_insert" AFTER INSERT ON "${table}" BEGIN ${record('NEW.id', 'NULL', values('NEW'))} END`,
    `CREATE TRIGGER IF NOT EXISTS "${table}__counted_update" AFTER UPDATE ON "${table}" BEGIN ${record('NEW.id', values('OLD'), values('NEW'))} END`,
    `CREATE TRIGGER IF NOT EXISTS "${table}__counted_delete" AFTER DELETE ON "${table}" BEGIN ${record('OLD.id', values('OLD'), 'NULL')} END`,
  ];
}

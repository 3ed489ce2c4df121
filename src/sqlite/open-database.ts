import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createPrivateFile, ensurePrivateDir } from '../data-dir/private-files.ts';

/** Raised when a SQLite file cannot be opened for use; the message says which file and why. */
export class SqliteOpenError extends Error {
  override name = 'SqliteOpenError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export interface OpenOptions {
  /** What the file holds, for messages: "event store", "read models". */
  purpose: string;
  /** Milliseconds a writer waits for another process's lock before failing. */
  busyTimeoutMs?: number;
  /**
   * 'full' (default): a commit is on disk when it returns. 'normal': in WAL mode still never corrupt and
   * consistent after a crash, but the last commits may be lost on power failure: right for data that is
   * rebuilt from the log anyway (read models), never for the log itself.
   */
  durability?: 'full' | 'normal';
  /** WAL pages written before SQLite copies them into the database file (default 1000). */
  walAutocheckpointPages?: number;
  /** Bytes of the file read through a memory map instead of read() calls (PRAGMA mmap_size; default 0). */
  mmapBytes?: number;
  /** KiB of pages SQLite keeps in its own cache (PRAGMA cache_size; default 2 MiB). */
  cacheKiB?: number;
  /**
   * A new file keeps its free pages apart so that `PRAGMA incremental_vacuum` can give them back to the file
   * system (PRAGMA auto_vacuum = INCREMENTAL). SQLite can set it only before the first table: a file made
   * without it keeps reusing its free pages, but its size does not shrink.
   */
  incrementalVacuum?: boolean;
  /** Page size of a new file (PRAGMA page_size; default 4096). Like auto_vacuum, set only before the first table. */
  pageBytes?: number;
}

/**
 * Opens (creating if needed, as 0600 in a 0700 folder) a SQLite database in WAL mode, with durable commits by default
 * (synchronous=FULL: a transaction is on disk when commit returns). Fails with one clear message when the folder is not
 * writable or the file is not a SQLite database, before anything is written.
 */
export function openSqliteDatabase(file: string, options: OpenOptions): Database.Database {
  const { purpose } = options;
  const dir = path.dirname(file);
  try {
    ensurePrivateDir(dir);
  } catch (error) {
    throw new SqliteOpenError(`cannot create the data folder ${dir} for the ${purpose}: ${reason(error)}`, { cause: error });
  }
  try {
    fs.accessSync(dir, fs.constants.W_OK);
  } catch (error) {
    throw new SqliteOpenError(`the data folder ${dir} is not writable (${purpose} needs to write ${path.basename(file)} and its WAL files there)`, { cause: error });
  }
  if (fs.existsSync(file)) {
    try {
      fs.accessSync(file, fs.constants.R_OK | fs.constants.W_OK);
    } catch (error) {
      throw new SqliteOpenError(`the ${purpose} file ${file} is not readable and writable: ${reason(error)}`, { cause: error });
    }
  }
  let db: Database.Database;
  try {
    // A new database file is created 0600 (its -wal and -shm files take its mode): it is nobody else's to read.
    createPrivateFile(file);
    db = new Database(file, { timeout: options.busyTimeoutMs ?? 10_000 });
  } catch (error) {
    throw new SqliteOpenError(`cannot open the ${purpose} file ${file}: ${reason(error)}`, { cause: error });
  }
  try {
    // Reading the schema is the first thing that touches the file's pages: a file that is not SQLite fails here.
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    if (options.pageBytes !== undefined) db.pragma(`page_size = ${Math.trunc(options.pageBytes)}`);
    if (options.incrementalVacuum) db.pragma('auto_vacuum = INCREMENTAL');
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (String(mode).toLowerCase() !== 'wal') throw new Error(`journal_mode is ${String(mode)}, WAL required`);
    for (const pragma of connectionPragmas(options)) db.pragma(pragma);
    return db;
  } catch (error) {
    db.close();
    const code = (error as { code?: string }).code;
    const what =
      code === 'SQLITE_NOTADB' ? 'the file is not a SQLite database (corrupt, or some other file)'
      : code === 'SQLITE_CORRUPT' ? 'the database file is corrupt'
      : code === 'SQLITE_READONLY' ? 'the file or its folder is read-only'
      : reason(error);
    throw new SqliteOpenError(`cannot use the ${purpose} file ${file}: ${what}`, { cause: error });
  }
}

/**
 * The settings of each connection to the file (they are not stored in it): what openSqliteDatabase sets, and what
 * another connection to the same file (a writer thread's) sets to behave the same.
 */
export function connectionPragmas(options: Pick<OpenOptions, 'durability' | 'walAutocheckpointPages' | 'mmapBytes' | 'cacheKiB'>): string[] {
  const pragmas = [`synchronous = ${options.durability === 'normal' ? 'NORMAL' : 'FULL'}`];
  if (options.walAutocheckpointPages !== undefined) pragmas.push(`wal_autocheckpoint = ${options.walAutocheckpointPages}`);
  if (options.mmapBytes !== undefined) pragmas.push(`mmap_size = ${Math.trunc(options.mmapBytes)}`);
  if (options.cacheKiB !== undefined) pragmas.push(`cache_size = -${Math.trunc(options.cacheKiB)}`);
  pragmas.push('foreign_keys = ON');
  return pragmas;
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

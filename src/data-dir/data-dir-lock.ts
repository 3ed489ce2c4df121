import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createPrivateFile, ensurePrivateDir } from './private-files.ts';

/** The lock file in DATA_DIR. */
export const LOCK_FILE = 'annals.lock';

/** Who holds a DATA_DIR, as written into the lock file for the next one to read. */
export interface LockHolder {
  pid: number;
  host: string;
  /** What the holder does there: the service's roles, or an operator command such as "restore". */
  purpose: string;
  since: string;
}

/** The DATA_DIR is held by another process; the message names it and says what to do. */
export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder | undefined,
  ) {
    const who = holder ? `pid ${holder.pid} on ${holder.host}, ${holder.purpose}, since ${holder.since}` : 'another process';
    super(`the data folder ${dataDir} is in use by ${who}: one writer per data folder`);
  }
}

/** DATA_DIR cannot be created or written; the message says which and why. */
export class DataDirUnusableError extends Error {
  override name = 'DataDirUnusableError';
}

/** A held lock; released on `release()`, and by the operating system when the process ends in any way. */
export interface DataDirLock {
  readonly file: string;
  release(): void;
}

/**
 * Takes the exclusive writer lock of a DATA_DIR, or throws DataDirLockedError at once when another process
 * (or another service in this process) holds it.
 *
 * The lock is a write lock on a small SQLite file (a RESERVED lock, held by an open transaction): SQLite
 * takes it with fcntl() record locks, which the kernel drops when the process dies, so a holder killed with
 * SIGKILL leaves nothing stale behind and the next start simply takes it. Readers may still read the file
 * while it is held, so the refusal can say who holds it.
 */
export function acquireDataDirLock(dataDir: string, purpose: string): DataDirLock {
  try {
    ensurePrivateDir(dataDir);
    fs.accessSync(dataDir, fs.constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new DataDirUnusableError(
      code === 'EACCES' || code === 'EPERM' || code === 'EROFS' ? `the data folder ${dataDir} is not writable` : `cannot create the data folder ${dataDir}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  const file = path.join(dataDir, LOCK_FILE);
  createPrivateFile(file);
  const db = new Database(file, { timeout: 0 });
  try {
    if (!tryBegin(db)) throw new DataDirLockedError(dataDir, readHolder(db));
    db.exec('CREATE TABLE IF NOT EXISTS holder (id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER, host TEXT, purpose TEXT, since TEXT)');
    db.prepare('INSERT OR REPLACE INTO holder (id, pid, host, purpose, since) VALUES (1, ?, ?, ?, ?)').run(process.pid, os.hostname(), purpose, new Date().toISOString());
    // Commit who we are so that others can read it, then hold the lock with an open write transaction. If
    // another process takes it in between, it is theirs and this start is the one refused.
    db.exec('COMMIT');
    if (!tryBegin(db)) throw new DataDirLockedError(dataDir, readHolder(db));
  } catch (error) {
    db.close();
    throw error;
  }
  let released = false;
  return {
    file,
    release() {
      if (released) return;
      released = true;
      db.exec('ROLLBACK');
      db.close();
    },
  };
}

/** BEGIN IMMEDIATE without waiting: true when this connection now holds the write lock. */
function tryBegin(db: Database.Database): boolean {
  try {
    db.exec('BEGIN IMMEDIATE');
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_BUSY') return false;
    throw error;
  }
}

function readHolder(db: Database.Database): LockHolder | undefined {
  try {
    return db.prepare<[], LockHolder>('SELECT pid, host, purpose, since FROM holder WHERE id = 1').get();
  } catch {
    // Not written yet, or being written this instant.
    return undefined;
  }
}

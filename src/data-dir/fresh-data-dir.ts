import fs from 'node:fs';
import path from 'node:path';
import { acquireDataDirLock, DataDirLockedError, LOCK_FILE, type DataDirLock } from './data-dir-lock.ts';

/** What DATA_DIR was before a start: missing, empty, or holding data. */
export type DataDirState = 'missing' | 'empty' | 'in-use';

export function dataDirState(dataDir: string): DataDirState {
  try {
    return fs.readdirSync(dataDir).length === 0 ? 'empty' : 'in-use';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    // Unreadable: the start will fail on it with its own message; treat it as holding data (never clean).
    return 'in-use';
  }
}

/**
 * After a failed start in a DATA_DIR that was missing or empty, removes everything the start created, so
 * that the folder is as it was (a port already in use must not leave half-made stores behind). Done only
 * while holding the writer lock: either the failed start's own, or one taken now. When another process
 * holds it, the files may be that process's and nothing is removed.
 */
export function undoFreshDataDir(dataDir: string, before: Exclude<DataDirState, 'in-use'>, held: DataDirLock | undefined): void {
  let lock = held;
  if (!lock) {
    try {
      lock = acquireDataDirLock(dataDir, 'clean-up after a failed start');
    } catch (error) {
      if (error instanceof DataDirLockedError) return;
      throw error;
    }
  }
  try {
    for (const name of fs.readdirSync(dataDir)) {
      if (name !== LOCK_FILE) fs.rmSync(path.join(dataDir, name), { recursive: true, force: true });
    }
  } finally {
    lock.release();
  }
  fs.rmSync(path.join(dataDir, LOCK_FILE), { force: true });
  if (before === 'missing') fs.rmdirSync(dataDir);
}

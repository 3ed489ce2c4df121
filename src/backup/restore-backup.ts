import { existsSync, readdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config/config.ts';
import { SqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { acquireDataDirLock, LOCK_FILE } from '../data-dir/data-dir-lock.ts';
import { dataDirState, undoFreshDataDir } from '../data-dir/fresh-data-dir.ts';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../data-dir/private-files.ts';
import { syncFile, syncFolder } from '../fs/durable-files.ts';
import { assertEmbeddedStores, BackupError, MANIFEST_FILE, sha256OfFile, type BackupManifest } from './backup-manifest.ts';

export interface RestoreResult {
  dataDir: string;
  restoredFrom: string;
  createdAt: string;
  eventLogHead: string | null;
  files: number;
  bytes: number;
}

/**
 * `annals restore <dir>`: puts a backup taken by `annals backup` into an empty DATA_DIR. Every file is
 * checked against the manifest (size and SHA-256) before anything is written; the DATA_DIR's writer lock
 * is held throughout, so no service starts on a half-restored folder; a failure removes what was restored.
 * Start the service afterwards: the projectors catch the read models up with the restored log.
 */
export async function restoreBackup(config: Config, source: string, progress: (line: string) => void): Promise<RestoreResult> {
  assertEmbeddedStores(config, 'restore');
  const from = path.resolve(source);
  const manifest = await readManifest(from);
  const dataDir = config.dataDir;
  const before = dataDirState(dataDir);
  if (before === 'in-use' && !onlyLockFile(dataDir)) {
    throw new BackupError('BAD_TARGET', `DATA_DIR ${dataDir} is not empty: restore only into an empty data folder (move the current one aside first)`, 2);
  }

  progress(`restore: checking ${manifest.files.length} files of the backup taken ${manifest.createdAt}…`);
  for (const file of manifest.files) {
    const copy = path.join(from, ...file.path.split('/'));
    if (!existsSync(copy)) throw new BackupError('BAD_BACKUP', `the backup in ${from} lacks ${file.path}, which its manifest lists`, 1);
    const [bytes, sha256] = [(await fs.stat(copy)).size, await sha256OfFile(copy)];
    if (bytes !== file.bytes || sha256 !== file.sha256) throw new BackupError('BAD_BACKUP', `${file.path} in ${from} is damaged: its size or SHA-256 differs from the manifest`, 1);
  }
  const lock = acquireDataDirLock(dataDir, 'annals restore');
  try {
    if (!onlyLockFile(dataDir)) throw new BackupError('BAD_TARGET', `DATA_DIR ${dataDir} is not empty: restore only into an empty data folder`, 2);
    progress(`restore: writing ${manifest.files.length} files into ${dataDir}…`);
    for (const file of manifest.files) {
      const target = path.join(dataDir, ...file.path.split('/'));
      await fs.mkdir(path.dirname(target), { recursive: true, mode: PRIVATE_DIR_MODE });
      const temporary = `${target}.restoring`;
      await fs.copyFile(path.join(from, ...file.path.split('/')), temporary);
      await fs.chmod(temporary, PRIVATE_FILE_MODE);
      await syncFile(temporary);
      await fs.rename(temporary, target);
    }
    for (const dir of new Set(manifest.files.map((file) => path.dirname(path.join(dataDir, ...file.path.split('/')))))) await syncFolder(dir);
    const head = await restoredHead(config);
    if (head !== manifest.eventLogHead) throw new BackupError('BAD_BACKUP', `the restored event log ends at ${head ?? 'nothing'}, the manifest says ${manifest.eventLogHead ?? 'nothing'}`, 1);
  } catch (error) {
    undoFreshDataDir(dataDir, before === 'missing' ? 'missing' : 'empty', lock);
    throw error;
  } finally {
    lock.release();
  }
  return {
    dataDir,
    restoredFrom: from,
    createdAt: manifest.createdAt,
    eventLogHead: manifest.eventLogHead,
    files: manifest.files.length,
    bytes: manifest.files.reduce((sum, f) => sum + f.bytes, 0),
  };
}

async function readManifest(from: string): Promise<BackupManifest> {
  let text: string;
  try {
    text = await fs.readFile(path.join(from, MANIFEST_FILE), 'utf8');
  } catch {
    throw new BackupError('BAD_BACKUP', `${from} holds no ${MANIFEST_FILE}: not a backup taken by annals backup, or one that did not finish`, 1);
  }
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(text) as BackupManifest;
  } catch {
    throw new BackupError('BAD_BACKUP', `${path.join(from, MANIFEST_FILE)} is not valid JSON`, 1);
  }
  if (manifest.format !== 'annals-backup' || manifest.formatVersion !== 1 || !Array.isArray(manifest.files)) {
    throw new BackupError('BAD_BACKUP', `${path.join(from, MANIFEST_FILE)} is not an annals backup manifest of format 1`, 1);
  }
  for (const file of manifest.files) {
    if (typeof file.path !== 'string' || file.path.split('/').some((part) => part === '..' || part === '') || path.isAbsolute(file.path)) {
      throw new BackupError('BAD_BACKUP', `the manifest names a file outside the backup: ${JSON.stringify(file.path)}`, 1);
    }
  }
  return manifest;
}

function onlyLockFile(dataDir: string): boolean {
  return readdirSync(dataDir).every((name) => name === LOCK_FILE);
}

async function restoredHead(config: Config): Promise<string | null> {
  if (config.eventStore.kind !== 'sqlite' || !existsSync(config.eventStore.file)) return null;
  const store = SqliteEventStore.open(config.eventStore.file);
  try {
    const head = await store.headPosition();
    return head === null ? null : head.toString().padStart(20, '0');
  } finally {
    await store.close();
  }
}

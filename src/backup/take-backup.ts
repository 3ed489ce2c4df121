import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Config } from '../config/config.ts';
import { SqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { createPrivateFile, ensurePrivateDir, PRIVATE_FILE_MODE } from '../data-dir/private-files.ts';
import { dataDirState } from '../data-dir/fresh-data-dir.ts';
import { packageVersion } from '../package-root.ts';
import { syncFile, syncFolder } from '../fs/durable-files.ts';
import { assertEmbeddedStores, BackupError, filesUnder, MANIFEST_FILE, sha256OfFile, sizeText, type BackupManifest } from './backup-manifest.ts';

/** The secrets generated into DATA_DIR when SESSION_SECRET / SECRETS_KEY are unset. */
const SECRET_FILES = ['session-secret', 'secrets-key'];

/** Temporary files of the media and mail folders: never part of a backup. */
const isTemporary = (name: string) => name.startsWith('.incoming-') || name.startsWith('.tmp-');

/**
 * `annals backup <dir>`: a consistent copy of every store in DATA_DIR, taken while the service runs.
 *
 * Each SQLite store is copied with SQLite's online backup API in one step, inside one read transaction:
 * a snapshot of that store at one instant that writers (in WAL mode) never wait for, and that a write made
 * meanwhile cannot restart. Across stores the copies are ordered so that the backup is consistent as a
 * whole:
 * 1. read models first: their checkpoint can then never be ahead of the log copied after them (on
 *    restore the projectors just catch up);
 * 2. the event log: the backup's point in time; every write acknowledged before it began is in it;
 * 3. the key store, media and mail after the log: a submission's key and an upload's bytes are written
 *    before their event, so every submission and asset in the copied log has them. Mail files already
 *    written are recognised on restore (the .eml transport never writes a message twice). People's working
 *    copies (unsaved typing) come with them: one based on a revision the copied log lacks is offered as typing
 *    over an older revision, as after any conflict.
 * The generated secrets never change once written. The manifest, written last, lists every file with its
 * size and SHA-256, which `annals restore` checks.
 */
export async function takeBackup(config: Config, target: string, progress: (line: string) => void): Promise<BackupManifest> {
  assertEmbeddedStores(config, 'backup');
  const dataDir = config.dataDir;
  const eventLogFile = config.eventStore.kind === 'sqlite' ? config.eventStore.file : '';
  if (!existsSync(eventLogFile)) throw new BackupError('BAD_SOURCE', `there is no event log to back up in ${dataDir} (no ${path.basename(eventLogFile)})`, 1);
  const destination = path.resolve(target);
  if (destination === dataDir || destination.startsWith(`${dataDir}${path.sep}`)) {
    throw new BackupError('BAD_TARGET', `the backup folder ${destination} is inside DATA_DIR (${dataDir}): choose a folder elsewhere, ideally on another disk`, 2);
  }
  if (dataDirState(destination) === 'in-use') throw new BackupError('BAD_TARGET', `the backup folder ${destination} is not empty: give a new or empty folder`, 2);
  ensurePrivateDir(destination);

  const sqliteStores: Array<{ file: string; what: string }> = [
    { file: config.readModels.kind === 'sqlite' ? config.readModels.file : '', what: 'read models' },
    { file: eventLogFile, what: 'event log' },
    { file: path.join(dataDir, 'keys.sqlite'), what: 'key store' },
    { file: path.join(dataDir, 'working-copies.sqlite'), what: 'working copies' },
  ];
  let eventLogHead: bigint | null = null;
  for (const store of sqliteStores) {
    if (!existsSync(store.file)) continue;
    const copy = path.join(destination, path.basename(store.file));
    const began = Date.now();
    const wal = `${store.file}-wal`;
    const bytes = (await fs.stat(store.file)).size + (existsSync(wal) ? (await fs.stat(wal)).size : 0);
    progress(`backup: ${store.what} (${path.basename(store.file)}, ${sizeText(bytes)} with its WAL)…`);
    await copySqlite(store.file, copy);
    if (store.file === eventLogFile) eventLogHead = await headOf(copy);
    progress(`backup: ${store.what} copied in ${((Date.now() - began) / 1000).toFixed(1)} s`);
  }
  for (const name of SECRET_FILES) {
    const file = path.join(dataDir, name);
    if (existsSync(file)) await fs.copyFile(file, path.join(destination, name));
  }
  for (const folder of ['media', 'mail']) {
    const from = path.join(dataDir, folder);
    if (!existsSync(from)) continue;
    const names = (await filesUnder(from)).filter((name) => !isTemporary(path.basename(name)));
    progress(`backup: ${folder}/ (${names.length} files)…`);
    for (const name of names) {
      await fs.mkdir(path.dirname(path.join(destination, folder, name)), { recursive: true, mode: 0o700 });
      await fs.copyFile(path.join(from, name), path.join(destination, folder, name));
    }
  }

  progress('backup: checking sums…');
  const files = [];
  for (const name of await filesUnder(destination)) {
    const file = path.join(destination, name);
    await fs.chmod(file, PRIVATE_FILE_MODE);
    files.push({ path: name.split(path.sep).join('/'), bytes: (await fs.stat(file)).size, sha256: await sha256OfFile(file) });
  }
  const manifest: BackupManifest = {
    format: 'annals-backup',
    formatVersion: 1,
    annalsVersion: packageVersion(),
    createdAt: new Date().toISOString(),
    source: dataDir,
    eventLogHead: eventLogHead === null ? null : eventLogHead.toString().padStart(20, '0'),
    files,
  };
  await writeDurably(path.join(destination, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/**
 * One SQLite database copied with the online backup API, all pages in one step: a single read transaction,
 * so the copy is the database at one instant however busy its writers are.
 */
async function copySqlite(source: string, copy: string): Promise<void> {
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    createPrivateFile(copy);
    await db.backup(copy, { progress: () => 0x7fffffff });
  } finally {
    db.close();
  }
  // The copy is a database of its own: checked, and folded into one file (no -wal beside it).
  const check = new Database(copy);
  try {
    const result = check.pragma('quick_check', { simple: true });
    if (result !== 'ok') throw new BackupError('BAD_SOURCE', `the copy of ${source} fails SQLite's check: ${String(result)}`, 1);
    check.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    check.close();
  }
}

async function headOf(eventLogCopy: string): Promise<bigint | null> {
  const store = SqliteEventStore.open(eventLogCopy);
  try {
    return await store.headPosition();
  } finally {
    await store.close();
  }
}

async function writeDurably(file: string, text: string): Promise<void> {
  const temporary = `${file}.tmp`;
  await fs.writeFile(temporary, text, { mode: PRIVATE_FILE_MODE });
  await syncFile(temporary);
  await fs.rename(temporary, file);
  await syncFolder(path.dirname(file));
}

import fs from 'node:fs';
import path from 'node:path';

/**
 * DATA_DIR holds the event log, the keys that protect contact-form personal data, the secrets that sign
 * sessions and seal webhook secrets, and mail with personal data: only the service's own user may read
 * them. Folders the service creates there are 0700, files 0600 (SQLite gives its -wal and -shm files the
 * mode of their database file).
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Creates the folder (and missing parents) as 0700; an existing folder keeps its mode. */
export function ensurePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/**
 * Creates the file empty with mode 0600 when it does not exist yet, so that whatever opens it next (SQLite)
 * never creates it with the process's default mode. An existing file is left as it is.
 */
export function createPrivateFile(file: string): void {
  try {
    fs.closeSync(fs.openSync(file, 'wx', PRIVATE_FILE_MODE));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/**
 * What an operator should fix about who may read DATA_DIR: the folder open to other users, and files in
 * it that the service's group or other users may read (left by an older version, or by a copy). One
 * message each; none when all is private.
 */
export function permissionWarnings(dataDir: string): string[] {
  const warnings: string[] = [];
  let stat: fs.Stats;
  try {
    stat = fs.statSync(dataDir);
  } catch {
    return warnings;
  }
  if ((stat.mode & 0o007) !== 0) {
    warnings.push(
      `the data folder ${dataDir} is open to other users (mode ${octal(stat.mode)}): it holds the event log, personal data and secrets; run chmod 700 ${dataDir}`,
    );
  }
  const open: string[] = [];
  for (const entry of fs.readdirSync(dataDir, { withFileTypes: true })) {
    const file = path.join(dataDir, entry.name);
    try {
      const mode = fs.statSync(file).mode;
      if (entry.isFile() && (mode & 0o077) !== 0) open.push(`${entry.name} (${octal(mode)})`);
      if (entry.isDirectory() && entry.name === 'mail' && (mode & 0o077) !== 0) open.push(`${entry.name}/ (${octal(mode)})`);
    } catch {
      // Gone meanwhile (a WAL file checkpointed away): nothing to say about it.
    }
  }
  if (open.length > 0) {
    warnings.push(`files in ${dataDir} are readable by other users than the service's: ${open.join(', ')}; run chmod 600 on the files and chmod 700 on the folders`);
  }
  return warnings;
}

function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8)}`;
}

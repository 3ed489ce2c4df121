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

/** How many loose files and folders a warning names; the rest are counted. */
const NAMED_AT_MOST = 20;

/**
 * What an operator should fix about who may read DATA_DIR: the folder itself, and every file and folder
 * under it (media and mail included, at any depth) that the service's group or other users may read or
 * enter, as left by an older version, a copy, a restore by hand or another program. One message each for
 * the folder and for what is in it (the first NAMED_AT_MOST by path, then a count); none when all is
 * private. Symbolic links are not followed; entries that vanish meanwhile (a WAL file checkpointed away, a
 * temporary upload) are passed over. Reads the tree without blocking the event loop.
 */
export async function permissionWarnings(dataDir: string): Promise<string[]> {
  const warnings: string[] = [];
  let stat: fs.Stats;
  try {
    stat = await fs.promises.lstat(dataDir);
  } catch {
    return warnings;
  }
  if ((stat.mode & 0o077) !== 0) {
    warnings.push(
      `the data folder ${dataDir} is open to other users (mode ${octal(stat.mode)}): it holds the event log, personal data and secrets; run chmod 700 ${dataDir}`,
    );
  }
  const open: string[] = [];
  let count = 0;
  const walk = async (dir: string): Promise<void> => {
    let entries: fs.Dirent[];
    try {
      entries = await fs.promises.readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (!entry.isFile() && !entry.isDirectory()) continue;
      const file = path.join(dir, entry.name);
      try {
        const mode = (await fs.promises.lstat(file)).mode;
        if ((mode & 0o077) !== 0) {
          count += 1;
          if (open.length < NAMED_AT_MOST) open.push(`${path.relative(dataDir, file)}${entry.isDirectory() ? '/' : ''} (${octal(mode)})`);
        }
      } catch {
        continue; // Gone meanwhile: nothing to say about it.
      }
      if (entry.isDirectory()) await walk(file);
    }
  };
  await walk(dataDir);
  if (count > 0) {
    const more = count > open.length ? ` and ${count - open.length} more` : '';
    warnings.push(
      `files or folders in ${dataDir} are readable by other users than the service's: ${open.join(', ')}${more}; files should be 0600 and folders 0700: run chmod -R go-rwx ${dataDir}`,
    );
  }
  return warnings;
}

function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8)}`;
}

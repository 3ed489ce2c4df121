import fs from 'node:fs/promises';

/** Flushes a file's contents to disk (fsync), so that a rename after it publishes a whole file. */
export async function syncFile(file: string): Promise<void> {
  const handle = await fs.open(file, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Flushes a folder's entries (a rename or a new file in it) to disk; a no-op where folders cannot be synced. */
export async function syncFolder(dir: string): Promise<void> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch {
    // Not every platform can fsync a directory; the files themselves are on disk.
  } finally {
    await handle?.close();
  }
}

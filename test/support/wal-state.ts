import fs from 'node:fs';

/**
 * A SQLite WAL's frames and how many of them the database file holds already, from the wal-index header in
 * the -shm file (sqlite.org/walformat.html: mxFrame at byte 16, nBackfill at byte 96, in the machine's byte order).
 */
export function walState(file: string): { frames: number; backfilled: number } {
  const shm = fs.readFileSync(`${file}-shm`);
  return { frames: shm.readUInt32LE(16), backfilled: shm.readUInt32LE(96) };
}

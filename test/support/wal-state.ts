import fs from 'node:fs';
import { expect } from 'chai';

/**
 * A SQLite WAL's frames and how many of them the database file holds already, from the wal-index header in
 * the -shm file (sqlite.org/walformat.html: mxFrame at byte 16, nBackfill at byte 96, in the machine's byte order).
 */
export function walState(file: string): { frames: number; backfilled: number } {
  const shm = fs.readFileSync(`${file}-shm`);
  return { frames: shm.readUInt32LE(16), backfilled: shm.readUInt32LE(96) };
}

/**
 * After a burst of writes that grew the WAL past `cutBackBytes`, with a store's checkpoints run by hand: the
 * first (scheduled by the burst's first write, which saw more since) copies the WAL and leaves the file; it asks
 * for one more, which finds the writes over and cuts the WAL, copied whole, back to nothing.
 */
export async function expectWalCutBackAfterBurst(file: string, checkpoints: Array<() => Promise<void>>, cutBackBytes: number): Promise<void> {
  await checkpoints[0]!();
  expect(walState(file).backfilled).to.equal(walState(file).frames);
  expect(fs.statSync(`${file}-wal`).size).to.be.above(cutBackBytes);
  expect(checkpoints).to.have.length(2);
  await checkpoints[1]!();
  expect(fs.statSync(`${file}-wal`).size).to.equal(0);
  expect(checkpoints, 'nothing more scheduled').to.have.length(2);
}

import fs from 'node:fs';
import path from 'node:path';
import type { Clock } from '../clock.ts';
import { InterruptibleDelay } from '../interruptible-delay.ts';
import type { Logger } from '../logging/logger.ts';

/**
 * Retention of the embedded mail folder (DATA_DIR/mail, used when SMTP_URL is unset): every notice sent
 * stays there as an `.eml` file, ~4 KB each (378 MB for the 100,000 review notices of the benchmark seed,
 * more than its whole event log). Files older than the retention are removed; so are temporary files a
 * crash left behind (`.tmp-*`, older than an hour).
 *
 * A message the outbox sends again after its file was removed is written again: retries come within minutes,
 * the retention is days.
 */

/** Temporary files (EmlFileTransport's `.tmp-*`) older than this are a crash's leftovers. */
const TEMPORARY_FILE_MAX_AGE_MS = 60 * 60 * 1000;
/** Files removed between two turns of the event loop: a sweep of a large folder never holds it for long. */
const FILES_PER_TURN = 200;

export interface MailFolderSweep {
  /** `.eml` files removed (older than the retention). */
  removed: number;
  /** `.eml` files kept. */
  kept: number;
  /** Leftover temporary files removed. */
  temporaries: number;
}

/**
 * Removes the `.eml` files of `dir` last written before `before`, and temporary files older than an hour
 * (both by modification time). A missing folder is an empty one; a file that vanished meanwhile is skipped.
 * Ends early, with what it did so far, once `stopped` says so (the service is shutting down).
 */
export async function sweepMailFolder(dir: string, before: Date, now: Date, stopped: () => boolean = () => false): Promise<MailFolderSweep> {
  const sweep: MailFolderSweep = { removed: 0, kept: 0, temporaries: 0 };
  let folder: fs.Dir;
  try {
    folder = await fs.promises.opendir(dir, { bufferSize: 256 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return sweep;
    throw error;
  }
  const temporaryBefore = now.getTime() - TEMPORARY_FILE_MAX_AGE_MS;
  let seen = 0;
  for await (const entry of folder) {
    if (stopped()) break;
    if (!entry.isFile()) continue;
    const temporary = entry.name.startsWith('.tmp-');
    if (!temporary && !entry.name.endsWith('.eml')) continue;
    if (++seen % FILES_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
    const file = path.join(dir, entry.name);
    const modified = await modifiedMs(file);
    if (modified === undefined) continue;
    if (modified >= (temporary ? temporaryBefore : before.getTime())) {
      if (!temporary) sweep.kept++;
      continue;
    }
    await fs.promises.rm(file, { force: true });
    if (temporary) sweep.temporaries++;
    else sweep.removed++;
  }
  return sweep;
}

async function modifiedMs(file: string): Promise<number | undefined> {
  try {
    return (await fs.promises.stat(file)).mtimeMs;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

export interface MailFolderRetentionOptions {
  dir: string;
  /** Days an `.eml` file is kept (MAIL_FOLDER_KEEP_DAYS); at least 1. */
  keepDays: number;
  clock: Clock;
  logger: Logger;
  /** Time between sweeps; the first runs FIRST_SWEEP_AFTER_MS after the start. Default an hour. */
  everyMs?: number;
}

/** How long after the start the first sweep runs: not in the start's own work. */
export const FIRST_SWEEP_AFTER_MS = 2_000;
const DEFAULT_SWEEP_EVERY_MS = 60 * 60 * 1000;

/** Sweeps the mail folder shortly after the start, then every `everyMs`, until stopped. */
export function startMailFolderRetention(options: MailFolderRetentionOptions): { stop(): Promise<void> } {
  const { dir, keepDays, clock, logger } = options;
  const everyMs = options.everyMs ?? DEFAULT_SWEEP_EVERY_MS;
  const delay = new InterruptibleDelay();
  let stopped = false;
  const loop = (async () => {
    await delay.sleep(FIRST_SWEEP_AFTER_MS);
    while (!stopped) {
      const now = clock.now();
      try {
        const sweep = await sweepMailFolder(dir, new Date(now.getTime() - keepDays * 24 * 60 * 60 * 1000), now, () => stopped);
        if (sweep.removed > 0 || sweep.temporaries > 0) logger.info({ dir, keepDays, ...sweep }, 'mail folder: old messages removed');
      } catch (error) {
        logger.warn({ dir, err: error }, 'mail folder: old messages could not be removed; trying again at the next sweep');
      }
      if (!stopped) await delay.sleep(everyMs);
    }
  })();
  return {
    async stop() {
      stopped = true;
      delay.interrupt();
      await loop;
    },
  };
}

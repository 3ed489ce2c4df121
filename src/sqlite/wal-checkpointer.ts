import type Database from 'better-sqlite3';

/** Runs `task` after `ms` milliseconds; the returned function cancels it. Injected by tests. */
export type Schedule = (task: () => void, ms: number) => () => void;

/** setTimeout that does not hold the process open. */
export const timerSchedule: Schedule = (task, ms) => {
  const timer = setTimeout(task, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

/**
 * Copies a database's recent WAL frames into its file shortly after writes (PRAGMA wal_checkpoint(PASSIVE)).
 *
 * While the WAL holds frames the file does not, every page a read fetches is first looked up in the WAL's
 * index, and pages found there are read with read() calls instead of through the memory map. SQLite's own
 * checkpoint runs only once the WAL passes its threshold (40 MB for the read models, so that bulk rebuilds
 * sync rarely), which left public reads paying for the WAL for as long as writes paused below it: ~9% of the
 * CPU of a single entry and of a list page after a rebuild, measured. Once the WAL is fully copied, a read
 * ignores it. PASSIVE never waits for readers or writers: frames a reader still needs are copied next time.
 */
export class WalCheckpointer {
  readonly #db: Database.Database;
  readonly #delayMs: number;
  readonly #schedule: Schedule;
  #cancel: (() => void) | undefined;

  constructor(db: Database.Database, options: { delayMs: number; schedule?: Schedule }) {
    this.#db = db;
    this.#delayMs = options.delayMs;
    this.#schedule = options.schedule ?? timerSchedule;
  }

  /** After a write: a checkpoint within delayMs unless one is due already (at most one per delayMs under steady writes). */
  wrote(): void {
    if (this.#cancel !== undefined) return;
    this.#cancel = this.#schedule(() => {
      this.#cancel = undefined;
      if (!this.#db.open) return;
      try {
        this.#db.pragma('wal_checkpoint(PASSIVE)');
      } catch {
        // Not worth failing for: the next write schedules another, and SQLite's own checkpoint still runs.
      }
    }, this.#delayMs);
  }

  close(): void {
    this.#cancel?.();
    this.#cancel = undefined;
  }
}

import type Database from 'better-sqlite3';

/**
 * How often to check: every `activeMs` for `activeForMs` after a change was seen, else every `idleMs`; every
 * `urgentMs` (when given) while someone is in a hurry (hurry()).
 */
export interface CheckIntervals {
  activeMs: number;
  idleMs: number;
  activeForMs: number;
  urgentMs?: number;
}

/**
 * Notices commits that other connections make to a SQLite file (another process appending to the log, a
 * command-line tool): `PRAGMA data_version` changes with each of them and never with the connection's own.
 * While started it checks (a look at the WAL index header, a few microseconds) and calls `onCommit` when the
 * version changed, so that whoever waits for new rows wakes within an interval rather than at its next poll.
 * Checks are frequent while the other side is writing (each of its writes waits for this side, as a write
 * to an API-only replica waits for the projector process) and sparse while it is quiet.
 */
export class OtherConnectionCommits {
  readonly #dataVersion: Database.Statement<[], number | bigint>;
  #last: number | bigint | undefined;
  #lastChangeAt = -Infinity;
  #timer: NodeJS.Timeout | undefined;
  /** Callers in a hurry (a write waiting for another process's commit): checks every urgentMs meanwhile. */
  #hurried = 0;

  /**
   * @param ownCommitInFlight whether a commit of the caller's own other connection (a writer thread's) may have
   *   landed without the caller having been told yet: a change seen meanwhile may be that one, and is left for
   *   the caller's seen() (checks resume once nothing is in flight).
   */
  constructor(
    db: Database.Database,
    private readonly onCommit: () => void,
    private readonly intervals: CheckIntervals,
    private readonly ownCommitInFlight: () => boolean = () => false,
  ) {
    this.#dataVersion = db.prepare<[], number | bigint>('PRAGMA data_version').pluck();
  }

  get watching(): boolean {
    return this.#timer !== undefined;
  }

  /** Starts checking (no-op when started). Commits before this call are not reported. */
  start(): void {
    if (this.#timer !== undefined) return;
    this.#last = this.#read();
    this.#schedule();
  }

  /**
   * Takes the commits made so far as reported: for a caller that has just made one on another connection of its
   * own (a writer thread's) and told its waiters itself (a commit of someone else's meanwhile is told with it).
   */
  seen(): void {
    if (this.#timer === undefined) return;
    this.#last = this.#read() ?? this.#last;
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /**
   * One more (+1) or one fewer (-1) caller in a hurry: while any is, checks run every `urgentMs`. The first
   * one's check runs now rather than at the end of a longer interval.
   */
  hurry(delta: 1 | -1): void {
    this.#hurried = Math.max(0, this.#hurried + delta);
    if (delta === 1 && this.#hurried === 1 && this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#check();
    }
  }

  #schedule(): void {
    const { activeMs, idleMs, activeForMs, urgentMs } = this.intervals;
    const active = performance.now() - this.#lastChangeAt < activeForMs;
    this.#timer = setTimeout(() => this.#check(), this.#hurried > 0 && urgentMs !== undefined ? urgentMs : active ? activeMs : idleMs);
    // The check never keeps a process alive on its own.
    this.#timer.unref();
  }

  #check(): void {
    const run = this.#timer;
    if (this.ownCommitInFlight()) {
      this.#schedule();
      return;
    }
    const version = this.#read();
    if (version !== undefined && version !== this.#last) {
      this.#last = version;
      this.#lastChangeAt = performance.now();
      this.onCommit();
    }
    // Unless onCommit stopped the watch (or stopped and started it again).
    if (this.#timer === run) this.#schedule();
  }

  #read(): number | bigint | undefined {
    try {
      return this.#dataVersion.get();
    } catch {
      // A failed look (the file busy or unreadable for a moment) reports nothing; waiters still poll.
      return undefined;
    }
  }
}

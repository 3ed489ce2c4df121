import type Database from 'better-sqlite3';

/**
 * Notices commits that other connections make to a SQLite file (another process appending to the log, a
 * command-line tool): `PRAGMA data_version` changes with each of them and never with the connection's own.
 * While started it checks every `intervalMs` (a look at the WAL index header, a few microseconds) and calls
 * `onCommit` when the version changed, so that whoever waits for new rows wakes within an interval rather
 * than at its next poll.
 */
export class OtherConnectionCommits {
  readonly #dataVersion: Database.Statement<[], number | bigint>;
  #last: number | bigint | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    db: Database.Database,
    private readonly onCommit: () => void,
    private readonly intervalMs: number,
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
    this.#timer = setInterval(() => this.#check(), this.intervalMs);
    // The check never keeps a process alive on its own.
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #check(): void {
    const version = this.#read();
    if (version === undefined || version === this.#last) return;
    this.#last = version;
    this.onCommit();
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

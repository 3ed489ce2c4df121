import type { GenerationRecord, ReadModelQueries } from '../read-models/read-model-store.ts';
import { InterruptibleDelay } from '../interruptible-delay.ts';

/** The longest a cued wait goes without reading (a cue lost: a change stream failing over). */
const CUED_BACKSTOP_MAX_MS = 400;

/** Writes waiting for projections to reach positions (projection → position). */
interface Waiter {
  targets: ReadonlyMap<string, bigint>;
  deadline: number;
  resolve: (reached: boolean) => void;
  reject: (error: unknown) => void;
}

export interface StoredProgressOptions {
  /**
   * While writes wait and the store cannot tell of other processes' commits, the checkpoints are read every
   * `minMs`, the interval doubling after each read that answered nobody, up to `maxMs` (defaults 2 and 50).
   * Where it can (ReadModelStore.watchOtherCommits), a commit is the cue to read, and these reads are only a
   * backstop, from `cueBackstopMs` (default 100) doubling up to CUED_BACKSTOP_MAX_MS.
   */
  poll?: { minMs?: number; maxMs?: number; cueBackstopMs?: number };
}

/**
 * How far each projection has folded the log, as a process that does not run the projectors (ROLES=api)
 * learns it: from the checkpoints stored with the active generations (ReadModelStore.listGenerations, one
 * read for every write waiting). They are read when a write starts waiting, and then when the store tells
 * of another process's commit: on SQLite a shared-memory counter (PRAGMA data_version, the WAL index header)
 * looked at every millisecond while a write waits, every 25 ms otherwise; on MongoDB a change stream on the
 * generation records where the server has them (a replica set). Where the store cannot tell (a standalone
 * MongoDB, FerretDB), they are polled with a bounded backoff while writes wait, and not at all otherwise.
 */
export class StoredProgress {
  /** The active generation of each projection as last read. */
  #active = new Map<string, GenerationRecord>();
  #read = false;
  readonly #waiters = new Set<Waiter>();
  /** Woken by cues (a commit elsewhere, a new waiter); one that came since the last read began means read again without sleeping. */
  readonly #delay = new InterruptibleDelay();
  #polling = false;
  /** Listening to the store's commit cues: always once started (cues), urgently while writes wait. */
  #unwatch: (() => void) | undefined;
  #unwatchUrgent: (() => void) | undefined;
  readonly #poll: Required<NonNullable<StoredProgressOptions['poll']>>;

  constructor(
    private readonly store: ReadModelQueries,
    options: StoredProgressOptions = {},
  ) {
    this.#poll = { minMs: 2, maxMs: 50, cueBackstopMs: 100, ...options.poll };
  }

  /** Whether the store tells of other processes' commits (then reads follow its cues). */
  get cued(): boolean {
    return this.store.watchOtherCommits !== undefined;
  }

  /** The checkpoint of the projection's active generation as last read; undefined before the first read or when it has none. */
  folded(projection: string): bigint | null | undefined {
    return this.#read ? this.#active.get(projection)?.checkpoint : undefined;
  }

  /**
   * Resolves true once every projection named has folded the log up to its position; false at the deadline, or
   * at once when one of them is paused on a poison event short of its position (it will not get there until an
   * operator acts, and a write must not wait for it). A projection without an active generation (not
   * started yet) is not waited for.
   */
  waitFor(targets: ReadonlyMap<string, bigint>, timeoutMs: number): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.#waiters.add({ targets, deadline: Date.now() + timeoutMs, resolve, reject });
      // A new waiter is checked at once, not at the end of the current sleep.
      this.#wake();
      void this.#run();
    });
  }

  /** Reads the checkpoints now (a caller that needs them fresh without waiting). */
  async refresh(): Promise<void> {
    const generations = await this.store.listGenerations();
    this.#active = new Map(generations.filter((g) => g.state === 'active').map((g) => [g.projection, g]));
    this.#read = true;
  }

  close(): void {
    this.#unwatch?.();
    this.#unwatchUrgent?.();
    this.#unwatch = this.#unwatchUrgent = undefined;
    for (const waiter of this.#waiters) waiter.resolve(false);
    this.#waiters.clear();
    this.#delay.interrupt();
  }

  async #run(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    const cue = () => this.#wake();
    this.#unwatch ??= this.store.watchOtherCommits?.(cue);
    this.#unwatchUrgent = this.store.watchOtherCommits?.(cue, { urgent: true });
    let sleepMs = this.cued ? this.#poll.cueBackstopMs : this.#poll.minMs;
    try {
      while (this.#waiters.size > 0) {
        this.#delay.forgetWake();
        try {
          await this.refresh();
        } catch (error) {
          for (const waiter of this.#waiters) waiter.reject(error);
          this.#waiters.clear();
          return;
        }
        const now = Date.now();
        let answered = false;
        for (const waiter of this.#waiters) {
          const outcome = this.#settled(waiter, now);
          if (outcome === undefined) continue;
          this.#waiters.delete(waiter);
          waiter.resolve(outcome);
          answered = true;
        }
        if (this.#waiters.size === 0) return;
        if (this.#delay.woken) continue;
        const nearest = Math.min(...[...this.#waiters].map((w) => w.deadline));
        await this.#delay.sleep(Math.min(sleepMs, Math.max(1, nearest - Date.now())));
        if (!answered) sleepMs = Math.min(sleepMs * 2, this.cued ? CUED_BACKSTOP_MAX_MS : this.#poll.maxMs);
      }
    } finally {
      this.#unwatchUrgent?.();
      this.#unwatchUrgent = undefined;
      this.#polling = false;
    }
  }

  #wake(): void {
    this.#delay.wake();
  }

  /** true when the waiter's projections have folded its positions, false when they will not in time, undefined to keep waiting. */
  #settled(waiter: Waiter, now: number): boolean | undefined {
    let all = true;
    for (const [projection, position] of waiter.targets) {
      const g = this.#active.get(projection);
      if (!g) continue;
      const reached = g.checkpoint !== null && g.checkpoint >= position;
      if (!reached && g.failure !== null) return false;
      if (!reached) all = false;
    }
    if (all) return true;
    return now >= waiter.deadline ? false : undefined;
  }
}

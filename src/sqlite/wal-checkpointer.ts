import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** Runs `task` after `ms` milliseconds; the returned function cancels it. Injected by tests, which await the task. */
export type Schedule = (task: () => Promise<void>, ms: number) => () => void;

/**
 * How soon after a write its WAL frames are copied into the file, so that reads skip the WAL again. Short, so
 * that each checkpoint's sync of the file is short: the sync holds up the log's appends and the read models'
 * commits on the same disk meanwhile (on ext4, writes that touch the file's size or times wait for the journal
 * commit the sync makes). At one a second the read models' checkpoint took 110-120 ms under bench:writes' load
 * and an append 95-110 ms beside it, every command's p99 84-147 ms; at one per 100 ms, p99 36-66 ms, with no
 * more CPU per command (4.9-6.2 ms against 6.1-6.2; 2026-12-07, docs/benchmark-log.md).
 */
export const CHECKPOINT_DELAY_MS = 100;

/**
 * SQLite's own checkpoint (wal_autocheckpoint) runs in the commit after which the WAL holds this many pages,
 * on the event loop. Under steady writes the thread's checkpoints never find the WAL without new frames, and
 * only a WAL copied whole is started over, so the WAL grows until this checkpoint copies what the thread has
 * not and syncs the file: 20-40 ms in the middle of requests. At the former thresholds (the read models
 * 5,000 pages of 8 KiB, the log SQLite's default 1,000 of 4 KiB) 20 publishes a second reached it about
 * every second; at these, every three to four seconds. (Finishing each thread checkpoint on the event loop
 * instead, to start the WAL over every second, cost 12-21 ms each time: the syncs, not the copying.)
 */
export const READ_MODELS_BACKSTOP_CHECKPOINT_PAGES = 20_000;
export const EVENT_LOG_BACKSTOP_CHECKPOINT_PAGES = 10_000;

/**
 * A WAL file keeps the largest size it reached (up to the backstop's pages after a burst of writes: a first
 * start's build of the read models, a rebuild). When the thread finds a WAL larger than this copied whole, it
 * cuts it back to nothing (see WORKER_SOURCE). Not on every restart: cutting a WAL that is in steady use, each
 * time it starts over (journal_size_limit), cost the event loop the regrowth (probe p99 38.8 ms in a run).
 */
export const READ_MODELS_WAL_CUT_BACK_BYTES = 40 * 1024 ** 2;
export const EVENT_LOG_WAL_CUT_BACK_BYTES = 8 * 1024 ** 2;

/** setTimeout that does not hold the process open. */
export const timerSchedule: Schedule = (task, ms) => {
  const timer = setTimeout(() => void task(), ms);
  timer.unref();
  return () => clearTimeout(timer);
};

/**
 * The checkpointing thread: a connection of its own to each file it is asked about (opened at the first
 * request), one PRAGMA wal_checkpoint(PASSIVE) per 'checkpoint' request, then, for 'checkpoint-quiet' (no write
 * since it was asked for), the cut back of a large WAL copied whole; 'close' closes its connection to the file.
 * Each request is answered with its id. CommonJS source run with `eval`, so that it loads the same under tsx
 * and from dist/.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const Database = require(workerData.driver);
const connections = new Map();
const walBytes = (file) => { try { return fs.statSync(file + '-wal').size; } catch { return 0; } };
parentPort.on('message', ({ id, file, kind, cutBackBytes }) => {
  try {
    if (kind === 'close') {
      const db = connections.get(file);
      connections.delete(file);
      if (db) db.close();
    } else {
      let db = connections.get(file);
      // Waits at most 100 ms for a lock (TRUNCATE below waits for writers and readers): never long for the writers it holds up.
      if (!db) connections.set(file, (db = new Database(file, { fileMustExist: true, timeout: 100 })));
      const [state] = db.pragma('wal_checkpoint(PASSIVE)');
      // A large WAL copied whole after a delay without writes (the burst that grew it is over): cut it back to
      // nothing. TRUNCATE holds up new writers while it copies what came meanwhile and waits for readers (100 ms at
      // most, then gives up), so never while writes go on.
      if (kind === 'checkpoint-quiet' && cutBackBytes !== undefined && state && !state.busy && state.log > 0 && state.log === state.checkpointed && walBytes(file) > cutBackBytes) {
        db.pragma('wal_checkpoint(TRUNCATE)');
      }
    }
  } catch {
    // Not worth failing for (see WalCheckpointer.#ask).
  }
  parentPort.postMessage(id);
});
`;

type CheckpointRequest = { file: string; kind: 'checkpoint' | 'checkpoint-quiet'; cutBackBytes: number | undefined } | { file: string; kind: 'close' };

/**
 * The process's checkpointing thread, shared by every WalCheckpointer: a service's log and read models (and a
 * test's hundreds of stores) checkpoint on one thread, not one each. A thread costs ~60 ms of CPU to start
 * and ~10 MB to keep; checkpoints are background work that may wait for one another. It starts with the first
 * request, is replaced if it dies (its outstanding requests are answered then, as done), and never keeps the
 * process alive, except while a close waits for it.
 */
class CheckpointThread {
  #worker: Worker | undefined;
  readonly #pending = new Map<number, { resolve: () => void; holds: boolean }>();
  #nextId = 1;
  /** Requests outstanding that keep the process alive (closes). */
  #holding = 0;

  /** Resolves once the thread has answered (or is gone). `holds`: the process waits for it. */
  request(message: CheckpointRequest, holds = false): Promise<void> {
    const worker = (this.#worker ??= this.#start());
    const id = this.#nextId++;
    return new Promise<void>((resolve) => {
      this.#pending.set(id, { resolve, holds });
      if (holds && this.#holding++ === 0) worker.ref();
      worker.postMessage({ id, ...message });
    });
  }

  #answer(id: number): void {
    const pending = this.#pending.get(id);
    if (!pending) return;
    this.#pending.delete(id);
    if (pending.holds && --this.#holding === 0) this.#worker?.unref();
    pending.resolve();
  }

  #start(): Worker {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, { eval: true, execArgv: [], workerData: { driver } });
    if (this.#holding === 0) worker.unref();
    worker.on('message', (id: number) => this.#answer(id));
    // A thread that dies is replaced at the next request; what it was asked is answered as done.
    worker.on('error', () => undefined);
    worker.once('exit', () => {
      if (this.#worker === worker) this.#worker = undefined;
      // Answered as done, each close letting go of its hold (the count is back at 0 for the next thread).
      for (const id of [...this.#pending.keys()]) this.#answer(id);
    });
    return worker;
  }
}

const sharedThread = new CheckpointThread();

/**
 * Copies a database's recent WAL frames into its file shortly after writes (PRAGMA wal_checkpoint(PASSIVE)),
 * on a thread of its own.
 *
 * While the WAL holds frames the file does not, every page a read fetches is first looked up in the WAL's
 * index, and pages found there are read with read() calls instead of through the memory map. SQLite's own
 * checkpoint runs only once the WAL passes its threshold (the backstop, READ_MODELS_BACKSTOP_CHECKPOINT_PAGES),
 * which left public reads paying for the WAL for as long as writes paused below it: ~9% of the CPU of a single
 * entry and of a list page after a rebuild, measured (at the former threshold of 40 MB). Once the WAL is fully copied, a read
 * ignores it. PASSIVE never waits for readers or writers: frames a reader still needs are copied next time.
 *
 * Why a thread: a checkpoint copies pages and syncs the file (34 ms at the median under 20 publishes per
 * second, when it ran once a second), and better-sqlite3 runs it where it is called: on the event loop it held up
 * every request meanwhile. One thread serves every file of the process (CheckpointThread), started with the
 * first checkpoint (a store written and closed within the delay never starts it). SQLite's own checkpoint stays
 * on, at a higher threshold (see READ_MODELS_BACKSTOP_CHECKPOINT_PAGES).
 */
export class WalCheckpointer {
  readonly #file: string;
  readonly #schedule: Schedule;
  readonly #cutBackBytes: number | undefined;
  #cancel: (() => void) | undefined;
  /** Writes since the pending checkpoint was scheduled: none means the writes are over (for now). */
  #writesSinceScheduled = 0;
  /** Whether the thread was asked to checkpoint this file (and so has a connection to it to close). */
  #asked = false;
  /** The checkpoint the thread is running, if any; one at a time. */
  #running: Promise<void> | undefined;
  #closed = false;

  /** `cutBackBytes`: a WAL larger than this, once copied whole, is cut back to nothing (READ_MODELS_WAL_CUT_BACK_BYTES). */
  constructor(file: string, options: { schedule?: Schedule | undefined; cutBackBytes?: number } = {}) {
    this.#file = file;
    this.#schedule = options.schedule ?? timerSchedule;
    this.#cutBackBytes = options.cutBackBytes;
  }

  /** After a write: a checkpoint within CHECKPOINT_DELAY_MS unless one is due already (at most one per delay under steady writes). */
  wrote(): void {
    this.#writesSinceScheduled++;
    this.#scheduleCheckpoint();
  }

  #scheduleCheckpoint(): void {
    if (this.#cancel !== undefined || this.#closed) return;
    this.#writesSinceScheduled = 0;
    this.#cancel = this.#schedule(async () => {
      this.#cancel = undefined;
      await this.#checkpoint(this.#writesSinceScheduled === 0);
    }, CHECKPOINT_DELAY_MS);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#cancel?.();
    this.#cancel = undefined;
    if (!this.#asked) return;
    await this.#running;
    // The thread's connection to the file goes with the store (the process waits for it meanwhile).
    await sharedThread.request({ file: this.#file, kind: 'close' }, true);
  }

  /** `quiet`: no write since this checkpoint was scheduled, so a large WAL may be cut back (see WORKER_SOURCE). */
  async #checkpoint(quiet: boolean): Promise<void> {
    if (this.#closed) return;
    if (this.#running) {
      // Still copying the frames written before: this write's are copied by the next checkpoint.
      this.wrote();
      return;
    }
    this.#running = this.#ask(quiet).finally(() => (this.#running = undefined));
    await this.#running;
    // Writes came while this one waited: one more a delay later, which finds them over (and may cut back) or
    // not (and asks again).
    if (!quiet) this.#scheduleCheckpoint();
  }

  /** One checkpoint on the thread. A failure is not worth failing for: the next write asks again, and SQLite's own checkpoint still runs. */
  #ask(quiet: boolean): Promise<void> {
    this.#asked = true;
    return sharedThread.request({ file: this.#file, kind: quiet ? 'checkpoint-quiet' : 'checkpoint', cutBackBytes: this.#cutBackBytes });
  }
}

import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** Runs `task` after `ms` milliseconds; the returned function cancels it. Injected by tests, which await the task. */
export type Schedule = (task: () => Promise<void>, ms: number) => () => void;

/** How soon after a write its WAL frames are copied into the file, so that reads skip the WAL again. */
const CHECKPOINT_DELAY_MS = 1_000;

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

/** setTimeout that does not hold the process open. */
export const timerSchedule: Schedule = (task, ms) => {
  const timer = setTimeout(() => void task(), ms);
  timer.unref();
  return () => clearTimeout(timer);
};

/**
 * The checkpointing thread: a connection of its own to the file, one PRAGMA wal_checkpoint(PASSIVE) per
 * message. CommonJS source run with `eval`, so that it loads the same under tsx and from dist/.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Not worth failing for (see #ask).
  }
  parentPort.postMessage('done');
});
`;

/**
 * Copies a database's recent WAL frames into its file shortly after writes (PRAGMA wal_checkpoint(PASSIVE)),
 * on a thread of its own.
 *
 * While the WAL holds frames the file does not, every page a read fetches is first looked up in the WAL's
 * index, and pages found there are read with read() calls instead of through the memory map. SQLite's own
 * checkpoint runs only once the WAL passes its threshold (40 MB for the read models, so that bulk rebuilds
 * sync rarely), which left public reads paying for the WAL for as long as writes paused below it: ~9% of the
 * CPU of a single entry and of a list page after a rebuild, measured. Once the WAL is fully copied, a read
 * ignores it. PASSIVE never waits for readers or writers: frames a reader still needs are copied next time.
 *
 * Why a thread: a checkpoint copies pages and syncs the file, 34 ms at the median under 20 publishes per
 * second (each second's writes), and better-sqlite3 runs it where it is called: on the event loop it held up
 * every request meanwhile. The thread starts with the first checkpoint (a store written and closed within
 * the delay never starts one). SQLite's own checkpoint stays on, at a higher threshold (see
 * READ_MODELS_BACKSTOP_CHECKPOINT_PAGES).
 */
export class WalCheckpointer {
  readonly #file: string;
  readonly #schedule: Schedule;
  #cancel: (() => void) | undefined;
  /** The thread, once started, and when it ended. */
  #thread: { worker: Worker; exited: Promise<void> } | undefined;
  /** The checkpoint the thread is running, if any; one at a time. */
  #running: Promise<void> | undefined;
  #closed = false;

  constructor(file: string, options: { schedule?: Schedule | undefined } = {}) {
    this.#file = file;
    this.#schedule = options.schedule ?? timerSchedule;
  }

  /** After a write: a checkpoint within a second unless one is due already (at most one a second under steady writes). */
  wrote(): void {
    if (this.#cancel !== undefined || this.#closed) return;
    this.#cancel = this.#schedule(async () => {
      this.#cancel = undefined;
      await this.#checkpoint();
    }, CHECKPOINT_DELAY_MS);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#cancel?.();
    this.#cancel = undefined;
    const thread = this.#thread;
    if (!thread) return;
    // The thread does not keep the process alive (unref) while it only waits for work; while closing, the
    // caller waits for it, so it must: a process with nothing else to do would exit mid-await.
    thread.worker.ref();
    await this.#running;
    thread.worker.postMessage('close');
    await thread.exited;
  }

  async #checkpoint(): Promise<void> {
    if (this.#closed) return;
    if (this.#running) {
      // Still copying the last second's frames: this write's are copied by the next checkpoint.
      this.wrote();
      return;
    }
    this.#running = this.#ask().finally(() => (this.#running = undefined));
    await this.#running;
  }

  /** One checkpoint on the thread. A failure is not worth failing for: the next write asks again, and SQLite's own checkpoint still runs. */
  #ask(): Promise<void> {
    const { worker } = (this.#thread ??= this.#start());
    return new Promise<void>((resolve) => {
      const done = () => {
        worker.off('message', done);
        worker.off('exit', done);
        resolve();
      };
      worker.on('message', done);
      worker.on('exit', done);
      worker.postMessage('checkpoint');
    });
  }

  #start(): { worker: Worker; exited: Promise<void> } {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, { eval: true, execArgv: [], workerData: { file: this.#file, driver } });
    worker.unref();
    // A thread that cannot open the file (or dies) is replaced at the next checkpoint.
    worker.on('error', () => undefined);
    const exited = new Promise<void>((resolve) =>
      worker.once('exit', () => {
        if (this.#thread?.worker === worker) this.#thread = undefined;
        resolve();
      }),
    );
    return { worker, exited };
  }
}

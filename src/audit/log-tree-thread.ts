/**
 * The log tree's follower on a worker thread of its own (./log-tree-thread-worker.ts), so that hashing every event
 * the service appends never holds up its event loop (the appends, the HTTP answers): the thread opens the event
 * store and the tree store itself, from the same settings, and tells this side how far the tree has grown.
 *
 * Who may follow is settled here, before the thread starts: on the embedded default the DATA_DIR's writer lock;
 * with the read models on MongoDB, the lease (FollowerLease), renewed every 10 s; a follower that loses it stops
 * its thread and waits to take it again. The tree store refuses an append that does not continue the tree it
 * holds (TreeConflictError), so two followers can never both extend it.
 */
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type { Logger } from 'pino';
import type { FollowerLease } from './log-tree-follower.ts';
import type { LogTreeLocation } from './open-log-tree-store.ts';

/** What follows the log into the tree, in this thread or another. */
export interface TreeFollowing {
  /** Leaves in the tree, as last reported. */
  readonly size: number;
  /** The follower has caught up with the log at least once. */
  readonly caughtUp: boolean;
  stop(): Promise<void>;
}

export interface LogTreeThreadOptions {
  /** The event store to open on the thread. */
  eventStore: { kind: 'sqlite'; file: string } | { kind: 'eventstoredb'; connectionString: string };
  /** The tree store to open on the thread. */
  tree: LogTreeLocation;
  logger: Logger;
  lease?: FollowerLease;
  onGrow?: (size: number) => void;
  /**
   * The follower's module (log-tree-thread-worker), by default the one beside this module. Run as TypeScript
   * (tests, `npm run dev`), the thread loads it through tsx, whose loader costs the thread ~0.5 s of CPU to
   * start: tests that start many services from the sources give the compiled one.
   */
  workerModule?: URL;
}

/**
 * The follower thread's niceness (Linux; see src/thread-priority.ts). At 10, while appends keep both cores busy the
 * tree falls behind by what it could not hash, and catches up as soon as they pause: writes run at the speed
 * they would without the tree, and checkpoints follow them within a second under any load the cores can carry.
 */
export const LOG_TREE_THREAD_NICENESS = 10;

/** Messages from the thread. */
export type ThreadMessage = { grew: number } | { caughtUp: number } | { error: string };

// The thread is started from a few lines of CommonJS that load its module: under tsx (tests, `npm run dev`) they
// register tsx on the thread first.
const BOOTSTRAP = `const { workerData } = require('node:worker_threads');
(async () => {
  if (workerData.tsx) (await import(workerData.tsx)).register();
  await import(workerData.module);
})().catch((error) => { throw error; });`;

export class LogTreeThread implements TreeFollowing {
  #size = 0;
  #caughtUp = false;
  #worker: Worker | undefined;
  #stopped = false;
  #exited: Promise<void> = Promise.resolve();
  #leaseTimer: NodeJS.Timeout | undefined;
  readonly #running: Promise<void>;

  constructor(private readonly options: LogTreeThreadOptions) {
    this.#running = this.#run();
  }

  get size(): number {
    return this.#size;
  }

  get caughtUp(): boolean {
    return this.#caughtUp;
  }

  async #run(): Promise<void> {
    const { lease, logger } = this.options;
    while (!this.#stopped) {
      if (lease && !(await lease.hold().catch(() => false))) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        continue;
      }
      this.#start();
      if (lease) {
        this.#leaseTimer = setInterval(() => {
          void lease.hold().then(
            (held) => {
              if (!held && !this.#stopped) {
                logger.warn('log tree: the follower lost its lease; its thread stops');
                void this.#worker?.terminate();
              }
            },
            () => undefined,
          );
        }, 10_000);
      }
      await this.#exited;
      clearInterval(this.#leaseTimer);
      if (!this.#stopped) await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    await lease?.release().catch(() => undefined);
  }

  #start(): void {
    const moduleUrl = this.options.workerModule ?? new URL(import.meta.url.endsWith('.ts') ? './log-tree-thread-worker.ts' : './log-tree-thread-worker.js', import.meta.url);
    const tsx = moduleUrl.pathname.endsWith('.ts') ? pathToFileURL(createRequire(import.meta.url).resolve('tsx/package.json').replace(/package\.json$/, 'dist/esm/api/index.mjs')).href : undefined;
    const worker = new Worker(BOOTSTRAP, { eval: true, execArgv: [], workerData: { module: moduleUrl.href, tsx, eventStore: this.options.eventStore, tree: this.options.tree } });
    this.#worker = worker;
    this.#exited = new Promise((resolve) => {
      worker.on('message', (message: ThreadMessage) => {
        if ('grew' in message) {
          this.#size = message.grew;
          this.options.onGrow?.(message.grew);
        } else if ('caughtUp' in message) {
          this.#size = Math.max(this.#size, message.caughtUp);
          this.#caughtUp = true;
        } else if ('error' in message) {
          this.options.logger.warn({ detail: message.error }, 'log tree: the follower thread reported a failure; it follows again');
        }
      });
      worker.on('error', (error) => this.options.logger.error({ err: error }, 'log tree: the follower thread failed; it is started again'));
      worker.on('exit', () => resolve());
    });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#leaseTimer);
    this.#worker?.postMessage('stop');
    // A thread that does not stop in time (a long write) is ended: the tree is rebuilt from where it stands.
    const deadline = setTimeout(() => void this.#worker?.terminate(), 5000);
    await this.#exited;
    clearTimeout(deadline);
    await this.#running;
  }
}

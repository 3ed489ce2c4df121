/**
 * Keeps the log's Merkle tree (./merkle-tree.ts, in a LogTreeStore) up with the log: one follower, holding a
 * lease, reads the log in global order from the tree's last leaf on (catch-up, then live) and appends one leaf
 * per event (./log-leaf.ts) in batches. On EventStoreDB several API processes append concurrently and only the
 * server orders them, so leaves are never made on the write path: the order is the log's as the store reports
 * it, the same on every store.
 *
 * The tree's right edge stays in memory (TreeAppender): appending a leaf reads nothing. A batch commits its
 * leaves with their hashes at once; TreeConflictError (another follower appended, the tree was reset) ends the
 * run, which starts again from the store's state.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { EventStore, RecordedEvent } from '../event-store/event-store.ts';
import { UnreadableEventError } from '../event-store/errors.ts';
import { encodePosition } from '../event-store/position.ts';
import type { ModelTarget, ReadModelStore } from '../read-models/read-model-store.ts';
import { isDeadLocalHolder, leaseHolderName } from '../projection-engine/projector.ts';
import { InterruptibleDelay } from '../interruptible-delay.ts';
import { TreeAppender, rootIndexes } from './merkle-tree.ts';
import { eventLeafHash } from './log-leaf.ts';
import { TreeConflictError, type LogTreeStore, type TreeLeaf } from './log-tree-store.ts';

/** Who may follow: one holder at a time. */
export interface FollowerLease {
  /** Takes or renews the lease; false while another holds it. */
  hold(): Promise<boolean>;
  release(): Promise<void>;
}

/** The lease in the read-model store, as projectors hold theirs (target projection 'audit-log-tree'). */
export function readModelLease(store: ReadModelStore, clock: Clock, ttlMs = 30_000): FollowerLease {
  const target: ModelTarget = { projection: 'audit-log-tree', generation: 1 };
  const holder = leaseHolderName();
  return {
    async hold() {
      const now = clock.now().toISOString();
      if (await store.acquireLease(target, holder, now, ttlMs)) return true;
      const current = await store.getLease(target);
      return current !== null && isDeadLocalHolder(current.holder, holder) && store.acquireLease(target, holder, now, ttlMs, { takeOverFrom: current.holder });
    },
    release: () => store.releaseLease(target, holder),
  };
}

export interface LogTreeFollowerOptions {
  events: EventStore;
  tree: LogTreeStore;
  logger: Logger;
  /** Absent: this process is the only follower (the DATA_DIR's writer lock holds). */
  lease?: FollowerLease;
  /** Leaves per commit at most. */
  batchSize?: number;
  /** Called after every commit with the tree's new size. */
  onGrow?: (size: number) => void;
  /** Told when an event cannot be read (the follower waits, then tries again from it). */
  onUnreadable?: (error: UnreadableEventError) => void;
  /** While another holds the lease, or after a failure, how long to wait before trying again. */
  retryMs?: number;
  /** Stop once caught up (a rebuild from the command line). */
  stopWhenCaughtUp?: boolean;
  /**
   * Once caught up, the shortest time between two commits (default 100 ms): appends one at a time would
   * otherwise each cost the tree a commit of its own, beside the log's. The leaves wait at most this long.
   */
  liveCommitIntervalMs?: number;
}

export class LogTreeFollower {
  readonly #o: Required<Pick<LogTreeFollowerOptions, 'batchSize' | 'retryMs' | 'stopWhenCaughtUp' | 'liveCommitIntervalMs'>> & LogTreeFollowerOptions;
  #stopped = false;
  #size = 0;
  #caughtUp = false;
  readonly #delay = new InterruptibleDelay();
  #subscription: { stop(): Promise<void> } | undefined;

  constructor(options: LogTreeFollowerOptions) {
    this.#o = { batchSize: 1000, retryMs: 1000, stopWhenCaughtUp: false, liveCommitIntervalMs: 100, ...options };
  }

  /** Leaves in the tree as this follower last committed or read it. */
  get size(): number {
    return this.#size;
  }

  get caughtUp(): boolean {
    return this.#caughtUp;
  }

  async run(): Promise<void> {
    const { logger } = this.#o;
    let leaseRenewAt = 0;
    while (!this.#stopped) {
      try {
        if (this.#o.lease && !(await this.#o.lease.hold())) {
          await this.#delay.sleep(this.#o.retryMs);
          continue;
        }
        leaseRenewAt = Date.now() + 10_000;
        const done = await this.#follow(() => {
          if (!this.#o.lease || Date.now() < leaseRenewAt) return Promise.resolve(true);
          leaseRenewAt = Date.now() + 10_000;
          return this.#o.lease.hold();
        });
        if (done) break;
      } catch (error) {
        if (this.#stopped) break;
        if (error instanceof UnreadableEventError) {
          this.#o.onUnreadable?.(error);
          logger.error({ position: encodePosition(error.position), streamId: error.streamId, eventId: error.eventId, reason: error.reason }, 'log tree: an event of the log cannot be read; the tree stops before it');
        } else if (error instanceof TreeConflictError) {
          logger.warn({ err: error }, 'log tree: the tree changed under the follower; following again from its state');
        } else {
          logger.warn({ err: error }, 'log tree: following the log failed; trying again');
        }
        await this.#delay.sleep(this.#o.retryMs);
      }
    }
    if (this.#stopped && !this.#o.stopWhenCaughtUp) await this.#drain();
    await this.#o.lease?.release().catch(() => undefined);
  }

  /**
   * At a graceful stop, what the log holds (the service's writers have stopped by then) goes into the tree, so
   * that the checkpoint signed at stop covers every event: a follower stopped mid-way would leave the last
   * events of the log outside every checkpoint until the next start.
   */
  async #drain(): Promise<void> {
    try {
      if (this.#o.lease && !(await this.#o.lease.hold())) return;
      await this.#follow(() => (this.#o.lease ? this.#o.lease.hold() : Promise.resolve(true)), true);
    } catch (error) {
      this.#o.logger.warn({ err: error }, 'log tree: bringing the tree up to the log at stop failed; the next start does');
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#delay.interrupt();
    await this.#subscription?.stop();
  }

  /** One run from the store's state; true when it ended because it caught up and should stop. */
  async #follow(keepLease: () => Promise<boolean>, draining = false): Promise<boolean> {
    const { tree, events } = this.#o;
    const state = await tree.state();
    const appender = new TreeAppender(state.size, state.size === 0 ? [] : await tree.readHashes(rootIndexes(state.size)));
    this.#size = state.size;
    const subscription = events.subscribeToAll({ after: state.lastPosition ?? 'start' });
    this.#subscription = subscription;
    if (this.#stopped && !draining) await subscription.stop();
    let leaves: TreeLeaf[] = [];
    let hashes: Uint8Array[] = [];
    let from = state.size;
    let committedAt = 0;
    const commit = async () => {
      if (leaves.length === 0) return;
      if (!(await keepLease())) throw new TreeConflictError('the follower lost its lease');
      committedAt = performance.now();
      await tree.append(from, leaves, hashes);
      from += leaves.length;
      this.#size = from;
      leaves = [];
      hashes = [];
      this.#o.onGrow?.(from);
    };
    try {
      for await (const message of subscription) {
        if (message.kind === 'event') {
          const event: RecordedEvent = message.event;
          leaves.push({ position: event.position, eventId: event.id });
          hashes.push(...appender.append(eventLeafHash(event)));
          if (leaves.length >= this.#o.batchSize) await commit();
        } else if (message.kind === 'caught-up') {
          // Live: events that arrive meanwhile wait in the subscription and go into this commit's successor.
          if (this.#caughtUp && leaves.length > 0 && !draining) {
            const wait = committedAt + this.#o.liveCommitIntervalMs - performance.now();
            if (wait > 0) await this.#delay.sleep(wait);
          }
          await commit();
          this.#caughtUp = true;
          if (this.#o.stopWhenCaughtUp || draining) return true;
        }
      }
      await commit();
      return this.#stopped;
    } finally {
      await subscription.stop();
      this.#subscription = undefined;
    }
  }
}

/**
 * A projector's options and the states it goes through (see Projector).
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { EventLog } from '../event-store/event-log.ts';
import type { DocumentWrite, ReadModelStore } from '../read-models/read-model-store.ts';
import type { Projection } from './projection.ts';

/** 'standby': another projector (this process or another) holds the generation's lease; this one waits to take over. */
export type ProjectorState = 'starting' | 'standby' | 'catching-up' | 'live' | 'paused' | 'retrying' | 'stopped';

export interface ProjectorOptions {
  projection: Projection;
  generation: number;
  log: EventLog;
  store: ReadModelStore;
  clock: Clock;
  logger: Logger;
  /** Events folded (or documents written) per commit, at most. */
  batchSize?: number;
  /** While events trickle in, the longest an event waits before its batch commits. */
  flushIntervalMs?: number;
  /**
   * Progress through events the projection does not handle is stored now and then, not at every event: while
   * catching up, a batch commits when it holds batchSize events or documents, or when this long has passed
   * since the last commit; once live, a batch that only holds such progress commits once the log has been
   * quiet for progressQuietMs, or this long after the last commit while events keep coming (or with the next
   * events, or at stop). Waiters in this process hear of it at once (see folded); other processes read it
   * from the stored checkpoint, which no write of theirs waits for (HandledEvents).
   */
  commitIntervalMs?: number;
  /** See commitIntervalMs: how long the log is quiet before progress alone is stored. */
  progressQuietMs?: number;
  /** How often a paused projector looks for an operator's retry or skip. */
  pausePollMs?: number;
  /** Stop once caught up with the log (rebuilds). */
  stopWhenCaughtUp?: boolean;
  /**
   * Called after every commit: this projector's, with its writes; on standby, another holder's that it found
   * (the stored checkpoint moved), with writes undefined (what it wrote is not known here).
   */
  onCommit?: (progress: { checkpoint: bigint | null; events: number; writes: readonly DocumentWrite[] | undefined }) => void;
  /** Delay before reconnecting after a store failure; grows up to 30 s. */
  retryDelayMs?: number;
  /**
   * The projector lease (ReadModelStore.acquireLease): how long it lasts without renewal. The holder renews
   * it at a third of that; a projector that finds it held waits in 'standby' and takes it over once it
   * expires (its holder stopped or died). Default 30 s.
   */
  leaseTtlMs?: number;
  /** This projector's name as a lease holder. Default: host, process id and a random suffix. */
  holder?: string;
}

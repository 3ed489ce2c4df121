/**
 * Records a signed checkpoint in the log itself (audit.checkpoint-recorded), so that the webhook outbox delivers
 * it to every webhook subscribed to `log.checkpoint` (projections/webhooks.ts), with its delivery history, retries
 * and signatures like any webhook. Recording is an append, and delivering one appends its attempts: to keep that
 * from feeding itself, a checkpoint is recorded at most every `intervalMs`, and only when the log changed since the
 * last one recorded by more than such records and webhook deliveries.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { EventLog } from '../event-store/event-log.ts';
import { StreamNotFoundError } from '../event-store/errors.ts';
import type { EventStore } from '../event-store/event-store.ts';
import { AUDIT_CHECKPOINT_STREAM, auditCheckpointRecorded } from './audit-events.ts';
import type { CheckpointPublisher } from './log-checkpoints.ts';
import type { LogTreeStore, StoredCheckpoint } from './log-tree-store.ts';

/** Streams a recorded checkpoint's own consequences are appended to. */
const CONSEQUENCES = [AUDIT_CHECKPOINT_STREAM, 'webhook-delivery-', 'outbox-webhooks-'];
/** Past this many events since the last record, the log surely changed by more than its consequences. */
const SCAN_LIMIT = 5000;

export interface CheckpointRecorderOptions {
  log: EventLog;
  events: EventStore;
  tree: LogTreeStore;
  clock: Clock;
  logger: Logger;
  intervalMs: number;
}

export class CheckpointRecorder implements CheckpointPublisher {
  readonly name = 'log';
  #lastSize: number | undefined;
  #lastAt: number;
  #running: Promise<void> | undefined;
  #latest: StoredCheckpoint | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(private readonly options: CheckpointRecorderOptions) {
    // The first record one interval after start: a restart does not record again at once.
    this.#lastAt = options.clock.now().getTime();
  }

  publish(checkpoint: StoredCheckpoint): void {
    if (this.#stopped) return;
    // The latest one waits for the interval (or the record under way) to pass: the log may not change again.
    this.#latest = checkpoint;
    if (this.#running || this.#timer) return;
    const wait = this.#lastAt + this.options.intervalMs - this.options.clock.now().getTime();
    if (wait > 0) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        if (this.#latest) this.publish(this.#latest);
      }, wait);
      return;
    }
    this.#latest = undefined;
    this.#running = this.#record(checkpoint)
      .catch((error: unknown) => this.options.logger.warn({ err: error }, 'log checkpoint: recording a checkpoint in the log (for webhooks) failed; the next one will be'))
      .finally(() => {
        this.#running = undefined;
        if (this.#latest && !this.#stopped) this.publish(this.#latest);
      });
  }

  async #record(checkpoint: StoredCheckpoint): Promise<void> {
    const { log, clock } = this.options;
    this.#lastSize ??= await this.#lastRecordedSize();
    if (checkpoint.size <= this.#lastSize || (await this.#onlyConsequences(this.#lastSize, checkpoint.size))) {
      this.#lastAt = clock.now().getTime();
      return;
    }
    await log.append(AUDIT_CHECKPOINT_STREAM, [{ type: auditCheckpointRecorded.type, data: { size: checkpoint.size, rootHash: Buffer.from(checkpoint.rootHash).toString('base64'), note: checkpoint.note, signedAt: checkpoint.signedAt } }], 'any', { actor: { type: 'system', id: 'audit' } });
    this.#lastSize = checkpoint.size;
    this.#lastAt = clock.now().getTime();
  }

  async #lastRecordedSize(): Promise<number> {
    try {
      for await (const event of this.options.events.readStream(AUDIT_CHECKPOINT_STREAM, { direction: 'backwards', fromRevision: 'end', maxCount: 50 })) {
        if (event.type === auditCheckpointRecorded.type) return (event.data as { size: number }).size;
      }
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
    }
    return -1;
  }

  /** Whether the leaves [from, to) are only checkpoint records and webhook deliveries. */
  async #onlyConsequences(from: number, to: number): Promise<boolean> {
    if (from < 0 || to - from > SCAN_LIMIT) return false;
    // After the last leaf recorded (a position the store gave), the events since.
    const [last] = await this.options.tree.leaves(from - 1, 1);
    if (from > 0 && !last) return false;
    for await (const event of this.options.events.readAll({ after: last ? last.position : 'start', maxCount: to - from })) {
      if (!CONSEQUENCES.some((prefix) => event.streamId.startsWith(prefix))) return false;
    }
    return true;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }
}

/**
 * The log's side of C2SP tlog-witness (https://c2sp.org/tlog-witness): each configured witness is sent the
 * latest checkpoint with a consistency proof from the size it last cosigned,
 *
 *   POST <url>add-checkpoint
 *   old <size the witness holds>\n<base64 proof hash>\n...\n\n<checkpoint note>
 *
 * and its cosignature (a cosignature/v1 line, checked against the witness's vkey) is kept beside the checkpoint
 * (the log tree store, and the checkpoint folder). Answers:
 * - 200: the cosignature lines;
 * - 409 (text/x.tlog.size): the witness holds another size: the proof is made again from it (a size larger than
 *   the log's means the log was rolled back: logged as an error, counted, not retried until the log is past it);
 * - 422: the proof does not hold or the roots differ for one size: the witness saw a fork of this log (error);
 * - 403 / 404: the witness does not know this log's key or origin (its configuration needs the log's vkey);
 * - anything else, or no answer: retried with backoff (1 s doubling to 5 min).
 * One request at a time per witness; a newer checkpoint supersedes one not yet sent. Nothing here is on the
 * write path: appends never wait for a witness.
 */
import type { Logger } from 'pino';
import { assembleRanges, consistencyRanges, rangeIndexes } from './merkle-tree.ts';
import { parseNote, parseVerifierKey, verifyCosignature } from './signed-note.ts';
import type { CheckpointPublisher } from './log-checkpoints.ts';
import type { LogTreeStore, StoredCheckpoint } from './log-tree-store.ts';
import { InterruptibleDelay } from '../interruptible-delay.ts';

export type WitnessOutcome = 'cosigned' | 'conflict' | 'rolled-back' | 'fork' | 'unknown-log' | 'unavailable';

export interface WitnessOptions {
  url: string;
  vkey: string;
  tree: LogTreeStore;
  logger: Logger;
  /** Told each cosignature kept (to publish it beside the checkpoint). */
  onCosigned?: (checkpoint: StoredCheckpoint, witness: string, line: string) => void;
  /** Told how each request ended (metrics). */
  onOutcome?: (witness: string, outcome: WitnessOutcome) => void;
  /** The shortest time between two requests that succeeded (default 1000 ms). */
  minIntervalMs?: number;
  /** First retry delay (default 1000 ms), doubled up to maxBackoffMs (default 300,000). */
  backoffMs?: number;
  maxBackoffMs?: number;
  timeoutMs?: number;
}

export class WitnessPublisher implements CheckpointPublisher {
  readonly name: string;
  readonly #o: Required<Omit<WitnessOptions, 'onCosigned' | 'onOutcome'>> & WitnessOptions;
  readonly #endpoint: string;
  #latest: StoredCheckpoint | null = null;
  /** The size the witness holds, as far as this process knows (null: not asked yet). */
  #witnessSize: number | null = null;
  #cosignedSize = -1;
  #running: Promise<void> | undefined;
  #stopped = false;
  readonly #delay = new InterruptibleDelay();
  readonly #abort = new AbortController();

  constructor(options: WitnessOptions) {
    this.#o = { minIntervalMs: 1000, backoffMs: 1000, maxBackoffMs: 300_000, timeoutMs: 10_000, ...options };
    this.name = parseVerifierKey(options.vkey).name;
    this.#endpoint = new URL('add-checkpoint', options.url.endsWith('/') ? options.url : `${options.url}/`).toString();
  }

  publish(checkpoint: StoredCheckpoint): void {
    if (this.#stopped || (this.#latest && this.#latest.size >= checkpoint.size)) return;
    this.#latest = checkpoint;
    this.#start();
    this.#delay.interrupt();
  }

  /** The size the witness last cosigned through this process (-1 before any). */
  get cosignedSize(): number {
    return this.#cosignedSize;
  }

  /**
   * Runs the loop unless it runs. A checkpoint published after the loop's last check but before it settled is
   * taken at once: without the second look it would wait for the next checkpoint, which may never come.
   */
  #start(): void {
    this.#running ??= this.#run().finally(() => {
      this.#running = undefined;
      if (!this.#stopped && this.#latest && this.#latest.size > this.#cosignedSize) this.#start();
    });
  }

  async #run(): Promise<void> {
    let backoff = this.#o.backoffMs;
    while (!this.#stopped && this.#latest && this.#latest.size > this.#cosignedSize) {
      const checkpoint = this.#latest;
      let outcome: WitnessOutcome;
      try {
        outcome = await this.#send(checkpoint);
      } catch (error) {
        if (this.#stopped) return;
        this.#o.logger.warn({ witness: this.name, err: error }, 'log checkpoint: the witness did not answer; trying again later');
        outcome = 'unavailable';
      }
      this.#o.onOutcome?.(this.name, outcome);
      if (outcome === 'cosigned') {
        backoff = this.#o.backoffMs;
        await this.#delay.sleep(this.#o.minIntervalMs);
      } else if (outcome !== 'conflict') {
        // (A conflict: the witness told its size; send again from it at once.)
        await this.#delay.sleep(backoff);
        backoff = Math.min(backoff * 2, this.#o.maxBackoffMs);
      }
    }
  }

  async #send(checkpoint: StoredCheckpoint): Promise<WitnessOutcome> {
    const { tree, logger } = this.#o;
    const old = Math.min(this.#witnessSize ?? (await this.#lastCosignedSize()), checkpoint.size);
    const ranges = consistencyRanges(old, checkpoint.size);
    const proof = old === 0 ? [] : assembleRanges(ranges, await tree.readHashes(rangeIndexes(ranges)));
    const body = `old ${old}\n${proof.map((hash) => `${Buffer.from(hash).toString('base64')}\n`).join('')}\n${checkpoint.note}`;
    const response = await fetch(this.#endpoint, { method: 'POST', body, headers: { 'content-type': 'text/plain' }, signal: AbortSignal.any([this.#abort.signal, AbortSignal.timeout(this.#o.timeoutMs)]) });
    const text = await response.text();
    if (response.status === 200) {
      const { body: noteBody } = parseNote(checkpoint.note);
      const line = text.split('\n').find((candidate) => candidate.trim() !== '' && verifyCosignature(noteBody, candidate, this.#o.vkey) !== null);
      if (!line) {
        logger.error({ witness: this.name, size: checkpoint.size, answer: text.slice(0, 500) }, 'log checkpoint: the witness answered without a cosignature that verifies with its key');
        return 'unavailable';
      }
      await tree.addCosignature(checkpoint.size, this.name, line);
      this.#witnessSize = checkpoint.size;
      this.#cosignedSize = checkpoint.size;
      this.#o.onCosigned?.(checkpoint, this.name, line);
      return 'cosigned';
    }
    if (response.status === 409) {
      const size = Number(text.trim());
      if (!Number.isSafeInteger(size) || size < 0) return 'unavailable';
      if (size > checkpoint.size) {
        logger.error({ witness: this.name, witnessSize: size, logSize: checkpoint.size }, 'log checkpoint: the witness holds a larger checkpoint than the log has: the log was rolled back or truncated');
        this.#witnessSize = size;
        return 'rolled-back';
      }
      this.#witnessSize = size;
      return 'conflict';
    }
    if (response.status === 422) {
      logger.error({ witness: this.name, size: checkpoint.size, old }, 'log checkpoint: the witness refused the consistency proof: it holds a checkpoint this log does not extend (a fork)');
      return 'fork';
    }
    if (response.status === 403 || response.status === 404) {
      logger.error({ witness: this.name, status: response.status }, 'log checkpoint: the witness does not know this log (configure it with the log\'s origin and vkey: annals audit public-key)');
      return 'unknown-log';
    }
    logger.warn({ witness: this.name, status: response.status, answer: text.slice(0, 200) }, 'log checkpoint: the witness refused the checkpoint; trying again later');
    return 'unavailable';
  }

  async #lastCosignedSize(): Promise<number> {
    // Without better knowledge, the witness is asked with 0; a witness that holds more answers 409 with its size.
    this.#witnessSize = 0;
    return 0;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort();
    this.#delay.interrupt();
    await this.#running?.catch(() => undefined);
  }
}

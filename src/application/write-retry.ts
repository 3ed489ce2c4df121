/**
 * How a command is retried when another writer appended to its stream between its read and its append
 * (optimistic concurrency). Retrying at once makes every loser of a race collide again in the next round,
 * so under 20 simultaneous saves only one landed per round; waiting a random time within an exponentially
 * growing window ("full jitter") spreads the contenders out, so each round loses few.
 *
 * Defaults: 10 attempts, windows of 5, 10, 20, ... ms capped at 400 ms: at most about 1.8 s of waiting in
 * all, far more than realistic contention on one entry needs, and short enough to answer well within a
 * client's timeout when it does not suffice (the caller then gets a retryable conflict).
 */
export interface WriteRetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  /** Wait before retry `retry` (1 for the first retry), in ms. */
  delayMs(retry: number): number;
  /** Waits `ms`; injectable so tests need not sleep. */
  sleep(ms: number): Promise<void>;
}

export interface JitteredBackoffOptions {
  attempts?: number;
  baseMs?: number;
  capMs?: number;
  /** A number in [0, 1); default Math.random. */
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export function jitteredBackoff(options: JitteredBackoffOptions = {}): WriteRetryPolicy {
  const attempts = options.attempts ?? 10;
  const baseMs = options.baseMs ?? 5;
  const capMs = options.capMs ?? 400;
  const random = options.random ?? Math.random;
  if (!Number.isInteger(attempts) || attempts < 1) throw new RangeError(`attempts must be a positive whole number, got ${attempts}`);
  return {
    attempts,
    delayMs: (retry) => Math.floor(random() * Math.min(capMs, baseMs * 2 ** retry)),
    sleep: options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
  };
}

export const DEFAULT_WRITE_RETRY: WriteRetryPolicy = jitteredBackoff();

import type { ReadModelStore } from '../read-models/read-model-store.ts';
import { InterruptibleDelay } from '../interruptible-delay.ts';

export type Applied = 'applied' | 'no-running-service' | 'timeout';

export interface AwaitAppliedOptions {
  /** Without any projection folding our write within this long, no service is running on these stores. Default 1500. */
  idleMs?: number;
  /** Longest wait while projectors are busy catching up. Default 30 000. */
  maxMs?: number;
  pollMs?: number;
}

/**
 * Waits until a running service has folded `position` into `projection` on the same stores (its read model then
 * shows the command's effect, and requests are answered accordingly), so an operator command can return only
 * once its change is in force. A service's projectors fold every append within a poll of the log (250 ms on
 * SQLite), so when no projection at all reaches `position` within `idleMs`, no service is running: the change
 * takes effect when one starts (it folds the log first). Resolves 'applied', 'no-running-service', or
 * 'timeout' (projectors running but still behind after `maxMs`).
 */
export async function awaitApplied(store: ReadModelStore, position: bigint, projection: string, options: AwaitAppliedOptions = {}): Promise<Applied> {
  const started = performance.now();
  const idleMs = options.idleMs ?? 1500;
  const maxMs = options.maxMs ?? 30_000;
  const delay = new InterruptibleDelay();
  for (;;) {
    const active = (await store.listGenerations()).filter((g) => g.state === 'active');
    const reached = (name?: string) => active.some((g) => (name === undefined || g.projection === name) && g.checkpoint !== null && g.checkpoint >= position);
    if (reached(projection)) return 'applied';
    const elapsed = performance.now() - started;
    if (!reached() && elapsed >= idleMs) return 'no-running-service';
    if (elapsed >= maxMs) return 'timeout';
    await delay.sleep(options.pollMs ?? 20);
  }
}

import type { GenerationRecord, ReadModelStore } from '../read-models/read-model-store.ts';
import type { ProjectionSupervisor } from '../projection-engine/projection-supervisor.ts';
import { InterruptibleDelay } from '../interruptible-delay.ts';

/** A write waiting (API-only process) for the projections it names to fold its position. */
interface Waiter {
  position: bigint;
  projections: readonly string[] | undefined;
  deadline: number;
  resolve: (reached: boolean) => void;
  reject: (error: unknown) => void;
}

/**
 * Read your writes: after appending, a handler waits (bounded) until the read models it will read
 * have folded the log up to its position. In a process that runs the projectors the supervisor
 * answers at once; in an API-only process the stored checkpoints are polled: one read of them every
 * `pollMs` (default 5) while any write waits, however many do, and one when a write starts waiting.
 */
export class ProjectionWatermark {
  readonly #waiters = new Set<Waiter>();
  readonly #delay = new InterruptibleDelay();
  #polling = false;

  constructor(
    private readonly store: ReadModelStore,
    private readonly supervisor: ProjectionSupervisor | undefined,
    private readonly options: { pollMs?: number } = {},
  ) {}

  /**
   * True once every named projection (all, when none named) has folded `position`; false on timeout, or at
   * once when one of them is paused on a poison event (it will not get there until an operator acts, and a
   * write must not wait for it).
   */
  waitFor(position: bigint, timeoutMs: number, projections?: readonly string[]): Promise<boolean> {
    if (this.supervisor) return this.supervisor.waitFor(position, timeoutMs, projections);
    return new Promise<boolean>((resolve, reject) => {
      this.#waiters.add({ position, projections, deadline: Date.now() + timeoutMs, resolve, reject });
      // A new waiter is checked at once, not at the end of the current sleep.
      this.#delay.interrupt();
      void this.#poll();
    });
  }

  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      while (this.#waiters.size > 0) {
        let generations: GenerationRecord[];
        try {
          generations = (await this.store.listGenerations()).filter((g) => g.state === 'active');
        } catch (error) {
          for (const waiter of this.#waiters) waiter.reject(error);
          this.#waiters.clear();
          return;
        }
        const now = Date.now();
        for (const waiter of this.#waiters) {
          const outcome = settled(generations, waiter, now);
          if (outcome === undefined) continue;
          this.#waiters.delete(waiter);
          waiter.resolve(outcome);
        }
        if (this.#waiters.size === 0) return;
        const nearest = Math.min(...[...this.#waiters].map((w) => w.deadline));
        await this.#delay.sleep(Math.min(this.options.pollMs ?? 5, Math.max(1, nearest - Date.now())));
      }
    } finally {
      this.#polling = false;
    }
  }
}

/** true when the waiter's projections have folded its position, false when they will not in time, undefined to keep waiting. */
function settled(generations: readonly GenerationRecord[], waiter: Waiter, now: number): boolean | undefined {
  const named = waiter.projections === undefined ? generations : generations.filter((g) => waiter.projections!.includes(g.projection));
  if (named.some((g) => g.failure !== null && (g.checkpoint === null || g.checkpoint < waiter.position))) return false;
  if (named.every((g) => g.checkpoint !== null && g.checkpoint >= waiter.position)) return true;
  return now >= waiter.deadline ? false : undefined;
}

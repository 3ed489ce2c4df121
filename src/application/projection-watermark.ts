import type { ReadModelStore } from '../read-models/read-model-store.ts';
import type { ProjectionSupervisor } from '../projection-engine/projection-supervisor.ts';
import { InterruptibleDelay } from '../interruptible-delay.ts';

/**
 * Read your writes: after appending, a handler waits (bounded) until the read models it will read
 * have folded the log up to its position. In a process that runs the projectors the supervisor
 * answers at once; in an API-only process the stored checkpoints are polled.
 */
export class ProjectionWatermark {
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
  async waitFor(position: bigint, timeoutMs: number, projections?: readonly string[]): Promise<boolean> {
    if (this.supervisor) return this.supervisor.waitFor(position, timeoutMs, projections);
    const deadline = Date.now() + timeoutMs;
    const delay = new InterruptibleDelay();
    for (;;) {
      const generations = (await this.store.listGenerations()).filter((g) => g.state === 'active' && (!projections || projections.includes(g.projection)));
      if (generations.some((g) => g.failure !== null && (g.checkpoint === null || g.checkpoint < position))) return false;
      if (generations.every((g) => g.checkpoint !== null && g.checkpoint >= position)) return true;
      if (Date.now() >= deadline) return false;
      await delay.sleep(Math.min(this.options.pollMs ?? 20, Math.max(1, deadline - Date.now())));
    }
  }
}

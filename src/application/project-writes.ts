import { randomUUID } from 'node:crypto';
import type { Principal } from '../domain/principal.ts';
import { actorOf } from '../domain/access/caller.ts';
import type { Idempotency, IdempotentResult } from './idempotency.ts';
import type { ProjectionWatermark } from './projection-watermark.ts';
import type { Clock } from '../clock.ts';
import type { EventLog } from '../event-store/event-log.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import type { Reservations } from './reservations.ts';

/** What the write use cases of a project (content, schema, contact forms) are built from. */
export interface ProjectServiceDeps {
  log: EventLog;
  reader: ReadModelReader;
  reservations: Reservations;
  idempotency: Idempotency;
  watermark: ProjectionWatermark;
  clock: Clock;
}

/** How long a write waits for the read models to show it (read your writes). */
export const READ_YOUR_WRITES_MS = 3000;

/** What every write use case of a project does around its decisions: idempotency, then read your writes. */
export class ProjectWrites {
  constructor(private readonly deps: { idempotency: Idempotency; watermark: ProjectionWatermark }) {}

  /** Waits, bounded, until the read models have folded `position`. */
  async settle(position: bigint | null): Promise<void> {
    if (position !== null) await this.deps.watermark.waitFor(position, READ_YOUR_WRITES_MS);
  }

  /**
   * Runs `run` once per idempotency key within the project (with the ids it will create fixed up
   * front), or directly with fresh ids when the caller sent no key.
   */
  async idempotent(
    principal: Principal,
    projectId: string,
    operation: string,
    key: string | undefined,
    request: unknown,
    ids: readonly string[],
    run: (ids: Record<string, string>) => Promise<IdempotentResult>,
  ): Promise<IdempotentResult> {
    if (key === undefined) return run(Object.fromEntries(ids.map((name) => [name, randomUUID()])));
    const { replayed: _replayed, ...result } = await this.deps.idempotency.run({ scope: projectId, operation, key, request, ids, actor: actorOf(principal) }, run);
    return result;
  }
}

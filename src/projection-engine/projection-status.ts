import type { EventLog } from '../event-store/event-log.ts';
import { encodeNullablePosition, encodePosition } from '../event-store/position.ts';
import type { GenerationRecord, ReadModelStore } from '../read-models/read-model-store.ts';
import type { Projection } from './projection.ts';

/** One projection's state as stored, in JSON-safe form (positions as fixed-width strings). */
export interface ProjectionStatus {
  name: string;
  /** Version of the projection code in this build. */
  version: number;
  state: 'live' | 'behind' | 'paused' | 'not-started' | 'outdated';
  active: GenerationStatus | null;
  /** A generation being rebuilt, if any. */
  building: GenerationStatus | null;
  head: string | null;
  skips: number;
}

export interface GenerationStatus {
  generation: number;
  version: number;
  checkpoint: string | null;
  /** head - checkpoint, in log positions: events on SQLite, bytes of log on EventStoreDB. */
  lag: string | null;
  /** The event the generation is paused on; eventId, streamId and message are null where the reader may not see them (see OperationsOverviewService). */
  failure: null | { eventId: string | null; eventType: string; streamId: string | null; position: string; message: string | null; failedAt: string };
  updatedAt: string;
}

export async function readProjectionStatus(projections: readonly Projection[], store: ReadModelStore, log: EventLog): Promise<ProjectionStatus[]> {
  const head = await log.headPosition();
  const all = await store.listGenerations();
  const out: ProjectionStatus[] = [];
  for (const projection of projections) {
    const mine = all.filter((g) => g.projection === projection.name);
    const active = mine.find((g) => g.state === 'active') ?? null;
    const building = mine.filter((g) => g.state === 'building').sort((a, b) => b.generation - a.generation)[0] ?? null;
    const activeStatus = active ? generationStatus(active, head) : null;
    const state: ProjectionStatus['state'] =
      !active ? 'not-started'
      : active.failure ? 'paused'
      : active.version !== projection.version ? 'outdated'
      : activeStatus?.lag !== null && activeStatus?.lag !== '0' ? 'behind'
      : 'live';
    out.push({
      name: projection.name,
      version: projection.version,
      state,
      active: activeStatus,
      building: building ? generationStatus(building, head) : null,
      head: encodeNullablePosition(head),
      skips: (await store.listSkips(projection.name)).length,
    });
  }
  return out;
}

function generationStatus(record: GenerationRecord, head: bigint | null): GenerationStatus {
  const lag = head === null ? 0n : head - (record.checkpoint ?? 0n);
  return {
    generation: record.generation,
    version: record.version,
    checkpoint: encodeNullablePosition(record.checkpoint),
    lag: (lag < 0n ? 0n : lag).toString(),
    failure: record.failure
      ? { ...record.failure, position: encodePosition(record.failure.position) }
      : null,
    updatedAt: record.updatedAt,
  };
}

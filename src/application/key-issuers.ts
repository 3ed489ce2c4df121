import { LRUCache } from 'lru-cache';
import type { EventLog } from '../event-store/event-log.ts';
import { StreamNotFoundError } from '../event-store/errors.ts';
import type { KeyEvent } from '../domain/access/access-events.ts';
import { projectKeysStream } from '../domain/access/access-streams.ts';
import { keyDecider, keyIssuersOf, type ProjectKeys } from '../domain/access/key-decider.ts';
import type { KeyIssuers } from '../domain/access/people.ts';

interface Folded {
  state: ProjectKeys;
  /** The stream's revision and the position of its event, as folded. */
  revision: bigint;
  position: bigint;
  issuers: KeyIssuers;
}

/**
 * Who issued each agent key of a project (the person it acts for), from the project's key stream in the log:
 * the stream the keys are issued on, so a key is known here from the moment it exists, whatever a read model's
 * lag. Each project's fold is kept in memory and brought up to date with the events after it: an approval costs
 * one read of the stream's last event (an indexed lookup) however many keys the project has issued, and the
 * events of keys issued since. A kept fold is used only when the log confirms it (the stream's last event is at
 * the revision and position it was folded to).
 */
export class KeyIssuersCache {
  readonly #folds: LRUCache<string, Folded>;

  constructor(options: { projects?: number } = {}) {
    this.#folds = new LRUCache({ max: options.projects ?? 1000 });
  }

  async of(log: EventLog, projectId: string): Promise<KeyIssuers> {
    const streamId = projectKeysStream(projectId);
    const kept = this.#folds.get(projectId);
    const last = await lastEvent(log, streamId);
    if (!last) return new Map();
    if (kept && kept.revision === last.revision && kept.position === last.position) return kept.issuers;
    const folded = (kept && kept.revision < last.revision ? await fold(log, streamId, kept) : null) ?? (await fold(log, streamId, null));
    if (!folded) return new Map();
    this.#folds.set(projectId, folded);
    return folded.issuers;
  }
}

/**
 * Folds the stream from the start, or on from a kept fold: then the event at the kept revision must still be at
 * its position (else null: the kept fold is not this stream's, fold it again from the start).
 */
async function fold(log: EventLog, streamId: string, kept: Folded | null): Promise<Folded | null> {
  let state = kept?.state ?? keyDecider.initialState();
  let revision: bigint | null = null;
  let position = 0n;
  for await (const event of log.readStream(streamId, kept ? { fromRevision: kept.revision } : {})) {
    if (kept && revision === null) {
      if (event.revision !== kept.revision || event.position !== kept.position) return null;
      revision = event.revision;
      position = event.position;
      continue;
    }
    state = keyDecider.evolve(state, { type: event.type, data: event.data, actor: event.metadata.actor } as KeyEvent);
    revision = event.revision;
    position = event.position;
  }
  return revision === null ? null : { state, revision, position, issuers: keyIssuersOf(state) };
}

async function lastEvent(log: EventLog, streamId: string): Promise<{ revision: bigint; position: bigint } | null> {
  try {
    for await (const event of log.readStream(streamId, { direction: 'backwards', fromRevision: 'end', maxCount: 1 })) return { revision: event.revision, position: event.position };
  } catch (error) {
    if (!(error instanceof StreamNotFoundError)) throw error;
  }
  return null;
}

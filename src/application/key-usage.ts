import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { EventLog } from '../event-store/event-log.ts';
import { agentKeyUsed } from '../domain/access/access-events.ts';
import { agentKeyUsageStream } from '../domain/access/access-streams.ts';

/** How finely "last used" is kept: a key's use is recorded at most once per this time, per process. */
export const KEY_USAGE_RESOLUTION_MS = 10 * 60_000;

/**
 * Records that an agent key authenticated a request (agent-key.used), for the key's "last used" time in
 * the console. At most one event per key per KEY_USAGE_RESOLUTION_MS in a process, so the log grows with
 * time in use, not with requests; recorded after the request is let through, and a failure to record is
 * logged, never the request's failure.
 */
export class KeyUsageRecorder {
  readonly #recorded = new Map<string, number>();

  constructor(private readonly deps: { log: EventLog; clock: Clock; logger: Logger; resolutionMs?: number }) {}

  seen(keyId: string, projectId: string): void {
    const now = this.deps.clock.now();
    const last = this.#recorded.get(keyId);
    if (last !== undefined && now.getTime() - last < (this.deps.resolutionMs ?? KEY_USAGE_RESOLUTION_MS)) return;
    this.#recorded.set(keyId, now.getTime());
    this.deps.log
      .append(agentKeyUsageStream(keyId), [{ type: agentKeyUsed.type, data: { keyId, projectId, usedAt: now.toISOString() } }], 'any', { actor: { type: 'agent', id: keyId } })
      .catch((error: unknown) => {
        this.#recorded.delete(keyId);
        this.deps.logger.warn({ keyId, err: error }, 'could not record the use of an agent key');
      });
  }
}

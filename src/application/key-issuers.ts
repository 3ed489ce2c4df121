import type { EventLog } from '../event-store/event-log.ts';
import { projectKeysStream } from '../domain/access/access-streams.ts';
import { keyDecider, keyIssuersOf } from '../domain/access/key-decider.ts';
import type { KeyIssuers } from '../domain/access/people.ts';
import { loadAggregate } from './command-handler.ts';

/**
 * Who issued each agent key of a project (the person it acts for), from the project's key stream in the log:
 * the stream the keys are issued on, so a key is known here from the moment it exists, whatever a read model's
 * lag. One read of a stream that grows with the keys issued, not with content.
 */
export async function keyIssuers(log: EventLog, projectId: string): Promise<KeyIssuers> {
  const { state } = await loadAggregate(log, projectKeysStream(projectId), keyDecider);
  return keyIssuersOf(state);
}

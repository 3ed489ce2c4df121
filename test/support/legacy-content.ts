import { randomUUID } from 'node:crypto';
import { handleCommand } from '../../src/application/command-handler.ts';
import { entryDecider } from '../../src/domain/content/entry/entry-decider.ts';
import { entryStream } from '../../src/domain/content/entry/entry-events.ts';
import type { RunningService } from '../../src/service/service.ts';

/**
 * Saves a revision the way a build before the rich-text model let any value through: the entry's decider
 * appends it with no field validation (the content service's), so a test holds data "stored before the
 * rule". Answers the revision id once the read models show it.
 */
export async function plantLegacyRevision(service: RunningService, projectId: string, entryId: string, snapshot: Record<string, unknown>): Promise<string> {
  const revisionId = randomUUID();
  const principal = { kind: 'agent' as const, keyId: 'legacy-import', tenantId: randomUUID(), projectId, scope: 'full' as const };
  const result = await handleCommand(service.log, entryStream(entryId), entryDecider, { type: 'saveRevision', entryId, revisionId, snapshot }, { principal, plan: 'business', now: new Date() }, { actor: { type: 'agent', id: 'legacy-import' } });
  if (result.position !== null) await service.supervisor!.waitFor(result.position, 5000);
  return revisionId;
}

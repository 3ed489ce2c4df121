import { encodePosition } from '../src/event-store/position.ts';
import { defineProjection } from '../src/projection-engine/projection.ts';
import { auditFlagOf } from '../src/audit/audit-flags.ts';

/**
 * One audit record per event: who did what to which stream, when, and as part of which request.
 * Holds no event data (that stays in the log, where revisions and diffs are read) beyond what it is
 * filed and shown by: the project (metadata `projectId`, stamped by the event log from the event's data) for the project audit log, and the
 * revision an event names (`subject`: revisionId and number) for an entry's history. This is the index
 * an auditor searches by project (then actor and time) or stream.
 *
 * Version 2 added projectId, subject and occurredAtMs (the time as a number, so a query can bound the
 * time from both sides: occurredAt from below, occurredAtMs from above) and the by_project indexes.
 * Version 3 dropped the global by_time and by_actor indexes: every audit query is scoped to a project
 * (the project log) or a stream (an entry's history), and each index costs every write.
 * Version 4 dropped by_correlation: no query reads by correlation id, which today names the append that wrote
 * an event (the events one decision wrote, such as entry.created with its first revision; the appends of a
 * bootstrap), not a whole request. It cost 0.45 KB per entry of disk and a write to every audit record.
 * Records still carry the id, for when a correlation names more (a request id carried into the log).
 * Records may carry `flag` (src/audit/audit-flags.ts: an approval made while a rule of the usual approval policy
 * was off, a refused write, a publication the policy refused) and, for a refused write, `refusal` (operation,
 * code, reason, rule, how many refusals it stands for). Only events written since they exist carry what they are
 * read from (and the flag of a legacy entry.revision-approval-refused is left to its type), so records folded
 * before them are what this code folds from the same events: no rebuild.
 * Version 5 added `restoredFrom` (revisionId and number) to the record of an entry.revision-saved that restored an
 * older revision, so an entry's history can say "restored from revision N". Restores have named their source in
 * the event since the first schema, so records folded before version 5 lack what the same events now give: rebuilt.
 */
export const auditTrail = defineProjection({
  name: 'audit-trail',
  version: 5,
  description: 'Every event as an audit record: stream, type, actor, time, correlation.',
  collections: {
    records: {
      indexes: [
        { name: 'by_stream', fields: [['streamId', 1], ['position', 1]] },
        { name: 'by_project_time', fields: [['projectId', 1], ['occurredAt', 1]] },
        { name: 'by_project_actor_time', fields: [['projectId', 1], ['actor.id', 1], ['occurredAt', 1]] },
      ],
    },
  },
  apply(event, view) {
    const position = encodePosition(event.position);
    const { actor, occurredAt } = event.metadata ?? {};
    // Who and when are what an audit record is filed by: an event without them (written by another tool) stops
    // the projection, so that an operator looks at it and decides (skip records the decision, with a reason, in the log).
    if (typeof actor?.type !== 'string' || typeof actor.id !== 'string' || typeof occurredAt !== 'string' || Number.isNaN(Date.parse(occurredAt))) {
      throw new Error(`event ${event.id} (${event.type}) has no actor or time in its metadata: an audit record names both`);
    }
    // The project comes from the metadata the event log stamps; only revision events have their data
    // parsed, for the revision they name (most events' data is never read here).
    const projectId = event.metadata.projectId ?? null;
    const refused = event.type === 'write.refused';
    const data = (event.type.startsWith('entry.revision-') || refused) && event.data !== null && typeof event.data === 'object' ? (event.data as Record<string, unknown>) : {};
    // A refusal names its revision in its subject.
    const named = refused && data['subject'] !== null && typeof data['subject'] === 'object' ? (data['subject'] as Record<string, unknown>) : data;
    const subject = revisionRefOf(named);
    const restoredFrom = event.type === 'entry.revision-saved' ? revisionRefOf(data['restoredFrom']) : null;
    const flag = event.type === 'entry.revision-approval-refused' ? null : auditFlagOf(event.type, data);
    const refusal = refused
      ? {
          operation: data['operation'],
          code: data['code'],
          reason: data['reason'],
          ...(data['rule'] === undefined ? {} : { rule: data['rule'] }),
          count: data['count'],
          repeated: data['repeated'],
          firstAt: data['firstAt'],
          lastAt: data['lastAt'],
        }
      : null;
    view.put('records', position, {
      position,
      eventId: event.id,
      streamId: event.streamId,
      revision: Number(event.revision),
      type: event.type,
      projectId,
      ...(subject === null ? {} : { subject }),
      ...(restoredFrom === null ? {} : { restoredFrom }),
      ...(flag === null ? {} : { flag }),
      ...(refusal === null ? {} : { refusal }),
      actor,
      occurredAt,
      occurredAtMs: Date.parse(occurredAt),
      correlationId: event.metadata.correlationId,
      causationId: event.metadata.causationId,
      ...(event.metadata.idempotencyKey === undefined ? {} : { idempotencyKey: event.metadata.idempotencyKey }),
    });
  },
});

/** A revision named by an event ({revisionId, revision}), or null when the value is not one. */
function revisionRefOf(value: unknown): { revisionId: string; revision: number } | null {
  if (value === null || typeof value !== 'object') return null;
  const { revisionId, revision } = value as Record<string, unknown>;
  return typeof revisionId === 'string' && typeof revision === 'number' ? { revisionId, revision } : null;
}

import { encodePosition } from '../src/event-store/position.ts';
import { defineProjection } from '../src/projection-engine/projection.ts';

/**
 * One audit record per event: who did what to which stream, when, and as part of which request.
 * Holds no event data (that stays in the log, where revisions and diffs are read); this is the index
 * an auditor searches by stream, by actor, by correlation id or by time.
 */
export const auditTrail = defineProjection({
  name: 'audit-trail',
  version: 1,
  description: 'Every event as an audit record: stream, type, actor, time, correlation.',
  collections: {
    records: {
      indexes: [
        { name: 'by_stream', fields: [['streamId', 1], ['position', 1]] },
        { name: 'by_actor', fields: [['actor.id', 1], ['position', 1]] },
        { name: 'by_correlation', fields: [['correlationId', 1]] },
        { name: 'by_time', fields: [['occurredAt', 1]] },
      ],
    },
  },
  apply(event, view) {
    const position = encodePosition(event.position);
    view.put('records', position, {
      position,
      eventId: event.id,
      streamId: event.streamId,
      revision: Number(event.revision),
      type: event.type,
      actor: event.metadata.actor,
      occurredAt: event.metadata.occurredAt,
      correlationId: event.metadata.correlationId,
      causationId: event.metadata.causationId,
      ...(event.metadata.idempotencyKey === undefined ? {} : { idempotencyKey: event.metadata.idempotencyKey }),
    });
  },
});

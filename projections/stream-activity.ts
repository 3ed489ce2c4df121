import { encodePosition } from '../src/event-store/position.ts';
import { defineProjection } from '../src/projection-engine/projection.ts';

interface StreamActivity {
  streamId: string;
  category: string;
  events: number;
  lastRevision: number;
  firstAt: string;
  lastAt: string;
  lastType: string;
  lastPosition: string;
  /** Distinct actors, in order of first appearance. */
  actors: Array<{ type: string; id: string }>;
}

/** Per stream: how many events, first and last change, last event type, and every actor who touched it. */
export const streamActivity = defineProjection({
  name: 'stream-activity',
  version: 1,
  description: 'Per stream: event count, first and last change, and the actors who changed it.',
  collections: {
    streams: {
      indexes: [
        { name: 'by_category_last', fields: [['category', 1], ['lastAt', -1]] },
        { name: 'by_last', fields: [['lastAt', -1]] },
      ],
    },
  },
  async apply(event, view) {
    const previous = await view.get<StreamActivity & Record<string, unknown>>('streams', event.streamId);
    const actor = { type: event.metadata.actor.type, id: event.metadata.actor.id };
    const actors = previous?.actors ?? [];
    const next: StreamActivity = {
      streamId: event.streamId,
      category: event.streamId.split('-')[0] ?? event.streamId,
      events: (previous?.events ?? 0) + 1,
      lastRevision: Number(event.revision),
      firstAt: previous?.firstAt ?? event.metadata.occurredAt,
      lastAt: event.metadata.occurredAt,
      lastType: event.type,
      lastPosition: encodePosition(event.position),
      actors: actors.some((a) => a.type === actor.type && a.id === actor.id) ? actors : [...actors, actor],
    };
    view.put('streams', event.streamId, { ...next });
  },
});

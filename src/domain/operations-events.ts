import { z } from 'zod';
import { defineEvent } from '../event-store/event-catalog.ts';

/** Operators' actions on the service itself, kept in the log beside content history. */
export const OPERATIONS_STREAM = 'operations-projections';

/** An operator told a projection to pass over an event it cannot fold. */
export const projectionEventSkipped = defineEvent({
  type: 'projection.event-skipped',
  version: 1,
  schema: z.object({
    projection: z.string(),
    eventId: z.string().uuid(),
    eventType: z.string(),
    streamId: z.string(),
    /** Fixed-width decimal position. */
    position: z.string().regex(/^\d{20}$/),
    reason: z.string().min(1).max(2000),
    failure: z.string().max(4000),
  }),
});

export const operationsEvents = [projectionEventSkipped];

import type { Projection } from '../src/projection-engine/projection.ts';
import type { ReadModelSchema } from '../src/read-models/read-model-store.ts';
import { access } from './access.ts';
import { auditTrail } from './audit-trail.ts';
import { content } from './content.ts';
import { contactForms } from './contact-forms.ts';
import { publicContent } from './public-content.ts';
import { reviewQueue } from './review-queue.ts';
import { media } from './media.ts';
import { webhooks } from './webhooks.ts';
import { publicationHistory } from './publication-history.ts';

/** Every read model the service maintains. */
export const projections: readonly Projection[] = [auditTrail, access, content, publicContent, reviewQueue, publicationHistory, media, webhooks, contactForms];

/**
 * Projections earlier releases maintained, with the collections they had: the service drops their read models
 * at start. `stream-activity` (per stream: event count, first and last change, actors) was read by no API,
 * page or command, yet folded every event and held ~10% of the read models' disk.
 */
export const retiredProjections: readonly ReadModelSchema[] = [{ projection: 'stream-activity', collections: { streams: {} } }];

/**
 * The projections that fold events of this type: what a write of it waits for before its answer, so that every
 * read model that shows the change shows it (read your writes), not only the one the route reads back.
 */
export function projectionsFolding(eventType: string): string[] {
  return projections.filter((projection) => projection.filter?.eventTypes?.includes(eventType) ?? true).map((projection) => projection.name);
}

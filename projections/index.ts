import type { Projection } from '../src/projection-engine/projection.ts';
import { access } from './access.ts';
import { auditTrail } from './audit-trail.ts';
import { content } from './content.ts';
import { contactForms } from './contact-forms.ts';
import { publicContent } from './public-content.ts';
import { reviewQueue } from './review-queue.ts';
import { media } from './media.ts';
import { streamActivity } from './stream-activity.ts';
import { webhooks } from './webhooks.ts';
import { publicationHistory } from './publication-history.ts';

/** Every read model the service maintains. */
export const projections: readonly Projection[] = [auditTrail, streamActivity, access, content, publicContent, reviewQueue, publicationHistory, media, webhooks, contactForms];

import type { Projection } from '../src/projection-engine/projection.ts';
import { access } from './access.ts';
import { auditTrail } from './audit-trail.ts';
import { content } from './content.ts';
import { streamActivity } from './stream-activity.ts';

/** Every read model the service maintains. */
export const projections: readonly Projection[] = [auditTrail, streamActivity, access, content];

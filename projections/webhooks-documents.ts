import type { PayloadFields } from '../src/domain/webhook/webhook-payload.ts';
import type { WebhookEventType } from '../src/domain/webhook/webhook-events.ts';

/**
 * The documents of the webhooks read model (projections/webhooks.ts, whose comment says which collection holds
 * which), and the ids and texts the folds write into them.
 */

export interface WebhookDoc {
  webhookId: string;
  projectId: string;
  name: string;
  url: string;
  description: string | null;
  events: WebhookEventType[];
  enabled: boolean;
  deleted: boolean;
  sealedSecret: string | null;
  createdAt: string;
  updatedAt: string;
  seq: string;
}

export type DeliveryStatus = 'pending' | 'in_progress' | 'succeeded' | 'failed' | 'skipped';

export interface DeliveryDoc {
  deliveryId: string;
  projectId: string;
  webhookId: string;
  trigger: 'event' | 'test';
  event: WebhookEventType;
  /** The log event that caused it (null for Send Test). */
  sourceEventId: string | null;
  payloadFields: PayloadFields;
  /** The exact bytes sent, fixed by the first attempt; null before it. */
  payload: string | null;
  status: DeliveryStatus;
  attemptCount: number;
  lastAttempt: { attemptId: string; startedAt: string; httpStatus: number | null; error: string | null } | null;
  /** Why nothing was sent, when the job was abandoned. */
  abandoned: { reason: string; detail: string } | null;
  createdAt: string;
  seq: string;
}

export type AttemptState = 'in_progress' | 'succeeded' | 'failed' | 'interrupted';

export interface AttemptDoc {
  attemptId: string;
  deliveryId: string;
  webhookId: string;
  projectId: string;
  jobId: string;
  trigger: 'event' | 'redelivery' | 'test';
  number: number;
  event: WebhookEventType;
  url: string;
  payload: string;
  startedAt: string;
  state: AttemptState;
  httpStatus: number | null;
  durationMs: number | null;
  responseBody: string | null;
  responseTruncated: boolean;
  error: string | null;
  finishedAt: string | null;
  seq: string;
}

export interface JobDoc {
  jobId: string;
  deliveryId: string;
  webhookId: string;
  projectId: string;
  trigger: 'event' | 'redelivery' | 'test';
  event: WebhookEventType;
  payloadFields: PayloadFields;
  status: 'pending' | 'done';
  currentAttemptId: string | null;
  seq: string;
}

export interface EntrySlugDoc {
  entryId: string;
  projectId: string;
  formSetId: string;
  slug: string;
  liveRevisionId: string | null;
}

/** A document as the read model stores it: its fields and any others a store keeps. */
export type { Doc } from '../src/read-models/read-model-store.ts';

/** The error of an attempt still in progress when its job's next attempt starts or the job is abandoned (state interrupted). */
export const INTERRUPTED_ERROR = 'interrupted: the dispatcher stopped before the outcome was recorded; the receiver may have got this request';

/** The id of all_webhooks' one document: every webhook not deleted, of every project (for log.checkpoint). */
export const ALL = 'all';

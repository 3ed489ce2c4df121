import { z } from 'zod';
import { defineEvent } from '../../event-store/event-catalog.ts';

/**
 * Webhook events (spec sections 2 and 6).
 *
 * The webhook aggregate lives on stream `webhook-${webhookId}`: created (with the signing secret sealed
 * by the secrets key, never in clear), updated (the settings after the change), enabled, disabled,
 * deleted.
 *
 * Deliveries: the webhooks projection folds content events (entry.revision-published, entry.deleted,
 * master.published; for the review additions entry.revision-submitted, -rejected and -approved; for the audit
 * addition project.approval-policy-changed) and the subscriptions into pending deliveries with deterministic ids, so nothing
 * is appended to ask for them and a rebuild arrives at the same ids. Everything that happens to a
 * delivery is on stream `webhook-delivery-${deliveryId}`: a redelivery or a test asked for from the admin
 * API, and each attempt's start (with the exact payload bytes, fixed at the first attempt) appended
 * before any byte is sent. How each dispatch job ended (the attempt's outcome, or why nothing was sent)
 * is its outbox completion, on stream `outbox-webhooks-${jobId}` appended with "no stream", so a job
 * completes once.
 */
export const webhookStream = (webhookId: string): string => `webhook-${webhookId}`;
export const deliveryStream = (deliveryId: string): string => `webhook-delivery-${deliveryId}`;

/** The spec's four events (section 6). */
export const SPEC_WEBHOOK_EVENT_TYPES = ['entry.published', 'entry.updated', 'entry.deleted', 'master.published'] as const;
/**
 * Additions to the spec's four, for review workflows: a revision submitted for review, rejected, or approved
 * for a later publish time. Opt-in like every event: a webhook receives them only when its `events` name them.
 */
export const REVIEW_WEBHOOK_EVENT_TYPES = ['entry.submitted', 'entry.rejected', 'entry.scheduled'] as const;
/**
 * Additions for audit: the project's approval policy changed (project.approval-policy-changed), so that a system
 * outside the service learns at once that a rule was turned off or on, and by whom; and the log's signed
 * checkpoints (docs/audit.md): each recorded checkpoint (at most every AUDIT_CHECKPOINT_WEBHOOK_SECONDS while the
 * log changes) goes to every webhook subscribed to it, whatever its project, so that the receiver holds the
 * service's commitment to its whole log, outside the operator's reach. Opt-in like every event.
 */
export const AUDIT_WEBHOOK_EVENT_TYPES = ['approval-policy.changed', 'log.checkpoint'] as const;
/** The events a webhook can subscribe to: the spec's four, then the review additions, then the audit additions. */
export const WEBHOOK_EVENT_TYPES = [...SPEC_WEBHOOK_EVENT_TYPES, ...REVIEW_WEBHOOK_EVENT_TYPES, ...AUDIT_WEBHOOK_EVENT_TYPES] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const WEBHOOK_NAME_MAX = 100;
export const WEBHOOK_DESCRIPTION_MAX = 500;
export const WEBHOOK_URL_MAX = 2000;

const id = z.uuid();
const instant = z.iso.datetime({ precision: 3 });
const eventType = z.enum(WEBHOOK_EVENT_TYPES);

export const webhookSettingsSchema = z.object({
  name: z.string().min(1).max(WEBHOOK_NAME_MAX),
  url: z.string().min(1).max(WEBHOOK_URL_MAX),
  description: z.string().max(WEBHOOK_DESCRIPTION_MAX).nullable(),
  events: z.array(eventType).min(1).max(WEBHOOK_EVENT_TYPES.length),
});
export type WebhookSettings = z.infer<typeof webhookSettingsSchema>;

const scope = { projectId: id, webhookId: id };

export const webhookCreated = defineEvent({
  type: 'webhook.created',
  version: 1,
  schema: z.object({
    ...scope,
    ...webhookSettingsSchema.shape,
    enabled: z.boolean(),
    /** The signing secret sealed with the secrets key (src/security/secret-box.ts); never the secret itself. */
    sealedSecret: z.string().regex(/^v1\.[0-9a-f]{8}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'a sealed secret'),
  }),
});

/** The settings as they are after the change, and which of them changed. */
export const webhookUpdated = defineEvent({
  type: 'webhook.updated',
  version: 1,
  schema: z.object({ ...scope, ...webhookSettingsSchema.shape, changed: z.array(z.enum(['name', 'url', 'description', 'events'])).min(1) }),
});

export const webhookEnabled = defineEvent({ type: 'webhook.enabled', version: 1, schema: z.object(scope) });
export const webhookDisabled = defineEvent({ type: 'webhook.disabled', version: 1, schema: z.object(scope) });
export const webhookDeleted = defineEvent({ type: 'webhook.deleted', version: 1, schema: z.object(scope) });

const deliveryScope = { ...scope, deliveryId: id };

/** Send a recorded delivery again, with the same payload bytes, as a new dispatch job. */
export const webhookRedeliveryRequested = defineEvent({
  type: 'webhook.redelivery-requested',
  version: 1,
  schema: z.object({ ...deliveryScope, jobId: id }),
});

/** Send Test: a new delivery of a dummy payload of the right shape (its fields; the time is added at sending). */
export const webhookTestRequested = defineEvent({
  type: 'webhook.test-requested',
  version: 1,
  schema: z.object({ ...deliveryScope, jobId: id, event: eventType, payloadFields: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])) }),
});

export const DISPATCH_TRIGGERS = ['event', 'redelivery', 'test'] as const;

/**
 * Appended before the request is sent: the attempt exists in the history even when the process dies
 * before the response arrives, and its payload (the exact bytes sent, as UTF-8 text) is what every later
 * attempt of the delivery sends again.
 */
export const webhookDeliveryAttemptStarted = defineEvent({
  type: 'webhook.delivery-attempt-started',
  version: 1,
  schema: z.object({
    ...deliveryScope,
    jobId: id,
    attemptId: id,
    trigger: z.enum(DISPATCH_TRIGGERS),
    event: eventType,
    url: z.string().min(1).max(WEBHOOK_URL_MAX),
    payload: z.string().min(2).max(64 * 1024),
    startedAt: instant,
  }),
});

/** A dispatch job's completion when an attempt was made: how the request ended. */
export const webhookDeliveryAttemptFinished = defineEvent({
  type: 'webhook.delivery-attempt-finished',
  version: 1,
  schema: z.object({
    ...deliveryScope,
    jobId: id,
    attemptId: id,
    /** A 2xx answer. */
    ok: z.boolean(),
    /** The receiver's HTTP status; null when none arrived (timeout, refused, TLS or connection error). */
    status: z.int().min(100).max(999).nullable(),
    durationMs: z.int().min(0),
    /** The start of the response body, decoded as UTF-8. */
    responseBody: z.string().nullable(),
    responseTruncated: z.boolean(),
    /** What went wrong, for failures: no secret, no payload. */
    error: z.string().max(2000).nullable(),
    finishedAt: instant,
  }),
});

/** A dispatch job's completion when nothing was sent: why. */
export const webhookDeliveryAbandoned = defineEvent({
  type: 'webhook.delivery-abandoned',
  version: 1,
  schema: z.object({
    ...deliveryScope,
    jobId: id,
    reason: z.enum(['webhook-deleted', 'webhook-disabled', 'error']),
    detail: z.string().max(2000),
  }),
});

export const webhookEvents = [
  webhookCreated,
  webhookUpdated,
  webhookEnabled,
  webhookDisabled,
  webhookDeleted,
  webhookRedeliveryRequested,
  webhookTestRequested,
  webhookDeliveryAttemptStarted,
  webhookDeliveryAttemptFinished,
  webhookDeliveryAbandoned,
];

type Of<D extends { type: string; schema: z.ZodType }> = { type: D['type']; data: z.output<D['schema']> };
export type WebhookEvent =
  | Of<typeof webhookCreated>
  | Of<typeof webhookUpdated>
  | Of<typeof webhookEnabled>
  | Of<typeof webhookDisabled>
  | Of<typeof webhookDeleted>;
export type DeliveryEvent =
  | Of<typeof webhookRedeliveryRequested>
  | Of<typeof webhookTestRequested>
  | Of<typeof webhookDeliveryAttemptStarted>
  | Of<typeof webhookDeliveryAttemptFinished>
  | Of<typeof webhookDeliveryAbandoned>;

import type { RecordedEvent } from '../src/event-store/event-store.ts';
import { encodePosition } from '../src/event-store/position.ts';
import type { ProjectionView } from '../src/projection-engine/projection.ts';
import { deliveryIdFor } from '../src/domain/webhook/delivery-id.ts';
import type { PayloadFields } from '../src/domain/webhook/webhook-payload.ts';
import type { DeliveryEvent, WebhookEventType } from '../src/domain/webhook/webhook-events.ts';
import { INTERRUPTED_ERROR, type AttemptDoc, type DeliveryDoc, type Doc, type JobDoc, type WebhookDoc } from './webhooks-documents.ts';

/**
 * The webhooks projection's outbox (projections/webhooks.ts): the deliveries an event makes and their pending
 * dispatch jobs, then what the dispatcher records of them (redeliveries and tests asked for, attempts started
 * and finished, jobs abandoned), with the count of pending jobs per webhook.
 */

/** One delivery and one pending job per enabled webhook of the project subscribed to `type`. */
export async function fanOut(view: ProjectionView, event: RecordedEvent, projectId: string, type: WebhookEventType, payloadFields: PayloadFields): Promise<void> {
  const list = await view.get<{ webhookIds: string[] }>('project_webhooks', projectId);
  if (!list) return;
  for (const webhookId of list.webhookIds) {
    const webhook = await view.get<Doc<WebhookDoc>>('webhooks', webhookId);
    if (!webhook || webhook.deleted || !webhook.enabled || !webhook.events.includes(type)) continue;
    await deliver(view, event, projectId, webhookId, type, payloadFields);
  }
}

/** The delivery of an event to one webhook, and its pending job. */
export async function deliver(view: ProjectionView, event: RecordedEvent, projectId: string, webhookId: string, type: WebhookEventType, payloadFields: PayloadFields): Promise<void> {
  const seq = encodePosition(event.position);
  {
    const deliveryId = deliveryIdFor(webhookId, event.id);
    const delivery: DeliveryDoc = {
      deliveryId,
      projectId,
      webhookId,
      trigger: 'event',
      event: type,
      sourceEventId: event.id,
      payloadFields,
      payload: null,
      status: 'pending',
      attemptCount: 0,
      lastAttempt: null,
      abandoned: null,
      createdAt: event.metadata.occurredAt,
      seq,
    };
    view.put('deliveries', deliveryId, { ...delivery });
    await addJob(view, { jobId: deliveryId, deliveryId, webhookId, projectId, trigger: 'event', event: type, payloadFields, status: 'pending', currentAttemptId: null, seq });
  }
}

async function addJob(view: ProjectionView, job: JobDoc): Promise<void> {
  if (await view.get('jobs', job.jobId)) return;
  view.put('jobs', job.jobId, { ...job });
  await countPending(view, job.webhookId, +1);
}

async function countPending(view: ProjectionView, webhookId: string, change: 1 | -1): Promise<void> {
  const queue = await view.get<{ pending: number }>('queues', webhookId);
  const pending = Math.max(0, (queue?.pending ?? 0) + change);
  view.put('queues', webhookId, { webhookId, pending });
}

async function finishJob(view: ProjectionView, jobId: string): Promise<Doc<JobDoc> | null> {
  const job = await view.get<Doc<JobDoc>>('jobs', jobId);
  if (!job || job.status === 'done') return null;
  view.put('jobs', jobId, { ...job, status: 'done' });
  await countPending(view, job.webhookId, -1);
  return job;
}

export async function applyDeliveryEvent(event: DeliveryEvent, view: ProjectionView, seq: string, at: string): Promise<void> {
  const { deliveryId, webhookId, projectId } = event.data;
  const delivery = await view.get<Doc<DeliveryDoc>>('deliveries', deliveryId);
  switch (event.type) {
    case 'webhook.test-requested': {
      const { jobId, payloadFields } = event.data;
      const fields = payloadFields as unknown as PayloadFields;
      const doc: DeliveryDoc = {
        deliveryId,
        projectId,
        webhookId,
        trigger: 'test',
        event: event.data.event,
        sourceEventId: null,
        payloadFields: fields,
        payload: null,
        status: 'pending',
        attemptCount: 0,
        lastAttempt: null,
        abandoned: null,
        createdAt: at,
        seq,
      };
      view.put('deliveries', deliveryId, { ...doc });
      await addJob(view, { jobId, deliveryId, webhookId, projectId, trigger: 'test', event: event.data.event, payloadFields: fields, status: 'pending', currentAttemptId: null, seq });
      return;
    }
    case 'webhook.redelivery-requested': {
      if (!delivery) return;
      await addJob(view, {
        jobId: event.data.jobId,
        deliveryId,
        webhookId,
        projectId,
        trigger: 'redelivery',
        event: delivery.event,
        payloadFields: delivery.payloadFields,
        status: 'pending',
        currentAttemptId: null,
        seq,
      });
      return;
    }
    case 'webhook.delivery-attempt-started': {
      const { jobId, attemptId, trigger, url, payload, startedAt } = event.data;
      const job = await view.get<Doc<JobDoc>>('jobs', jobId);
      if (job?.currentAttemptId) {
        const previous = await view.get<Doc<AttemptDoc>>('attempts', job.currentAttemptId);
        if (previous && previous.state === 'in_progress') view.put('attempts', previous.attemptId, { ...previous, state: 'interrupted', error: INTERRUPTED_ERROR });
      }
      if (job) view.put('jobs', jobId, { ...job, currentAttemptId: attemptId });
      const number = (delivery?.attemptCount ?? 0) + 1;
      const attempt: AttemptDoc = {
        attemptId,
        deliveryId,
        webhookId,
        projectId,
        jobId,
        trigger,
        number,
        event: event.data.event,
        url,
        payload,
        startedAt,
        state: 'in_progress',
        httpStatus: null,
        durationMs: null,
        responseBody: null,
        responseTruncated: false,
        error: null,
        finishedAt: null,
        seq,
      };
      view.put('attempts', attemptId, { ...attempt });
      if (delivery) {
        view.put('deliveries', deliveryId, {
          ...delivery,
          payload: delivery.payload ?? payload,
          status: 'in_progress',
          attemptCount: number,
          lastAttempt: { attemptId, startedAt, httpStatus: null, error: null },
        });
      }
      return;
    }
    case 'webhook.delivery-attempt-finished': {
      const { jobId, attemptId, ok, status, durationMs, responseBody, responseTruncated, error, finishedAt } = event.data;
      await finishJob(view, jobId);
      const attempt = await view.get<Doc<AttemptDoc>>('attempts', attemptId);
      if (attempt) {
        view.put('attempts', attemptId, { ...attempt, state: ok ? 'succeeded' : 'failed', httpStatus: status, durationMs, responseBody, responseTruncated, error, finishedAt });
      }
      if (delivery) {
        view.put('deliveries', deliveryId, {
          ...delivery,
          status: ok ? 'succeeded' : 'failed',
          lastAttempt: { attemptId, startedAt: attempt?.startedAt ?? delivery.lastAttempt?.startedAt ?? finishedAt, httpStatus: status, error },
        });
      }
      return;
    }
    case 'webhook.delivery-abandoned': {
      const { jobId, reason, detail } = event.data;
      const job = await finishJob(view, jobId);
      if (job?.currentAttemptId) {
        const previous = await view.get<Doc<AttemptDoc>>('attempts', job.currentAttemptId);
        if (previous && previous.state === 'in_progress') view.put('attempts', previous.attemptId, { ...previous, state: 'interrupted', error: INTERRUPTED_ERROR });
      }
      if (delivery) {
        const neverSent = delivery.attemptCount === 0;
        view.put('deliveries', deliveryId, {
          ...delivery,
          status: neverSent ? (reason === 'error' ? 'failed' : 'skipped') : delivery.status === 'in_progress' ? 'failed' : delivery.status,
          abandoned: { reason, detail },
        });
      }
      return;
    }
  }
}

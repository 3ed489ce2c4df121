import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { EventLog, PendingEvent } from '../event-store/event-log.ts';
import { NotLeaderError, StreamNotFoundError, UnavailableError } from '../event-store/errors.ts';
import { ReadModelUnavailableError } from '../read-models/read-model-store.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import { OutboxWorker, type OutboxDefinition, type OutboxObserver, type OutboxWorkerOptions } from '../outbox/outbox-worker.ts';
import type { SecretBox } from '../security/secret-box.ts';
import { deliveryStream } from '../domain/webhook/webhook-events.ts';
import { serializePayload } from '../domain/webhook/webhook-payload.ts';
import type { JobDoc } from '../../projections/webhooks.ts';
import { webhookQueries, WEBHOOK_LISTS, WEBHOOKS_PROJECTION } from '../../projections/webhooks-queries.ts';
import { signatureHeader } from './webhook-signature.ts';
import type { SendResult, WebhookSender } from './webhook-sender.ts';

export { WEBHOOKS_PROJECTION };
export const USER_AGENT = 'annals-webhooks/1';

/** The request headers of a delivery attempt (spec section 6); the delivery history shows them as sent. */
export function deliveryHeaders(attempt: { event: string; deliveryId: string; attemptId: string; test: boolean }, secret: string, body: Uint8Array): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    'X-Service-Event': attempt.event,
    'X-Service-Delivery': attempt.deliveryId,
    'X-Service-Attempt': attempt.attemptId,
    'X-Service-Signature': signatureHeader(secret, body),
    ...(attempt.test ? { 'X-Service-Test': 'true' } : {}),
  };
}

/** How a dispatch job ended: an attempt was made (whatever its result), or nothing was sent, and why. */
export type DispatchOutcome =
  | { kind: 'attempt'; attemptId: string; result: SendResult; finishedAt: string }
  | { kind: 'abandoned'; reason: 'webhook-deleted' | 'webhook-disabled' | 'error'; detail: string };

export interface DispatcherDeps {
  log: EventLog;
  reader: ReadModelReader;
  clock: Clock;
  logger: Logger;
  box: SecretBox;
  sender: WebhookSender;
  /** Deliveries in flight at once, over all webhooks (WEBHOOK_CONCURRENCY). */
  concurrency: number;
  /** Deliveries in flight at once to one webhook (WEBHOOK_CONCURRENCY_PER_WEBHOOK). */
  concurrencyPerWebhook: number;
  /**
   * How often the outbox is looked at besides when woken; default 1 s. Given `commits`, the dispatcher looks at
   * every commit of the webhooks projection that writes jobs (a delivery to make, one done), so this is the
   * fallback: a job whose attempt met an unavailable store.
   */
  pollIntervalMs?: number;
  /** Told how each delivery ended (metrics). */
  observer?: OutboxObserver;
  /** The read models' commits, which wake the dispatcher (OutboxWorkerOptions.commits). */
  commits?: OutboxWorkerOptions['commits'];
}

/** The secret's sealing context: a sealed secret opens only for the webhook it was sealed for. */
export const secretContext = (webhookId: string): string => `webhook:${webhookId}`;

const ACTOR = { type: 'system' as const, id: 'webhook-dispatcher' };

/**
 * The webhook dispatcher: the outbox of dispatch jobs the webhooks projection keeps (projections/webhooks.ts),
 * performed by the generic OutboxWorker with bounded concurrency overall and per webhook.
 *
 * One job, one attempt:
 * 1. the webhook is read (deleted: abandoned; disabled: abandoned for event deliveries, while a redelivery
 *    or a test asked for by hand is still sent);
 * 2. the payload bytes: those of the delivery's first attempt when it has one (from the log, not the read
 *    model, so a restart that finds the read model behind still sends the same bytes), else the spec's
 *    fields with the delivery time as timestamp;
 * 3. webhook.delivery-attempt-started is appended with those bytes, before anything is sent;
 * 4. the POST (signed over the exact bytes) is made; its outcome becomes the job's completion,
 *    webhook.delivery-attempt-finished, appended once ("no stream" on the job's outbox stream).
 * A crash between 3 and 4 leaves the job pending: it is attempted again after a restart (the receiver may
 * get it twice; the history shows the interrupted attempt and the new one). A job whose completion is in
 * the log is never sent again automatically; redelivery is a new job asked for from the admin API.
 */
export function webhookOutbox(deps: DispatcherDeps): OutboxDefinition<JobDoc & Record<string, unknown>, DispatchOutcome> {
  const { log, clock, logger, box, sender } = deps;
  const webhookModel = webhookQueries(deps.reader);

  const fixedPayload = async (job: JobDoc): Promise<string> => {
    try {
      for await (const event of log.readStream(deliveryStream(job.deliveryId))) {
        if (event.type === 'webhook.delivery-attempt-started') return (event.data as { payload: string }).payload;
      }
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
    }
    return serializePayload(job.payloadFields, clock.now());
  };

  return {
    name: 'webhooks',
    ...WEBHOOK_LISTS.jobs,
    idOf: (job) => job.jobId,
    order: [['seq', 'asc']],
    partitioning: {
      field: 'webhookId',
      concurrency: deps.concurrencyPerWebhook,
      pendingKeys: webhookModel.webhooksWithPendingDeliveries,
    },
    retryLater: (error) => error instanceof UnavailableError || error instanceof NotLeaderError || error instanceof ReadModelUnavailableError,
    outcomeLabel: (outcome) => (outcome.kind === 'abandoned' ? 'abandoned' : outcome.result.ok ? 'delivered' : 'failed'),

    async perform(job, signal): Promise<DispatchOutcome> {
      const webhook = await webhookModel.webhook(job.webhookId);
      if (!webhook || webhook.deleted || webhook.sealedSecret === null) {
        return { kind: 'abandoned', reason: 'webhook-deleted', detail: 'not sent: the webhook was deleted before this delivery was attempted' };
      }
      if (job.trigger === 'event' && !webhook.enabled) {
        return { kind: 'abandoned', reason: 'webhook-disabled', detail: 'not sent: the webhook was disabled before this delivery was attempted' };
      }
      let secret: string;
      try {
        secret = box.open(webhook.sealedSecret, secretContext(job.webhookId));
      } catch (error) {
        return { kind: 'abandoned', reason: 'error', detail: `not sent: the signing secret cannot be used: ${(error as Error).message}` };
      }
      const payload = await fixedPayload(job);
      const attemptId = randomUUID();
      const startedAt = clock.now().toISOString();
      await log.append(
        deliveryStream(job.deliveryId),
        [
          {
            type: 'webhook.delivery-attempt-started',
            data: {
              projectId: job.projectId,
              webhookId: job.webhookId,
              deliveryId: job.deliveryId,
              jobId: job.jobId,
              attemptId,
              trigger: job.trigger,
              event: job.event,
              url: webhook.url,
              payload,
              startedAt,
            },
          },
        ],
        'any',
        { actor: ACTOR, correlationId: job.deliveryId },
      );
      const body = Buffer.from(payload, 'utf8');
      const headers = deliveryHeaders({ event: job.event, deliveryId: job.deliveryId, attemptId, test: job.trigger === 'test' }, secret, body);
      const result = await sender.send(webhook.url, body, headers, signal);
      const fields = { webhookId: job.webhookId, deliveryId: job.deliveryId, attemptId, event: job.event, trigger: job.trigger, status: result.status, durationMs: result.durationMs };
      if (result.ok) logger.info(fields, 'webhook delivered');
      else logger.warn({ ...fields, error: result.error }, 'webhook delivery failed');
      return { kind: 'attempt', attemptId, result, finishedAt: clock.now().toISOString() };
    },

    completion(job, result): PendingEvent {
      const ids = { projectId: job.projectId, webhookId: job.webhookId, deliveryId: job.deliveryId, jobId: job.jobId };
      if (!result.ok) {
        return { type: 'webhook.delivery-abandoned', data: { ...ids, reason: 'error', detail: clip(`not sent: ${result.error}`, 2000) } };
      }
      const outcome = result.outcome;
      if (outcome.kind === 'abandoned') return { type: 'webhook.delivery-abandoned', data: { ...ids, reason: outcome.reason, detail: clip(outcome.detail, 2000) } };
      const r = outcome.result;
      return {
        type: 'webhook.delivery-attempt-finished',
        data: {
          ...ids,
          attemptId: outcome.attemptId,
          ok: r.ok,
          status: r.status,
          durationMs: r.durationMs,
          responseBody: r.responseBody,
          responseTruncated: r.responseTruncated,
          error: r.error === null ? null : clip(r.error, 2000),
          finishedAt: outcome.finishedAt,
        },
      };
    },
  };
}

/** Runs the webhook outbox (projector role). */
export class WebhookDispatcher {
  readonly #worker: OutboxWorker<JobDoc & Record<string, unknown>, DispatchOutcome>;

  constructor(private readonly deps: DispatcherDeps) {
    this.#worker = new OutboxWorker(webhookOutbox(deps), {
      log: deps.log,
      reader: deps.reader,
      logger: deps.logger,
      concurrency: deps.concurrency,
      pollIntervalMs: deps.pollIntervalMs ?? 1000,
      ...(deps.observer ? { observer: deps.observer } : {}),
      ...(deps.commits ? { commits: deps.commits } : {}),
    });
  }

  start(): void {
    this.#worker.start();
  }

  /** Stops taking jobs; waits for the requests in flight (at most the timeout) and their outcomes to be recorded. */
  async stop(): Promise<void> {
    await this.#worker.stop();
    this.deps.sender.close();
  }

  /** Looks at the outbox now. */
  poke(): void {
    this.#worker.poke();
  }
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * What the rest of the service may ask of the webhooks read model (./webhooks.ts), typed: no collection names or
 * casts outside the read-model layer. Every read goes through the ReadModelReader it is given, so reads follow
 * the active generation and its cache as any other.
 */
import type { ReadModelReader } from '../src/read-models/read-model-reader.ts';
import type { AttemptDoc, DeliveryDoc, WebhookDoc } from './webhooks.ts';
import type { Doc } from '../src/read-models/read-model-store.ts';


export const WEBHOOKS_PROJECTION = 'webhooks';

/** Listed at most by a project's list of webhooks, and of the attempts read at once. */
const WEBHOOK_LIST_LIMIT = 1000;
const ATTEMPTS_LIMIT = 10_000;

/** The collections paged by keyset (keysetPage in src/application/keyset-page.ts) or worked through by an outbox. */
export const WEBHOOK_LISTS = {
  deliveries: { projection: WEBHOOKS_PROJECTION, collection: 'deliveries' },
  /** The outbox of deliveries to send (src/webhooks/webhook-dispatcher.ts). */
  jobs: { projection: WEBHOOKS_PROJECTION, collection: 'jobs' },
} as const;

export function webhookQueries(reader: ReadModelReader) {
  return {
    /** A webhook by id, deleted or not (the caller checks `deleted`). */
    webhook: (webhookId: string) => reader.get<Doc<WebhookDoc>>(WEBHOOKS_PROJECTION, 'webhooks', webhookId),
    /** The project's webhooks that are not deleted, oldest first. */
    webhooksOfProject: (projectId: string) => reader.find<Doc<WebhookDoc>>(WEBHOOKS_PROJECTION, 'webhooks', { filter: { projectId, deleted: false }, sort: [['seq', 'asc']], limit: WEBHOOK_LIST_LIMIT }),
    countWebhooksOfProject: (projectId: string) => reader.count(WEBHOOKS_PROJECTION, 'webhooks', { projectId, deleted: false }),
    delivery: (deliveryId: string) => reader.get<Doc<DeliveryDoc>>(WEBHOOKS_PROJECTION, 'deliveries', deliveryId),
    /** The attempts of these deliveries, in the order they were made. */
    attemptsOfDeliveries: (deliveryIds: readonly string[]) => reader.find<Doc<AttemptDoc>>(WEBHOOKS_PROJECTION, 'attempts', { filter: { deliveryId: { $in: deliveryIds } }, sort: [['seq', 'asc']], limit: ATTEMPTS_LIMIT }),
    attemptsOfDelivery: (deliveryId: string) => reader.find<Doc<AttemptDoc>>(WEBHOOKS_PROJECTION, 'attempts', { filter: { deliveryId }, sort: [['seq', 'asc']], limit: ATTEMPTS_LIMIT }),
    /** The webhooks with deliveries waiting (the dispatcher's partitions), up to 10,000. */
    async webhooksWithPendingDeliveries(): Promise<string[]> {
      return (await reader.find<{ webhookId: string }>(WEBHOOKS_PROJECTION, 'queues', { filter: { pending: { $gt: 0 } }, limit: 10_000 })).map((queue) => queue.webhookId);
    },
  };
}

export type WebhookQueries = ReturnType<typeof webhookQueries>;

import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { EventLog } from '../event-store/event-log.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import type { ProjectionWatermark } from '../application/projection-watermark.ts';
import { handleCommand } from '../application/command-handler.ts';
import { keysetPage, type Page, type PageRequest } from '../application/keyset-page.ts';
import { actorOf } from '../domain/access/caller.ts';
import type { Principal } from '../domain/principal.ts';
import { requirePlan, type Plan } from '../domain/plans.ts';
import { invalid, notFound } from '../domain/domain-error.ts';
import { validSettings, webhookDecider, type WebhookSettingsInput } from '../domain/webhook/webhook-decider.ts';
import { deliveryStream, webhookStream, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../domain/webhook/webhook-events.ts';
import { testPayloadFields } from '../domain/webhook/webhook-payload.ts';
import type { OutboundPolicy, Resolver } from '../security/ssrf-guard.ts';
import { assertCallableUrl } from '../application/callable-url.ts';
import type { SecretBox } from '../security/secret-box.ts';
import type { AttemptDoc, DeliveryDoc, DeliveryStatus, WebhookDoc } from '../../projections/webhooks.ts';
import { deliveryHeaders, secretContext, WEBHOOKS_PROJECTION } from './webhook-dispatcher.ts';
import { webhookQueries, WEBHOOK_LISTS, type WebhookQueries } from '../../projections/webhooks-queries.ts';
import { generateSigningSecret } from './webhook-signature.ts';
import type { Doc } from '../read-models/read-model-store.ts';

/** Webhooks per project. */
export const MAX_WEBHOOKS_PER_PROJECT = 20;
/** How long a write waits for the webhooks read model to show it (read your writes). */
const READ_YOUR_WRITES_MS = 3000;

export interface WebhookProject {
  projectId: string;
  plan: Plan;
}

export interface WebhookView {
  id: string;
  name: string;
  url: string;
  description: string | null;
  events: WebhookEventType[];
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface AttemptView {
  id: string;
  number: number;
  trigger: AttemptDoc['trigger'];
  /** in_progress, succeeded, failed, or interrupted (the dispatcher stopped before recording the outcome). */
  state: AttemptDoc['state'];
  /** When the attempt started (the request was sent right after). */
  timestamp: string;
  finishedAt: string | null;
  url: string;
  /** The exact body sent. */
  payload: string;
  httpStatus: number | null;
  durationMs: number | null;
  responseBody: string | null;
  responseTruncated: boolean;
  error: string | null;
  /** The request headers the attempt was sent with (its signature made again with the webhook's secret; none when that cannot be opened). */
  headers: Record<string, string>;
}

export interface DeliveryView {
  id: string;
  webhookId: string;
  event: WebhookEventType;
  /** event: caused by a content event; test: Send Test. */
  trigger: DeliveryDoc['trigger'];
  status: DeliveryStatus;
  createdAt: string;
  /** The exact bytes every attempt sends; null until the first attempt fixes them. */
  payload: string | null;
  attemptCount: number;
  /** Why nothing was sent (webhook deleted or disabled first, or an error before sending). */
  notSent: { reason: string; detail: string } | null;
  attempts: AttemptView[];
}


/**
 * Webhooks (spec sections 2 and 6), for the admin API: tenant_admin sessions only (not part of any agent key
 * scope), Standard plan and above. The signing secret is generated here, sealed with the secrets key
 * before it is appended, and returned in the creation response only. The SSRF guard checks the URL's host
 * at creation and at every URL change (and the dispatcher again at every delivery).
 */
export class WebhookService {
  constructor(
    private readonly deps: {
      log: EventLog;
      reader: ReadModelReader;
      watermark: ProjectionWatermark;
      clock: Clock;
      box: SecretBox;
      policy: OutboundPolicy;
      resolve?: Resolver;
    },
  ) {
    this.#webhooks = webhookQueries(deps.reader);
  }

  readonly #webhooks: WebhookQueries;

  async list(project: WebhookProject): Promise<WebhookView[]> {
    this.#gate(project);
    const docs = await this.#webhooks.webhooksOfProject(project.projectId);
    return docs.map(webhookView);
  }

  async get(project: WebhookProject, webhookId: string): Promise<WebhookView> {
    this.#gate(project);
    return webhookView(await this.#webhookOrFail(project, webhookId));
  }

  /** Creates a webhook; the answer is the only place its signing secret is ever shown. */
  async create(principal: Principal, project: WebhookProject, input: WebhookSettingsInput, options: { webhookId?: string } = {}): Promise<WebhookView & { secret: string }> {
    this.#gate(project);
    if (input.name === undefined) throw invalid('name: required');
    if (input.url === undefined) throw invalid('url: required');
    if (input.events === undefined) throw invalid('events: required');
    const settings = validSettings({ name: input.name, url: input.url, description: input.description ?? null, events: input.events });
    const existing = await this.#webhooks.countWebhooksOfProject(project.projectId);
    if (existing >= MAX_WEBHOOKS_PER_PROJECT) {
      throw invalid(`the project already has ${MAX_WEBHOOKS_PER_PROJECT} webhooks, the most allowed`, 'Delete a webhook first.');
    }
    await this.#assertReachable(settings.url);
    const webhookId = options.webhookId ?? randomUUID();
    const secret = generateSigningSecret();
    const sealedSecret = this.deps.box.seal(secret, secretContext(webhookId));
    const result = await handleCommand(
      this.deps.log,
      webhookStream(webhookId),
      webhookDecider,
      { type: 'create_webhook', webhookId, projectId: project.projectId, settings: { ...settings, enabled: input.enabled }, sealedSecret },
      {},
      { actor: actorOf(principal) },
    );
    await this.#settle(result.position);
    const doc = await this.#webhooks.webhook(webhookId);
    if (doc) return { ...webhookView(doc), secret };
    // Not folded within the wait: answer from the decision (the secret is never shown again).
    const now = this.deps.clock.now().toISOString();
    const created = result.state.status === 'active' ? result.state : null;
    if (!created) throw new Error('create_webhook decided no webhook');
    const { name, url, description, events, enabled } = created;
    return { id: webhookId, name, url, description, events, enabled, createdAt: now, updatedAt: now, secret };
  }

  async update(principal: Principal, project: WebhookProject, webhookId: string, input: WebhookSettingsInput): Promise<WebhookView> {
    this.#gate(project);
    const current = await this.#webhookOrFail(project, webhookId);
    if (input.url !== undefined) {
      const next = validSettings({ name: current.name, url: input.url, description: current.description, events: current.events });
      if (next.url !== current.url) await this.#assertReachable(next.url);
    }
    const result = await handleCommand(this.deps.log, webhookStream(webhookId), webhookDecider, { type: 'update_webhook', webhookId, settings: input }, {}, { actor: actorOf(principal) });
    await this.#settle(result.position);
    return webhookView(await this.#webhookOrFail(project, webhookId));
  }

  async delete(principal: Principal, project: WebhookProject, webhookId: string): Promise<void> {
    this.#gate(project);
    await this.#webhookOrFail(project, webhookId);
    const result = await handleCommand(this.deps.log, webhookStream(webhookId), webhookDecider, { type: 'delete_webhook', webhookId }, {}, { actor: actorOf(principal) });
    await this.#settle(result.position);
  }

  /** The webhook's deliveries, newest first, each with every attempt; a page at a time (keyset: see keyset-page.ts). */
  async deliveries(
    project: WebhookProject,
    webhookId: string,
    query: PageRequest & { status?: DeliveryStatus | undefined },
  ): Promise<Page<DeliveryView> & { webhookId: string }> {
    this.#gate(project);
    const webhook = await this.#webhookOrFail(project, webhookId);
    const filter = { webhookId, ...(query.status === undefined ? {} : { status: query.status }) };
    const page = await keysetPage(this.deps.reader, { ...WEBHOOK_LISTS.deliveries, filter, sort: [['seq', 'desc']], identity: ['deliveries', webhookId, query.status ?? null], map: (doc) => doc as Doc<DeliveryDoc> }, query);
    const docs = page.items;
    const attempts = docs.length === 0 ? [] : await this.#webhooks.attemptsOfDeliveries(docs.map((d) => d.deliveryId));
    const secret = this.#secretOf(webhook);
    return { webhookId, items: docs.map((d) => deliveryView(d, attempts.filter((a) => a.deliveryId === d.deliveryId), secret)), nextCursor: page.nextCursor };
  }

  async delivery(project: WebhookProject, webhookId: string, deliveryId: string): Promise<DeliveryView> {
    this.#gate(project);
    const delivery = await this.#deliveryOrFail(project, webhookId, deliveryId);
    const attempts = await this.#webhooks.attemptsOfDelivery(deliveryId);
    return deliveryView(delivery, attempts, this.#secretOf(await this.#webhookOrFail(project, webhookId)));
  }

  /** Sends a recorded delivery again: the same payload bytes, as a new attempt in its history. */
  async redeliver(principal: Principal, project: WebhookProject, webhookId: string, deliveryId: string): Promise<DeliveryView> {
    this.#gate(project);
    await this.#webhookOrFail(project, webhookId);
    await this.#deliveryOrFail(project, webhookId, deliveryId);
    const jobId = randomUUID();
    const result = await this.deps.log.append(
      deliveryStream(deliveryId),
      [{ type: 'webhook.redelivery-requested', data: { projectId: project.projectId, webhookId, deliveryId, jobId } }],
      'any',
      { actor: actorOf(principal), correlationId: deliveryId },
    );
    await this.#settle(result.position);
    return this.delivery(project, webhookId, deliveryId);
  }

  /** Send Test: a new delivery of a dummy payload of the right shape for `event` (default: the first subscribed). */
  async sendTest(principal: Principal, project: WebhookProject, webhookId: string, event?: string): Promise<DeliveryView> {
    this.#gate(project);
    const webhook = await this.#webhookOrFail(project, webhookId);
    const type = (event ?? webhook.events[0]) as WebhookEventType;
    if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(type)) throw invalid(`event: ${JSON.stringify(event)} is not a webhook event; use ${WEBHOOK_EVENT_TYPES.join(', ')}`);
    const deliveryId = randomUUID();
    const result = await this.deps.log.append(
      deliveryStream(deliveryId),
      [
        {
          type: 'webhook.test-requested',
          data: { projectId: project.projectId, webhookId, deliveryId, jobId: randomUUID(), event: type, payloadFields: testPayloadFields(type, project.projectId) },
        },
      ],
      'no_stream',
      { actor: actorOf(principal), correlationId: deliveryId },
    );
    await this.#settle(result.position);
    return this.#deliveryOrPending(project, webhookId, deliveryId, type);
  }

  /** The delivery as the read model shows it, or pending when it has not folded it yet. */
  async #deliveryOrPending(project: WebhookProject, webhookId: string, deliveryId: string, event: WebhookEventType): Promise<DeliveryView> {
    const doc = await this.#webhooks.delivery(deliveryId);
    if (doc) return this.delivery(project, webhookId, deliveryId);
    const now = this.deps.clock.now().toISOString();
    return { id: deliveryId, webhookId, event, trigger: 'test', status: 'pending', createdAt: now, payload: null, attemptCount: 0, notSent: null, attempts: [] };
  }

  /** The plan gate; the permission (webhooks.read or webhooks.manage) is the route's (webhook-routes.ts). */
  #gate(project: WebhookProject): void {
    requirePlan(project.plan, 'standard', 'Webhooks');
  }

  #assertReachable(url: string): Promise<void> {
    return assertCallableUrl('url', url, this.deps, 'Webhooks');
  }

  /**
   * The answer of a create again (a replay of an idempotent create): the webhook with its signing secret, opened
   * from where the dispatcher reads it. NOT_FOUND once the webhook was deleted (its secret is gone with it).
   */
  async createdAgain(project: WebhookProject, webhookId: string): Promise<WebhookView & { secret: string }> {
    this.#gate(project);
    const doc = await this.#webhookOrFail(project, webhookId);
    const secret = this.#secretOf(doc);
    if (secret === null) throw notFound(`Webhook ${webhookId} no longer has a signing secret to show.`);
    return { ...webhookView(doc), secret };
  }

  /** The signing secret, to show the signature each attempt carried; null when it cannot be opened (SECRETS_KEY changed). */
  #secretOf(webhook: WebhookDoc): string | null {
    try {
      return webhook.sealedSecret === null ? null : this.deps.box.open(webhook.sealedSecret, secretContext(webhook.webhookId));
    } catch {
      return null;
    }
  }

  async #webhookOrFail(project: WebhookProject, webhookId: string): Promise<Doc<WebhookDoc>> {
    const doc = await this.#webhooks.webhook(webhookId);
    if (!doc || doc.deleted || doc.projectId !== project.projectId) throw notFound(`No webhook ${webhookId}.`);
    return doc;
  }

  async #deliveryOrFail(project: WebhookProject, webhookId: string, deliveryId: string): Promise<Doc<DeliveryDoc>> {
    await this.#webhookOrFail(project, webhookId);
    const doc = await this.#webhooks.delivery(deliveryId);
    if (!doc || doc.webhookId !== webhookId || doc.projectId !== project.projectId) throw notFound(`No delivery ${deliveryId} of webhook ${webhookId}.`);
    return doc;
  }

  /** Read your writes: waits (bounded) until the webhooks read model has folded `position`. */
  async #settle(position: bigint | null): Promise<void> {
    if (position !== null) await this.deps.watermark.waitFor(position, READ_YOUR_WRITES_MS, [WEBHOOKS_PROJECTION]);
  }
}

function webhookView(doc: WebhookDoc): WebhookView {
  return { id: doc.webhookId, name: doc.name, url: doc.url, description: doc.description, events: doc.events, enabled: doc.enabled, createdAt: doc.createdAt, updatedAt: doc.updatedAt };
}

function deliveryView(doc: DeliveryDoc, attempts: AttemptDoc[], secret: string | null): DeliveryView {
  return {
    id: doc.deliveryId,
    webhookId: doc.webhookId,
    event: doc.event,
    trigger: doc.trigger,
    status: doc.status,
    createdAt: doc.createdAt,
    payload: doc.payload,
    attemptCount: doc.attemptCount,
    notSent: doc.abandoned,
    attempts: attempts.map((a) => ({
      id: a.attemptId,
      number: a.number,
      trigger: a.trigger,
      state: a.state,
      timestamp: a.startedAt,
      finishedAt: a.finishedAt,
      url: a.url,
      payload: a.payload,
      httpStatus: a.httpStatus,
      durationMs: a.durationMs,
      responseBody: a.responseBody,
      responseTruncated: a.responseTruncated,
      error: a.error,
      headers: secret === null ? {} : deliveryHeaders({ event: doc.event, deliveryId: doc.deliveryId, attemptId: a.attemptId, test: doc.trigger === 'test' }, secret, Buffer.from(a.payload, 'utf8')),
    })),
  };
}

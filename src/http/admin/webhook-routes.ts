import type { Router } from '@koa/router';
import { newRouter } from '../router.ts';
import type { Context } from 'koa';
import { z } from 'zod';
import { WEBHOOK_DESCRIPTION_MAX, WEBHOOK_EVENT_TYPES, WEBHOOK_NAME_MAX, WEBHOOK_URL_MAX } from '../../domain/webhook/webhook-events.ts';
import type { WebhookService } from '../../webhooks/webhook-service.ts';
import type { DeliveryStatus } from '../../../projections/webhooks.ts';
import { notFound, unavailable } from '../errors/error-factory.ts';
import type { ApiRegistry } from './api-registry.ts';
import { listQuery, pageSchema } from './list-query.ts';
import { type AdminDeps, idempotencyKeyOf, principalOf, projectOf } from './admin-context.ts';
import { idempotentCreate } from './idempotent-create.ts';
import { isUuid } from './request-body.ts';


// The event names are documented as an enum; the webhook decider names an unknown one in its refusal.
const eventsField = z
  .array(z.string().meta({ enum: [...WEBHOOK_EVENT_TYPES] }), { error: `an array of event names: ${WEBHOOK_EVENT_TYPES.join(', ')}` })
  .min(1, `subscribe to at least one of ${WEBHOOK_EVENT_TYPES.join(', ')}`)
  .max(WEBHOOK_EVENT_TYPES.length, `at most ${WEBHOOK_EVENT_TYPES.length} events`);

const createBody = z.object({
  name: z.string({ error: 'required, a string' }).max(WEBHOOK_NAME_MAX, `at most ${WEBHOOK_NAME_MAX} characters`),
  url: z.string({ error: 'required, an https:// URL' }).max(WEBHOOK_URL_MAX, `at most ${WEBHOOK_URL_MAX} characters`),
  description: z.string().max(WEBHOOK_DESCRIPTION_MAX, `at most ${WEBHOOK_DESCRIPTION_MAX} characters`).nullable().optional(),
  events: eventsField,
  enabled: z.boolean().optional(),
  idempotencyKey: z.string().optional(),
});

const updateBody = z.object({
  name: z.string().max(WEBHOOK_NAME_MAX, `at most ${WEBHOOK_NAME_MAX} characters`).optional(),
  url: z.string().max(WEBHOOK_URL_MAX, `at most ${WEBHOOK_URL_MAX} characters`).optional(),
  description: z.string().max(WEBHOOK_DESCRIPTION_MAX, `at most ${WEBHOOK_DESCRIPTION_MAX} characters`).nullable().optional(),
  events: eventsField.optional(),
  enabled: z.boolean().optional(),
});

const testBody = z.object({
  event: z.enum(WEBHOOK_EVENT_TYPES, { error: `one of ${WEBHOOK_EVENT_TYPES.join(', ')}` }).optional(),
});

const DELIVERY_STATUSES = ['pending', 'in_progress', 'succeeded', 'failed', 'skipped'] as const satisfies readonly DeliveryStatus[];

/** A delivery with every attempt, as the admin API answers it (DeliveryView). */
const deliverySchema = z.object({
  id: z.uuid(),
  webhookId: z.uuid(),
  event: z.enum(WEBHOOK_EVENT_TYPES),
  trigger: z.enum(['event', 'test']),
  status: z.enum(DELIVERY_STATUSES),
  createdAt: z.string(),
  payload: z.string().nullable().describe('The exact bytes every attempt sends; null until the first attempt fixes them.'),
  attemptCount: z.number().int(),
  notSent: z.object({ reason: z.string(), detail: z.string() }).nullable(),
  attempts: z.array(
    z.object({
      id: z.uuid(),
      number: z.number().int(),
      trigger: z.enum(['event', 'redelivery', 'test']),
      state: z.enum(['in_progress', 'succeeded', 'failed', 'interrupted']),
      timestamp: z.string(),
      finishedAt: z.string().nullable(),
      url: z.string(),
      payload: z.string(),
      httpStatus: z.number().int().nullable(),
      durationMs: z.number().nullable(),
      responseBody: z.string().nullable().describe('The first 4 KiB.'),
      responseTruncated: z.boolean(),
      error: z.string().nullable(),
      headers: z.record(z.string(), z.string()).describe('The request headers the attempt was sent with: content type, user agent, event, delivery and attempt ids, the signature (made again with the webhook\'s secret) and X-Service-Test on a test.'),
    }),
  ),
}).meta({ id: 'WebhookDelivery' });

/** A webhook as the admin API answers it (WebhookView): never its secret. */
const webhookSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  url: z.string(),
  description: z.string().nullable(),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
  enabled: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
}).meta({ id: 'Webhook' });
const createdWebhookSchema = webhookSchema.extend({ secret: z.string().describe('The signing secret of X-Service-Signature, shown in this answer only.') }).meta({ id: 'CreatedWebhook' });
const webhookListSchema = z.object({ items: z.array(webhookSchema) });
const deliveryPageSchema = pageSchema(deliverySchema, { webhookId: z.uuid() });

const deliveriesQuery = listQuery({
  status: z.enum(DELIVERY_STATUSES).optional().describe('Only deliveries in this state.'),
});

/**
 * Webhooks (spec sections 2 and 6): CRUD, delivery history, redelivery and Send Test. tenant_admin
 * sessions only (webhooks are not part of any agent key scope), Standard plan and above (403
 * PLAN_REQUIRED below). The signing secret is in the creation response only.
 */
export function webhookRoutes(deps: AdminDeps, api: ApiRegistry, webhooks: WebhookService | undefined): Router {
  const router = newRouter();
  const tag = 'Webhooks';
  const service = (): WebhookService => {
    if (!webhooks) throw unavailable('Webhooks are not configured in this process.');
    return webhooks;
  };
  const id = (ctx: Context, name: 'webhookId' | 'deliveryId'): string => {
    const value = ctx.params[name];
    if (!isUuid(value)) throw notFound(`No ${name === 'webhookId' ? 'webhook' : 'delivery'} ${value}.`);
    return value;
  };

  api.add(router, { method: 'get', path: '/webhooks', operationId: 'listWebhooks', permission: 'webhooks.read', summary: 'List the project\'s webhooks (never their secrets)', tag, responses: { 200: { description: 'The webhooks', schema: webhookListSchema } }, errors: { 403: ['PLAN_REQUIRED'] } }, async (ctx) => {
    ctx.body = { items: await service().list(projectOf(ctx)) };
  });

  api.add(
    router,
    {
      method: 'post',
      path: '/webhooks',
      operationId: 'createWebhook',
      permission: 'webhooks.manage',
      summary: `Create a webhook: name, url (https only; loopback, private and link-local hosts refused), description, events (${WEBHOOK_EVENT_TYPES.join(', ')}), enabled (default true). The answer holds the signing secret, shown this once only`,
      tag,
      body: createBody,
      responses: { 201: { description: 'The webhook, with its signing secret (shown only here)', schema: createdWebhookSchema } },
      errors: { 403: ['PLAN_REQUIRED'] },
    },
    async (ctx, { body }) => {
      const { idempotencyKey: _key, ...input } = body;
      const project = projectOf(ctx);
      // The record keeps the webhook's id; a replay opens its secret again from where deliveries read it.
      let created: Awaited<ReturnType<WebhookService['create']>> | undefined;
      const reference = await idempotentCreate(deps, ctx, { scope: project.projectId, operation: 'create_webhook', key: idempotencyKeyOf(ctx, body), request: input, ids: ['webhookId'] }, async (ids) => {
        created = await service().create(principalOf(ctx), project, input, { webhookId: ids['webhookId']! });
        return { webhookId: created.id };
      });
      ctx.status = 201;
      ctx.body = created ?? (await service().createdAgain(project, reference.webhookId));
    },
  );

  api.add(router, { method: 'get', path: '/webhooks/:webhookId', operationId: 'getWebhook', permission: 'webhooks.read', summary: 'Read a webhook (without its secret)', tag, responses: { 200: { description: 'The webhook', schema: webhookSchema } }, errors: { 403: ['PLAN_REQUIRED'] } }, async (ctx) => {
    ctx.body = await service().get(projectOf(ctx), id(ctx, 'webhookId'));
  });

  api.add(
    router,
    { method: 'patch', path: '/webhooks/:webhookId', operationId: 'updateWebhook', permission: 'webhooks.manage', summary: 'Change a webhook\'s name, url, description, events or enabled flag (fields left out are kept)', tag, body: updateBody, responses: { 200: { description: 'The webhook', schema: webhookSchema } }, errors: { 403: ['PLAN_REQUIRED'] } },
    async (ctx, { body }) => {
      ctx.body = await service().update(principalOf(ctx), projectOf(ctx), id(ctx, 'webhookId'), body);
    },
  );

  api.add(router, { method: 'delete', path: '/webhooks/:webhookId', operationId: 'deleteWebhook', permission: 'webhooks.manage', summary: 'Delete a webhook; deliveries not yet sent are not sent', tag, responses: { 204: { description: 'Deleted', empty: true } }, errors: { 403: ['PLAN_REQUIRED'] } }, async (ctx) => {
    await service().delete(principalOf(ctx), projectOf(ctx), id(ctx, 'webhookId'));
    ctx.status = 204;
  });

  api.add(
    router,
    {
      method: 'get',
      path: '/webhooks/:webhookId/deliveries',
      operationId: 'listWebhookDeliveries',
      permission: 'webhooks.read',
      summary: 'Delivery history, newest first: each delivery with every attempt (timestamp, HTTP status, payload sent, response body truncated to 4 KiB, duration, error)',
      tag,
      query: deliveriesQuery,
      responses: { 200: { description: 'A page of deliveries', schema: deliveryPageSchema } },
      errors: { 403: ['PLAN_REQUIRED'] },
    },
    async (ctx, { query }) => {
      ctx.body = await service().deliveries(projectOf(ctx), id(ctx, 'webhookId'), query);
    },
  );

  api.add(router, { method: 'get', path: '/webhooks/:webhookId/deliveries/:deliveryId', operationId: 'getWebhookDelivery', permission: 'webhooks.read', summary: 'One delivery with every attempt', tag, responses: { 200: { description: 'The delivery', schema: deliverySchema } }, errors: { 403: ['PLAN_REQUIRED'] } }, async (ctx) => {
    ctx.body = await service().delivery(projectOf(ctx), id(ctx, 'webhookId'), id(ctx, 'deliveryId'));
  });

  api.add(
    router,
    {
      method: 'post',
      path: '/webhooks/:webhookId/deliveries/:deliveryId/redeliver',
      operationId: 'redeliverWebhookDelivery',
      permission: 'webhooks.manage',
      summary: 'Send a recorded delivery again, with the same payload bytes, as a new attempt in its history (sent by the dispatcher shortly after)',
      tag,
      responses: { 202: { description: 'The delivery; the new attempt follows in its history', schema: deliverySchema } },
      errors: { 403: ['PLAN_REQUIRED'] },
    },
    async (ctx) => {
      ctx.status = 202;
      ctx.body = await service().redeliver(principalOf(ctx), projectOf(ctx), id(ctx, 'webhookId'), id(ctx, 'deliveryId'));
    },
  );

  api.add(
    router,
    {
      method: 'post',
      path: '/webhooks/:webhookId/test',
      operationId: 'sendWebhookTest',
      permission: 'webhooks.manage',
      summary: 'Send Test: post a dummy payload of the right shape for an event (default: the first subscribed) with header X-Service-Test: true, as a new delivery',
      tag,
      body: testBody,
      responses: { 202: { description: 'The test delivery; its attempt follows in the history', schema: deliverySchema } },
      errors: { 403: ['PLAN_REQUIRED'] },
    },
    async (ctx, { body }) => {
      ctx.status = 202;
      ctx.body = await service().sendTest(principalOf(ctx), projectOf(ctx), id(ctx, 'webhookId'), body.event);
    },
  );

  return router;
}

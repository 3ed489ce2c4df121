import { expect } from 'chai';
import { projectionHarness } from '../support/projection-harness.ts';
import { handleCommand } from '../../src/application/command-handler.ts';
import { formSetDecider } from '../../src/domain/content/form-set/form-set-decider.ts';
import { formSetStreamId } from '../../src/domain/content/form-set/form-set-events.ts';
import { deliveryIdFor } from '../../src/domain/webhook/delivery-id.ts';
import type { PendingEvent } from '../../src/event-store/event-log.ts';
import { webhooks, INTERRUPTED_ERROR } from '../../projections/webhooks.ts';

const id = (n: number): string => `00000000-0000-4000-8000-${n.toString().padStart(12, '0')}`;
const PROJECT = id(900);
const OTHER_PROJECT = id(901);
const BLOG = id(800);
const ENTRY = id(1);
const R1 = id(101);
const R2 = id(102);
const ALL = id(500);
const MASTERS = id(501);
const ELSEWHERE = id(502);
const SEALED = 'v1.0123abcd.AAAAAAAAAAAAAAAA.AAAA.AAAAAAAAAAAAAAAAAAAAAA';
const EVERY = ['entry.published', 'entry.updated', 'entry.deleted', 'master.published'];
const admin = { kind: 'user' as const, userId: 'u', tenantId: 't', role: 'tenant_admin' as const };

/** The webhooks read model, given events: who gets a delivery, with which payload fields, and how attempts and jobs end. */
describe('webhooks projection', () => {
  let h: ReturnType<typeof projectionHarness>;
  afterEach(async () => {
    await h.close();
  });

  const append = async (stream: string, ...events: PendingEvent[]) => {
    h.clock.advance(1000);
    return h.log.append(stream, events, 'any', { actor: { type: 'user', id: 'u' } });
  };
  const hook = (webhookId: string, events: string[], projectId = PROJECT, enabled = true) =>
    append(`webhook-${webhookId}`, { type: 'webhook.created', data: { projectId, webhookId, name: 'Hook', url: 'https://93.184.216.34/h', description: null, events, enabled, sealedSecret: SEALED } });
  const scope = { entryId: ENTRY, projectId: PROJECT, formSetId: BLOG };
  const publishedAt = '2026-11-22T12:00:00.000Z';
  /** The ids of the log events of a type, in order. */
  const eventIds = async (type: string) => {
    const ids: string[] = [];
    for await (const e of h.log.readAll()) if (e.type === type) ids.push(e.id);
    return ids;
  };

  beforeEach(async () => {
    h = projectionHarness(webhooks, { start: '2026-11-22T12:00:00.000Z', batchSize: 3 });
    await handleCommand(
      h.log,
      formSetStreamId(BLOG),
      formSetDecider,
      { type: 'create_form_set', projectId: PROJECT, definition: { id: BLOG, slug: 'blog', name: 'Blog', fields: [{ key: 'title', type: 'text', label: 'Title' }] } },
      { principal: admin },
      { actor: { type: 'user', id: 'u' } },
    );
    await append(`entry-${ENTRY}`, { type: 'entry.created', data: { ...scope, slug: 'hello' } });
  });

  it('gives each enabled, subscribed webhook of the project one delivery per event, with the slugs as they were then', async () => {
    await hook(ALL, EVERY);
    await hook(MASTERS, ['master.published']);
    await hook(ELSEWHERE, EVERY, OTHER_PROJECT);
    await append(`entry-${ENTRY}`, { type: 'entry.slug-changed', data: { ...scope, from: 'hello', to: 'hello-world' } });
    await append(`entry-${ENTRY}`, { type: 'entry.revision-published', data: { ...scope, revisionId: R1, revision: 1, publishedAt, trigger: 'publish' } });
    await append(`entry-${ENTRY}`, { type: 'entry.revision-published', data: { ...scope, revisionId: R2, revision: 2, publishedAt, trigger: 'approve', supersedes: R1 } });
    await append(`entry-${ENTRY}`, { type: 'entry.deleted', data: { ...scope, slug: 'hello-world', previousSlugs: ['hello'] } });
    await h.project();

    const [p1, p2] = await eventIds('entry.revision-published');
    const [deleted] = await eventIds('entry.deleted');
    const deliveries = await h.find('deliveries', { filter: { webhookId: ALL }, sort: [['seq', 'asc']] });
    expect(deliveries.map((d) => d['deliveryId'])).to.deep.equal([deliveryIdFor(ALL, p1!), deliveryIdFor(ALL, p2!), deliveryIdFor(ALL, deleted!)]);
    expect(deliveries.map((d) => d['payloadFields'])).to.deep.equal([
      { event: 'entry.published', project_id: PROJECT, form_set_slug: 'blog', entry_slug: 'hello-world', entry_id: ENTRY, revision_id: R1 },
      { event: 'entry.updated', project_id: PROJECT, form_set_slug: 'blog', entry_slug: 'hello-world', entry_id: ENTRY, revision_id: R2 },
      { event: 'entry.deleted', project_id: PROJECT, form_set_slug: 'blog', entry_slug: 'hello-world', entry_id: ENTRY, revision_id: R2 },
    ]);
    expect(deliveries.every((d) => d['status'] === 'pending' && d['payload'] === null)).to.equal(true);
    expect(await h.find('deliveries', { filter: { webhookId: MASTERS } })).to.deep.equal([]);
    expect(await h.find('deliveries', { filter: { webhookId: ELSEWHERE } })).to.deep.equal([]);
    expect((await h.find('jobs', { filter: { status: 'pending' } })).map((j) => j['jobId'])).to.have.members(deliveries.map((d) => d['deliveryId']));
    expect(await h.doc('queues', ALL)).to.deep.include({ pending: 3 });
  });

  it('follows the subscription at each point of the log: disabled, re-enabled, changed, deleted', async () => {
    await hook(ALL, ['entry.published']);
    const master = (n: number) => append(`master-${id(700)}`, { type: 'master.published', data: { projectId: PROJECT, masterId: id(700), key: 'colours', publishedAt, recordCount: n } });
    await append(`webhook-${ALL}`, { type: 'webhook.disabled', data: { projectId: PROJECT, webhookId: ALL } });
    await append(`entry-${ENTRY}`, { type: 'entry.revision-published', data: { ...scope, revisionId: R1, revision: 1, publishedAt, trigger: 'publish' } });
    await append(`webhook-${ALL}`, { type: 'webhook.enabled', data: { projectId: PROJECT, webhookId: ALL } });
    await master(1);
    await append(`webhook-${ALL}`, { type: 'webhook.updated', data: { projectId: PROJECT, webhookId: ALL, name: 'Hook', url: 'https://93.184.216.34/h', description: null, events: ['master.published'], changed: ['events'] } });
    await master(2);
    await append(`webhook-${ALL}`, { type: 'webhook.deleted', data: { projectId: PROJECT, webhookId: ALL } });
    await master(3);
    await h.project();
    const deliveries = await h.find('deliveries', { filter: { webhookId: ALL } });
    expect(deliveries.map((d) => d['payloadFields'])).to.deep.equal([{ event: 'master.published', project_id: PROJECT, master_entity_id: id(700), master_entity_key: 'colours', record_count: 2 }]);
    expect(await h.doc('webhooks', ALL)).to.deep.include({ deleted: true, enabled: false, sealedSecret: null });
    expect(await h.doc('project_webhooks', PROJECT)).to.deep.include({ webhookIds: [] });
  });

  it('records attempts: the payload fixed by the first, an unfinished one marked interrupted when the job starts again, the job done once finished', async () => {
    await hook(ALL, EVERY);
    await append(`entry-${ENTRY}`, { type: 'entry.revision-published', data: { ...scope, revisionId: R1, revision: 1, publishedAt, trigger: 'publish' } });
    await h.project();
    const [delivery] = await h.find('deliveries');
    const deliveryId = delivery!['deliveryId'] as string;
    const ids = { projectId: PROJECT, webhookId: ALL, deliveryId, jobId: deliveryId };
    const started = (attemptId: string, payload: string) => ({ type: 'webhook.delivery-attempt-started', data: { ...ids, attemptId, trigger: 'event', event: 'entry.published', url: 'https://93.184.216.34/h', payload, startedAt: publishedAt } });
    await append(`webhook-delivery-${deliveryId}`, started(id(1001), '{"first":1}'));
    await h.project();
    expect(await h.doc('deliveries', deliveryId)).to.deep.include({ status: 'in_progress', attemptCount: 1, payload: '{"first":1}' });
    // The process died; after the restart the job is attempted again.
    await append(`webhook-delivery-${deliveryId}`, started(id(1002), '{"first":1}'));
    await append(`outbox-webhooks-${deliveryId}`, {
      type: 'webhook.delivery-attempt-finished',
      data: { ...ids, attemptId: id(1002), ok: true, status: 200, durationMs: 12, responseBody: 'ok', responseTruncated: false, error: null, finishedAt: publishedAt },
    });
    await h.project();
    expect(await h.doc('attempts', id(1001))).to.deep.include({ number: 1, state: 'interrupted', error: INTERRUPTED_ERROR, httpStatus: null });
    expect(await h.doc('attempts', id(1002))).to.deep.include({ number: 2, state: 'succeeded', httpStatus: 200, durationMs: 12, responseBody: 'ok' });
    expect(await h.doc('deliveries', deliveryId)).to.deep.include({ status: 'succeeded', attemptCount: 2, payload: '{"first":1}' });
    expect(await h.doc('jobs', deliveryId)).to.deep.include({ status: 'done' });
    expect(await h.doc('queues', ALL)).to.deep.include({ pending: 0 });

    // A redelivery is a new job on the same delivery; an abandoned job ends without an attempt.
    await append(`webhook-delivery-${deliveryId}`, { type: 'webhook.redelivery-requested', data: { projectId: PROJECT, webhookId: ALL, deliveryId, jobId: id(2001) } });
    await h.project();
    expect(await h.doc('jobs', id(2001))).to.deep.include({ status: 'pending', trigger: 'redelivery', deliveryId });
    await append(`outbox-webhooks-${id(2001)}`, { type: 'webhook.delivery-abandoned', data: { projectId: PROJECT, webhookId: ALL, deliveryId, jobId: id(2001), reason: 'webhook-deleted', detail: 'not sent' } });
    await h.project();
    expect(await h.doc('jobs', id(2001))).to.deep.include({ status: 'done' });
    expect(await h.doc('deliveries', deliveryId)).to.deep.include({ status: 'succeeded', abandoned: { reason: 'webhook-deleted', detail: 'not sent' } });
  });
});

import { encodePosition } from '../src/event-store/position.ts';
import { defineProjection, type ProjectionView } from '../src/projection-engine/projection.ts';
import type { EntryPayloadFields } from '../src/domain/webhook/webhook-payload.ts';
import type { DeliveryEvent, WebhookEvent } from '../src/domain/webhook/webhook-events.ts';
import type { EntryEventOf } from '../src/domain/content/entry/entry-events.ts';
import { ALL, type Doc, type EntrySlugDoc, type WebhookDoc } from './webhooks-documents.ts';
import { applyDeliveryEvent, deliver, fanOut } from './webhooks-outbox.ts';
import { applyWebhookEvent } from './webhooks-settings.ts';

/**
 * Webhooks, their deliveries with every attempt (the delivery history), and the dispatch jobs the
 * webhook dispatcher performs (its outbox, src/webhooks/webhook-dispatcher.ts).
 *
 * Deliveries come from the content events themselves: when entry.revision-published (entry.published
 * without `supersedes`, entry.updated with it), entry.deleted or master.published is folded (and the review
 * additions: entry.revision-submitted, -rejected, -approved as entry.submitted, entry.rejected, entry.scheduled; the
 * audit addition: project.approval-policy-changed as approval-policy.changed), each webhook
 * of the project that is enabled and subscribed to that event at that point of the log gets one delivery,
 * id deliveryIdFor(webhookId, event id), with the payload's fields as they were then, and a pending
 * dispatch job. Nothing is appended to ask for them. A rebuild folds the same events in the same order and
 * arrives at the same ids, and the completions already in the log mark their jobs done: a rebuild sends
 * nothing again. To know slugs at event time this projection keeps its own small copies of form set and
 * entry slugs (it reads no other projection's collections).
 *
 * Collections (times are event times, `seq` the encoded log position of the event that made the document):
 * - `webhooks`, id webhookId: settings, enabled, the sealed signing secret (dropped on deletion; a deleted
 *   webhook keeps its document with `deleted: true` so its history stays filed).
 * - `project_webhooks`, id projectId: the ids of the project's webhooks (not deleted), for fan-out.
 * - `deliveries`, id deliveryId: one per (event, webhook) and per Send Test: its payload fields, the payload
 *   bytes once fixed by the first attempt, status (pending, in_progress, succeeded, failed, skipped) and
 *   a summary of the last attempt.
 * - `attempts`, id attemptId: every attempt: trigger (event, redelivery, test), timestamp, URL, the payload
 *   sent, then HTTP status, duration, truncated response body and error; `interrupted` when the dispatcher
 *   died before recording the outcome (the receiver may have got it; the job is attempted again).
 * - `jobs`, id jobId (the deliveryId for the automatic one): the outbox: status pending until its
 *   completion (attempt finished, or abandoned) is folded.
 * - `queues`, id webhookId: how many jobs of the webhook are pending, so the dispatcher polls only webhooks
 *   with work (per-webhook concurrency).
 * - `form_sets`, id formSetId, and `entries`, id entryId: slugs and the live revision, for payloads.
 */

// The module is in parts: the documents (webhooks-documents.ts), the fold of a webhook's own events
// (webhooks-settings.ts) and the outbox's (webhooks-outbox.ts). What the rest of the code imports from here is
// re-exported.
export type { AttemptDoc, AttemptState, DeliveryDoc, DeliveryStatus, JobDoc, WebhookDoc } from './webhooks-documents.ts';
export { INTERRUPTED_ERROR } from './webhooks-documents.ts';

export const webhooks = defineProjection({
  name: 'webhooks',
  // 2: every webhook listed in all_webhooks; log.checkpoint deliveries from audit.checkpoint-recorded.
  version: 2,
  description: 'Webhooks, their deliveries and attempts (delivery history), and the dispatch outbox.',
  collections: {
    webhooks: { indexes: [{ name: 'by_project_created', fields: [['projectId', 1], ['seq', 1]] }] },
    project_webhooks: {},
    all_webhooks: {},
    deliveries: { indexes: [{ name: 'by_webhook_seq', fields: [['webhookId', 1], ['seq', -1]] }] },
    attempts: { indexes: [{ name: 'by_delivery_seq', fields: [['deliveryId', 1], ['seq', 1]] }] },
    jobs: {
      indexes: [
        { name: 'by_status_seq', fields: [['status', 1], ['seq', 1]] },
        { name: 'by_webhook_status_seq', fields: [['webhookId', 1], ['status', 1], ['seq', 1]] },
      ],
    },
    queues: { indexes: [{ name: 'by_pending', fields: [['pending', 1]] }] },
    form_sets: {},
    entries: {},
  },
  filter: {
    eventTypes: [
      'form-set.created',
      'form-set.updated',
      'form-set.deleted',
      'entry.created',
      'entry.slug-changed',
      'entry.revision-published',
      'entry.revision-submitted',
      'entry.revision-rejected',
      'entry.revision-approved',
      'entry.deleted',
      'master.published',
      'project.approval-policy-changed',
      'audit.checkpoint-recorded',
      'webhook.created',
      'webhook.updated',
      'webhook.enabled',
      'webhook.disabled',
      'webhook.deleted',
      'webhook.redelivery-requested',
      'webhook.test-requested',
      'webhook.delivery-attempt-started',
      'webhook.delivery-attempt-finished',
      'webhook.delivery-abandoned',
    ],
  },
  async apply(event, view) {
    const seq = encodePosition(event.position);
    const at = event.metadata.occurredAt;
    switch (event.type) {
      case 'form-set.created':
      case 'form-set.updated': {
        const { projectId, definition } = event.data as { projectId: string; definition: { id: string; slug: string } };
        view.put('form_sets', definition.id, { formSetId: definition.id, projectId, slug: definition.slug });
        return;
      }
      case 'form-set.deleted':
        view.delete('form_sets', (event.data as { formSetId: string }).formSetId);
        return;
      case 'entry.created': {
        const { entryId, projectId, formSetId, slug } = (event as unknown as EntryEventOf<'entry.created'>).data;
        view.put('entries', entryId, { entryId, projectId, formSetId, slug, liveRevisionId: null } satisfies EntrySlugDoc);
        return;
      }
      case 'entry.slug-changed': {
        const { entryId, to } = (event as unknown as EntryEventOf<'entry.slug-changed'>).data;
        const entry = await view.get<Doc<EntrySlugDoc>>('entries', entryId);
        if (entry) view.put('entries', entryId, { ...entry, slug: to });
        return;
      }
      case 'entry.revision-published': {
        const data = (event as unknown as EntryEventOf<'entry.revision-published'>).data;
        const entry = await view.get<Doc<EntrySlugDoc>>('entries', data.entryId);
        if (entry) view.put('entries', data.entryId, { ...entry, liveRevisionId: data.revisionId });
        const type = data.supersedes === undefined ? 'entry.published' : 'entry.updated';
        await fanOut(view, event, data.projectId, type, await revisionPayload(view, type, data, entry?.slug ?? ''));
        return;
      }
      case 'entry.revision-submitted':
      case 'entry.revision-rejected':
      case 'entry.revision-approved': {
        // The review additions (opt-in): the revision submitted, rejected, or approved for a later publish time.
        const data = (event as unknown as EntryEventOf<'entry.revision-submitted' | 'entry.revision-rejected' | 'entry.revision-approved'>).data;
        const type = event.type === 'entry.revision-submitted' ? 'entry.submitted' : event.type === 'entry.revision-rejected' ? 'entry.rejected' : 'entry.scheduled';
        const entry = await view.get<Doc<EntrySlugDoc>>('entries', data.entryId);
        const fields = await revisionPayload(view, type, data, entry?.slug ?? '');
        await fanOut(view, event, data.projectId, type, 'publishAt' in data ? { ...fields, publish_at: data.publishAt } : fields);
        return;
      }
      case 'entry.deleted': {
        const data = (event as unknown as EntryEventOf<'entry.deleted'>).data;
        const entry = await view.get<Doc<EntrySlugDoc>>('entries', data.entryId);
        const formSet = await view.get<{ slug: string }>('form_sets', data.formSetId);
        view.delete('entries', data.entryId);
        await fanOut(view, event, data.projectId, 'entry.deleted', {
          event: 'entry.deleted',
          project_id: data.projectId,
          form_set_slug: formSet?.slug ?? '',
          entry_slug: data.slug,
          entry_id: data.entryId,
          ...(entry?.liveRevisionId ? { revision_id: entry.liveRevisionId } : {}),
        });
        return;
      }
      case 'audit.checkpoint-recorded': {
        // The whole log's checkpoint: to every webhook subscribed, whatever its project.
        const data = event.data as { size: number; rootHash: string; note: string; signedAt: string };
        const all = await view.get<{ webhookIds: string[] }>('all_webhooks', ALL);
        for (const webhookId of all?.webhookIds ?? []) {
          const webhook = await view.get<Doc<WebhookDoc>>('webhooks', webhookId);
          if (!webhook || webhook.deleted || !webhook.enabled || !webhook.events.includes('log.checkpoint')) continue;
          await deliver(view, event, webhook.projectId, webhookId, 'log.checkpoint', { event: 'log.checkpoint', project_id: webhook.projectId, tree_size: data.size, root_hash: data.rootHash, note: data.note, signed_at: data.signedAt });
        }
        return;
      }
      case 'master.published': {
        const data = event.data as { projectId: string; masterId: string; key: string; recordCount: number };
        await fanOut(view, event, data.projectId, 'master.published', {
          event: 'master.published',
          project_id: data.projectId,
          master_entity_id: data.masterId,
          master_entity_key: data.key,
          record_count: data.recordCount,
        });
        return;
      }
      case 'project.approval-policy-changed': {
        const data = event.data as { projectId: string; humanApproval: boolean; fourEyes: boolean; previous?: { humanApproval: boolean; fourEyes: boolean } };
        await fanOut(view, event, data.projectId, 'approval-policy.changed', {
          event: 'approval-policy.changed',
          project_id: data.projectId,
          human_approval: data.humanApproval,
          four_eyes: data.fourEyes,
          // A change recorded before `previous` was: no webhook could subscribe to this event then.
          previous_human_approval: data.previous?.humanApproval ?? false,
          previous_four_eyes: data.previous?.fourEyes ?? false,
          changed_by_type: event.metadata.actor.type,
          changed_by_id: event.metadata.actor.id,
        });
        return;
      }
    }
    if (event.type.startsWith('webhook.delivery-') || event.type === 'webhook.redelivery-requested' || event.type === 'webhook.test-requested') {
      await applyDeliveryEvent({ type: event.type, data: event.data } as DeliveryEvent, view, seq, at);
    } else if (event.type.startsWith('webhook.')) {
      await applyWebhookEvent({ type: event.type, data: event.data } as WebhookEvent, view, seq, at);
    }
  },
});

/** The payload fields of an event about one revision of an entry: the slugs as they are at this point of the log. */
async function revisionPayload(
  view: ProjectionView,
  type: EntryPayloadFields['event'],
  data: { projectId: string; formSetId: string; entryId: string; revisionId: string },
  entrySlug: string,
): Promise<EntryPayloadFields> {
  const formSet = await view.get<{ slug: string }>('form_sets', data.formSetId);
  return { event: type, project_id: data.projectId, form_set_slug: formSet?.slug ?? '', entry_slug: entrySlug, entry_id: data.entryId, revision_id: data.revisionId };
}

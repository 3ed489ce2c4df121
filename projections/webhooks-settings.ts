import type { ProjectionView } from '../src/projection-engine/projection.ts';
import type { WebhookEvent } from '../src/domain/webhook/webhook-events.ts';
import { ALL, type Doc, type WebhookDoc } from './webhooks-documents.ts';

/**
 * How the webhooks projection (projections/webhooks.ts) folds a webhook's own events: its settings, enabled or
 * not, deleted, and the lists of webhooks (per project and all) that fan-out reads.
 */
export async function applyWebhookEvent(event: WebhookEvent, view: ProjectionView, seq: string, at: string): Promise<void> {
  const { webhookId, projectId } = event.data;
  if (event.type === 'webhook.created') {
    const { name, url, description, events, enabled, sealedSecret } = event.data;
    const doc: WebhookDoc = { webhookId, projectId, name, url, description, events, enabled, deleted: false, sealedSecret, createdAt: at, updatedAt: at, seq };
    view.put('webhooks', webhookId, { ...doc });
    const list = await view.get<{ webhookIds: string[] }>('project_webhooks', projectId);
    const ids = list?.webhookIds ?? [];
    if (!ids.includes(webhookId)) view.put('project_webhooks', projectId, { projectId, webhookIds: [...ids, webhookId] });
    const all = (await view.get<{ webhookIds: string[] }>('all_webhooks', ALL))?.webhookIds ?? [];
    if (!all.includes(webhookId)) view.put('all_webhooks', ALL, { webhookIds: [...all, webhookId] });
    return;
  }
  const current = await view.get<Doc<WebhookDoc>>('webhooks', webhookId);
  if (!current) return;
  switch (event.type) {
    case 'webhook.updated': {
      const { name, url, description, events } = event.data;
      view.put('webhooks', webhookId, { ...current, name, url, description, events, updatedAt: at });
      return;
    }
    case 'webhook.enabled':
    case 'webhook.disabled':
      view.put('webhooks', webhookId, { ...current, enabled: event.type === 'webhook.enabled', updatedAt: at });
      return;
    case 'webhook.deleted': {
      view.put('webhooks', webhookId, { ...current, deleted: true, enabled: false, sealedSecret: null, updatedAt: at });
      const list = await view.get<{ webhookIds: string[] }>('project_webhooks', projectId);
      if (list) view.put('project_webhooks', projectId, { projectId, webhookIds: list.webhookIds.filter((id) => id !== webhookId) });
      const all = await view.get<{ webhookIds: string[] }>('all_webhooks', ALL);
      if (all) view.put('all_webhooks', ALL, { webhookIds: all.webhookIds.filter((id) => id !== webhookId) });
      return;
    }
  }
}

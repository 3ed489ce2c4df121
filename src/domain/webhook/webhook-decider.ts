import type { Decider } from '../decider.ts';
import { invalid, notFound } from '../domain-error.ts';
import {
  WEBHOOK_DESCRIPTION_MAX,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_NAME_MAX,
  type WebhookEvent,
  type WebhookEventType,
  type WebhookSettings,
} from './webhook-events.ts';
import { parseWebhookUrl } from './webhook-url.ts';

export type WebhookState =
  | { status: 'absent' }
  | { status: 'deleted'; projectId: string }
  | ({ status: 'active'; projectId: string; enabled: boolean } & WebhookSettings);

export interface WebhookSettingsInput {
  name?: string | undefined;
  url?: string | undefined;
  description?: string | null | undefined;
  events?: readonly string[] | undefined;
  enabled?: boolean | undefined;
}

/**
 * Commands on one webhook (stream `webhook-${webhookId}`). The signing secret is generated and sealed by
 * the application before create_webhook; the decider only carries the sealed form. Whether the URL's
 * host may be reached (the SSRF guard) needs DNS, so the application checks it too, before deciding.
 */
export type WebhookCommand =
  | { type: 'create_webhook'; webhookId: string; projectId: string; settings: WebhookSettingsInput; sealedSecret: string }
  | { type: 'update_webhook'; webhookId: string; settings: WebhookSettingsInput }
  | { type: 'delete_webhook'; webhookId: string };

export const webhookDecider: Decider<WebhookState, WebhookCommand, WebhookEvent, Record<string, never>> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'webhook.created': {
        const { projectId, name, url, description, events, enabled } = event.data;
        return { status: 'active', projectId, name, url, description, events, enabled };
      }
      case 'webhook.updated': {
        if (state.status !== 'active') return state;
        const { name, url, description, events } = event.data;
        return { ...state, name, url, description, events };
      }
      case 'webhook.enabled':
        return state.status === 'active' ? { ...state, enabled: true } : state;
      case 'webhook.disabled':
        return state.status === 'active' ? { ...state, enabled: false } : state;
      case 'webhook.deleted':
        return state.status === 'active' ? { status: 'deleted', projectId: state.projectId } : state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'create_webhook': {
        if (state.status !== 'absent') throw invalid(`webhook ${command.webhookId} already exists`);
        const { settings } = command;
        const name = required(settings.name, 'name');
        const url = required(settings.url, 'url');
        const events = required(settings.events, 'events');
        const complete = validSettings({ name, url, description: settings.description ?? null, events });
        const ids = { projectId: command.projectId, webhookId: command.webhookId };
        return [{ type: 'webhook.created', data: { ...ids, ...complete, enabled: settings.enabled ?? true, sealedSecret: command.sealedSecret } }];
      }
      case 'update_webhook': {
        if (state.status !== 'active') throw notFound('webhook not found');
        const { settings } = command;
        const next = validSettings({
          name: settings.name ?? state.name,
          url: settings.url ?? state.url,
          description: settings.description === undefined ? state.description : settings.description,
          events: settings.events ?? state.events,
        });
        const changed = (['name', 'url', 'description', 'events'] as const).filter((key) => JSON.stringify(next[key]) !== JSON.stringify(state[key]));
        const ids = { projectId: state.projectId, webhookId: command.webhookId };
        const events: WebhookEvent[] = [];
        if (changed.length > 0) events.push({ type: 'webhook.updated', data: { ...ids, ...next, changed } });
        if (settings.enabled !== undefined && settings.enabled !== state.enabled) {
          events.push({ type: settings.enabled ? 'webhook.enabled' : 'webhook.disabled', data: ids });
        }
        return events;
      }
      case 'delete_webhook': {
        if (state.status !== 'active') throw notFound('webhook not found');
        return [{ type: 'webhook.deleted', data: { projectId: state.projectId, webhookId: command.webhookId } }];
      }
    }
  },
};

/** Validates and normalises complete settings: trimmed name, parsed https URL, known events in spec order. */
export function validSettings(input: { name: string; url: string; description: string | null; events: readonly string[] }): WebhookSettings {
  const name = input.name.trim();
  if (name.length === 0) throw invalid('name: must not be empty');
  if (name.length > WEBHOOK_NAME_MAX) throw invalid(`name: at most ${WEBHOOK_NAME_MAX} characters`);
  if (/[\u0000-\u001f\u007f]/.test(name)) throw invalid('name: must not contain control characters');
  const description = input.description === null ? null : input.description.trim() || null;
  if (description !== null && description.length > WEBHOOK_DESCRIPTION_MAX) throw invalid(`description: at most ${WEBHOOK_DESCRIPTION_MAX} characters`);
  if (input.events.length === 0) throw invalid(`events: subscribe to at least one of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
  for (const event of input.events) {
    if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(event)) {
      throw invalid(`events: ${JSON.stringify(event)} is not a webhook event; use ${WEBHOOK_EVENT_TYPES.join(', ')}`);
    }
  }
  const events = WEBHOOK_EVENT_TYPES.filter((type) => input.events.includes(type)) as WebhookEventType[];
  const url = parseWebhookUrl(input.url).href;
  return { name, url, description, events };
}

function required<T>(value: T | undefined, field: string): T {
  if (value === undefined) throw invalid(`${field}: required`);
  return value;
}

import { expect } from 'chai';
import { fold } from '../../src/domain/decider.ts';
import { DomainError } from '../../src/domain/domain-error.ts';
import { webhookDecider, type WebhookCommand } from '../../src/domain/webhook/webhook-decider.ts';
import type { WebhookEvent } from '../../src/domain/webhook/webhook-events.ts';

const PROJECT = '00000000-0000-4000-8000-000000000900';
const HOOK = '00000000-0000-4000-8000-000000000001';
const SEALED = 'v1.0123abcd.AAAAAAAAAAAAAAAA.AAAA.AAAAAAAAAAAAAAAAAAAAAA';

/** Given these events, when this command, then these events (or this error). */
function decide(given: WebhookEvent[], command: WebhookCommand): WebhookEvent[] {
  return webhookDecider.decide(command, fold(webhookDecider, given), {});
}
function refusal(given: WebhookEvent[], command: WebhookCommand): DomainError {
  try {
    decide(given, command);
  } catch (error) {
    expect(error).to.be.instanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error('expected a refusal');
}

const create: WebhookCommand = {
  type: 'create_webhook',
  webhookId: HOOK,
  projectId: PROJECT,
  settings: { name: '  Site  ', url: 'https://Hooks.Example.com:443/a?b=1', events: ['master.published', 'entry.published', 'entry.published'] },
  sealedSecret: SEALED,
};

describe('webhook decider', () => {
  it('creates with normalised settings (trimmed name, parsed URL, events once each in the spec order), enabled by default', () => {
    expect(decide([], create)).to.deep.equal([
      {
        type: 'webhook.created',
        data: { projectId: PROJECT, webhookId: HOOK, name: 'Site', url: 'https://hooks.example.com/a?b=1', description: null, events: ['entry.published', 'master.published'], enabled: true, sealedSecret: SEALED },
      },
    ]);
  });

  const created = decide([], create);
  const ids = { projectId: PROJECT, webhookId: HOOK };

  it('updates only what changed, and enables or disables with their own events', () => {
    expect(decide(created, { type: 'update_webhook', webhookId: HOOK, settings: { name: 'Site', events: ['master.published', 'entry.published'] } })).to.deep.equal([]);
    expect(decide(created, { type: 'update_webhook', webhookId: HOOK, settings: { description: 'Rebuild', enabled: false } })).to.deep.equal([
      { type: 'webhook.updated', data: { ...ids, name: 'Site', url: 'https://hooks.example.com/a?b=1', description: 'Rebuild', events: ['entry.published', 'master.published'], changed: ['description'] } },
      { type: 'webhook.disabled', data: ids },
    ]);
    const disabled = [...created, { type: 'webhook.disabled' as const, data: ids }];
    expect(decide(disabled, { type: 'update_webhook', webhookId: HOOK, settings: { enabled: true } })).to.deep.equal([{ type: 'webhook.enabled', data: ids }]);
  });

  it('refuses http:// and other bad settings, and anything on a deleted webhook', () => {
    expect(refusal([], { ...create, settings: { ...create.settings, url: 'http://hooks.example.com/' } }).message).to.match(/^url: http:\/\/ URLs are refused/);
    expect(refusal(created, { type: 'update_webhook', webhookId: HOOK, settings: { events: [] } }).message).to.match(/^events: subscribe to at least one/);
    expect(refusal(created, create).code).to.equal('VALIDATION_ERROR');
    const deleted = [...created, ...decide(created, { type: 'delete_webhook', webhookId: HOOK })];
    expect(deleted.at(-1)).to.deep.equal({ type: 'webhook.deleted', data: ids });
    expect(refusal(deleted, { type: 'update_webhook', webhookId: HOOK, settings: { name: 'x' } }).code).to.equal('NOT_FOUND');
    expect(refusal(deleted, { type: 'delete_webhook', webhookId: HOOK }).code).to.equal('NOT_FOUND');
  });
});

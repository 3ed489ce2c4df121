import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { Modal } from '../components/modal.tsx';
import { PlanNotice } from './plan-notice.tsx';
import { ShownOnce } from './copy-button.tsx';
import { planAtLeast, WEBHOOK_EVENTS, type CreatedWebhook, type Webhook, type WebhookEvent } from './shapes.ts';

/** The project's webhooks (Standard plan and above): list, create with the secret shown once, enable/disable. */
export function WebhookList() {
  const { t } = useI18n();
  const { api, projectId, project, path } = useProject();
  const queryClient = useQueryClient();
  const allowed = planAtLeast(project.plan, 'standard');
  const hooks = useQuery({ queryKey: [projectId, 'webhooks'], queryFn: () => api.GET('/webhooks'), enabled: allowed });
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedWebhook | null>(null);
  const toggle = useMutation({
    mutationFn: (hook: Webhook) => api.PATCH('/webhooks/{webhookId}', { params: { path: { webhookId: hook.id } }, body: { enabled: !hook.enabled } }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: [projectId, 'webhooks'] }),
  });
  if (!allowed) {
    return (
      <section>
        <h1>{t('webhooks.title')}</h1>
        <PlanNotice feature={t('webhooks.title')} plan="standard" />
      </section>
    );
  }
  return (
    <section>
      <div className="page-head">
        <h1>{t('webhooks.title')}</h1>
        <button type="button" className="primary" onClick={() => setCreating(true)}>
          {t('webhooks.new')}
        </button>
      </div>
      <ErrorMessage error={hooks.error ?? toggle.error} />
      {hooks.data?.items.length === 0 && <p className="muted">{t('webhooks.none')}</p>}
      {hooks.data && hooks.data.items.length > 0 && (
        <table className="list">
          <thead>
            <tr>
              <th scope="col">{t('webhooks.col.name')}</th>
              <th scope="col">{t('webhooks.col.url')}</th>
              <th scope="col">{t('webhooks.col.events')}</th>
              <th scope="col">{t('webhooks.col.enabled')}</th>
            </tr>
          </thead>
          <tbody>
            {hooks.data.items.map((hook) => (
              <tr key={hook.id}>
                <td>
                  <Link to={path(`webhooks/${hook.id}`)}>{hook.name}</Link>
                </td>
                <td className="small break">{hook.url}</td>
                <td className="small">{hook.events.join(', ')}</td>
                <td>
                  <label className="inline">
                    <input type="checkbox" checked={hook.enabled} disabled={toggle.isPending} onChange={() => toggle.mutate(hook)} />
                    <span className="visually-hidden">{t('webhooks.enabledOf', { name: hook.name })}</span>
                    {hook.enabled ? t('webhooks.on') : t('webhooks.off')}
                  </label>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Modal open={creating} title={t('webhooks.new')} onClose={() => setCreating(false)}>
        {creating && (
          <WebhookForm
            save={(body) => api.POST('/webhooks', { body })}
            onDone={(hook) => {
              setCreating(false);
              setCreated(hook);
            }}
            onCancel={() => setCreating(false)}
          />
        )}
      </Modal>
      <Modal open={created !== null} title={t('webhooks.secretTitle')} onClose={() => setCreated(null)}>
        {created && <ShownOnce warning={t('webhooks.secretWarning')} label={t('webhooks.secret')} value={created.secret} onStored={() => setCreated(null)} />}
      </Modal>
    </section>
  );
}

/** What the form sends: a webhook's settings, as POST /webhooks takes them and PATCH takes them too. */
export type WebhookSettings = Pick<Webhook, 'name' | 'url' | 'description' | 'events' | 'enabled'>;

/**
 * Name, URL, description, events and the enabled flag, sent by `save` (the create, or the update of
 * `hook`); `onDone` gets the answer as the call typed it.
 */
export function WebhookForm<Answer>({ hook, save: send, onDone, onCancel }: { hook?: Webhook; save: (settings: WebhookSettings) => Promise<Answer>; onDone: (result: Answer) => void; onCancel?: () => void }) {
  const { t } = useI18n();
  const { projectId } = useProject();
  const queryClient = useQueryClient();
  const [draft, setDraft] = useState({ name: hook?.name ?? '', url: hook?.url ?? 'https://', description: hook?.description ?? '', events: hook?.events ?? (['entry.published'] as WebhookEvent[]), enabled: hook?.enabled ?? true });
  const save = useMutation({
    mutationFn: () => send({ ...draft, description: draft.description.trim() || null }),
    onSuccess: async (result) => {
      await queryClient.invalidateQueries({ queryKey: [projectId, 'webhooks'] });
      onDone(result);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <form onSubmit={submit} className="admin-form">
      <label>
        {t('webhooks.col.name')}
        <input type="text" required maxLength={100} value={draft.name} onChange={(e) => setDraft({ ...draft, name: e.target.value })} />
      </label>
      <label>
        {t('webhooks.col.url')}
        <input type="url" required value={draft.url} onChange={(e) => setDraft({ ...draft, url: e.target.value })} />
      </label>
      <label>
        {t('webhooks.description')}
        <input type="text" maxLength={500} value={draft.description} onChange={(e) => setDraft({ ...draft, description: e.target.value })} />
      </label>
      <fieldset>
        <legend>{t('webhooks.col.events')}</legend>
        {WEBHOOK_EVENTS.map((event) => (
          <label key={event} className="inline">
            <input
              type="checkbox"
              checked={draft.events.includes(event)}
              onChange={(e) => setDraft({ ...draft, events: e.target.checked ? [...draft.events, event] : draft.events.filter((x) => x !== event) })}
            />
            <code>{event}</code>
          </label>
        ))}
      </fieldset>
      <label className="inline">
        <input type="checkbox" checked={draft.enabled} onChange={(e) => setDraft({ ...draft, enabled: e.target.checked })} />
        {t('webhooks.col.enabled')}
      </label>
      <ErrorMessage error={save.error} />
      <div className="dialog-actions">
        {onCancel && (
          <button type="button" onClick={onCancel}>
            {t('admin.cancel')}
          </button>
        )}
        <button type="submit" className="primary" disabled={save.isPending}>
          {hook ? t('webhooks.save') : t('webhooks.create')}
        </button>
      </div>
    </form>
  );
}

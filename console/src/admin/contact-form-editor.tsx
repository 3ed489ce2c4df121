import { useEffect, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useI18n } from '../i18n/i18n.tsx';
import { planName } from './plan-notice.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { FormDialog } from '../components/form-dialog.tsx';
import { CONTACT_FIELD_TYPES, OPTION_TYPES, planAtLeast, type ContactField, type ContactFieldType, type ContactForm, type ContactFormSettings } from './shapes.ts';
import { ActionsColumnHeader } from '../components/actions-column-header.tsx';

const BLANK: ContactFormSettings = {
  name: '',
  slug: '',
  notification_emails: [],
  reply_to_field: null,
  honeypot_enabled: true,
  honeypot_field: 'website',
  fields: [
    { key: 'name', type: 'text', label: 'Name', required: true },
    { key: 'email', type: 'email', label: 'E-mail', required: true },
    { key: 'message', type: 'textarea', label: 'Message', required: true },
  ],
  autoreply_enabled: false,
  autoreply_to_field: null,
  autoreply_subject: {},
  autoreply_body: {},
  email_signature: null,
  hosted_page_enabled: false,
  chat_webhook_url: null,
};

/** Create or edit a contact form: every setting of the spec's table, checked by the service on save. */
export function ContactFormEditor() {
  const { formId } = useParams();
  const { t } = useI18n();
  const { api, projectId } = useProject();
  const existing = useQuery({
    queryKey: [projectId, 'contact-form', formId],
    queryFn: () => api.GET('/contact-forms/{formId}', { params: { path: { formId: formId! } } }),
    enabled: Boolean(formId),
  });
  if (formId && !existing.data) return existing.error ? <ErrorMessage error={existing.error} /> : <p>{t('app.loading')}</p>;
  return <SettingsForm key={existing.data?.version ?? 0} form={existing.data ?? null} />;
}

/** The options one a line: `value=label`, or the value alone where the label is the same. */
function optionsText(field: ContactField): string {
  return (field.options ?? []).map((o) => (o.label !== o.value ? `${o.value}=${o.label}` : o.value)).join('\n');
}

/** Options as the service answers them: a line without a label is its own label. */
function parseOptions(text: string): ContactField['options'] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [value, ...label] = line.split('=');
      return { value: value!.trim(), label: label.length ? label.join('=').trim() : value!.trim() };
    });
}

function SettingsForm({ form }: { form: ContactForm | null }) {
  const { t } = useI18n();
  const { api, projectId, project, path } = useProject();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [draft, setDraft] = useState<ContactFormSettings>(() => {
    if (!form) return BLANK;
    const { id: _id, version: _v, createdAt: _c, updatedAt: _u, submitPath: _s, hostedPagePath: _h, ...settings } = form;
    return settings;
  });
  const [emails, setEmails] = useState(draft.notification_emails.join('\n'));
  const [chatUrl, setChatUrl] = useState('');
  const [saved, setSaved] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the values are the cue, not inputs: any change clears "saved".
  useEffect(() => setSaved(false), [draft, emails, chatUrl]);
  const set = <K extends keyof ContactFormSettings>(key: K, value: ContactFormSettings[K]) => setDraft((d) => ({ ...d, [key]: value }));
  const setField = (index: number, change: Partial<ContactField>) => set('fields', draft.fields.map((f, i) => (i === index ? { ...f, ...change } : f)));
  const moveField = (index: number, by: number) => {
    const fields = [...draft.fields];
    const [moved] = fields.splice(index, 1);
    fields.splice(index + by, 0, moved!);
    set('fields', fields);
  };
  const locales = project.contentLocales.locales;

  const save = useMutation({
    mutationFn: async () => {
      const { chat_webhook_url: _chat, ...settings } = draft;
      const body = {
        ...settings,
        notification_emails: emails.split(/[\n,]/).map((e) => e.trim()).filter(Boolean),
        email_signature: draft.email_signature?.trim() ? draft.email_signature : null,
        ...(chatUrl.trim() ? { chat_webhook_url: chatUrl.trim() } : {}),
      };
      return form ? api.PATCH('/contact-forms/{formId}', { params: { path: { formId: form.id } }, body: { ...body, expectedVersion: form.version } }) : api.POST('/contact-forms', { body });
    },
    onSuccess: async (result) => {
      await queryClient.invalidateQueries({ queryKey: [projectId, 'contact-forms'] });
      queryClient.setQueryData([projectId, 'contact-form', result.id], result);
      if (!form) navigate(path(`contact-forms/${result.id}`), { replace: true });
      setSaved(true);
    },
  });
  const remove = useMutation({
    mutationFn: () => api.DELETE('/contact-forms/{formId}', { params: { path: { formId: form!.id } } }),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: [projectId, 'contact-forms'] });
      navigate(path('contact-forms'));
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  const hostedUrl = form?.hostedPagePath ? `${location.origin}${form.hostedPagePath}` : null;

  return (
    <>
      <form className="editor admin-form" onSubmit={submit}>
        <div className="page-head">
          <h1>{form ? t('contact.editTitle', { name: form.name }) : t('contact.new')}</h1>
          {form && <Link to={path(`contact-forms/${form.id}/submissions`)}>{t('contact.inbox')}</Link>}
        </div>

        <fieldset>
          <legend>{t('contact.section.basics')}</legend>
          <label>
            {t('contact.name')}
            <input type="text" required value={draft.name} onChange={(e) => set('name', e.target.value)} />
          </label>
          <label>
            {t('contact.slug')}
            <input type="text" required pattern="[a-z0-9][a-z0-9-]*" value={draft.slug} onChange={(e) => set('slug', e.target.value)} aria-describedby="slug-help" />
          </label>
          <p id="slug-help" className="help">
            {t('contact.slugHelp')}
          </p>
        </fieldset>

        <fieldset>
          <legend>{t('contact.section.fields')}</legend>
          <table className="list fields-table">
            <thead>
              <tr>
                <th scope="col">{t('contact.field.key')}</th>
                <th scope="col">{t('contact.field.type')}</th>
                <th scope="col">{t('contact.field.label')}</th>
                <th scope="col">{t('contact.field.required')}</th>
                <th scope="col">{t('contact.field.options')}</th>
                <ActionsColumnHeader label={t('contact.field.actions')} />
              </tr>
            </thead>
            <tbody>
              {draft.fields.map((field, index) => (
                <tr key={index}>
                  <td>
                    <input type="text" aria-label={t('contact.field.keyOf', { n: index + 1 })} required value={field.key} onChange={(e) => setField(index, { key: e.target.value })} />
                  </td>
                  <td>
                    <select aria-label={t('contact.field.typeOf', { n: index + 1 })} value={field.type} onChange={(e) => setField(index, { type: e.target.value as ContactFieldType })}>
                      {CONTACT_FIELD_TYPES.map((type) => (
                        <option key={type} value={type}>
                          {type}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td>
                    <input type="text" aria-label={t('contact.field.labelOf', { n: index + 1 })} required value={field.label} onChange={(e) => setField(index, { label: e.target.value })} />
                  </td>
                  <td>
                    <input type="checkbox" aria-label={t('contact.field.requiredOf', { n: index + 1 })} checked={field.required} onChange={(e) => setField(index, { required: e.target.checked })} />
                  </td>
                  <td>
                    {OPTION_TYPES.includes(field.type) && (
                      <textarea rows={3} aria-label={t('contact.field.optionsOf', { n: index + 1 })} placeholder={t('contact.field.optionsHelp')} defaultValue={optionsText(field)} onChange={(e) => setField(index, { options: parseOptions(e.target.value) })} />
                    )}
                  </td>
                  <td className="nowrap">
                    <button type="button" disabled={index === 0} onClick={() => moveField(index, -1)} aria-label={t('contact.field.up', { n: index + 1 })}>
                      ↑
                    </button>
                    <button type="button" disabled={index === draft.fields.length - 1} onClick={() => moveField(index, 1)} aria-label={t('contact.field.down', { n: index + 1 })}>
                      ↓
                    </button>
                    <button type="button" className="danger" onClick={() => set('fields', draft.fields.filter((_, i) => i !== index))} aria-label={t('contact.field.remove', { n: index + 1 })}>
                      ✕
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <button type="button" onClick={() => set('fields', [...draft.fields, { key: '', type: 'text', label: '', required: false }])}>
            {t('contact.field.add')}
          </button>
        </fieldset>

        <fieldset>
          <legend>{t('contact.section.notices')}</legend>
          <label>
            {t('contact.emails')}
            <textarea rows={3} value={emails} onChange={(e) => setEmails(e.target.value)} aria-describedby="emails-help" />
          </label>
          <p id="emails-help" className="help">
            {t('contact.emailsHelp')}
          </p>
          <label>
            {t('contact.replyTo')}
            <EmailFieldSelect fields={draft.fields} value={draft.reply_to_field} onChange={(value) => set('reply_to_field', value)} />
          </label>
          {planAtLeast(project.plan, 'standard') ? (
            <label>
              {t('contact.chat')}
              <input type="url" value={chatUrl} placeholder={draft.chat_webhook_url ?? 'https://hooks.slack.com/services/…'} onChange={(e) => setChatUrl(e.target.value)} aria-describedby="chat-help" />
            </label>
          ) : null}
          <p id="chat-help" className="help">
            {planAtLeast(project.plan, 'standard') ? t('contact.chatHelp') : t('admin.planNeeded', { feature: t('contact.chat'), plan: planName('standard'), current: planName(project.plan) })}
          </p>
        </fieldset>

        <fieldset>
          <legend>{t('contact.section.spam')}</legend>
          <label className="inline">
            <input type="checkbox" checked={draft.honeypot_enabled} onChange={(e) => set('honeypot_enabled', e.target.checked)} />
            {t('contact.honeypot')}
          </label>
          {draft.honeypot_enabled && (
            <label>
              {t('contact.honeypotField')}
              <input type="text" value={draft.honeypot_field} onChange={(e) => set('honeypot_field', e.target.value)} />
            </label>
          )}
        </fieldset>

        <fieldset>
          <legend>{t('contact.section.autoreply')}</legend>
          <label className="inline">
            <input type="checkbox" checked={draft.autoreply_enabled} onChange={(e) => set('autoreply_enabled', e.target.checked)} />
            {t('contact.autoreply')}
          </label>
          <label>
            {t('contact.autoreplyTo')}
            <EmailFieldSelect fields={draft.fields} value={draft.autoreply_to_field} onChange={(value) => set('autoreply_to_field', value)} />
          </label>
          {locales.map((locale) => (
            <div key={locale} className="locale-block">
              <label>
                {t('contact.autoreplySubject', { locale })}
                <input type="text" value={draft.autoreply_subject[locale] ?? ''} onChange={(e) => set('autoreply_subject', { ...draft.autoreply_subject, [locale]: e.target.value })} />
              </label>
              <label>
                {t('contact.autoreplyBody', { locale })}
                <textarea rows={4} value={draft.autoreply_body[locale] ?? ''} onChange={(e) => set('autoreply_body', { ...draft.autoreply_body, [locale]: e.target.value })} />
              </label>
            </div>
          ))}
          <p className="help">{t('contact.autoreplyHelp')}</p>
          <label>
            {t('contact.signature')}
            <textarea rows={3} value={draft.email_signature ?? ''} onChange={(e) => set('email_signature', e.target.value)} />
          </label>
        </fieldset>

        <fieldset>
          <legend>{t('contact.section.hosted')}</legend>
          <label className="inline">
            <input type="checkbox" checked={draft.hosted_page_enabled} onChange={(e) => set('hosted_page_enabled', e.target.checked)} />
            {t('contact.hosted')}
          </label>
          {hostedUrl && (
            <>
              <p>
                {t('contact.hostedUrl')} <a href={hostedUrl}>{hostedUrl}</a>
              </p>
              <label>
                {t('contact.embed')}
                <textarea readOnly rows={2} value={`<iframe src="${hostedUrl}/embed" title="${draft.name.replace(/"/g, '&quot;')}" width="100%" height="640" loading="lazy"></iframe>`} />
              </label>
            </>
          )}
          {form && <p className="help">{t('contact.submitPath', { path: form.submitPath })}</p>}
        </fieldset>

        <ErrorMessage error={save.error} />
        <div className="sticky-actions row">
          <button type="submit" className="primary" disabled={save.isPending}>
            {t('contact.save')}
          </button>
          {saved && (
            <span role="status" className="muted">
              {t('contact.saved')}
            </span>
          )}
          {form && (
            <button type="button" className="danger" onClick={() => setConfirmDelete(true)}>
              {t('contact.delete')}
            </button>
          )}
        </div>
      </form>
      {/* Outside the settings form: the dialog is a form of its own, and forms do not nest. */}
      {form && (
        <FormDialog open={confirmDelete} title={t('contact.deleteTitle', { name: form.name })} submitLabel={t('contact.delete')} danger mutation={remove} onClose={() => setConfirmDelete(false)} onSubmit={() => remove.mutate()}>
          <p>{t('contact.deleteText')}</p>
        </FormDialog>
      )}
    </>
  );
}

/** One of the form's e-mail fields, or none. */
function EmailFieldSelect({ fields, value, onChange }: { fields: ContactField[]; value: string | null; onChange: (value: string | null) => void }) {
  const { t } = useI18n();
  return (
    <select value={value ?? ''} onChange={(e) => onChange(e.target.value || null)}>
      <option value="">{t('contact.noneChosen')}</option>
      {fields
        .filter((f) => f.type === 'email')
        .map((f) => (
          <option key={f.key} value={f.key}>
            {f.label || f.key}
          </option>
        ))}
    </select>
  );
}

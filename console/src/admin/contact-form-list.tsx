import { Link } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import type { ContactForm } from './shapes.ts';

/** The project's contact forms, each with its unread count and a way into its inbox. */
export function ContactFormList() {
  const { t } = useI18n();
  const { api, projectId, path, can } = useProject();
  const designs = can('contact-forms.manage');
  const forms = useQuery({ queryKey: [projectId, 'contact-forms'], queryFn: () => api.GET('/contact-forms') });
  return (
    <section>
      <div className="page-head">
        <h1>{t('contact.title')}</h1>
        {designs && (
          <Link className="button primary" to={path('contact-forms/new')}>
            {t('contact.new')}
          </Link>
        )}
      </div>
      <ErrorMessage error={forms.error} />
      {forms.data?.items.length === 0 && <p className="muted">{t('contact.none')}</p>}
      {forms.data && forms.data.items.length > 0 && (
        <table className="list">
          <thead>
            <tr>
              <th scope="col">{t('contact.col.name')}</th>
              <th scope="col">{t('contact.col.slug')}</th>
              <th scope="col">{t('contact.col.fields')}</th>
              <th scope="col">{t('contact.col.hosted')}</th>
              <th scope="col">{t('contact.col.inbox')}</th>
            </tr>
          </thead>
          <tbody>
            {forms.data.items.map((form) => (
              <tr key={form.id}>
                <td>{designs ? <Link to={path(`contact-forms/${form.id}`)}>{form.name}</Link> : form.name}</td>
                <td>
                  <code>{form.slug}</code>
                </td>
                <td>{form.fields.length}</td>
                <td>{form.hostedPagePath ? <a href={form.hostedPagePath}>{t('contact.hostedOn')}</a> : t('contact.hostedOff')}</td>
                <td>
                  <UnreadLink form={form} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function UnreadLink({ form }: { form: ContactForm }) {
  const { t } = useI18n();
  const { api, projectId, path, can } = useProject();
  // The inbox is for those who handle submissions (submissions.handle); a designer of forms alone sees none.
  const handles = can('submissions.handle');
  const unread = useQuery({
    queryKey: [projectId, 'submissions', form.id, 'count'],
    queryFn: () => api.GET('/contact-forms/{formId}/submissions', { params: { path: { formId: form.id }, query: { read: 'false', limit: 1 } } }),
    enabled: handles,
  });
  if (!handles) return null;
  return <Link to={path(`contact-forms/${form.id}/submissions`)}>{unread.data ? t('contact.inboxUnread', { count: unread.data.unread }) : t('contact.inbox')}</Link>;
}

import { useEffect, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { FormDialog } from '../components/form-dialog.tsx';
import { useActorName } from '../components/user-names.ts';
import type { ContactForm, Submission } from './shapes.ts';
import type { MessageKey } from '../i18n/en.ts';

/**
 * A contact form's submissions: the unread ones first, then those read, each list paged by the server.
 * Opening one marks it read; /contact-forms/{formId}/submissions/{submissionId} (the link in the
 * notification e-mail) opens it directly.
 */
export function SubmissionInbox() {
  const { formId = '', submissionId } = useParams();
  const { t } = useI18n();
  const { api, projectId, path, can } = useProject();
  const form = useQuery({ queryKey: [projectId, 'contact-form', formId], queryFn: () => api.GET('/contact-forms/{formId}', { params: { path: { formId } } }) });
  return (
    <section>
      <div className="page-head">
        <h1>{t('inbox.title', { name: form.data?.name ?? '' })}</h1>
        <div className="row">
          <Link to={path('contact-forms')}>{t('contact.title')}</Link>
          {can('contact-forms.manage') && <Link to={path(`contact-forms/${formId}`)}>{t('inbox.settings')}</Link>}
        </div>
      </div>
      <ErrorMessage error={form.error} />
      <div className="inbox">
        <div className="inbox-lists">
          <SubmissionList formId={formId} read={false} heading={t('inbox.unread')} form={form.data} selected={submissionId} />
          <SubmissionList formId={formId} read={true} heading={t('inbox.read')} form={form.data} selected={submissionId} />
        </div>
        {submissionId ? <SubmissionDetail key={submissionId} formId={formId} submissionId={submissionId} form={form.data} /> : <p className="muted inbox-detail">{t('inbox.pick')}</p>}
      </div>
    </section>
  );
}

/**
 * A submitted value as the visitor chose it: a choice field's option by its label (its stored value when the
 * form no longer offers it), several joined with commas; anything else as sent.
 */
export function shownValue(field: ContactForm['fields'][number] | undefined, value: unknown): string {
  const labelOf = (v: unknown) => field?.options?.find((o) => o.value === v)?.label ?? String(v);
  return Array.isArray(value) ? value.map(labelOf).join(', ') : labelOf(value);
}

/** The first values of a submission, for its line in a list. */
function summary(submission: Submission, form: ContactForm | undefined): string {
  if (submission.erased || !submission.values) return '';
  const keys = form?.fields.map((f) => f.key) ?? Object.keys(submission.values);
  return keys
    .filter((k) => submission.values![k] !== undefined && submission.values![k] !== null && submission.values![k] !== '')
    .slice(0, 2)
    .map((k) => shownValue(form?.fields.find((f) => f.key === k), submission.values![k]).slice(0, 60))
    .join(' · ');
}

function SubmissionList({ formId, read, heading, form, selected }: { formId: string; read: boolean; heading: string; form: ContactForm | undefined; selected: string | undefined }) {
  const { t, formatTime } = useI18n();
  const { api, projectId, path } = useProject();
  const list = useInfiniteQuery({
    queryKey: [projectId, 'submissions', formId, read],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => api.GET('/contact-forms/{formId}/submissions', { params: { path: { formId }, query: { read: read ? 'true' : 'false', limit: 20, cursor: pageParam } } }),
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const items = list.data?.pages.flatMap((p) => p.items) ?? [];
  const id = `submissions-${read ? 'read' : 'unread'}`;
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>
        {heading} {!read && list.data ? <span className="badge">{list.data.pages[0]!.unread}</span> : null}
      </h2>
      <ErrorMessage error={list.error} />
      {list.data && items.length === 0 && <p className="muted">{t('inbox.empty')}</p>}
      <ul className="submission-list">
        {items.map((s) => (
          <li key={s.id} className={s.id === selected ? 'selected' : undefined}>
            <Link to={path(`contact-forms/${formId}/submissions/${s.id}`)} aria-current={s.id === selected ? 'page' : undefined}>
              <span className={read ? '' : 'unread-dot'}>{formatTime(s.receivedAt)}</span>
              <span className="muted small">{s.erased ? t('inbox.erased') : summary(s, form)}</span>
            </Link>
          </li>
        ))}
      </ul>
      {list.hasNextPage && (
        <button type="button" onClick={() => void list.fetchNextPage()}>
          {t('admin.more')}
        </button>
      )}
    </section>
  );
}

function SubmissionDetail({ formId, submissionId, form }: { formId: string; submissionId: string; form: ContactForm | undefined }) {
  const { t, formatTime } = useI18n();
  const { api, projectId, path, can } = useProject();
  const actorName = useActorName();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const key = [projectId, 'submission', submissionId];
  const submission = useQuery({ queryKey: key, queryFn: () => api.GET('/contact-forms/{formId}/submissions/{submissionId}', { params: { path: { formId, submissionId } } }) });
  const [note, setNote] = useState('');
  const [confirmErase, setConfirmErase] = useState(false);
  const refreshLists = () => queryClient.invalidateQueries({ queryKey: [projectId, 'submissions', formId] });
  const mark = useMutation({
    mutationFn: (read: boolean) => api.PATCH('/contact-forms/{formId}/submissions/{submissionId}', { params: { path: { formId, submissionId } }, body: { read } }),
    onSuccess: async (updated) => {
      queryClient.setQueryData(key, updated);
      await refreshLists();
    },
  });
  const addNote = useMutation({
    mutationFn: (text: string) => api.POST('/contact-forms/{formId}/submissions/{submissionId}/notes', { params: { path: { formId, submissionId } }, body: { text } }),
    onSuccess: (updated) => {
      queryClient.setQueryData(key, updated);
      setNote('');
    },
  });
  const erase = useMutation({
    mutationFn: () => api.DELETE('/contact-forms/{formId}/submissions/{submissionId}', { params: { path: { formId, submissionId } } }),
    onSuccess: async () => {
      setConfirmErase(false);
      await queryClient.invalidateQueries({ queryKey: key });
      await refreshLists();
    },
  });
  // Opening an unread submission marks it read (once; "Mark unread" puts it back).
  const [autoMarked, setAutoMarked] = useState(false);
  useEffect(() => {
    if (submission.data && !submission.data.read && !autoMarked) {
      setAutoMarked(true);
      mark.mutate(true);
    }
  }, [submission.data, autoMarked, mark]);

  const s = submission.data;
  if (!s) return <div className="inbox-detail">{submission.error ? <ErrorMessage error={submission.error} /> : <p>{t('app.loading')}</p>}</div>;
  const labels = new Map(form?.fields.map((f) => [f.key, f.label]) ?? []);
  const submitNote = (event: FormEvent) => {
    event.preventDefault();
    if (note.trim()) addNote.mutate(note.trim());
  };
  return (
    <article className="inbox-detail" aria-labelledby="submission-title">
      <h2 id="submission-title">{t('inbox.submissionOf', { time: formatTime(s.receivedAt) })}</h2>
      <p className="muted small">
        {t('inbox.meta', { id: s.id, locale: s.locale })} · {s.read ? t('inbox.isRead') : t('inbox.isUnread')}
      </p>
      {s.erased ? (
        <p className="notice">{t('inbox.erasedAt', { time: formatTime(s.erasedAt) })}</p>
      ) : (
        <dl className="values">
          {Object.entries(s.values ?? {}).map(([field, value]) => (
            <div key={field}>
              <dt>{labels.get(field) ?? field}</dt>
              <dd className="value">{shownValue(form?.fields.find((f) => f.key === field), value)}</dd>
            </div>
          ))}
        </dl>
      )}
      <div className="row">
        {!s.erased && (
          <button type="button" onClick={() => mark.mutate(!s.read)} disabled={mark.isPending}>
            {s.read ? t('inbox.markUnread') : t('inbox.markRead')}
          </button>
        )}
        {can('contact-forms.manage') && !s.erased && (
          <button type="button" className="danger" onClick={() => setConfirmErase(true)}>
            {t('inbox.erase')}
          </button>
        )}
      </div>

      <h3>{t('inbox.deliveries')}</h3>
      <table className="list">
        <thead>
          <tr>
            <th scope="col">{t('inbox.notice')}</th>
            <th scope="col">{t('inbox.status')}</th>
            <th scope="col">{t('inbox.attempts')}</th>
            <th scope="col">{t('inbox.detail')}</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(s.deliveries).map(([kind, d]) => (
            <tr key={kind}>
              <td>{t(`inbox.kind.${kind}` as MessageKey)}</td>
              <td>
                <span className={`badge delivery-${d.status}`}>{t(`inbox.delivery.${d.status}`)}</span>
                {d.completedAt && <span className="muted small"> {formatTime(d.completedAt)}</span>}
              </td>
              <td>{d.attempts}</td>
              <td className="small">{d.detail ?? d.messageId ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>

      <h3>{t('inbox.notes')}</h3>
      <ul className="notes">
        {s.notes.map((n) => (
          <li key={n.id}>
            <p className="value">{n.text ?? t('inbox.noteErased')}</p>
            <p className="muted small">{t('inbox.noteBy', { who: actorName(n.author), time: formatTime(n.addedAt) })}</p>
          </li>
        ))}
      </ul>
      {!s.erased && (
        <form onSubmit={submitNote}>
          <label>
            {t('inbox.addNote')}
            <textarea rows={3} value={note} onChange={(e) => setNote(e.target.value)} maxLength={5000} />
          </label>
          <button type="submit" disabled={addNote.isPending || !note.trim()}>
            {t('inbox.saveNote')}
          </button>
        </form>
      )}
      <ErrorMessage error={mark.error ?? addNote.error} />
      <FormDialog open={confirmErase} title={t('inbox.eraseTitle')} submitLabel={t('inbox.eraseConfirm')} danger mutation={erase} onClose={() => setConfirmErase(false)} onSubmit={() => erase.mutate()}>
        <p>{t('inbox.eraseText', { fields: Object.keys(s.values ?? {}).length, notes: s.notes.length })}</p>
        <p>{t('inbox.eraseKept', { time: formatTime(s.receivedAt) })}</p>
        <p>
          <strong>{t('inbox.eraseFinal')}</strong>
        </p>
      </FormDialog>
      {s.erased && <button type="button" onClick={() => navigate(path(`contact-forms/${formId}/submissions`))}>{t('inbox.close')}</button>}
    </article>
  );
}

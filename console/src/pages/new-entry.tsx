import { useMemo, useState, type FormEvent } from 'react';
import { useNavigate, useParams } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { ApiError } from '../api/admin-client.ts';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { EntryForm, type EntryValues } from '../fields/entry-form.tsx';
import { fieldErrorsOf, type FieldErrors } from '../fields/field-errors.ts';
import { useKeptInput } from '../fields/kept-input.ts';
import { KeptInputNotice } from '../components/kept-input-notice.tsx';
import { useSession } from '../session/session.tsx';
import { proposedSlug } from '../fields/proposed-slug.ts';

/** A new entry: its slug and first values, created as a draft; then the editor. */
export function NewEntry() {
  const { formSetId = '' } = useParams();
  const { t, formatTime } = useI18n();
  const { api, projectId, project, path } = useProject();
  const navigate = useNavigate();
  const formSet = useQuery({ queryKey: [projectId, 'form-set', formSetId], queryFn: () => api.GET('/form-sets/{formSetId}', { params: { path: { formSetId } } }) });
  const [typedSlug, setTypedSlug] = useState('');
  // Until the user edits the slug, it follows the title.
  const [slugEdited, setSlugEdited] = useState(false);
  const [values, setValues] = useState<EntryValues>({});
  const slug = slugEdited || !formSet.data ? typedSlug : proposedSlug(formSet.data, values, project.contentLocales.defaultLocale);
  const setSlug = (next: string) => {
    setTypedSlug(next);
    setSlugEdited(true);
  };
  const [errors, setErrors] = useState<FieldErrors>(new Map());
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const { session } = useSession();
  // What is typed is kept in the tab until the entry is created, and offered back when the page opens again.
  const typed = useMemo(() => ({ slug, values }), [slug, values]);
  const { kept, settle } = useKeptInput(session?.user.id ?? '', `${projectId}.new.${formSetId}`, typed, slug !== '' || Object.keys(values).length > 0);
  const create = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const created = (await api.POST('/form-sets/{formSetId}/entries', { params: { path: { formSetId } }, body: { slug, fields: values } })) as { entry: { id: string } };
      settle();
      navigate(path(`entries/${created.entry.id}`));
    } catch (e) {
      setError(e);
      if (e instanceof ApiError && e.code === 'VALIDATION_ERROR') setErrors(fieldErrorsOf(e.message, project.contentLocales.locales));
    } finally {
      setBusy(false);
    }
  };
  if (!formSet.data) return <ErrorMessage error={formSet.error} />;
  return (
    <form className="editor" onSubmit={create}>
      <h1>{t('new.title', { formSet: formSet.data.name })}</h1>
      {kept && (
        <KeptInputNotice
          message={t('kept.bodyNew', { time: formatTime(new Date(kept.at).toISOString()) })}
          onRestore={() => {
            setSlug(kept.values.slug);
            setValues(kept.values.values);
            settle();
          }}
          onDiscard={settle}
        />
      )}
      <div className="field">
        <label htmlFor="entry-slug" className="label">
          {t('new.slug')} <span className="required">({t('editor.required')})</span>
        </label>
        <p id="entry-slug-help" className="help">
          {t('new.slugHelp')} {!slugEdited && t('new.slugFromTitle')}
        </p>
        <input id="entry-slug" type="text" required value={slug} onChange={(e) => setSlug(e.target.value)} aria-describedby="entry-slug-help" />
      </div>
      <ErrorMessage error={error} />
      <EntryForm formSet={formSet.data} locales={project.contentLocales} values={values} onChange={setValues} errors={errors} />
      <div className="row sticky-actions">
        <button type="submit" className="primary" disabled={busy}>
          {t('new.create')}
        </button>
      </div>
    </form>
  );
}

import { useState, type FormEvent } from 'react';
import { useNavigate, useParams } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { ApiError } from '../api/admin-client.ts';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { EntryForm, type EntryValues } from '../fields/entry-form.tsx';
import { fieldErrorsOf, type FieldErrors } from '../fields/field-errors.ts';

/** A new entry: its slug and first values, created as a draft; then the editor. */
export function NewEntry() {
  const { formSetId = '' } = useParams();
  const { t } = useI18n();
  const { api, projectId, project, path } = useProject();
  const navigate = useNavigate();
  const formSet = useQuery({ queryKey: [projectId, 'form-set', formSetId], queryFn: () => api.GET('/form-sets/{formSetId}', { params: { path: { formSetId } } }) });
  const [slug, setSlug] = useState('');
  const [values, setValues] = useState<EntryValues>({});
  const [errors, setErrors] = useState<FieldErrors>(new Map());
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const create = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const created = (await api.POST('/form-sets/{formSetId}/entries', { params: { path: { formSetId } }, body: { slug, fields: values } })) as { entry: { id: string } };
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
      <div className="field">
        <label htmlFor="entry-slug" className="label">
          {t('new.slug')} <span className="required">({t('editor.required')})</span>
        </label>
        <p id="entry-slug-help" className="help">
          {t('new.slugHelp')}
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

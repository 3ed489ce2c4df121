import { useCallback, useEffect, useRef, useState } from 'react';
import { Link, useBlocker, useParams } from 'react-router';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError } from '../api/admin-client.ts';
import { useI18n } from '../i18n/i18n.tsx';
import { useSession } from '../session/session.tsx';
import { useProject } from '../shell/project-context.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { EntryForm, type EntryValues } from '../fields/entry-form.tsx';
import type { TranslationOutcome } from '../fields/locale-fill.tsx';
import { fieldErrorsOf, type FieldErrors } from '../fields/field-errors.ts';
import { fieldClashes, mergeFieldValues } from '../fields/merge.ts';
import { ConflictPanel } from './conflict-panel.tsx';
import { WorkflowBar } from './workflow-bar.tsx';
import { AssigneeSelect } from '../components/assignee-select.tsx';
import { useKeptInput } from '../fields/kept-input.ts';
import { KeptInputNotice } from '../components/kept-input-notice.tsx';
import type { EntrySummary, FormSet, Revision } from '../api/shapes.ts';

/** How long typing must pause before a draft is saved: one revision per pause, not per keystroke. */
export const AUTOSAVE_DELAY_MS = 1500;

export function EntryEditorPage() {
  const { entryId = '' } = useParams();
  const { api, projectId } = useProject();
  const entry = useQuery({ queryKey: [projectId, 'entry', entryId], queryFn: () => api.GET('/entries/{entryId}', { params: { path: { entryId } } }) });
  const formSetId = entry.data?.formSetId;
  const formSet = useQuery({ queryKey: [projectId, 'form-set', formSetId], queryFn: () => api.GET('/form-sets/{formSetId}', { params: { path: { formSetId: formSetId! } } }), enabled: Boolean(formSetId) });
  const revisionId = entry.data?.latestRevision?.revisionId;
  // The editor stays mounted (and keeps what is typed) while a newer latest revision of the same entry loads.
  const revision = useQuery({
    queryKey: [projectId, 'revision', revisionId],
    queryFn: () => api.GET('/revisions/{revisionId}', { params: { path: { revisionId: revisionId! } } }),
    enabled: Boolean(revisionId),
    placeholderData: keepPreviousData,
  });
  // The editor starts from the entry as it is now (not a cached answer, nor another entry's revision), and then
  // stays mounted: a later failed read is shown above it, never in its place.
  const started = useRef<string | null>(null);
  if (entry.isFetchedAfterMount && revision.data && revision.data.revisionId === revisionId && revision.data.entryId === entryId && formSet.data) started.current = entryId;
  const error = entry.error ?? formSet.error ?? revision.error;
  if (started.current !== entryId || !entry.data || !formSet.data || !revision.data) return error ? <ErrorMessage error={error} /> : <LoadingLine />;
  return (
    <>
      <ErrorMessage error={error} />
      <EntryEditor key={entryId} entry={entry.data} formSet={formSet.data} revision={revision.data} />
    </>
  );
}

function LoadingLine() {
  const { t } = useI18n();
  return <p>{t('app.loading')}</p>;
}

type SaveState = { kind: 'idle' } | { kind: 'saving' } | { kind: 'saved'; revision: number } | { kind: 'error'; error: unknown };

function EntryEditor({ entry, formSet, revision }: { entry: EntrySummary; formSet: FormSet; revision: Revision }) {
  const { t, formatTime } = useI18n();
  const { api, projectId, project, path } = useProject();
  const { session } = useSession();
  const userId = session?.user.id ?? '';
  const queryClient = useQueryClient();
  // What the editor started from (the latest revision when loaded or last saved) and what is typed now.
  const [base, setBase] = useState({ revision: revision.revision, values: (revision.snapshot ?? {}) as EntryValues });
  const [values, setValues] = useState<EntryValues>(base.values);
  const [dirty, setDirty] = useState(false);
  const [save, setSave] = useState<SaveState>({ kind: 'idle' });
  const [errors, setErrors] = useState<FieldErrors>(new Map());
  const [conflict, setConflict] = useState<{ theirs: Revision } | null>(null);
  const valuesRef = useRef(values);
  valuesRef.current = values;
  // Unsaved typing is kept in the tab at every change, and offered back when the editor opens again.
  const { kept, settle } = useKeptInput(userId, `${projectId}.entry.${entry.id}`, values, dirty, base.revision);
  const keptDiffers = kept !== null && JSON.stringify(kept.values) !== JSON.stringify(values);
  const saving = useRef(false);
  const locales = project.contentLocales;

  const refresh = useCallback(async () => {
    await queryClient.invalidateQueries({ queryKey: [projectId, 'entry', entry.id] });
    await queryClient.invalidateQueries({ queryKey: [projectId, 'entries'] });
    // A workflow step changes the status of the same revision id.
    await queryClient.invalidateQueries({ queryKey: [projectId, 'revision'] });
  }, [queryClient, projectId, entry.id]);

  /** Saves what is typed as a new revision based on the one the editor started from. */
  const saveNow = useCallback(async (): Promise<boolean> => {
    if (saving.current) return false;
    saving.current = true;
    const sent = valuesRef.current;
    setSave({ kind: 'saving' });
    try {
      const saved = await api.POST('/entries/{entryId}/revisions', { params: { path: { entryId: entry.id } }, body: { fields: sent, expectedRevision: base.revision } });
      setBase({ revision: saved.revision, values: sent });
      setErrors(new Map());
      setSave({ kind: 'saved', revision: saved.revision });
      // Typing during the save leaves the editor dirty: the next pause saves again.
      setDirty(valuesRef.current !== sent);
      queryClient.setQueryData([projectId, 'revision', saved.revisionId], { ...saved, snapshot: sent });
      await refresh();
      return true;
    } catch (e) {
      if (e instanceof ApiError && e.code === 'REVISION_CONFLICT') {
        const latest = await api.GET('/entries/{entryId}', { params: { path: { entryId: entry.id } } });
        const theirs = await api.GET('/revisions/{revisionId}', { params: { path: { revisionId: latest.latestRevision!.revisionId } } });
        setConflict({ theirs });
        setSave({ kind: 'idle' });
      } else {
        if (e instanceof ApiError && e.code === 'VALIDATION_ERROR') setErrors(fieldErrorsOf(e.message, locales.locales));
        setSave({ kind: 'error', error: e });
      }
      return false;
    } finally {
      saving.current = false;
    }
  }, [api, entry.id, base.revision, refresh, queryClient, projectId, locales.locales]);

  // Autosave: a draft is saved once typing pauses. A save made as the session ran out waits for the sign-in
  // again (api/admin-client.ts) and then completes with the new session.
  useEffect(() => {
    if (!dirty || conflict || save.kind === 'saving') return;
    const timer = setTimeout(() => void saveNow(), AUTOSAVE_DELAY_MS);
    return () => clearTimeout(timer);
  }, [values, dirty, conflict, saveNow, save.kind]);

  // Unsaved-change guard: in-app navigation asks; leaving the page makes the browser ask.
  const blocker = useBlocker(({ currentLocation, nextLocation }) => dirty && currentLocation.pathname !== nextLocation.pathname);
  useEffect(() => {
    if (blocker.state !== 'blocked') return;
    if (window.confirm(t('editor.leave'))) blocker.proceed();
    else blocker.reset();
  }, [blocker, t]);
  useEffect(() => {
    if (!dirty) return;
    const warn = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, [dirty]);

  const change = (next: EntryValues) => {
    setValues(next);
    setDirty(true);
  };
  const restoreKept = () => {
    if (!kept) return;
    settle();
    change(kept.values);
  };

  /**
   * Machine translation into a locale's empty fields: what is typed is saved first, then the service translates
   * the latest revision and saves a new draft, which the editor then starts from.
   */
  const translate = async (source: string, target: string): Promise<TranslationOutcome | null> => {
    if (dirty && !(await saveNow())) return null;
    const answer = await api.POST('/entries/{entryId}/translate', { params: { path: { entryId: entry.id } }, body: { sourceLocale: source, targetLocales: [target] } });
    if (answer.revision) {
      const next = await api.GET('/revisions/{revisionId}', { params: { path: { revisionId: answer.revision.revisionId } } });
      const snapshot = (next.snapshot ?? {}) as EntryValues;
      queryClient.setQueryData([projectId, 'revision', next.revisionId], next);
      setBase({ revision: next.revision, values: snapshot });
      setValues(snapshot);
      setDirty(false);
      setSave({ kind: 'saved', revision: next.revision });
      await refresh();
    }
    return { translated: answer.translated.length, skipped: answer.skipped.length };
  };

  /** Loads their revision: with what was typed merged in (each clashing value as chosen), or alone. */
  const resolveConflict = (keepMine: boolean, takeTheirs: ReadonlySet<string> = new Set()) => {
    if (!conflict) return;
    const theirs = (conflict.theirs.snapshot ?? {}) as EntryValues;
    const next = keepMine ? mergeFieldValues(base.values, valuesRef.current, theirs, takeTheirs) : theirs;
    queryClient.setQueryData([projectId, 'revision', conflict.theirs.revisionId], conflict.theirs);
    setBase({ revision: conflict.theirs.revision, values: theirs });
    setValues(next);
    setDirty(keepMine && JSON.stringify(next) !== JSON.stringify(theirs));
    setConflict(null);
    void refresh();
  };

  return (
    <section className="editor">
      <div className="page-head">
        <h1>{entry.title || t('list.untitled')}</h1>
        <div className="row">
          {entry.latestRevision && <StatusBadge status={entry.latestRevision.status} />}
          <span className="muted">{t('editor.revision', { revision: base.revision })}</span>
          <Link to={path(`entries/${entry.id}/history`)}>{t('editor.history')}</Link>
        </div>
      </div>
      <p className="muted small">
        /{entry.slug} · {t('editor.autosave')}
      </p>
      {entry.liveRevision && <p className="small">{t('editor.live', { revision: entry.liveRevision.revision })}</p>}
      <AssigneeSelect entryId={entry.id} assignee={entry.assignee} onChanged={refresh} />
      {keptDiffers && (
        <KeptInputNotice message={t('kept.body', { time: formatTime(new Date(kept.at).toISOString()), revision: kept.baseRevision ?? base.revision })} onRestore={restoreKept} onDiscard={settle} />
      )}
      {conflict && (
        <ConflictPanel
          key={conflict.theirs.revisionId}
          theirRevision={conflict.theirs.revision}
          myRevision={base.revision}
          clashes={fieldClashes(base.values, values, (conflict.theirs.snapshot ?? {}) as EntryValues)}
          fields={formSet.definition.fields}
          onMerge={(takeTheirs) => resolveConflict(true, takeTheirs)}
          onDiscard={() => resolveConflict(false)}
        />
      )}
      <WorkflowBar entry={entry} revision={revision} dirty={dirty} saveFirst={saveNow} onChanged={refresh} />
      <div className="save-line" aria-live="polite">
        {save.kind === 'saving' && t('editor.saving')}
        {save.kind === 'saved' && !dirty && t('editor.saved', { revision: save.revision })}
        {dirty && save.kind !== 'saving' && t('editor.unsaved')}
      </div>
      {save.kind === 'error' && errors.size > 0 && (
        <div className="error" role="alert">
          <p>{t('editor.errors')}</p>
        </div>
      )}
      {save.kind === 'error' && errors.size === 0 && <ErrorMessage error={save.error} />}
      <EntryForm formSet={formSet} locales={locales} values={values} onChange={change} errors={errors} {...(project.machineTranslation ? { onTranslate: translate } : {})} />
      <div className="row sticky-actions">
        <button type="button" className="primary" disabled={!dirty || save.kind === 'saving' || Boolean(conflict)} onClick={() => void saveNow()}>
          {t('editor.save')}
        </button>
      </div>
    </section>
  );
}

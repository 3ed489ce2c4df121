import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { Link, useBlocker, useParams } from 'react-router';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, keepOnLeave } from '../api/admin-client.ts';
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
import { useOthersWorkingCopies, useOwnWorkingCopy, revisionValues, type WorkingCopy } from '../fields/working-copy.ts';
import { useUserNames } from '../components/user-names.ts';

/** How long typing must pause before it is kept in the working copy on the server (no revision is made). */
export const AUTOSAVE_DELAY_MS = 1500;

export function EntryEditorPage() {
  const { entryId = '' } = useParams();
  const { api, projectId, can } = useProject();
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
  // The user's working copy (unsaved typing kept on the server) is offered as the editor opens; without it the
  // editor still opens (a failed read is shown).
  // A role that does not write in the entry's form set keeps no working copy: none is asked for.
  const writes = can('content.write', formSetId);
  const own = useOwnWorkingCopy(entryId, writes);
  const started = useRef<string | null>(null);
  if (entry.isFetchedAfterMount && revision.data && revision.data.revisionId === revisionId && revision.data.entryId === entryId && formSet.data && (own.isFetched || own.isError || !writes)) started.current = entryId;
  const error = entry.error ?? formSet.error ?? revision.error;
  if (started.current !== entryId || !entry.data || !formSet.data || !revision.data) return error ? <ErrorMessage error={error} /> : <LoadingLine />;
  return (
    <>
      <ErrorMessage error={error ?? (writes ? own.error : null)} />
      <EntryEditor key={entryId} entry={entry.data} formSet={formSet.data} revision={revision.data} workingCopy={writes ? (own.data ?? null) : null} />
    </>
  );
}

function LoadingLine() {
  const { t } = useI18n();
  return <p>{t('app.loading')}</p>;
}

type SaveState = { kind: 'idle' } | { kind: 'saving' } | { kind: 'saved'; revision: number } | { kind: 'error'; error: unknown };

/** Typing offered back when the editor opens: the server's working copy, or this tab's kept input if newer. */
interface Offer {
  values: EntryValues;
  baseRevision: number | undefined;
  at: number;
  source: 'server' | 'tab';
}

function EntryEditor({ entry, formSet, revision, workingCopy }: { entry: EntrySummary; formSet: FormSet; revision: Revision; workingCopy: WorkingCopy | null }) {
  const { t, formatTime } = useI18n();
  const { api, projectId, project, path, can } = useProject();
  // A role that does not write in this form set (content.write) reads the entry: its fields do not take typing.
  const writes = can('content.write', entry.formSetId);
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
  const saving = useRef(false);
  const locales = project.contentLocales;
  // The working copy on the server: the values last kept there, and when.
  const keptValues = useRef<EntryValues | null>(null);
  const [keptAt, setKeptAt] = useState<string | null>(null);
  const [keepError, setKeepError] = useState<unknown>(null);
  const keeping = useRef(false);
  const unkept = dirty && values !== keptValues.current;
  const unkeptRef = useRef(unkept);
  unkeptRef.current = unkept;
  const others = useOthersWorkingCopies(entry.id, userId);
  const { userName } = useUserNames();

  // What an earlier visit left: the newer of the server's working copy and this tab's kept input, when it differs
  // from the revision the editor opened on; offered until restored or discarded.
  const [offerSettled, setOfferSettled] = useState(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: read once, as the editor opens (later copies are the editor's own).
  const offer = useMemo((): Offer | null => {
    const opened = JSON.stringify(revision.snapshot ?? {});
    const server: Offer | null = workingCopy && JSON.stringify(workingCopy.fields) !== opened ? { values: workingCopy.fields as EntryValues, baseRevision: workingCopy.baseRevision, at: Date.parse(workingCopy.savedAt), source: 'server' } : null;
    const tab: Offer | null = kept && JSON.stringify(kept.values) !== opened ? { values: kept.values, baseRevision: kept.baseRevision, at: kept.at, source: 'tab' } : null;
    return server && tab ? (tab.at > server.at ? tab : server) : (server ?? tab);
  }, []);
  const offered = !offerSettled && offer !== null && JSON.stringify(offer.values) !== JSON.stringify(values) ? offer : null;

  const refresh = useCallback(async () => {
    await queryClient.invalidateQueries({ queryKey: [projectId, 'entry', entry.id] });
    await queryClient.invalidateQueries({ queryKey: [projectId, 'entries'] });
    // A workflow step changes the status of the same revision id.
    await queryClient.invalidateQueries({ queryKey: [projectId, 'revision'] });
  }, [queryClient, projectId, entry.id]);

  /** Their latest revision, for the conflict panel. */
  const showConflict = useCallback(async () => {
    const latest = await api.GET('/entries/{entryId}', { params: { path: { entryId: entry.id } } });
    const theirs = await api.GET('/revisions/{revisionId}', { params: { path: { revisionId: latest.latestRevision!.revisionId } } });
    setConflict({ theirs });
  }, [api, entry.id]);

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
      // The service ended the working copy with the save.
      keptValues.current = null;
      setKeptAt(null);
      setKeepError(null);
      // Typing during the save leaves the editor dirty: the next pause saves again.
      setDirty(valuesRef.current !== sent);
      queryClient.setQueryData([projectId, 'revision', saved.revisionId], { ...saved, snapshot: sent });
      await refresh();
      return true;
    } catch (e) {
      if (e instanceof ApiError && e.code === 'REVISION_CONFLICT') {
        await showConflict();
        setSave({ kind: 'idle' });
      } else {
        if (e instanceof ApiError && e.code === 'VALIDATION_ERROR') setErrors(fieldErrorsOf(e.message, locales.locales));
        setSave({ kind: 'error', error: e });
      }
      return false;
    } finally {
      saving.current = false;
    }
  }, [api, entry.id, base.revision, refresh, queryClient, projectId, locales.locales, showConflict]);

  /** Keeps what is typed in the working copy on the server: no revision, nothing in the entry's history. */
  const keepNow = useCallback(async (): Promise<boolean> => {
    if (keeping.current || saving.current) return false;
    keeping.current = true;
    const sent = valuesRef.current;
    try {
      const answer = await api.PUT('/entries/{entryId}/working-copy', { params: { path: { entryId: entry.id } }, body: { fields: sent, baseRevision: base.revision } });
      keptValues.current = sent;
      setKeptAt(answer.savedAt);
      setKeepError(null);
      // Someone saved the entry meanwhile: shown now, to merge, rather than at the next save.
      if (answer.latestRevision > base.revision) await showConflict();
      return true;
    } catch (e) {
      setKeepError(e);
      return false;
    } finally {
      keeping.current = false;
    }
  }, [api, entry.id, base.revision, showConflict]);

  // Autosave: once typing pauses, what is typed is kept in the working copy (a revision is made by Save, submit
  // or leaving the editor). A call made as the session ran out waits for the sign-in again (api/admin-client.ts)
  // and then completes with the new session.
  // biome-ignore lint/correctness/useExhaustiveDependencies: each keystroke (values) and each keep (keptAt) restarts the pause.
  useEffect(() => {
    if (!unkept || conflict || save.kind === 'saving') return;
    const timer = setTimeout(() => void keepNow(), AUTOSAVE_DELAY_MS);
    return () => clearTimeout(timer);
  }, [values, unkept, keptAt, conflict, keepNow, save.kind]);

  // Leaving the editor inside the console makes a revision of what is typed; when that fails (a value the form
  // set refuses, a conflict to settle), the typing is kept in the working copy and the user decides.
  const blocker = useBlocker(({ currentLocation, nextLocation }) => dirty && currentLocation.pathname !== nextLocation.pathname);
  const blockerRef = useRef(blocker);
  blockerRef.current = blocker;
  const leaving = useRef(false);
  useEffect(() => {
    if (blocker.state !== 'blocked' || leaving.current) return;
    leaving.current = true;
    void (async () => {
      try {
        if (!conflict && (await saveNow())) return blockerRef.current.proceed?.();
        const keptThere = !unkeptRef.current || (await keepNow());
        if (window.confirm(t(keptThere ? 'editor.leaveKept' : 'editor.leave'))) blockerRef.current.proceed?.();
        else blockerRef.current.reset?.();
      } finally {
        leaving.current = false;
      }
    })();
  }, [blocker.state, conflict, saveNow, keepNow, t]);
  // Closing the tab or reloading: typing not yet on the server is sent there as the page goes (the request
  // outlives the page), and the browser asks first.
  const latest = useRef({ values, baseRevision: base.revision });
  latest.current = { values, baseRevision: base.revision };
  useEffect(() => {
    if (!unkept) return;
    const warn = (event: BeforeUnloadEvent) => event.preventDefault();
    const hide = () => {
      if (unkeptRef.current) keepOnLeave(api, entry.id, { fields: latest.current.values, baseRevision: latest.current.baseRevision });
    };
    window.addEventListener('beforeunload', warn);
    window.addEventListener('pagehide', hide);
    return () => {
      window.removeEventListener('beforeunload', warn);
      window.removeEventListener('pagehide', hide);
    };
  }, [unkept, api, entry.id]);

  const change = (next: EntryValues) => {
    setValues(next);
    setDirty(true);
  };
  /**
   * Continues the offered typing. On the revision the editor opened on, it simply comes back; on an older one
   * (someone saved since), it is merged like a conflict: values only one side changed merge by themselves, and
   * each field both changed is shown for the user to choose.
   */
  const restoreOffer = async () => {
    if (!offered) return;
    settle();
    setOfferSettled(true);
    if (offered.baseRevision === undefined || offered.baseRevision === base.revision) {
      change(offered.values);
      return;
    }
    const baseValues = ((await revisionValues(api, entry.id, offered.baseRevision).catch(() => null)) ?? {}) as EntryValues;
    setBase({ revision: offered.baseRevision, values: baseValues });
    setValues(offered.values);
    setDirty(true);
    setConflict({ theirs: revision });
  };
  const discardOffer = () => {
    settle();
    setOfferSettled(true);
    if (workingCopy) void api.DELETE('/entries/{entryId}/working-copy', { params: { path: { entryId: entry.id } } }).catch(() => undefined);
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
        /{entry.slug}
        {writes && ` · ${t('editor.autosave')}`}
      </p>
      {entry.liveRevision && <p className="small">{t('editor.live', { revision: entry.liveRevision.revision })}</p>}
      <AssigneeSelect entryId={entry.id} assignee={entry.assignee} onChanged={refresh} readOnly={!writes} />
      {!writes && <p className="notice">{t('editor.readOnly')}</p>}
      {others.length > 0 && (
        <p className="notice others-editing" role="status">
          {t('editor.othersEditing', { names: others.map((copy) => (copy.owner.type === 'user' ? userName(copy.owner.id) : copy.owner.id)).join(', '), time: formatTime(others[others.length - 1]!.savedAt) })}
        </p>
      )}
      {offered && (
        <KeptInputNotice
          message={
            offered.source === 'server'
              ? `${t('kept.server', { time: formatTime(new Date(offered.at).toISOString()), revision: offered.baseRevision ?? base.revision })}${offered.baseRevision !== undefined && offered.baseRevision < base.revision ? ` ${t('kept.serverOlder', { latest: base.revision })}` : ''}`
              : t('kept.body', { time: formatTime(new Date(offered.at).toISOString()), revision: offered.baseRevision ?? base.revision })
          }
          onRestore={() => void restoreOffer()}
          onDiscard={discardOffer}
        />
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
        {dirty && save.kind !== 'saving' && (!unkept && keptAt ? t('editor.kept', { time: formatTime(keptAt) }) : t('editor.unsaved'))}
      </div>
      {keepError !== null && dirty && (
        <div className="small">
          <p className="muted">{t('editor.keepFailed')}</p>
          <ErrorMessage error={keepError} />
        </div>
      )}
      {save.kind === 'error' && errors.size > 0 && (
        <div className="error" role="alert">
          <p>{t('editor.errors')}</p>
        </div>
      )}
      {save.kind === 'error' && errors.size === 0 && <ErrorMessage error={save.error} />}
      <EntryForm formSet={formSet} locales={locales} values={values} onChange={change} errors={errors} readOnly={!writes} {...(project.machineTranslation ? { onTranslate: translate } : {})} />
      {writes && (
        <div className="row sticky-actions">
          <button type="button" className="primary" disabled={!dirty || save.kind === 'saving' || Boolean(conflict)} onClick={() => void saveNow()}>
            {t('editor.save')}
          </button>
        </div>
      )}
    </section>
  );
}

import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { FormDialog } from '../components/form-dialog.tsx';
import type { FailingEvent, ProjectionStatus } from './shapes.ts';
import { ActionsColumnHeader } from '../components/actions-column-header.tsx';

/**
 * Operations (tenant_admin): projections with their state and lag, outboxes, version and adapters. The
 * projections are shared by every tenant of the service, so the failing event's details and retry, skip
 * with a reason and rebuild with progress are shown to the service's operators only (the answer says
 * whether the caller is one); the others are told why they see no controls.
 */
export function Operations() {
  const { t } = useI18n();
  const { api, projectId } = useProject();
  const key = [projectId, 'operations'];
  const overview = useQuery({
    queryKey: key,
    queryFn: () => api.GET('/operations'),
    // Lag, failures and rebuilds move on their own: look again every few seconds, every second while a rebuild runs.
    refetchInterval: (query) => (query.state.data?.projections.some((p) => p.rebuild?.state === 'running') ? 1000 : 5000),
  });
  const data = overview.data;
  return (
    <section>
      <h1>{t('ops.title')}</h1>
      <ErrorMessage error={overview.error} />
      {data && (
        <>
          <dl className="facts panel">
            <div>
              <dt>{t('ops.version')}</dt>
              <dd>{data.version}</dd>
            </div>
            <div>
              <dt>{t('ops.eventStore')}</dt>
              <dd>{data.adapters.eventStore}</dd>
            </div>
            <div>
              <dt>{t('ops.readModels')}</dt>
              <dd>{data.adapters.readModels}</dd>
            </div>
            <div>
              <dt>{t('ops.blobs')}</dt>
              <dd>{data.adapters.blobs}</dd>
            </div>
          </dl>
          <h2>{t('ops.projections')}</h2>
          <p className="help">{t(data.operator ? 'ops.projectionsHelp' : 'ops.notOperator')}</p>
          <table className="list">
            <thead>
              <tr>
                <th scope="col">{t('ops.name')}</th>
                <th scope="col">{t('ops.state')}</th>
                <th scope="col">{t('ops.generation')}</th>
                <th scope="col">{t('ops.lag')}</th>
                <th scope="col">{t('ops.skips')}</th>
                {data.operator && (
                  <ActionsColumnHeader />
                )}
              </tr>
            </thead>
            <tbody>
              {data.projections.map((p) => (
                <ProjectionLine key={p.name} projection={p} operator={data.operator} />
              ))}
            </tbody>
          </table>
          <h2>{t('ops.outboxes')}</h2>
          <table className="list">
            <thead>
              <tr>
                <th scope="col">{t('ops.outbox')}</th>
                <th scope="col">{t('ops.pending')}</th>
              </tr>
            </thead>
            <tbody>
              {data.outboxes.map((o) => (
                <tr key={o.name}>
                  <td>{t(`ops.outbox.${o.name}`)}</td>
                  <td>{o.pending}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

/** The event a projection is paused on: its type and position for everyone, its id, stream and the error for operators. */
function FailureNotice({ failure }: { failure: FailingEvent }) {
  const { t, formatTime } = useI18n();
  return (
    <div className="failure" role="alert">
      <p>
        <strong>{failure.eventId ? t('ops.failedOn', { type: failure.eventType, id: failure.eventId }) : t('ops.failedOnType', { type: failure.eventType })}</strong>
      </p>
      <p className="small">
        {failure.streamId ? t('ops.failureWhere', { stream: failure.streamId, position: failure.position, time: formatTime(failure.failedAt) }) : t('ops.failurePosition', { position: failure.position, time: formatTime(failure.failedAt) })}
      </p>
      {failure.message && <pre className="code">{failure.message}</pre>}
    </div>
  );
}

function ProjectionLine({ projection: p, operator }: { projection: ProjectionStatus; operator: boolean }) {
  const { t } = useI18n();
  const { api, projectId } = useProject();
  const queryClient = useQueryClient();
  const [skipping, setSkipping] = useState(false);
  const [reason, setReason] = useState('');
  const refresh = () => queryClient.invalidateQueries({ queryKey: [projectId, 'operations'] });
  const path = { params: { path: { name: p.name } } };
  const retry = useMutation({ mutationFn: () => api.POST('/operations/projections/{name}/retry', path), onSuccess: refresh });
  const [confirmingRebuild, setConfirmingRebuild] = useState(false);
  const rebuild = useMutation({
    mutationFn: () => api.POST('/operations/projections/{name}/rebuild', path),
    onSuccess: async () => {
      setConfirmingRebuild(false);
      await refresh();
    },
  });
  const skip = useMutation({
    mutationFn: () => api.POST('/operations/projections/{name}/skip', { ...path, body: { reason } }),
    onSuccess: async () => {
      setSkipping(false);
      setReason('');
      await refresh();
    },
  });
  const failure = p.active?.failure ?? p.building?.failure ?? null;
  const run = p.rebuild;
  return (
    <>
      <tr className={failure ? 'failing' : undefined}>
        <th scope="row">
          <code>{p.name}</code> <span className="muted small">v{p.version}</span>
        </th>
        <td>
          <span className={`badge ops-${p.state}`}>{t(`ops.state.${p.state}`)}</span>
        </td>
        <td>{p.active?.generation ?? '–'}</td>
        <td>{p.active?.lag ?? '–'}</td>
        <td>{p.skips}</td>
        {operator && (
          <td>
            <div className="row">
              {failure && (
                <>
                  <button type="button" onClick={() => retry.mutate()} disabled={retry.isPending}>
                    {t('ops.retry')}
                  </button>
                  <button type="button" className="danger" onClick={() => setSkipping(true)}>
                    {t('ops.skip')}
                  </button>
                </>
              )}
              <button type="button" onClick={() => setConfirmingRebuild(true)} disabled={rebuild.isPending || run?.state === 'running'}>
                {t('ops.rebuild')}
              </button>
            </div>
          </td>
        )}
      </tr>
      {(failure || run || retry.error || rebuild.error) && (
        <tr>
          <td colSpan={operator ? 6 : 5}>
            {failure && <FailureNotice failure={failure} />}
            {run && (
              <div className="rebuild">
                <label>
                  {t(`ops.rebuild.${run.state}`, { events: run.events, generation: run.generation ?? '' })}
                  <progress max={1} value={run.fraction} />
                </label>
                {run.error && <p className="error">{run.error}</p>}
              </div>
            )}
            <ErrorMessage error={retry.error ?? rebuild.error} />
          </td>
        </tr>
      )}
      {operator && confirmingRebuild && (
        <FormDialog open title={t('ops.rebuildTitle', { name: p.name })} submitLabel={t('ops.rebuildConfirm')} danger mutation={rebuild} onClose={() => setConfirmingRebuild(false)} onSubmit={() => rebuild.mutate()}>
          <p>{t('ops.rebuildText', { name: p.name })}</p>
        </FormDialog>
      )}
      {operator && skipping && failure && (
        <FormDialog open title={t('ops.skipTitle', { name: p.name })} submitLabel={t('ops.skipConfirm')} danger disabled={!reason.trim()} mutation={skip} onClose={() => setSkipping(false)} onSubmit={() => skip.mutate()}>
          <p>{t('ops.skipText', { type: failure.eventType, id: failure.eventId ?? failure.position })}</p>
          <label>
            {t('ops.reason')}
            <textarea rows={3} required maxLength={1000} value={reason} onChange={(e) => setReason(e.target.value)} />
          </label>
        </FormDialog>
      )}
    </>
  );
}

import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { Modal } from '../components/modal.tsx';
import type { MessageKey } from '../i18n/en.ts';

interface Failure {
  eventId: string;
  eventType: string;
  streamId: string;
  position: string;
  message: string;
  failedAt: string;
}
interface Generation {
  generation: number;
  checkpoint: string | null;
  lag: string | null;
  failure: Failure | null;
}
interface ProjectionRow {
  name: string;
  version: number;
  state: 'live' | 'behind' | 'paused' | 'not-started' | 'outdated';
  active: Generation | null;
  building: Generation | null;
  skips: number;
  rebuild: { state: 'running' | 'done' | 'paused' | 'failed'; events: number; fraction: number; generation: number | null; error: string | null; finishedAt: string | null } | null;
}
interface Overview {
  version: string;
  adapters: { eventStore: string; readModels: string; blobs: string };
  projections: ProjectionRow[];
  outboxes: Array<{ name: string; pending: number }>;
}

/** Operations (tenant_admin): projections with their failures, retry, skip with a reason, rebuild with progress; outboxes; version and adapters. */
export function Operations() {
  const { t } = useI18n();
  const { api, projectId } = useProject();
  const key = [projectId, 'operations'];
  const overview = useQuery({
    queryKey: key,
    queryFn: () => api.GET('/operations') as Promise<Overview>,
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
          <p className="help">{t('ops.projectionsHelp')}</p>
          <table className="list">
            <thead>
              <tr>
                <th scope="col">{t('ops.name')}</th>
                <th scope="col">{t('ops.state')}</th>
                <th scope="col">{t('ops.generation')}</th>
                <th scope="col">{t('ops.lag')}</th>
                <th scope="col">{t('ops.skips')}</th>
                <th scope="col">
                  <span className="visually-hidden">{t('keys.actions')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.projections.map((p) => (
                <ProjectionLine key={p.name} projection={p} />
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
                  <td>{t(`ops.outbox.${o.name}` as MessageKey)}</td>
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

function ProjectionLine({ projection: p }: { projection: ProjectionRow }) {
  const { t, formatTime } = useI18n();
  const { api, projectId } = useProject();
  const queryClient = useQueryClient();
  const [skipping, setSkipping] = useState(false);
  const [reason, setReason] = useState('');
  const refresh = () => queryClient.invalidateQueries({ queryKey: [projectId, 'operations'] });
  const path = { params: { path: { name: p.name } } };
  const retry = useMutation({ mutationFn: () => api.POST('/operations/projections/{name}/retry', path), onSuccess: refresh });
  const rebuild = useMutation({ mutationFn: () => api.POST('/operations/projections/{name}/rebuild', path), onSuccess: refresh });
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
          <span className={`badge ops-${p.state}`}>{t(`ops.state.${p.state}` as MessageKey)}</span>
        </td>
        <td>{p.active?.generation ?? '–'}</td>
        <td>{p.active?.lag ?? '–'}</td>
        <td>{p.skips}</td>
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
            <button type="button" onClick={() => rebuild.mutate()} disabled={rebuild.isPending || run?.state === 'running'}>
              {t('ops.rebuild')}
            </button>
          </div>
        </td>
      </tr>
      {(failure || run || retry.error || rebuild.error) && (
        <tr>
          <td colSpan={6}>
            {failure && (
              <div className="failure" role="alert">
                <p>
                  <strong>{t('ops.failedOn', { type: failure.eventType, id: failure.eventId })}</strong>
                </p>
                <p className="small">{t('ops.failureWhere', { stream: failure.streamId, position: failure.position, time: formatTime(failure.failedAt) })}</p>
                <pre className="code">{failure.message}</pre>
              </div>
            )}
            {run && (
              <div className="rebuild">
                <label>
                  {t(`ops.rebuild.${run.state}` as MessageKey, { events: run.events, generation: run.generation ?? '' })}
                  <progress max={1} value={run.fraction} />
                </label>
                {run.error && <p className="error">{run.error}</p>}
              </div>
            )}
            <ErrorMessage error={retry.error ?? rebuild.error} />
          </td>
        </tr>
      )}
      {skipping && failure && (
        <Modal open title={t('ops.skipTitle', { name: p.name })} onClose={() => setSkipping(false)}>
          <form
            onSubmit={(event) => {
              event.preventDefault();
              skip.mutate();
            }}
          >
            <p>{t('ops.skipText', { type: failure.eventType, id: failure.eventId })}</p>
            <label>
              {t('ops.reason')}
              <textarea rows={3} required maxLength={1000} value={reason} onChange={(e) => setReason(e.target.value)} />
            </label>
            <ErrorMessage error={skip.error} />
            <div className="dialog-actions">
              <button type="button" onClick={() => setSkipping(false)}>
                {t('admin.cancel')}
              </button>
              <button type="submit" className="danger" disabled={skip.isPending || !reason.trim()}>
                {t('ops.skipConfirm')}
              </button>
            </div>
          </form>
        </Modal>
      )}
    </>
  );
}

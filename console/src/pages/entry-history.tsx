import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { DiffView } from '../components/diff-view.tsx';
import { useActorName, useEventName } from '../components/user-names.ts';
import type { RevisionSummary } from '../api/shapes.ts';

/** An entry's timeline (who, when, what), a diff between any two revisions, and restore as a new draft. */
export function EntryHistory() {
  const { entryId = '' } = useParams();
  const { t, formatTime } = useI18n();
  const { api, projectId, path } = useProject();
  const actorName = useActorName();
  const eventName = useEventName();
  const entry = useQuery({ queryKey: [projectId, 'entry', entryId], queryFn: () => api.GET('/entries/{entryId}', { params: { path: { entryId } } }) });
  const formSet = useQuery({ queryKey: [projectId, 'form-set', entry.data?.formSetId], queryFn: () => api.GET('/form-sets/{formSetId}', { params: { path: { formSetId: entry.data!.formSetId } } }), enabled: Boolean(entry.data) });
  const history = useInfiniteQuery({
    queryKey: [projectId, 'history', entryId],
    initialPageParam: '',
    queryFn: ({ pageParam }) => api.GET('/entries/{entryId}/history', { params: { path: { entryId }, query: { limit: 50, cursor: pageParam || undefined } } }),
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const revisions = useInfiniteQuery({
    queryKey: [projectId, 'revisions', entryId],
    initialPageParam: '',
    queryFn: ({ pageParam }) => api.GET('/entries/{entryId}/revisions', { params: { path: { entryId }, query: { limit: 100, order: 'desc', cursor: pageParam || undefined } } }),
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const revisionList = revisions.data?.pages.flatMap((p) => p.items) ?? [];
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const fromId = from || revisionList[1]?.revisionId || '';
  const toId = to || revisionList[0]?.revisionId || '';
  const diff = useQuery({
    queryKey: [projectId, 'diff', fromId, toId],
    queryFn: () => api.GET('/entries/{entryId}/diff', { params: { path: { entryId }, query: { from: fromId, to: toId } } }),
    enabled: Boolean(fromId && toId && fromId !== toId),
  });
  const [error, setError] = useState<unknown>(null);
  const [restored, setRestored] = useState<number | null>(null);
  const restore = async (revisionId: string) => {
    setError(null);
    try {
      const latest = await api.GET('/entries/{entryId}', { params: { path: { entryId } } });
      const result = await api.POST('/revisions/{revisionId}/restore', { params: { path: { revisionId } }, body: { expectedRevision: latest.latestRevision?.revision } });
      setRestored(result.revision);
      await Promise.all([history.refetch(), revisions.refetch()]);
    } catch (e) {
      setError(e);
    }
  };
  const items = history.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <section>
      <h1>{t('history.title', { title: entry.data?.title || entry.data?.slug || '' })}</h1>
      <p className="row">
        <Link to={path(`entries/${entryId}`)}>← {entry.data?.title || entry.data?.slug}</Link>
        {entry.data && <Link to={path(`as-of?${new URLSearchParams({ at: new Date().toISOString(), formSet: entry.data.formSetId, entry: entryId }).toString()}`)}>{t('history.asOfView')}</Link>}
      </p>
      <ErrorMessage error={history.error ?? error} />
      {restored !== null && <p role="status">{t('history.restored', { revision: restored })}</p>}
      <table className="list">
        <thead>
          <tr>
            <th scope="col">{t('history.when')}</th>
            <th scope="col">{t('history.who')}</th>
            <th scope="col">{t('history.what')}</th>
            <th scope="col">{t('history.revision')}</th>
            <th scope="col">{t('history.asOf')}</th>
            <td />
          </tr>
        </thead>
        <tbody>
          {items.map((item) => (
            <tr key={item.eventId}>
              <td>
                <time dateTime={item.occurredAt}>{formatTime(item.occurredAt)}</time>
              </td>
              <td>{actorName(item.actor)}</td>
              <td>{eventName(item)}</td>
              <td>{item.revision ?? ''}</td>
              <td>
                {entry.data && (
                  <Link to={path(`as-of?${new URLSearchParams({ at: item.occurredAt, formSet: entry.data.formSetId, entry: entryId }).toString()}`)} aria-label={t('history.asOfLabel', { time: formatTime(item.occurredAt) })}>
                    {t('history.asOf')}
                  </Link>
                )}
              </td>
              <td>
                {item.type === 'entry.revision-saved' && item.revisionId && (
                  <button type="button" onClick={() => void restore(item.revisionId!)} aria-label={`${t('history.restore')}: ${t('editor.revision', { revision: item.revision ?? 0 })}`}>
                    {t('history.restore')}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {history.hasNextPage && (
        <button type="button" onClick={() => void history.fetchNextPage()}>
          {t('history.more')}
        </button>
      )}
      {revisionList.length > 1 && (
        <section aria-labelledby="compare-title">
          <h2 id="compare-title">{t('history.compare')}</h2>
          <div className="filters">
            <RevisionSelect label={t('history.from')} value={fromId} revisions={revisionList} onChange={setFrom} />
            <RevisionSelect label={t('history.to')} value={toId} revisions={revisionList} onChange={setTo} />
          </div>
          <ErrorMessage error={diff.error} />
          {diff.data && formSet.data && (
            <DiffView diff={diff.data} fields={formSet.data.definition.fields} beforeTitle={t('editor.revision', { revision: diff.data.from.revision })} afterTitle={t('editor.revision', { revision: diff.data.to.revision })} />
          )}
          {revisions.hasNextPage && (
            <button type="button" onClick={() => void revisions.fetchNextPage()}>
              {t('history.more')}
            </button>
          )}
        </section>
      )}
    </section>
  );
}

function RevisionSelect({ label, value, revisions, onChange }: { label: string; value: string; revisions: RevisionSummary[]; onChange: (revisionId: string) => void }) {
  const { t, formatTime } = useI18n();
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        {revisions.map((r) => (
          <option key={r.revisionId} value={r.revisionId}>
            {`${t('editor.revision', { revision: r.revision })} · ${t(`status.${r.status}`)} · ${formatTime(r.updatedAt)}`}
          </option>
        ))}
      </select>
    </label>
  );
}

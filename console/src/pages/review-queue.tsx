import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { useInfiniteQuery } from '@tanstack/react-query';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { ScheduleFields, useSchedule } from '../components/schedule-fields.tsx';
import { useActorName, useUserNames } from '../components/user-names.ts';

/**
 * What waits for review, oldest submission first, paged by the server; selected ones scheduled at once by
 * whoever may approve in their form sets (content.approve).
 */
export function ReviewQueue() {
  const { t, formatTime } = useI18n();
  const { api, projectId, can, path } = useProject();
  const actorName = useActorName();
  const { userName } = useUserNames();
  const queue = useInfiniteQuery({
    queryKey: [projectId, 'review-queue'],
    initialPageParam: '',
    queryFn: ({ pageParam }) => api.GET('/review-queue', { params: { query: { limit: 50, cursor: pageParam || undefined } } }),
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    // What waits changes as others work: kept current while the desk is open.
    refetchInterval: 30_000,
    refetchOnWindowFocus: true,
  });
  const items = queue.data?.pages.flatMap((p) => p.items) ?? [];
  // The selection column shows when the role may approve some of what waits (a custom role may approve in some form sets only).
  const approves = items.some((item) => can('content.approve', item.formSet.id));
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const schedule = useSchedule();
  const [result, setResult] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const bulk = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      const answer = (await api.POST('/revisions/bulk-schedule', { body: { revisionIds: [...selected], publishAt: schedule.publishAt() } })) as { succeeded: number; failed: number };
      setResult(t('review.bulkDone', { ok: answer.succeeded, failed: answer.failed }));
      setSelected(new Set());
      await queue.refetch();
    } catch (e) {
      setError(e);
    }
  };
  const toggle = (id: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(id);
    else next.delete(id);
    setSelected(next);
  };
  return (
    <section>
      <h1>{t('review.title')}</h1>
      <ErrorMessage error={queue.error} />
      {queue.data && items.length === 0 && <p>{t('review.empty')}</p>}
      {items.length > 0 && (
        <table className="list">
          <thead>
            <tr>
              {approves && <td />}
              <th scope="col">{t('review.col.entry')}</th>
              <th scope="col">{t('review.col.formSet')}</th>
              <th scope="col">{t('review.col.status')}</th>
              <th scope="col">{t('review.col.submitted')}</th>
              <th scope="col">{t('review.col.submitter')}</th>
              <th scope="col">{t('review.col.assignee')}</th>
              <th scope="col">{t('review.col.publishAt')}</th>
            </tr>
          </thead>
          <tbody>
            {items.map((item) => (
              <tr key={item.revisionId}>
                {approves && (
                  <td>
                    {can('content.approve', item.formSet.id) && (
                      <input type="checkbox" aria-label={t('review.select', { title: item.entry.title || item.entry.slug })} checked={selected.has(item.revisionId)} onChange={(e) => toggle(item.revisionId, e.target.checked)} />
                    )}
                  </td>
                )}
                <td>
                  <Link to={path(`review/${item.revisionId}`)}>{item.entry.title || item.entry.slug}</Link>
                </td>
                <td>{item.formSet.name}</td>
                <td>
                  <StatusBadge status={item.status} />
                </td>
                <td><time dateTime={item.submittedAt}>{formatTime(item.submittedAt)}</time></td>
                <td>{actorName(item.submittedBy)}</td>
                <td>{item.assignee ? userName(item.assignee) : ''}</td>
                <td>{item.publishAt ? <time dateTime={item.publishAt}>{formatTime(item.publishAt)}</time> : null}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {queue.hasNextPage && (
        <button type="button" onClick={() => void queue.fetchNextPage()}>
          {t('list.next')}
        </button>
      )}
      {approves && selected.size > 0 && (
        <form className="bulk" onSubmit={bulk} aria-labelledby="bulk-title">
          <h2 id="bulk-title">{t('review.bulk')}</h2>
          <ScheduleFields schedule={schedule} />
          <button type="submit" className="primary" disabled={!schedule.local}>
            {t('review.bulk')} ({selected.size})
          </button>
        </form>
      )}
      {result && <p role="status">{result}</p>}
      <ErrorMessage error={error} />
    </section>
  );
}

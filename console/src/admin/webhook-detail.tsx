import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { WebhookForm } from './webhooks.tsx';
import { DELIVERY_STATUSES, type Delivery, type DeliveryStatus, type WebhookEvent } from './shapes.ts';

/** One webhook: its settings, Send Test, and its delivery history (filter by status, redeliver). */
export function WebhookDetail() {
  const { webhookId = '' } = useParams();
  const { t } = useI18n();
  const { api, projectId, path } = useProject();
  const queryClient = useQueryClient();
  const hook = useQuery({ queryKey: [projectId, 'webhook', webhookId], queryFn: () => api.GET('/webhooks/{webhookId}', { params: { path: { webhookId } } }) });
  const [status, setStatus] = useState<DeliveryStatus | ''>('');
  const [testEvent, setTestEvent] = useState<WebhookEvent | ''>('');
  const deliveriesKey = [projectId, 'deliveries', webhookId];
  const deliveries = useInfiniteQuery({
    queryKey: [...deliveriesKey, status],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => api.GET('/webhooks/{webhookId}/deliveries', { params: { path: { webhookId }, query: { status: status || undefined, limit: 20, cursor: pageParam } } }),
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    // A delivery in flight changes on its own: look again while one is pending.
    refetchInterval: (query) => (query.state.data?.pages.some((p) => p.items.some((d) => d.status === 'pending' || d.status === 'in_progress')) ? 1000 : false),
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: deliveriesKey });
  const sendTest = useMutation({
    mutationFn: () => api.POST('/webhooks/{webhookId}/test', { params: { path: { webhookId } }, body: testEvent ? { event: testEvent } : {} }),
    onSuccess: refresh,
  });
  const items = deliveries.data?.pages.flatMap((p) => p.items) ?? [];
  if (!hook.data) return hook.error ? <ErrorMessage error={hook.error} /> : <p>{t('app.loading')}</p>;
  return (
    <section>
      <div className="page-head">
        <h1>{t('webhooks.detailTitle', { name: hook.data.name })}</h1>
        <Link to={path('webhooks')}>{t('webhooks.title')}</Link>
      </div>
      <details className="panel">
        <summary>{t('webhooks.edit')}</summary>
        <WebhookForm key={hook.data.updatedAt} hook={hook.data} save={(body) => api.PATCH('/webhooks/{webhookId}', { params: { path: { webhookId } }, body })} onDone={(updated) => queryClient.setQueryData([projectId, 'webhook', webhookId], updated)} />
      </details>

      <div className="row panel">
        <label className="inline">
          {t('webhooks.testEvent')}
          <select value={testEvent} onChange={(e) => setTestEvent(e.target.value as WebhookEvent | '')}>
            <option value="">{t('webhooks.testDefault')}</option>
            {hook.data.events.map((e) => (
              <option key={e} value={e}>
                {e}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={() => sendTest.mutate()} disabled={sendTest.isPending}>
          {t('webhooks.sendTest')}
        </button>
        {sendTest.isSuccess && (
          <span role="status" className="muted">
            {t('webhooks.testQueued')}
          </span>
        )}
      </div>
      <ErrorMessage error={sendTest.error} />

      <h2>{t('webhooks.history')}</h2>
      <div className="filters">
        <label>
          {t('webhooks.filterStatus')}
          <select value={status} onChange={(e) => setStatus(e.target.value as DeliveryStatus | '')}>
            <option value="">{t('webhooks.allStatuses')}</option>
            {DELIVERY_STATUSES.map((s) => (
              <option key={s} value={s}>
                {t(`webhooks.status.${s}`)}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={() => void refresh()}>
          {t('webhooks.reload')}
        </button>
      </div>
      <ErrorMessage error={deliveries.error} />
      {deliveries.data && items.length === 0 && <p className="muted">{t('webhooks.noDeliveries')}</p>}
      <ul className="deliveries">
        {items.map((d) => (
          <DeliveryItem key={d.id} delivery={d} webhookId={webhookId} onChanged={refresh} />
        ))}
      </ul>
      {deliveries.hasNextPage && (
        <button type="button" onClick={() => void deliveries.fetchNextPage()}>
          {t('admin.more')}
        </button>
      )}
    </section>
  );
}

function DeliveryItem({ delivery: d, webhookId, onChanged }: { delivery: Delivery; webhookId: string; onChanged: () => void }) {
  const { t, formatTime } = useI18n();
  const { api } = useProject();
  const redeliver = useMutation({
    mutationFn: () => api.POST('/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver', { params: { path: { webhookId, deliveryId: d.id } } }),
    onSuccess: onChanged,
  });
  const last = d.attempts[d.attempts.length - 1];
  return (
    <li className={`delivery delivery-${d.status}`}>
      <details>
        <summary>
          <span className={`badge webhook-${d.status}`}>{t(`webhooks.status.${d.status}`)}</span> <code>{d.event}</code>
          {d.trigger === 'test' && <span className="badge">{t('webhooks.test')}</span>} {formatTime(d.createdAt)}
          {last?.httpStatus != null && <span className="muted"> · HTTP {last.httpStatus}</span>}
          {last?.durationMs != null && <span className="muted"> · {t('webhooks.duration', { ms: Math.round(last.durationMs) })}</span>}
          <span className="muted"> · {d.attemptCount === 1 ? t('webhooks.attemptCountOne') : t('webhooks.attemptCount', { count: d.attemptCount })}</span>
        </summary>
        {d.notSent && <p className="notice">{t('webhooks.notSent', { reason: d.notSent.reason, detail: d.notSent.detail })}</p>}
        <h3>{t('webhooks.payload')}</h3>
        <pre className="code">{d.payload ?? t('webhooks.noPayload')}</pre>
        <ol className="attempts">
          {d.attempts.map((a) => (
            <li key={a.id}>
              <p>
                <strong>{t('webhooks.attempt', { n: a.number })}</strong> {t(`webhooks.trigger.${a.trigger}`)} · {t(`webhooks.state.${a.state}`)} · {formatTime(a.timestamp)}
                {a.httpStatus != null && ` · HTTP ${a.httpStatus}`}
                {a.durationMs != null && ` · ${t('webhooks.duration', { ms: Math.round(a.durationMs) })}`}
              </p>
              {a.error && <p className="error">{t('webhooks.error', { error: a.error })}</p>}
              <h4>{t('webhooks.headers')}</h4>
              <table className="list small">
                <tbody>
                  {Object.entries(a.headers).map(([name, value]) => (
                    <tr key={name}>
                      <th scope="row">{name}</th>
                      <td>
                        <code>{value}</code>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <h4>{t('webhooks.response')}</h4>
              <pre className="code">{a.responseBody === null ? t('webhooks.noResponse') : `${a.responseBody}${a.responseTruncated ? '\n…' : ''}`}</pre>
            </li>
          ))}
        </ol>
      </details>
      {(d.status === 'failed' || d.status === 'succeeded') && (
        <button type="button" onClick={() => redeliver.mutate()} disabled={redeliver.isPending}>
          {t('webhooks.redeliver')}
        </button>
      )}
      <ErrorMessage error={redeliver.error} />
    </li>
  );
}

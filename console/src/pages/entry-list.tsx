import { useState, type FormEvent } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { useUserNames } from '../components/user-names.ts';
import type { MessageKey } from '../i18n/en.ts';
import { BulkActions, useBulkActions } from './bulk-actions.tsx';

const STATUSES = ['draft', 'pending_review', 'scheduled', 'published', 'rejected'] as const;
const SORTS = ['updated_at:desc', 'updated_at:asc', 'title:asc', 'published_at:desc'] as const;

/**
 * A form set's entries, paged by the server (keyset cursors): search, status filter and sort live in the
 * URL, so a list can be shared and the back button works.
 */
export function EntryList() {
  const { formSetId = '' } = useParams();
  const { api, projectId, path, can } = useProject();
  // Entries are selected for the bulk actions the role may take here; a role that may take none selects nothing.
  const selecting = useBulkActions(formSetId).any;
  const { t, formatTime } = useI18n();
  const [params, setParams] = useSearchParams();
  const q = params.get('q') ?? '';
  const status = params.get('status') ?? '';
  const sort = params.get('sort') ?? 'updated_at:desc';
  const assignee = params.get('assignee') ?? '';
  const cursor = params.get('cursor') ?? '';
  const [draftQ, setDraftQ] = useState(q);
  // Selected entries of the page shown, by id (a new page, search or filter starts a new selection).
  const [selection, setSelection] = useState<Set<string>>(new Set());
  const { userName, users } = useUserNames();
  const formSet = useQuery({ queryKey: [projectId, 'form-set', formSetId], queryFn: () => api.GET('/form-sets/{formSetId}', { params: { path: { formSetId } } }) });
  const page = useQuery({
    queryKey: [projectId, 'entries', formSetId, q, status, assignee, sort, cursor],
    queryFn: () => api.GET('/form-sets/{formSetId}/entries', { params: { path: { formSetId }, query: { limit: 20, q: q || undefined, status: status ? (status as (typeof STATUSES)[number]) : undefined, assignee: assignee || undefined, sort: sort as (typeof SORTS)[number], cursor: cursor || undefined } } }),
    placeholderData: keepPreviousData,
  });
  const update = (changes: Record<string, string>) => {
    const next = new URLSearchParams(params);
    for (const [key, value] of Object.entries(changes)) {
      if (value) next.set(key, value);
      else next.delete(key);
    }
    if (!('cursor' in changes)) next.delete('cursor');
    setSelection(new Set());
    setParams(next);
  };
  const search = (event: FormEvent) => {
    event.preventDefault();
    update({ q: draftQ.trim() });
  };
  // A pinned walk may list an entry again with its newer state: show each once, as last listed.
  const items = [...new Map((page.data?.items ?? []).map((e) => [e.id, e])).values()];
  const selected = items.filter((entry) => selection.has(entry.id));
  const toggle = (id: string, on: boolean) =>
    setSelection((current) => {
      const next = new Set(current);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  return (
    <section>
      <div className="page-head">
        <h1>
          {formSet.data?.name ?? ''} <span className="muted">{t('list.title')}</span>
        </h1>
        {can('content.write', formSetId) && (
          <Link className="button primary" to={path(`content/${formSetId}/new`)}>
            {t('list.new')}
          </Link>
        )}
      </div>
      <div className="filters">
        <form role="search" onSubmit={search}>
          <label>
            {t('list.search')}
            <input type="search" value={draftQ} placeholder={t('list.searchPlaceholder')} onChange={(e) => setDraftQ(e.target.value)} />
          </label>
          <button type="submit">{t('list.search')}</button>
        </form>
        <label>
          {t('list.status')}
          <select value={status} onChange={(e) => update({ status: e.target.value })}>
            <option value="">{t('status.any')}</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {t(`status.${s}`)}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('list.col.assignee')}
          <select value={assignee} onChange={(e) => update({ assignee: e.target.value })}>
            <option value="">{t('list.anyone')}</option>
            {users.map((u) => (
              <option key={u.id} value={u.id}>
                {u.email}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('list.sort')}
          <select value={sort} onChange={(e) => update({ sort: e.target.value })}>
            {SORTS.map((s) => (
              <option key={s} value={s}>
                {t(`list.sort.${s}` as MessageKey)}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorMessage error={page.error} />
      <BulkActions formSetId={formSetId} selected={selected} onClear={() => setSelection(new Set())} onDone={async () => void (await page.refetch())} />
      <table className="list">
        <thead>
          <tr>
            {selecting && (
              <th scope="col" className="select">
                <input
                  type="checkbox"
                  aria-label={t('bulk.selectPage')}
                  checked={items.length > 0 && selected.length === items.length}
                  ref={(box) => {
                    if (box) box.indeterminate = selected.length > 0 && selected.length < items.length;
                  }}
                  onChange={(e) => setSelection(e.target.checked ? new Set(items.map((entry) => entry.id)) : new Set())}
                />
              </th>
            )}
            <th scope="col">{t('list.col.title')}</th>
            <th scope="col">{t('list.col.status')}</th>
            <th scope="col">{t('list.col.locales')}</th>
            <th scope="col">{t('list.col.assignee')}</th>
            <th scope="col">{t('list.col.updated')}</th>
          </tr>
        </thead>
        <tbody>
          {items.map((entry) => (
            <tr key={entry.id}>
              {selecting && (
                <td className="select">
                  <input type="checkbox" aria-label={t('bulk.select', { title: entry.title || entry.slug })} checked={selection.has(entry.id)} onChange={(e) => toggle(entry.id, e.target.checked)} />
                </td>
              )}
              <td>
                <Link to={path(`entries/${entry.id}`)}>{entry.title || t('list.untitled')}</Link>
                <div className="muted small">/{entry.slug}</div>
              </td>
              <td>
                {entry.latestRevision && <StatusBadge status={entry.latestRevision.status} />}
                {entry.liveRevision && entry.latestRevision?.status !== 'published' && <span className="badge status-published">{t('list.live')}</span>}
              </td>
              <td>{entry.localeCoverage?.join(', ') ?? ''}</td>
              <td>{entry.assignee ? userName(entry.assignee) : ''}</td>
              <td>
                <time dateTime={entry.updatedAt}>{formatTime(entry.updatedAt)}</time>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {page.data && items.length === 0 && <p>{t('list.empty')}</p>}
      <div className="pager">
        {cursor && (
          <button type="button" onClick={() => update({ cursor: '' })}>
            {t('list.first')}
          </button>
        )}
        {page.data?.nextCursor && (
          <button type="button" onClick={() => update({ cursor: page.data!.nextCursor! })}>
            {t('list.next')}
          </button>
        )}
      </div>
    </section>
  );
}

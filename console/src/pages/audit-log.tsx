import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { useInfiniteQuery } from '@tanstack/react-query';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { useActorName, useEventName, useUserNames } from '../components/user-names.ts';
import { EntryPicker } from '../fields/entry-ref-field.tsx';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The entry a filter names: its whole id, or the start of it (the 8 characters the log shows) when exactly one
 * entry of the rows loaded starts so. Null when none or several do.
 */
export function entryIdFor(typed: string, shown: ReadonlyArray<string | null>): string | null {
  const text = typed.trim().toLowerCase();
  if (text === '' || UUID.test(text)) return text;
  if (!/^[0-9a-f-]{8,}$/.test(text)) return null;
  const matches = new Set(shown.filter((id): id is string => id?.startsWith(text) === true));
  return matches.size === 1 ? [...matches][0]! : null;
}

/** The project's audit log (tenant_admin), newest first, filtered by actor, entry and time. */
export function AuditLog() {
  const { t, formatTime } = useI18n();
  const { api, projectId, path } = useProject();
  const actorName = useActorName();
  const eventName = useEventName();
  const { users } = useUserNames();
  const [draft, setDraft] = useState({ actor: '', entryId: '', from: '', to: '' });
  const [filters, setFilters] = useState(draft);
  const [filterProblem, setFilterProblem] = useState<string | null>(null);
  const [picking, setPicking] = useState(false);
  const iso = (local: string) => (local ? new Date(local).toISOString() : '');
  const log = useInfiniteQuery({
    queryKey: [projectId, 'audit', filters],
    initialPageParam: '',
    queryFn: ({ pageParam }) =>
      api.GET('/audit-log', { params: { query: { limit: 50, cursor: pageParam || undefined, actor: filters.actor.trim() || undefined, entryId: filters.entryId.trim() || undefined, from: iso(filters.from) || undefined, to: iso(filters.to) || undefined } } }),
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const items = log.data?.pages.flatMap((p) => p.items) ?? [];
  const apply = (next: typeof draft) => {
    const entryId = entryIdFor(next.entryId, items.map((item) => item.entryId));
    if (entryId === null) {
      setFilterProblem(t('audit.entryUnknown', { typed: next.entryId.trim() }));
      return;
    }
    // A user is named by e-mail in the log: the filter takes the e-mail too.
    const actor = users.find((u) => u.email.toLowerCase() === next.actor.trim().toLowerCase())?.id ?? next.actor;
    setFilterProblem(null);
    setFilters({ ...next, entryId, actor });
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    apply(draft);
  };
  return (
    <section>
      <h1>{t('audit.title')}</h1>
      <form className="filters" onSubmit={submit}>
        <label>
          {t('audit.actor')}
          <input type="text" value={draft.actor} aria-describedby="audit-actor-help" onChange={(e) => setDraft({ ...draft, actor: e.target.value })} />
          <span id="audit-actor-help" className="help">
            {t('audit.actorHelp')}
          </span>
        </label>
        <label>
          {t('audit.entry')}
          <input
            type="text"
            value={draft.entryId}
            aria-describedby="audit-entry-help"
            aria-invalid={filterProblem ? true : undefined}
            onChange={(e) => setDraft({ ...draft, entryId: e.target.value })}
          />
          <span id="audit-entry-help" className="help">
            {t('audit.entryHelp')}
          </span>
        </label>
        <button type="button" onClick={() => setPicking(true)}>
          {t('field.chooseEntry')}
        </button>
        <label>
          {t('audit.from')}
          <input type="datetime-local" value={draft.from} onChange={(e) => setDraft({ ...draft, from: e.target.value })} />
        </label>
        <label>
          {t('audit.to')}
          <input type="datetime-local" value={draft.to} onChange={(e) => setDraft({ ...draft, to: e.target.value })} />
        </label>
        <button type="submit">{t('audit.filter')}</button>
      </form>
      {filterProblem && (
        <p className="error" role="alert">
          {filterProblem}
        </p>
      )}
      <EntryPicker
        open={picking}
        onClose={() => setPicking(false)}
        onPick={(entry) => {
          setPicking(false);
          const next = { ...draft, entryId: entry.id };
          setDraft(next);
          apply(next);
        }}
      />
      <ErrorMessage error={log.error} />
      <table className="list">
        <thead>
          <tr>
            <th scope="col">{t('history.when')}</th>
            <th scope="col">{t('history.who')}</th>
            <th scope="col">{t('history.what')}</th>
            <th scope="col">{t('review.col.entry')}</th>
          </tr>
        </thead>
        <tbody>
          {items.map((item) => (
            <tr key={item.eventId}>
              <td>{formatTime(item.occurredAt)}</td>
              <td>{actorName(item.actor)}</td>
              <td>
                {eventName(item)}
                {item.flag && (
                  <>
                    {' '}
                    <span className={`badge audit-flag-${item.flag.kind}`}>{t(`audit.flag.${item.flag.kind}`, { rules: item.flag.rules.join(', ') })}</span>
                  </>
                )}
                {item.refusal && (
                  <div className="muted">
                    {t('audit.refusal', { operation: item.refusal.operation, code: item.refusal.code, reason: item.refusal.reason, count: String(item.refusal.count) })}
                  </div>
                )}
              </td>
              <td>{item.entryId ? <Link to={path(`entries/${item.entryId}/history`)}>{item.entryId.slice(0, 8)}</Link> : item.streamId}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {log.hasNextPage && (
        <button type="button" onClick={() => void log.fetchNextPage()}>
          {t('audit.more')}
        </button>
      )}
    </section>
  );
}

import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ApiError } from '../api/admin-client.ts';
import { ErrorMessage } from '../components/error-message.tsx';
import { FieldValue } from '../components/field-value.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { useActorName } from '../components/user-names.ts';
import type { MessageKey } from '../i18n/en.ts';

/** `YYYY-MM-DDTHH:mm:ss` of an instant in the browser's time zone: a datetime-local input's value. */
function localInputValue(iso: string): string {
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/**
 * "As of": the site as the public API served it at an instant, from the admin API's as-of reads (built from
 * the log; docs/api.md "Admin and agent API"). The instant is picked as a date and time in the browser's time zone;
 * the page's address carries it in UTC (`at`), with the form set, the entry and the locale, so a view can be
 * linked to (the entry history links each event's instant here). A banner says throughout that this is the
 * past: nothing here is the current content, and nothing can be edited.
 */
export function AsOfView() {
  const { t, language } = useI18n();
  const { api, projectId, project, path } = useProject();
  const [search, setSearch] = useSearchParams();
  const at = search.get('at') ?? '';
  const formSetId = search.get('formSet') ?? '';
  const entryId = search.get('entry') ?? '';
  const locale = search.get('locale') ?? '';
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const formSets = useQuery({ queryKey: [projectId, 'form-sets'], queryFn: () => api.GET('/form-sets') });
  const [draft, setDraft] = useState(() => ({ local: localInputValue(at || new Date().toISOString()), formSetId, locale }));
  useEffect(() => setDraft({ local: localInputValue(at || new Date().toISOString()), formSetId, locale }), [at, formSetId, locale]);
  const chosenFormSet = formSetId || (entryId ? '' : (formSets.data?.items[0]?.id ?? ''));
  const instantFormat = useMemo(() => new Intl.DateTimeFormat(language, { dateStyle: 'full', timeStyle: 'long' }), [language]);

  const show = (event: FormEvent) => {
    event.preventDefault();
    const ms = Date.parse(draft.local);
    if (Number.isNaN(ms)) return;
    const next = new URLSearchParams({ at: new Date(ms).toISOString() });
    const nextFormSet = draft.formSetId || chosenFormSet;
    if (nextFormSet) next.set('formSet', nextFormSet);
    // The entry stays on view at the new instant, unless another form set was chosen.
    if (entryId && (!formSetId || nextFormSet === formSetId)) next.set('entry', entryId);
    if (draft.locale) next.set('locale', draft.locale);
    setSearch(next);
  };
  /** The address of this view with some parameters changed. */
  const viewWith = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(search);
    for (const [key, value] of Object.entries(changes)) {
      if (value === null) next.delete(key);
      else next.set(key, value);
    }
    return `?${next.toString()}`;
  };

  return (
    <section className="as-of">
      <h1>{t('asOf.title')}</h1>
      <p className="muted">{t('asOf.intro')}</p>
      <form className="filters" onSubmit={show} aria-label={t('asOf.pick')}>
        <label>
          {t('asOf.instant', { zone })}
          <input type="datetime-local" step="1" required value={draft.local} onChange={(e) => setDraft({ ...draft, local: e.target.value })} />
        </label>
        <label>
          {t('asOf.formSet')}
          <select value={draft.formSetId || chosenFormSet} onChange={(e) => setDraft({ ...draft, formSetId: e.target.value })}>
            {formSets.data?.items.map((fs) => (
              <option key={fs.id} value={fs.id}>
                {fs.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('asOf.locale')}
          <select value={draft.locale} onChange={(e) => setDraft({ ...draft, locale: e.target.value })}>
            <option value="">{t('asOf.defaultLocale')}</option>
            {project.contentLocales.locales.map((l) => (
              <option key={l} value={l}>
                {l}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="primary">
          {t('asOf.show')}
        </button>
      </form>
      {at && (
        <>
          <div className="past-view" role="note" aria-labelledby="past-view-title">
            <p id="past-view-title">
              <strong>{t('asOf.banner')}</strong> <time dateTime={at}>{instantFormat.format(new Date(at))}</time>
            </p>
            <p>{t('asOf.bannerDetail')}</p>
            <p>
              <Link to={entryId ? path(`entries/${entryId}`) : chosenFormSet ? path(`content/${chosenFormSet}`) : path('')}>{t('asOf.now')}</Link>
            </p>
          </div>
          {entryId && <ServedEntry entryId={entryId} at={at} locale={locale} listLink={viewWith({ entry: null })} />}
          {chosenFormSet && <ServedList formSetId={chosenFormSet} at={at} entryLink={(id) => viewWith({ entry: id, formSet: chosenFormSet })} selected={entryId} />}
        </>
      )}
    </section>
  );
}

/** The entry as the public API served it at `at` in `locale`; when it was not live, its workflow state then. */
function ServedEntry({ entryId, at, locale, listLink }: { entryId: string; at: string; locale: string; listLink: string }) {
  const { t, formatTime } = useI18n();
  const { api, projectId, path } = useProject();
  const actorName = useActorName();
  const heading = useRef<HTMLHeadingElement>(null);
  const served = useQuery({
    queryKey: [projectId, 'as-of', 'entry', entryId, at, locale],
    queryFn: () => api.GET('/as-of/entries/{entryId}', { params: { path: { entryId }, query: { at, ...(locale ? { locale } : {}) } } }),
    retry: false,
  });
  const notLive = served.error instanceof ApiError && served.error.status === 404;
  const workflow = useQuery({
    queryKey: [projectId, 'as-of', 'workflow', entryId, at],
    queryFn: () => api.GET('/entries/{entryId}/workflow', { params: { path: { entryId }, query: { at } } }),
    enabled: notLive,
    retry: false,
  });
  const formSetId = served.data?.formSetId ?? workflow.data?.formSetId;
  const formSet = useQuery({ queryKey: [projectId, 'form-set', formSetId], queryFn: () => api.GET('/form-sets/{formSetId}', { params: { path: { formSetId: formSetId! } } }), enabled: Boolean(formSetId) });
  const fields = formSet.data?.definition.fields ?? [];
  // Keyboard users land on the entry they opened.
  // biome-ignore lint/correctness/useExhaustiveDependencies: opening another entry or time is the cue to focus again.
  useEffect(() => heading.current?.focus(), [entryId, at]);
  const entry = served.data;
  return (
    <section className="served-entry" aria-labelledby="served-entry-title">
      <h2 id="served-entry-title" ref={heading} tabIndex={-1}>
        {entry ? t('asOf.entryTitle', { slug: entry.entry.slug }) : t('asOf.entryNotServedTitle', { slug: workflow.data?.slug ?? '…' })}
      </h2>
      <p className="row">
        <Link to={path(`entries/${entryId}/history`)}>{t('asOf.history')}</Link>
        <Link to={listLink}>{t('asOf.backToList')}</Link>
      </p>
      {notLive ? (
        <div className="notice" role="status">
          <p>{t('asOf.notLive')}</p>
          {workflow.data && (
            <p>
              {workflow.data.deleted
                ? t('asOf.deleted')
                : workflow.data.latest
                  ? t('asOf.latestThen', { revision: workflow.data.latest.revision, status: t(`status.${workflow.data.latest.status}` as MessageKey) })
                  : null}
            </p>
          )}
          <ErrorMessage error={workflow.error instanceof ApiError && workflow.error.status === 404 ? new Error(t('asOf.notYet')) : workflow.error} />
        </div>
      ) : (
        <ErrorMessage error={served.error} />
      )}
      {entry && (
        <>
          <dl className="served-facts">
            <dt>{t('asOf.address')}</dt>
            <dd>
              <code>{`/form-sets/${entry.formSet.slug}/entries/${entry.entry.slug}`}</code>
            </dd>
            <dt>{t('asOf.revision')}</dt>
            <dd>
              {t('editor.revision', { revision: entry.revision.revision })} <StatusBadge status="published" />
            </dd>
            <dt>{t('asOf.publishedAt')}</dt>
            <dd>
              <time dateTime={entry.revision.publishedAt}>{formatTime(entry.revision.publishedAt)}</time> · {actorName(entry.revision.publishedBy)} ·{' '}
              {t(`asOf.trigger.${entry.revision.trigger}` as MessageKey)}
            </dd>
            <dt>{t('asOf.liveSince')}</dt>
            <dd>
              <time dateTime={entry.liveSince}>{formatTime(entry.liveSince)}</time>
            </dd>
            <dt>{t('asOf.servedLocale')}</dt>
            <dd>{entry.locale}</dd>
          </dl>
          <h3>{t('asOf.values')}</h3>
          <table className="list served-values">
            <thead>
              <tr>
                <th scope="col">{t('diff.field')}</th>
                <th scope="col">{t('asOf.value')}</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(entry.data).map(([key, value]) => {
                const field = fields.find((f) => f.key === key);
                return (
                  <tr key={key}>
                    <th scope="row">{field?.label ?? key}</th>
                    <td>
                      <FieldValue field={field} value={value} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

/** The form set's entries the public API listed at `at`, in its order, a page at a time. */
function ServedList({ formSetId, at, entryLink, selected }: { formSetId: string; at: string; entryLink: (entryId: string) => string; selected: string }) {
  const { t, formatTime } = useI18n();
  const { api, projectId } = useProject();
  const actorName = useActorName();
  const list = useInfiniteQuery({
    queryKey: [projectId, 'as-of', 'list', formSetId, at],
    initialPageParam: '',
    queryFn: ({ pageParam }) => api.GET('/as-of/form-sets/{formSetId}/entries', { params: { path: { formSetId }, query: { at, limit: 50, cursor: pageParam || undefined } } }),
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const items = list.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <section aria-labelledby="served-list-title">
      <h2 id="served-list-title">{t('asOf.listTitle')}</h2>
      <ErrorMessage error={list.error} />
      {list.data && items.length === 0 && <p role="status">{t('asOf.listEmpty')}</p>}
      {items.length > 0 && (
        <table className="list">
          <thead>
            <tr>
              <th scope="col">{t('asOf.slug')}</th>
              <th scope="col">{t('asOf.revision')}</th>
              <th scope="col">{t('asOf.publishedAt')}</th>
              <th scope="col">{t('asOf.publishedBy')}</th>
              <th scope="col">{t('asOf.liveSince')}</th>
            </tr>
          </thead>
          <tbody>
            {items.map((item) => (
              <tr key={item.entry.id} aria-current={item.entry.id === selected ? 'true' : undefined}>
                <td>
                  <Link to={entryLink(item.entry.id)} aria-label={t('asOf.openEntry', { slug: item.entry.slug })}>
                    {item.entry.slug}
                  </Link>
                </td>
                <td>{item.revision.revision}</td>
                <td>
                  <time dateTime={item.revision.publishedAt}>{formatTime(item.revision.publishedAt)}</time>
                </td>
                <td>{actorName(item.revision.publishedBy)}</td>
                <td>
                  <time dateTime={item.liveSince}>{formatTime(item.liveSince)}</time>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list.hasNextPage && (
        <button type="button" onClick={() => void list.fetchNextPage()}>
          {t('history.more')}
        </button>
      )}
    </section>
  );
}

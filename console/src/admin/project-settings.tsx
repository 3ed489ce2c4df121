import { useState, type CSSProperties, type FormEvent, type ReactNode } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { FormDialog } from '../components/form-dialog.tsx';
import { PlanNotice } from './plan-notice.tsx';
import type { ProjectOverview } from '../shell/project-context.tsx';
import { planAtLeast, type FormSet, type IpAllowlistEntry, type LoginAppearance } from './shapes.ts';
import { ActionsColumnHeader } from '../components/actions-column-header.tsx';

/** Project settings (tenant_admin): locales, site, custom domains, the sign-in page's look, the console IP allowlist. */
export function ProjectSettings() {
  const { t } = useI18n();
  const { api, projectId } = useProject();
  const details = useQuery({ queryKey: [projectId, 'project'], queryFn: () => api.GET('/project') });
  return (
    <section className="settings">
      <h1>{t('settings.title')}</h1>
      <ErrorMessage error={details.error} />
      {details.data && (
        <>
          <LocalesForm current={details.data.contentLocales} />
          <SiteForm current={details.data.siteSettings} />
          <UrlPatterns siteUrl={details.data.siteSettings.siteUrl} />
          <DomainsForm current={details.data.customDomains} />
        </>
      )}
      <LoginAppearanceSettings />
      <IpAllowlist />
    </section>
  );
}

/** A settings card: a form with its own save button, error and saved note. */
function Card({ title, id, onSubmit, pending, error, saved, children }: { title: string; id: string; onSubmit: () => void; pending: boolean; error: unknown; saved: boolean; children: ReactNode }) {
  const { t } = useI18n();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSubmit();
  };
  return (
    <form className="panel admin-form" aria-labelledby={id} onSubmit={submit}>
      <h2 id={id}>{title}</h2>
      {children}
      <ErrorMessage error={error} />
      <div className="row">
        <button type="submit" className="primary" disabled={pending}>
          {t('settings.save')}
        </button>
        {saved && (
          <span role="status" className="muted">
            {t('contact.saved')}
          </span>
        )}
      </div>
    </form>
  );
}

function useSave<T>(call: () => Promise<T>) {
  const { projectId } = useProject();
  const queryClient = useQueryClient();
  return useMutation({ mutationFn: call, onSuccess: () => queryClient.invalidateQueries({ queryKey: [projectId, 'project'] }) });
}

function LocalesForm({ current }: { current: ProjectOverview['contentLocales'] }) {
  const { t } = useI18n();
  const { api } = useProject();
  const [locales, setLocales] = useState(current.locales.join(', '));
  const [defaultLocale, setDefault] = useState(current.defaultLocale);
  const list = locales.split(/[\s,]+/).filter(Boolean);
  const save = useSave(() => api.PATCH('/project/content-locales', { body: { locales: list, defaultLocale } }));
  return (
    <Card title={t('settings.locales')} id="locales-title" onSubmit={() => save.mutate()} pending={save.isPending} error={save.error} saved={save.isSuccess}>
      <label>
        {t('settings.localeList')}
        <input type="text" value={locales} onChange={(e) => setLocales(e.target.value)} aria-describedby="locales-help" />
      </label>
      <p id="locales-help" className="help">
        {t('settings.localeHelp')}
      </p>
      <label>
        {t('settings.defaultLocale')}
        <select value={defaultLocale} onChange={(e) => setDefault(e.target.value)}>
          {list.map((l) => (
            <option key={l} value={l}>
              {l}
            </option>
          ))}
        </select>
      </label>
    </Card>
  );
}

function SiteForm({ current }: { current: ProjectOverview['siteSettings'] }) {
  const { t } = useI18n();
  const { api } = useProject();
  const [draft, setDraft] = useState({ siteUrl: current.siteUrl ?? '', siteName: current.siteName ?? '', description: current.description ?? '' });
  const save = useSave(() => api.PUT('/project/site-settings', { body: { siteUrl: draft.siteUrl.trim() || null, siteName: draft.siteName.trim() || null, description: draft.description.trim() || null } }));
  return (
    <Card title={t('settings.site')} id="site-title" onSubmit={() => save.mutate()} pending={save.isPending} error={save.error} saved={save.isSuccess}>
      <label>
        {t('settings.siteUrl')}
        <input type="url" value={draft.siteUrl} onChange={(e) => setDraft({ ...draft, siteUrl: e.target.value })} />
      </label>
      <label>
        {t('settings.siteName')}
        <input type="text" value={draft.siteName} onChange={(e) => setDraft({ ...draft, siteName: e.target.value })} />
      </label>
      <label>
        {t('settings.description')}
        <textarea rows={2} value={draft.description} onChange={(e) => setDraft({ ...draft, description: e.target.value })} />
      </label>
    </Card>
  );
}

/** Where each form set's entries live on the site (sitemaps, Open Graph URLs, llms.txt): the URL pattern of its definition. */
function UrlPatterns({ siteUrl }: { siteUrl: string | null }) {
  const { t } = useI18n();
  const { api, projectId } = useProject();
  const formSets = useQuery({ queryKey: [projectId, 'form-sets'], queryFn: () => api.GET('/form-sets') });
  return (
    <section className="panel" aria-labelledby="patterns-title">
      <h2 id="patterns-title">{t('settings.patterns')}</h2>
      <p className="help">{t('settings.patternsHelp', { site: siteUrl ?? t('settings.noSiteUrl') })}</p>
      <ErrorMessage error={formSets.error} />
      {formSets.data?.items.map((formSet) => (
        <UrlPattern key={formSet.id} formSetId={formSet.id} />
      ))}
    </section>
  );
}

function UrlPattern({ formSetId }: { formSetId: string }) {
  const { api, projectId } = useProject();
  const formSet = useQuery({ queryKey: [projectId, 'form-set', formSetId], queryFn: () => api.GET('/form-sets/{formSetId}', { params: { path: { formSetId } } }) });
  if (!formSet.data) return <ErrorMessage error={formSet.error} />;
  return <UrlPatternForm formSet={formSet.data} />;
}

function UrlPatternForm({ formSet }: { formSet: FormSet }) {
  const { t } = useI18n();
  const { api, projectId } = useProject();
  const queryClient = useQueryClient();
  const { sitemap } = formSet.definition;
  const [draft, setDraft] = useState({ urlPattern: sitemap.urlPattern, include: sitemap.include });
  const save = useMutation({
    mutationFn: () => {
      // The definition is replaced whole: everything but the sitemap settings goes back as it was read.
      const { id: _id, ...definition } = formSet.definition;
      return api.PUT('/form-sets/{formSetId}', { params: { path: { formSetId: formSet.id } }, body: { ...definition, sitemap: { ...sitemap, ...draft }, expectedVersion: formSet.version } });
    },
    onSuccess: (updated) => queryClient.setQueryData([projectId, 'form-set', formSet.id], updated),
  });
  return (
    <form
      className="filters"
      aria-label={formSet.name}
      onSubmit={(event) => {
        event.preventDefault();
        save.mutate();
      }}
    >
      <label>
        {t('settings.patternOf', { name: formSet.name })}
        <input type="text" required value={draft.urlPattern} onChange={(e) => setDraft({ ...draft, urlPattern: e.target.value })} />
      </label>
      <label className="inline">
        <input type="checkbox" checked={draft.include} onChange={(e) => setDraft({ ...draft, include: e.target.checked })} />
        {t('settings.inSitemap')}
      </label>
      <button type="submit" disabled={save.isPending}>
        {t('settings.save')}
      </button>
      {save.isSuccess && (
        <span role="status" className="muted">
          {t('contact.saved')}
        </span>
      )}
      <ErrorMessage error={save.error} />
    </form>
  );
}

function DomainsForm({ current }: { current: string[] }) {
  const { t } = useI18n();
  const { api } = useProject();
  const [domains, setDomains] = useState(current.join('\n'));
  const save = useSave(() => api.PUT('/project/custom-domains', { body: { domains: domains.split(/\s+/).filter(Boolean) } }));
  return (
    <Card title={t('settings.domains')} id="domains-title" onSubmit={() => save.mutate()} pending={save.isPending} error={save.error} saved={save.isSuccess}>
      <label>
        {t('settings.domainList')}
        <textarea rows={3} value={domains} onChange={(e) => setDomains(e.target.value)} aria-describedby="domains-help" />
      </label>
      <p id="domains-help" className="help">
        {t('settings.domainHelp')}
      </p>
    </Card>
  );
}

const HEX = /^#[0-9a-fA-F]{6}$/;

function LoginAppearanceSettings() {
  const { api, projectId } = useProject();
  const queryClient = useQueryClient();
  const current = useQuery({ queryKey: [projectId, 'login-appearance'], queryFn: () => api.GET('/project/login-appearance') });
  if (!current.data) return <ErrorMessage error={current.error} />;
  return (
    <AppearanceForm
      current={current.data}
      onSaved={async (next) => {
        queryClient.setQueryData([projectId, 'login-appearance'], next);
        await queryClient.invalidateQueries({ queryKey: ['login-branding', projectId] });
      }}
    />
  );
}

function AppearanceForm({ current, onSaved }: { current: LoginAppearance; onSaved: (next: LoginAppearance) => Promise<void> }) {
  const { t } = useI18n();
  const { api } = useProject();
  const [draft, setDraft] = useState({ logoUrl: current.logoUrl ?? '', primaryColor: current.primaryColor ?? '', accentColor: current.accentColor ?? '', message: current.message ?? '' });
  const save = useMutation({
    mutationFn: () =>
      api.PUT('/project/login-appearance', {
        body: { logoUrl: draft.logoUrl.trim() || null, primaryColor: draft.primaryColor.trim() || null, accentColor: draft.accentColor.trim() || null, message: draft.message.trim() || null },
      }),
    onSuccess: onSaved,
  });
  // The preview is the sign-in page's own markup and classes, coloured as the draft says.
  const style: CSSProperties = {
    ...(HEX.test(draft.primaryColor) ? { ['--brand' as string]: draft.primaryColor } : {}),
    ...(HEX.test(draft.accentColor) ? { ['--accent' as string]: draft.accentColor } : {}),
  };
  const colour = (key: 'primaryColor' | 'accentColor', label: string) => (
    <div className="row">
      <label>
        {label}
        <input type="text" value={draft[key]} placeholder="#1d4ed8" onChange={(e) => setDraft({ ...draft, [key]: e.target.value })} />
      </label>
      <label>
        <span className="visually-hidden">{t('settings.pick', { what: label })}</span>
        <input type="color" value={HEX.test(draft[key]) ? draft[key] : '#1d4ed8'} onChange={(e) => setDraft({ ...draft, [key]: e.target.value })} />
      </label>
    </div>
  );
  return (
    <Card title={t('settings.appearance')} id="appearance-title" onSubmit={() => save.mutate()} pending={save.isPending} error={save.error} saved={save.isSuccess}>
      <div className="appearance">
        <div>
          <label>
            {t('settings.logoUrl')}
            <input type="url" value={draft.logoUrl} onChange={(e) => setDraft({ ...draft, logoUrl: e.target.value })} />
          </label>
          {colour('primaryColor', t('settings.primaryColor'))}
          {colour('accentColor', t('settings.accentColor'))}
          <label>
            {t('settings.message')}
            <textarea rows={2} maxLength={500} value={draft.message} onChange={(e) => setDraft({ ...draft, message: e.target.value })} />
          </label>
        </div>
        <figure className="login-preview" aria-label={t('settings.preview')}>
          <div className="sign-in-page preview-frame" style={style}>
            <div className="sign-in-card">
              {draft.logoUrl && <img className="sign-in-logo" src={draft.logoUrl} alt={current.projectName} />}
              <p className="preview-heading">
                {current.projectName}: {t('signIn.title')}
              </p>
              {draft.message && <p className="sign-in-message">{draft.message}</p>}
              <p className="preview-field">{t('signIn.email')}</p>
              <p className="preview-field">{t('signIn.password')}</p>
              <span className="button primary preview-button">{t('signIn.submit')}</span>
            </div>
          </div>
          <figcaption className="muted small">{t('settings.preview')}</figcaption>
        </figure>
      </div>
    </Card>
  );
}

function IpAllowlist() {
  const { t } = useI18n();
  const { api, projectId, project } = useProject();
  const queryClient = useQueryClient();
  const allowed = planAtLeast(project.plan, 'business');
  const entries = useQuery({ queryKey: [projectId, 'ip-allowlist'], queryFn: () => api.GET('/project/ip-allowlist') });
  const [draft, setDraft] = useState({ cidr: '', label: '' });
  const [removing, setRemoving] = useState<IpAllowlistEntry | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: [projectId, 'ip-allowlist'] });
  const add = useMutation({
    mutationFn: () => api.POST('/project/ip-allowlist', { body: { cidr: draft.cidr.trim(), ...(draft.label.trim() ? { label: draft.label.trim() } : {}) } }),
    onSuccess: async () => {
      setDraft({ cidr: '', label: '' });
      await refresh();
    },
  });
  const remove = useMutation({
    mutationFn: (entry: IpAllowlistEntry) => api.DELETE('/project/ip-allowlist/{entryId}', { params: { path: { entryId: entry.id } } }),
    onSuccess: async () => {
      setRemoving(null);
      await refresh();
    },
  });
  const items = entries.data?.items ?? [];
  return (
    <section className="panel" aria-labelledby="allowlist-title">
      <h2 id="allowlist-title">{t('settings.allowlist')}</h2>
      {!allowed && <PlanNotice feature={t('settings.allowlist')} plan="business" />}
      <p className="help">{entries.data?.enforced ? t('settings.allowlistEnforced') : t('settings.allowlistOpen')}</p>
      <p className="help">{t('settings.allowlistGuard')}</p>
      <ErrorMessage error={entries.error} />
      {items.length > 0 && (
        <table className="list">
          <thead>
            <tr>
              <th scope="col">{t('settings.cidr')}</th>
              <th scope="col">{t('settings.label')}</th>
              <ActionsColumnHeader />
            </tr>
          </thead>
          <tbody>
            {items.map((entry) => (
              <tr key={entry.id}>
                <td>
                  <code>{entry.cidr}</code>
                </td>
                <td>{entry.label ?? ''}</td>
                <td>
                  <button type="button" className="danger" aria-label={t('settings.removeNamed', { cidr: entry.cidr })} onClick={() => setRemoving(entry)}>
                    {t('settings.remove')}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {allowed && (
        <form
          className="filters"
          onSubmit={(event) => {
            event.preventDefault();
            add.mutate();
          }}
        >
          <label>
            {t('settings.cidr')}
            <input type="text" required placeholder="203.0.113.0/24" value={draft.cidr} onChange={(e) => setDraft({ ...draft, cidr: e.target.value })} />
          </label>
          <label>
            {t('settings.label')}
            <input type="text" maxLength={100} value={draft.label} onChange={(e) => setDraft({ ...draft, label: e.target.value })} />
          </label>
          <button type="submit" className="primary" disabled={add.isPending}>
            {t('settings.addRange')}
          </button>
        </form>
      )}
      <ErrorMessage error={add.error} />
      {removing && (
        <FormDialog open title={t('settings.removeTitle', { cidr: removing.cidr })} submitLabel={t('settings.remove')} danger mutation={remove} onClose={() => setRemoving(null)} onSubmit={() => remove.mutate(removing)}>
          <p>{items.length === 1 ? t('settings.removeLast') : t('settings.removeText')}</p>
        </FormDialog>
      )}
    </section>
  );
}

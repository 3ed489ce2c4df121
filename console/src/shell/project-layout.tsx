import { useEffect, useMemo, useRef, type RefObject } from 'react';
import { NavLink, Outlet, useLocation, useNavigate, useParams } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { useI18n, UI_LANGUAGES, type UiLanguage } from '../i18n/i18n.tsx';
import { useSession } from '../session/session.tsx';
import { SessionExpiredDialog, SignInPage } from '../pages/sign-in.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { ProjectContext, type ProjectContextValue } from './project-context.tsx';
import type { MessageKey } from '../i18n/en.ts';
import { ADMIN_AREAS } from '../admin/admin-routes.tsx';
import { RouteErrorBoundary } from '../components/route-error-boundary.tsx';
import { StartingUp } from '../components/starting-up.tsx';
import { NeedsAdministrator } from './needs-administrator.tsx';

/**
 * The frame of every page of a project: header (project switcher, language, user, sign-out), the
 * navigation by area, and the page. Issue 19's areas (contact forms, webhooks, people and keys,
 * settings, operations) are further entries of `AREAS` and routes in app.tsx.
 */
export function ProjectLayout() {
  const { projectId = '' } = useParams();
  const { status } = useSession();
  if (status === 'checking') return <StartingUp />;
  if (status === 'signed-out') return <SignInPage projectId={projectId} />;
  return <SignedInProject projectId={projectId} />;
}

interface Area {
  label: MessageKey;
  to: string;
  adminOnly?: boolean;
}

const AREAS: Area[] = [
  { label: 'nav.review', to: 'review' },
  { label: 'nav.media', to: 'media' },
  { label: 'nav.asOf', to: 'as-of' },
  { label: 'nav.audit', to: 'audit', adminOnly: true },
  ...ADMIN_AREAS,
];

function SignedInProject({ projectId }: { projectId: string }) {
  const { t, language, setLanguage } = useI18n();
  const { session, clientFor, signOut } = useSession();
  const navigate = useNavigate();
  const api = useMemo(() => clientFor(projectId), [clientFor, projectId]);
  const project = useQuery({ queryKey: [projectId, 'project'], queryFn: () => api.GET('/project') });
  const projects = useQuery({ queryKey: ['projects'], queryFn: () => api.GET('/projects') });
  const formSets = useQuery({ queryKey: [projectId, 'form-sets'], queryFn: () => api.GET('/form-sets') });
  const user = session!.user;
  const value = useMemo<ProjectContextValue | null>(
    () =>
      project.data
        ? { projectId, project: project.data, api, isAdmin: user.role === 'tenant_admin', userId: user.id, path: (sub: string) => `/p/${projectId}/${sub}` }
        : null,
    [project.data, projectId, api, user],
  );
  const { pathname } = useLocation();
  // The area a URL opens (its first segment under /p/{projectId}/): an administrator's is refused to an editor.
  const area = AREAS.find((a) => pathname.split('/')[3] === a.to);
  const refused = area?.adminOnly && user.role !== 'tenant_admin' ? area : undefined;
  const main = useRef<HTMLElement>(null);
  useFocusHeadingOnNavigation(main, pathname);
  return (
    <div className="app">
      <a className="skip-link" href="#main">
        {t('app.skipToContent')}
      </a>
      <header className="topbar">
        <span className="brand">{t('app.name')}</span>
        <label className="project-switcher">
          <span>{t('nav.project')}</span>
          <select value={projectId} onChange={(e) => navigate(`/p/${e.target.value}/`)}>
            {(projects.data?.items ?? [{ id: projectId, name: project.data?.name ?? projectId }]).map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </label>
        <label className="language-switcher">
          <span>{t('app.language')}</span>
          <select value={language} onChange={(e) => setLanguage(e.target.value as UiLanguage)}>
            {Object.entries(UI_LANGUAGES).map(([code, name]) => (
              <option key={code} value={code}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <span className="user">{t('nav.signedInAs', { email: user.email, role: t(`role.${user.role}` as MessageKey) })}</span>
        <NavLink to={`/p/${projectId}/account`} className="account-link">
          {t('nav.account')}
        </NavLink>
        <button
          type="button"
          onClick={() => void signOut().then(() => navigate(`/p/${projectId}/`))}
        >
          {t('nav.signOut')}
        </button>
      </header>
      <div className="columns">
        <nav className="sidebar" aria-label={t('nav.main')}>
          <h2>{t('nav.formSets')}</h2>
          <ul>
            {formSets.data?.items.map((fs) => (
              <li key={fs.id}>
                <NavLink to={`/p/${projectId}/content/${fs.id}`}>{fs.name}</NavLink>
              </li>
            ))}
          </ul>
          <ul>
            {AREAS.filter((a) => !a.adminOnly || user.role === 'tenant_admin').map((area) => (
              <li key={area.to}>
                <NavLink to={`/p/${projectId}/${area.to}`}>{t(area.label)}</NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" className="page" tabIndex={-1} ref={main}>
          <ErrorMessage error={project.error ?? formSets.error} />
          {value ? (
            <ProjectContext.Provider value={value}>
              <RouteErrorBoundary>{refused ? <NeedsAdministrator area={refused.label} email={user.email} home={`/p/${projectId}/review`} /> : <Outlet />}</RouteErrorBoundary>
            </ProjectContext.Provider>
          ) : (
            !project.error && <p>{t('app.loading')}</p>
          )}
        </main>
      </div>
      <SessionExpiredDialog projectId={projectId} />
    </div>
  );
}

/**
 * After an in-app navigation, focus goes to the new page's heading (once it shows), so that a screen reader
 * announces the page and the keyboard starts from it, unless the user has already put focus in the page.
 */
function useFocusHeadingOnNavigation(main: RefObject<HTMLElement | null>, pathname: string): void {
  const first = useRef(true);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new pathname is the cue (the effect reads the DOM, not it).
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    const container = main.current;
    if (!container) return;
    const focusHeading = (): boolean => {
      const heading = container.querySelector('h1');
      if (!heading) return false;
      const active = document.activeElement;
      if (active && active !== document.body && container.contains(active) && active !== container) return true;
      heading.tabIndex = -1;
      heading.focus({ preventScroll: false });
      return true;
    };
    if (focusHeading()) return;
    const observer = new MutationObserver(() => {
      if (focusHeading()) observer.disconnect();
    });
    observer.observe(container, { childList: true, subtree: true });
    const timer = setTimeout(() => observer.disconnect(), 10_000);
    return () => {
      observer.disconnect();
      clearTimeout(timer);
    };
  }, [main, pathname]);
}

import { useCallback, useEffect, useMemo, useRef, type RefObject } from 'react';
import { NavLink, Outlet, useLocation, useNavigate, useParams } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { useI18n, UI_LANGUAGES, type UiLanguage } from '../i18n/i18n.tsx';
import { useSession } from '../session/session.tsx';
import { SessionExpiredDialog, SignInPage } from '../pages/sign-in.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { ProjectContext, type ProjectContextValue } from './project-context.tsx';
import type { MessageKey } from '../i18n/en.ts';
import { AREAS, pageNeed } from './areas.ts';
import { grantsAllow, type Capability } from '../session/grants.ts';
import { RouteErrorBoundary } from '../components/route-error-boundary.tsx';
import { StartingUp } from '../components/starting-up.tsx';
import { NeedsAdministrator } from './needs-administrator.tsx';

/**
 * The frame of every page of a project: header (project switcher, language, user, sign-out), the
 * navigation by area, and the page. Issue 19's areas (contact forms, webhooks, people and keys,
 * settings, operations) are further entries of `AREAS` (areas.ts) and routes in app.tsx. The navigation offers
 * the areas the user's role may use (the session's grants, issue 47), and a page opened by its URL that the role
 * may not use is explained instead of shown.
 */
export function ProjectLayout() {
  const { projectId = '' } = useParams();
  const { status } = useSession();
  if (status === 'checking') return <StartingUp />;
  if (status === 'signed-out') return <SignInPage projectId={projectId} />;
  return <SignedInProject projectId={projectId} />;
}

function SignedInProject({ projectId }: { projectId: string }) {
  const { t, language, setLanguage } = useI18n();
  const { session, clientFor, signOut } = useSession();
  const navigate = useNavigate();
  const api = useMemo(() => clientFor(projectId), [clientFor, projectId]);
  const project = useQuery({ queryKey: [projectId, 'project'], queryFn: () => api.GET('/project') });
  const projects = useQuery({ queryKey: ['projects'], queryFn: () => api.GET('/projects') });
  const formSets = useQuery({ queryKey: [projectId, 'form-sets'], queryFn: () => api.GET('/form-sets') });
  const user = session!.user;
  // Until GET /auth/session has said what the user may do (just after a sign-in), no area is offered.
  const grants = session!.grants;
  const can = useCallback((capability: Capability, formSetId?: string) => (grants ? grantsAllow(grants, capability, formSetId) : false), [grants]);
  const value = useMemo<ProjectContextValue | null>(
    () =>
      project.data && grants
        ? { projectId, project: project.data, api, userId: user.id, grants, can, manageRoles: grants.manageRoles, path: (sub: string) => `/p/${projectId}/${sub}` }
        : null,
    [project.data, projectId, api, user, grants, can],
  );
  const { pathname } = useLocation();
  // What the page the URL opens needs: a page the user's role may not use is explained instead.
  const need = pageNeed(pathname);
  const refused = grants && need && !need.anyOf.some((capability) => can(capability, need.formSetId)) ? need : undefined;
  const listed = AREAS.filter((area) => {
    const wanted = area.needs ?? area.listedFor;
    return !wanted || wanted.some((capability) => can(capability));
  });
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
        <span className="user">{t('nav.signedInAs', { email: user.email, role: grants?.roleName ?? t(`role.${user.role}` as MessageKey) })}</span>
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
            {listed.map((area) => (
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
              <RouteErrorBoundary>{refused ? <NeedsAdministrator need={refused} email={user.email} home={`/p/${projectId}/review`} /> : <Outlet />}</RouteErrorBoundary>
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

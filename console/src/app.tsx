import { useEffect } from 'react';
import { createBrowserRouter, Link, Navigate, RouterProvider, useNavigate } from 'react-router';
import { QueryClient, QueryClientProvider, useQuery } from '@tanstack/react-query';
import { I18nProvider, useI18n } from './i18n/i18n.tsx';
import { SessionProvider, useSession } from './session/session.tsx';
import { ProjectLayout } from './shell/project-layout.tsx';
import { useProject } from './shell/project-context.tsx';
import { SessionExpiredDialog, SignInPage } from './pages/sign-in.tsx';
import { AcceptInvitationPage } from './pages/accept-invitation.tsx';
import type { ConsoleClient } from './api/admin-client.ts';
import { EntryList } from './pages/entry-list.tsx';
import { NewEntry } from './pages/new-entry.tsx';
import { EntryEditorPage } from './pages/entry-editor.tsx';
import { EntryHistory } from './pages/entry-history.tsx';
import { EntryPreview } from './pages/entry-preview.tsx';
import { ReviewQueue } from './pages/review-queue.tsx';
import { ReviewCompare } from './pages/review-compare.tsx';
import { MediaLibrary } from './pages/media-library.tsx';
import { AuditLog } from './pages/audit-log.tsx';
import { AsOfView } from './pages/as-of.tsx';
import { AccountPage } from './pages/account.tsx';
import { ADMIN_ROUTES } from './admin/admin-routes.tsx';
import { RouterErrorElement } from './components/route-error-boundary.tsx';
import { StartingUp } from './components/starting-up.tsx';

/**
 * Routes, one folder of pages per area. Everything of a project lives under /console/p/{projectId}/,
 * where the service enforces the project's console IP allowlist before the app loads. Each page of a project
 * has its own error boundary inside the project's frame (ProjectLayout); the router's error element stands
 * for React Router's developer page everywhere else.
 */
const router = createBrowserRouter(
  [
    { path: '/', element: <Home />, errorElement: <RouterErrorElement /> },
    { path: '/accept-invitation', element: <AcceptInvitationPage />, errorElement: <RouterErrorElement /> },
    {
      path: '/p/:projectId',
      element: <ProjectLayout />,
      errorElement: <RouterErrorElement />,
      children: [
        { index: true, element: <ProjectHome /> },
        { path: 'content/:formSetId', element: <EntryList /> },
        { path: 'content/:formSetId/new', element: <NewEntry /> },
        { path: 'entries/:entryId', element: <EntryEditorPage /> },
        { path: 'entries/:entryId/history', element: <EntryHistory /> },
        { path: 'entries/:entryId/preview/:revisionId', element: <EntryPreview /> },
        { path: 'review', element: <ReviewQueue /> },
        { path: 'review/:revisionId', element: <ReviewCompare /> },
        { path: 'media', element: <MediaLibrary /> },
        { path: 'audit', element: <AuditLog /> },
        { path: 'as-of', element: <AsOfView /> },
        { path: 'account', element: <AccountPage /> },
        ...ADMIN_ROUTES,
      ],
    },
    { path: '*', element: <Navigate to="/" replace /> },
  ],
  { basename: '/console' },
);

const queryClient = new QueryClient({
  defaultOptions: {
    queries: { staleTime: 0, refetchOnWindowFocus: false, retry: (count, error) => count < 2 && !((error as { status?: number }).status! < 500) },
  },
});

export function App() {
  return (
    <QueryClientProvider client={queryClient}>
      <I18nProvider>
        <SessionProvider>
          <RouterProvider router={router} />
        </SessionProvider>
      </I18nProvider>
    </QueryClientProvider>
  );
}

/** /console/: sign in, then the only project or a choice of projects. */
function Home() {
  const { status, clientFor } = useSession();
  if (status === 'checking') return <StartingUp />;
  if (status === 'signed-out') return <SignInPage />;
  return (
    <>
      <ProjectChoice api={clientFor()} />
      <SessionExpiredDialog />
    </>
  );
}

function ProjectChoice({ api }: { api: ConsoleClient }) {
  const { t } = useI18n();
  const navigate = useNavigate();
  const projects = useQuery({ queryKey: ['projects'], queryFn: () => api.GET('/projects') });
  const items = projects.data?.items;
  useEffect(() => {
    if (items?.length === 1) navigate(`/p/${items[0]!.id}/`, { replace: true });
  }, [items, navigate]);
  return (
    <main id="main" className="sign-in-page">
      <div className="sign-in-card">
        <h1>{t('signIn.projects')}</h1>
        {items?.length === 0 && <p>{t('signIn.noProjects')}</p>}
        <ul>
          {items?.map((p) => (
            <li key={p.id}>
              <Link to={`/p/${p.id}/`}>{p.name}</Link>
            </li>
          ))}
        </ul>
      </div>
    </main>
  );
}

/** A project's first page: its first form set's entries. */
function ProjectHome() {
  const { api, projectId } = useProject();
  const formSets = useQuery({ queryKey: [projectId, 'form-sets'], queryFn: () => api.GET('/form-sets') });
  const first = formSets.data?.items[0];
  if (first) return <Navigate to={`/p/${projectId}/content/${first.id}`} replace />;
  return null;
}

import { lazy, Suspense, type ComponentType } from 'react';
import type { RouteObject } from 'react-router';
import type { MessageKey } from '../i18n/en.ts';
import type { Capability } from '../session/grants.ts';
import './admin.css';

/**
 * The administrator and operator pages (issue 19), each loaded when first opened, so the editors'
 * first load carries none of them. app.tsx adds ADMIN_ROUTES to a project's routes and the project
 * layout ADMIN_AREAS to its navigation.
 */
function page<K extends string>(load: () => Promise<Record<K, unknown>>, name: K) {
  const Page = lazy(async () => ({ default: (await load())[name] as ComponentType }));
  return (
    <Suspense fallback={null}>
      <Page />
    </Suspense>
  );
}

export const ADMIN_ROUTES: RouteObject[] = [
  { path: 'contact-forms', element: page(() => import('./contact-form-list.tsx'), 'ContactFormList') },
  { path: 'contact-forms/new', element: page(() => import('./contact-form-editor.tsx'), 'ContactFormEditor') },
  { path: 'contact-forms/:formId', element: page(() => import('./contact-form-editor.tsx'), 'ContactFormEditor') },
  { path: 'contact-forms/:formId/submissions/:submissionId?', element: page(() => import('./submission-inbox.tsx'), 'SubmissionInbox') },
  { path: 'webhooks', element: page(() => import('./webhooks.tsx'), 'WebhookList') },
  { path: 'webhooks/:webhookId', element: page(() => import('./webhook-detail.tsx'), 'WebhookDetail') },
  { path: 'form-sets', element: page(() => import('./form-set-builder.tsx'), 'FormSetList') },
  { path: 'form-sets/new', element: page(() => import('./form-set-builder.tsx'), 'FormSetBuilder') },
  { path: 'form-sets/:formSetId', element: page(() => import('./form-set-builder.tsx'), 'FormSetBuilder') },
  { path: 'people', element: page(() => import('./people-and-keys.tsx'), 'PeopleAndKeys') },
  { path: 'roles', element: page(() => import('./roles.tsx'), 'RolesPage') },
  { path: 'settings', element: page(() => import('./project-settings.tsx'), 'ProjectSettings') },
  { path: 'operations', element: page(() => import('./operations.tsx'), 'Operations') },
];

/** The administrator areas of the navigation, each with the capabilities it needs (any one); see shell/areas.ts. */
export const ADMIN_AREAS: Array<{ label: MessageKey; to: string; needs?: readonly Capability[]; listedFor?: readonly Capability[] }> = [
  { label: 'nav.contactForms', to: 'contact-forms', needs: ['contact-forms.manage', 'submissions.handle'] },
  { label: 'nav.formSets', to: 'form-sets', needs: ['schema.manage'] },
  { label: 'nav.webhooks', to: 'webhooks', needs: ['webhooks.manage'] },
  { label: 'nav.people', to: 'people', needs: ['people.manage'] },
  // Every member may read the roles (what each may do); those who give roles find them in the navigation.
  { label: 'nav.roles', to: 'roles', listedFor: ['people.manage'] },
  { label: 'nav.settings', to: 'settings', needs: ['settings.manage'] },
  { label: 'nav.operations', to: 'operations', needs: ['settings.manage'] },
];

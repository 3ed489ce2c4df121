import { lazy, Suspense, type ComponentType } from 'react';
import type { RouteObject } from 'react-router';
import type { MessageKey } from '../i18n/en.ts';
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
  { path: 'settings', element: page(() => import('./project-settings.tsx'), 'ProjectSettings') },
  { path: 'operations', element: page(() => import('./operations.tsx'), 'Operations') },
];

export const ADMIN_AREAS: Array<{ label: MessageKey; to: string; adminOnly?: boolean }> = [
  { label: 'nav.contactForms', to: 'contact-forms' },
  { label: 'nav.formSets', to: 'form-sets', adminOnly: true },
  { label: 'nav.webhooks', to: 'webhooks', adminOnly: true },
  { label: 'nav.people', to: 'people', adminOnly: true },
  { label: 'nav.settings', to: 'settings', adminOnly: true },
  { label: 'nav.operations', to: 'operations', adminOnly: true },
];

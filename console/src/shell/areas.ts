import type { MessageKey } from '../i18n/en.ts';
import { ADMIN_AREAS } from '../admin/admin-routes.tsx';
import type { Capability } from '../session/grants.ts';

/**
 * The areas of a project's navigation, each with the capabilities it needs (any one of them), so that the
 * navigation offers only what the user's role may do (src/domain/access/permissions.ts on the service says which
 * capability each action needs). `listedFor`: the area is listed for these, but its page is open to every member
 * (it reads only).
 */
export interface Area {
  label: MessageKey;
  to: string;
  needs?: readonly Capability[];
  listedFor?: readonly Capability[];
}

export const AREAS: readonly Area[] = [
  { label: 'nav.review', to: 'review' },
  { label: 'nav.media', to: 'media' },
  { label: 'nav.asOf', to: 'as-of' },
  { label: 'nav.audit', to: 'audit', needs: ['audit.read'] },
  ...ADMIN_AREAS,
];

/** What a page needs: one of these capabilities, in the form set when one is named (a role may be limited to some). */
export interface PageNeed {
  /** What the page is called, for the explanation shown instead of it. */
  label: MessageKey;
  anyOf: readonly Capability[];
  formSetId?: string;
}

/**
 * What the page at `pathname` (/p/{projectId}/…) needs, or null when every member may open it. Opened by its URL
 * (a bookmark, a shared link) by someone whose role may not use it, the page is replaced by an explanation
 * rather than controls whose every write the service would refuse.
 */
export function pageNeed(pathname: string): PageNeed | null {
  const [first, second, third] = pathname.split('/').slice(3);
  if (first === 'content' && second && third === 'new') return { label: 'list.new', anyOf: ['content.write'], formSetId: second };
  if (first === 'contact-forms' && second) {
    return third === 'submissions' ? { label: 'contact.inbox', anyOf: ['submissions.handle'] } : { label: 'nav.contactForms', anyOf: ['contact-forms.manage'] };
  }
  const area = AREAS.find((a) => a.to === first);
  return area?.needs ? { label: area.label, anyOf: area.needs } : null;
}

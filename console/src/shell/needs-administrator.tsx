import { Link } from 'react-router';
import { useI18n } from '../i18n/i18n.tsx';
import type { MessageKey } from '../i18n/en.ts';
import { useSession } from '../session/session.tsx';
import type { PageNeed } from './areas.ts';

/**
 * What someone sees on a page their role may not use, opened by its URL (a bookmark, a shared link): a plain
 * explanation instead of controls whose every write the API would refuse. An editor (the spec's tenant_user) is
 * told the page is an administrator's; a member with one of the organisation's roles, what the page needs.
 */
export function NeedsAdministrator({ need, email, home }: { need: PageNeed; email: string; home: string }) {
  const { t } = useI18n();
  const { session } = useSession();
  const roleName = session?.grants?.roleName;
  const what = need.anyOf.map((capability) => t(`capability.${capability}` as MessageKey)).join(t('needsRole.or'));
  return (
    <section className="needs-admin">
      <h1>{t(roleName ? 'needsRole.title' : 'needsAdmin.title')}</h1>
      <p>{roleName ? t('needsRole.body', { area: t(need.label), email, role: roleName, what }) : t('needsAdmin.body', { area: t(need.label), email })}</p>
      <p>
        <Link to={home}>{t('needsAdmin.back')}</Link>
      </p>
    </section>
  );
}

import { Link } from 'react-router';
import { useI18n } from '../i18n/i18n.tsx';
import type { MessageKey } from '../i18n/en.ts';

/**
 * What an editor sees on an administrator's page opened by its URL (a bookmark, a shared link): a plain
 * explanation instead of controls whose every write the API would refuse.
 */
export function NeedsAdministrator({ area, email, home }: { area: MessageKey; email: string; home: string }) {
  const { t } = useI18n();
  return (
    <section className="needs-admin">
      <h1>{t('needsAdmin.title')}</h1>
      <p>{t('needsAdmin.body', { area: t(area), email })}</p>
      <p>
        <Link to={home}>{t('needsAdmin.back')}</Link>
      </p>
    </section>
  );
}

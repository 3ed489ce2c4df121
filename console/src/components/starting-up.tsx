import { useI18n } from '../i18n/i18n.tsx';

/** While the console asks the service for the session the browser holds (a moment, at start). */
export function StartingUp() {
  const { t } = useI18n();
  return (
    <main id="main" className="sign-in-page">
      <p className="sign-in-card" aria-live="polite">
        {t('app.loading')}
      </p>
    </main>
  );
}

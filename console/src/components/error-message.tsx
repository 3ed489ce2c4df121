import { ApiError } from '../api/admin-client.ts';
import { useI18n } from '../i18n/i18n.tsx';

/** An API error as the service gave it: its message and hint. */
export function ErrorMessage({ error }: { error: unknown }) {
  const { t } = useI18n();
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div className="error" role="alert">
      <p>{t('app.error', { message })}</p>
      {error instanceof ApiError && error.hint && <p className="hint">{error.hint}</p>}
    </div>
  );
}

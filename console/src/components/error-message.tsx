import { ApiError } from '../api/admin-client.ts';
import { useI18n } from '../i18n/i18n.tsx';

/**
 * An API error as the service gave it: its message and hint. A refusal (a 4xx answer: the service said why
 * it will not do this) is shown as the service said it, as a sentence; anything else (a 5xx, the network) as something that went wrong.
 */
export function ErrorMessage({ error }: { error: unknown }) {
  const { t } = useI18n();
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  const refusal = error instanceof ApiError && error.status >= 400 && error.status < 500;
  return (
    <div className="error" role="alert">
      <p>{refusal ? sentence(message) : t('app.error', { message })}</p>
      {error instanceof ApiError && error.hint && <p className="hint">{error.hint}</p>}
    </div>
  );
}

/** The service's messages start in lower case (they read as clauses in logs); shown alone, as a sentence. */
function sentence(message: string): string {
  return message.charAt(0).toLocaleUpperCase() + message.slice(1);
}

import { useQueryClient } from '@tanstack/react-query';
import { ApiError } from '../api/admin-client.ts';
import { useI18n } from '../i18n/i18n.tsx';

/** fetch's own failure (no answer at all: the service is down or the network is): a TypeError in every browser. */
export function isUnreachable(error: unknown): boolean {
  return error instanceof TypeError && /fetch|network|load failed/i.test(error.message);
}

/**
 * An API error as the service gave it: its message and hint. A refusal (a 4xx answer: the service said why
 * it will not do this) is shown as the service said it, as a sentence; anything else (a 5xx, the network) as something that went wrong.
 */
export function ErrorMessage({ error }: { error: unknown }) {
  const { t } = useI18n();
  const queryClient = useQueryClient();
  if (!error) return null;
  if (isUnreachable(error)) {
    // What failed to load can be asked for again; a write is sent again by its own button.
    const failedReads = queryClient.getQueryCache().findAll({ type: 'active', predicate: (query) => query.state.status === 'error' });
    return (
      <div className="error" role="alert">
        <p>{t('app.unreachable')}</p>
        {failedReads.length > 0 && (
          <button type="button" onClick={() => void Promise.all(failedReads.map((query) => query.fetch().catch(() => undefined)))}>
            {t('app.retry')}
          </button>
        )}
      </div>
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  const refusal = error instanceof ApiError && error.status >= 400 && error.status < 500;
  return (
    <div className="error" role="alert">
      <p>{refusal ? sentence(message) : t('app.error', { message })}</p>
      {error instanceof ApiError && error.hint && <p className="hint">{error.hint}</p>}
    </div>
  );
}

/**
 * The service's messages start in lower case (they read as clauses in logs); shown alone, as a sentence, with
 * the hint after it when one is given.
 */
export function sentence(message: string, hint?: string): string {
  return message.charAt(0).toLocaleUpperCase() + message.slice(1) + (hint ? ` ${hint}` : '');
}

import type { UseMutationResult } from '@tanstack/react-query';
import { ApiError } from '../api/admin-client.ts';
import { useI18n } from '../i18n/i18n.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { Modal } from '../components/modal.tsx';

/** What single sign-on's two forms (OpenID Connect and SAML) share. */

/** A list typed as text: one item per comma or line. */
export const listOf = (text: string) =>
  text
    .split(/[,\n]/)
    .map((item) => item.trim())
    .filter(Boolean);

/** A GET of settings that answers 404 while nothing is set up: null then. */
export async function orNone<T>(read: Promise<T>): Promise<T | null> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}

/** Asks before removing the provider: what happens to the people it signed in. */
export function RemoveDialog({ open, remove, onClose }: { open: boolean; remove: UseMutationResult<unknown, Error, void>; onClose: () => void }) {
  const { t } = useI18n();
  return (
    <Modal open={open} title={t('sso.removeTitle')}>
      <p>{t('sso.removeText')}</p>
      <ErrorMessage error={remove.error} />
      <div className="dialog-actions">
        <button type="button" className="danger" disabled={remove.isPending} onClick={() => remove.mutate()}>
          {t('sso.remove')}
        </button>
        <button type="button" onClick={onClose}>
          {t('admin.cancel')}
        </button>
      </div>
    </Modal>
  );
}

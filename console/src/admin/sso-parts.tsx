import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient, type UseMutationResult } from '@tanstack/react-query';
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

/** The buttons of either form: save, and once set up Test sign-in (the provider's sign-in in a new tab, ending on what a sign-in would do) and Remove. */
export function SsoFormActions({ protocol, projectId, setUp, saving, onRemove }: { protocol: 'oidc' | 'saml'; projectId: string; setUp: boolean; saving: boolean; onRemove: () => void }) {
  const { t } = useI18n();
  return (
    <div className="actions">
        <button type="submit" className="primary" disabled={saving}>
          {t('sso.save')}
        </button>
        {setUp && (
          <a className="button" href={`/admin/v1/auth/${protocol}/start?projectId=${encodeURIComponent(projectId)}&test=true`} target="_blank" rel="noopener">
            {t('sso.test')}
          </a>
        )}
        {setUp && (
          <button type="button" onClick={onRemove}>
            {t('sso.remove')}
          </button>
        )}
    </div>
  );
}

/** What a save may ask besides the form's fields: SAML's `newSpCertificate` (a new key pair for this service). */
export interface SaveOptions {
  newSpCertificate?: boolean;
}

/** After the form: the save's error or its notice (`savedNotice`, else "saved"), and the removal's dialog. */
export function SsoFormOutcome({ save, saved, savedNotice, remove, removing, setRemoving }: { save: UseMutationResult<unknown, Error, SaveOptions>; saved: boolean; savedNotice?: string | undefined; remove: UseMutationResult<unknown, Error, void>; removing: boolean; setRemoving: (removing: boolean) => void }) {
  const { t } = useI18n();
  return (
    <>
      <ErrorMessage error={save.error} />
      {saved && !save.isPending && (
        <p className="notice" role="status">
          {savedNotice ?? t('sso.saved')}
        </p>
      )}
      <RemoveDialog open={removing} remove={remove} onClose={() => setRemoving(false)} />
    </>
  );
}

/**
 * What either form does with its settings: `save` them (then "saved" shows until the next save), on submit or
 * through `saveWith` with options (SAML's new key pair), `remove` them after the dialog (then `onRemoved`, to
 * empty the form); both read the settings again.
 */
export function useSsoSettings(actions: { save: (options: SaveOptions) => Promise<unknown>; remove: () => Promise<unknown>; onRemoved: () => void }) {
  const queryClient = useQueryClient();
  const [saved, setSaved] = useState(false);
  const [removing, setRemoving] = useState(false);
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['sign-in'] });
  const save = useMutation<unknown, Error, SaveOptions>({
    mutationFn: actions.save,
    onSuccess: async () => {
      setSaved(true);
      await refresh();
    },
    // Refused for a role removed meanwhile (400: the organisation has no role …): the roles are read again, and its row says so.
    onError: () => queryClient.invalidateQueries({ queryKey: ['roles'] }),
  });
  const remove = useMutation({
    mutationFn: actions.remove,
    onSuccess: async () => {
      setRemoving(false);
      actions.onRemoved();
      await refresh();
    },
  });
  const saveWith = (options: SaveOptions) => {
    setSaved(false);
    save.mutate(options);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    saveWith({});
  };
  return { save, remove, submit, saveWith, saved, removing, setRemoving };
}

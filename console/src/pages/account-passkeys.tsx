import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { browserSupportsWebAuthn, startRegistration, type PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/browser';
import { ApiError } from '../api/admin-client.ts';
import { useI18n } from '../i18n/i18n.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { PasswordDialog, SECOND_FACTOR_QUERY, useAccountClient, type SecondFactor } from './account-parts.tsx';
import { secondFactorProblem } from './second-factor-parts.tsx';

type Passkey = SecondFactor['passkeys'][number];

/**
 * One's passkeys: each with the name given to it and whether a password manager or platform syncs it (a copy
 * survives losing the device); a new one is made by the browser (its screen lock, a security key, a phone) and
 * named; one is removed with the password.
 */
export function Passkeys({ factors, onCodes }: { factors: SecondFactor; onCodes: (codes: string[]) => void }) {
  const { t, language } = useI18n();
  const api = useAccountClient();
  const queryClient = useQueryClient();
  const refresh = () => queryClient.invalidateQueries({ queryKey: SECOND_FACTOR_QUERY });
  const [name, setName] = useState('');
  const [removing, setRemoving] = useState<Passkey | null>(null);
  const [supported] = useState(() => browserSupportsWebAuthn());
  const add = useMutation({
    mutationFn: async () => {
      const made = await api.POST('/me/passkeys/options');
      const response = await startRegistration({ optionsJSON: made.options as unknown as PublicKeyCredentialCreationOptionsJSON });
      return api.POST('/me/passkeys', { body: { setupToken: made.setupToken, name: name.trim(), response: response as unknown as { id: string; rawId: string; type: 'public-key'; response: Record<string, unknown> } } });
    },
    onSuccess: async (answer) => {
      setName('');
      if (answer.recoveryCodes) onCodes(answer.recoveryCodes);
      await refresh();
    },
  });
  const remove = useMutation({
    mutationFn: ({ passkey, password }: { passkey: Passkey; password: string }) => api.POST('/me/passkeys/{credentialId}/remove', { params: { path: { credentialId: passkey.credentialId } }, body: { password } }),
    onSuccess: async () => {
      setRemoving(null);
      await refresh();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    add.mutate();
  };
  return (
    <section className="factor-panel" aria-labelledby="passkeys-title">
      <h3 id="passkeys-title">{t('account.passkeys')}</h3>
      <p className="help">{t('account.passkeysHelp')}</p>
      {factors.passkeys.length === 0 ? (
        <p>{t('account.passkeysNone')}</p>
      ) : (
        <ul className="passkey-list">
          {factors.passkeys.map((passkey) => (
            <li key={passkey.credentialId}>
              <span className="passkey-name">{passkey.name}</span>
              {passkey.backedUp && <span className="badge factor-on">{t('account.passkeySynced')}</span>}
              <button type="button" className="danger" aria-label={t('account.passkeyRemoveNamed', { name: passkey.name })} onClick={() => setRemoving(passkey)}>
                {t('account.passkeyRemove')}
              </button>
            </li>
          ))}
        </ul>
      )}
      {supported ? (
        <form className="filters" onSubmit={submit}>
          <label className="grow">
            {t('account.passkeyName')}
            <input type="text" required maxLength={100} placeholder={t('account.passkeyNamePlaceholder')} value={name} onChange={(e) => setName(e.target.value)} />
          </label>
          <button type="submit" className="primary" disabled={add.isPending}>
            {t('account.passkeyAdd')}
          </button>
        </form>
      ) : (
        <p className="notice">{t('account.passkeysUnsupported')}</p>
      )}
      {add.error ? (
        // The browser's own refusal (the dialog closed, a device that holds one already); the service's is shown as it said.
        !(add.error instanceof ApiError) && !(add.error instanceof TypeError) ? (
          <p className="error" role="alert">
            {secondFactorProblem(add.error, t, language, { method: 'passkey' })}
          </p>
        ) : (
          <ErrorMessage error={add.error} />
        )
      ) : null}
      {removing && (
        <PasswordDialog
          title={t('account.passkeyRemoveTitle', { name: removing.name })}
          text={t('account.passkeyRemoveText')}
          submitLabel={t('account.passkeyRemove')}
          danger
          mutation={remove}
          onSubmit={(password) => remove.mutate({ passkey: removing, password })}
          onClose={() => setRemoving(null)}
        />
      )}
    </section>
  );
}

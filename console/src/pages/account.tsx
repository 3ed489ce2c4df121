import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { TotpSetup } from '../api/admin-client.ts';
import { useI18n } from '../i18n/i18n.tsx';
import type { MessageKey } from '../i18n/en.ts';
import { useSession } from '../session/session.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { Modal } from '../components/modal.tsx';
import { PasswordDialog, SECOND_FACTOR_QUERY, useAccountClient, type SecondFactor } from './account-parts.tsx';
import { AppCodeField, RecoveryCodesShown, secondFactorProblem, TotpQr } from './second-factor-parts.tsx';
import { Passkeys } from './account-passkeys.tsx';

/**
 * "Your account", for everyone signed in: the second factor of password sign-in. An authenticator app (set up with
 * its QR code and first code, removed with the password), passkeys, and the recovery codes that come with the first
 * one (new ones with the password, shown once).
 */
export function AccountPage() {
  const { t } = useI18n();
  const { session } = useSession();
  const api = useAccountClient();
  const factors = useQuery({ queryKey: SECOND_FACTOR_QUERY, queryFn: () => api.GET('/me/second-factor') });
  const [codes, setCodes] = useState<string[] | null>(null);
  const user = session!.user;
  const data = factors.data;
  return (
    <section className="account">
      <h1>{t('account.title')}</h1>
      <p>{t('nav.signedInAs', { email: user.email, role: t(`role.${user.role}` as MessageKey) })}</p>
      <section aria-labelledby="second-factor-title">
        <h2 id="second-factor-title">{t('account.secondFactor')}</h2>
        <p className="help">{t('account.secondFactorHelp')}</p>
        <ErrorMessage error={factors.error} />
        {data?.required && (
          <p className="notice">{data.totp || data.passkeys.length > 0 ? t('account.required') : t('account.requiredNone')}</p>
        )}
        {data && (
          <>
            <AuthenticatorApp factors={data} onCodes={setCodes} />
            <Passkeys factors={data} onCodes={setCodes} />
            <RecoveryCodes factors={data} onCodes={setCodes} />
          </>
        )}
      </section>
      <Modal open={codes !== null} title={t('recovery.title')}>
        {codes && <RecoveryCodesShown codes={codes} email={user.email} onSaved={() => setCodes(null)} />}
      </Modal>
    </section>
  );
}

function AuthenticatorApp({ factors, onCodes }: { factors: SecondFactor; onCodes: (codes: string[]) => void }) {
  const { t, language } = useI18n();
  const api = useAccountClient();
  const queryClient = useQueryClient();
  const refresh = () => queryClient.invalidateQueries({ queryKey: SECOND_FACTOR_QUERY });
  const [setup, setSetup] = useState<TotpSetup | null>(null);
  const [code, setCode] = useState('');
  const [removing, setRemoving] = useState(false);
  const start = useMutation({ mutationFn: () => api.POST('/me/second-factor/totp/setup'), onSuccess: (made) => setSetup(made) });
  const finish = useMutation({
    mutationFn: (made: TotpSetup) => api.POST('/me/second-factor/totp', { body: { setupToken: made.setupToken, code: code.trim() } }),
    onSuccess: async (answer) => {
      setSetup(null);
      setCode('');
      if (answer.recoveryCodes) onCodes(answer.recoveryCodes);
      await refresh();
    },
  });
  const remove = useMutation({
    mutationFn: (password: string) => api.POST('/me/second-factor/totp/remove', { body: { password } }),
    onSuccess: async () => {
      setRemoving(false);
      await refresh();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (setup) finish.mutate(setup);
  };
  const cancel = () => {
    setSetup(null);
    setCode('');
    finish.reset();
  };
  return (
    <section className="factor-panel" aria-labelledby="app-title">
      <h3 id="app-title">{t('account.app')}</h3>
      {factors.totp ? (
        <>
          <p>
            <span className="badge factor-on">{t('account.on')}</span> {t('account.appOn')}
          </p>
          <button type="button" className="danger" onClick={() => setRemoving(true)}>
            {t('account.appRemove')}
          </button>
        </>
      ) : setup ? (
        <form onSubmit={submit} className="app-setup">
          <p>{t('account.appScan')}</p>
          <TotpQr setup={setup} />
          <AppCodeField value={code} onChange={setCode} />
          {finish.error ? (
            <p className="error" role="alert">
              {secondFactorProblem(finish.error, t, language, { method: 'code', expiresAt: setup.expiresAt })}
            </p>
          ) : null}
          <div className="row">
            <button type="submit" className="primary" disabled={finish.isPending}>
              {t('account.appTurnOn')}
            </button>
            <button type="button" onClick={cancel}>
              {t('action.cancel')}
            </button>
          </div>
        </form>
      ) : (
        <>
          <p>{t('account.appOff')}</p>
          <button type="button" className="primary" disabled={start.isPending} onClick={() => start.mutate()}>
            {t('account.appSetUp')}
          </button>
        </>
      )}
      <ErrorMessage error={start.error} />
      {removing && (
        <PasswordDialog title={t('account.appRemoveTitle')} text={t('account.appRemoveText')} submitLabel={t('account.appRemove')} danger mutation={remove} onSubmit={(password) => remove.mutate(password)} onClose={() => setRemoving(false)} />
      )}
    </section>
  );
}

function RecoveryCodes({ factors, onCodes }: { factors: SecondFactor; onCodes: (codes: string[]) => void }) {
  const { t } = useI18n();
  const api = useAccountClient();
  const queryClient = useQueryClient();
  const [renewing, setRenewing] = useState(false);
  const renew = useMutation({
    mutationFn: (password: string) => api.POST('/me/second-factor/recovery-codes', { body: { password } }),
    onSuccess: async (answer) => {
      setRenewing(false);
      onCodes(answer.recoveryCodes);
      await queryClient.invalidateQueries({ queryKey: SECOND_FACTOR_QUERY });
    },
  });
  const hasFactor = factors.totp || factors.passkeys.length > 0;
  return (
    <section className="factor-panel" aria-labelledby="recovery-title">
      <h3 id="recovery-title">{t('account.recovery')}</h3>
      {hasFactor ? (
        <>
          <p>{t(factors.recoveryCodesLeft === 1 ? 'account.recoveryLeftOne' : 'account.recoveryLeft', { count: factors.recoveryCodesLeft })}</p>
          <button type="button" onClick={() => setRenewing(true)}>
            {t('account.recoveryNew')}
          </button>
        </>
      ) : (
        <p>{t('account.recoveryNone')}</p>
      )}
      {renewing && (
        <PasswordDialog title={t('account.recoveryNewTitle')} text={t('account.recoveryNewText')} submitLabel={t('account.recoveryNew')} mutation={renew} onSubmit={(password) => renew.mutate(password)} onClose={() => setRenewing(false)} />
      )}
    </section>
  );
}

import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { FormDialog } from '../components/form-dialog.tsx';
import type { ConsoleUser } from './shapes.ts';

/** A member's second factor as the People page lists it: "App", "2 passkeys", both, or none. */
export function SecondFactorSummary({ user }: { user: ConsoleUser }) {
  const { t } = useI18n();
  const { totp, passkeys } = user.secondFactor;
  const parts = [...(totp ? [t('people.factorApp')] : []), ...(passkeys > 0 ? [passkeys === 1 ? t('people.factorPasskey') : t('people.factorPasskeys', { count: passkeys })] : [])];
  return parts.length ? parts.join(', ') : <span className="muted">{t('people.factorNone')}</span>;
}

/**
 * An administrator's way back in for a member who lost their second factor: their app, passkeys and recovery codes
 * go (after a confirmation), and they sign in with their password alone, or set one up as they sign in where the
 * organisation requires it. Never on one's own row (the service refuses it too).
 */
export function ResetSecondFactor({ user }: { user: ConsoleUser }) {
  const { t } = useI18n();
  const { api, userId } = useProject();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const reset = useMutation({
    mutationFn: () => api.POST('/users/{userId}/second-factor/reset', { params: { path: { userId: user.id } } }),
    onSuccess: async () => {
      setConfirming(false);
      await queryClient.invalidateQueries({ queryKey: ['users'] });
    },
  });
  const { totp, passkeys, recoveryCodesLeft } = user.secondFactor;
  if (user.id === userId || user.disabled || (!totp && passkeys === 0 && recoveryCodesLeft === 0)) return null;
  return (
    <>
      <button type="button" aria-label={t('people.resetFactorNamed', { email: user.email })} onClick={() => setConfirming(true)}>
        {t('people.resetFactor')}
      </button>
      {confirming && (
        <FormDialog open title={t('people.resetFactorTitle', { email: user.email })} submitLabel={t('people.resetFactor')} danger mutation={reset} onClose={() => setConfirming(false)} onSubmit={() => reset.mutate()}>
          <p>{t('people.resetFactorText')}</p>
        </FormDialog>
      )}
    </>
  );
}

import { useMemo, useState } from 'react';
import type { AdminSchema } from '@annals/client';
import { createConsoleClient, type ConsoleClient } from '../api/admin-client.ts';
import { useI18n } from '../i18n/i18n.tsx';
import { useSession } from '../session/session.tsx';
import { useProject } from '../shell/project-context.tsx';
import { FormDialog, type DialogMutation } from '../components/form-dialog.tsx';

/** What the parts of "Your account" (account.tsx, account-passkeys.tsx) share. */

export type SecondFactor = AdminSchema<'SecondFactor'>;
export const SECOND_FACTOR_QUERY = ['me', 'second-factor'] as const;

/**
 * The client of one's own account's calls: a 401 there may be a wrong password or code given again (the session
 * still good), which is answered on the page rather than by the dialog that signs in again.
 */
export function useAccountClient(): ConsoleClient {
  const { projectId } = useProject();
  const { clientOptions } = useSession();
  return useMemo(() => createConsoleClient({ ...clientOptions(projectId), ownRefusals: true }), [clientOptions, projectId]);
}

/** Your password again, before a change to how you sign in. */
export function PasswordDialog({ title, text, submitLabel, danger, mutation, onSubmit, onClose }: { title: string; text: string; submitLabel: string; danger?: boolean; mutation: DialogMutation; onSubmit: (password: string) => void; onClose: () => void }) {
  const { t } = useI18n();
  const [password, setPassword] = useState('');
  return (
    <FormDialog open title={title} submitLabel={submitLabel} danger={danger} mutation={mutation} onClose={onClose} onSubmit={() => onSubmit(password)}>
      <p>{text}</p>
      <label>
        {t('account.password')}
        <input type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
      </label>
    </FormDialog>
  );
}

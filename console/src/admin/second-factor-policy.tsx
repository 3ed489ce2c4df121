import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { ApiError } from '../api/admin-client.ts';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';

/**
 * Whether the organisation requires a second factor for password sign-in. Those without one set up an authenticator
 * app as they next sign in. The service refuses to require it of everyone before the administrator has one of their
 * own (so that they are not the first locked out): that refusal is shown with the way to "Your account".
 */
export function SecondFactorPolicy() {
  const { t } = useI18n();
  const { api, path } = useProject();
  const queryClient = useQueryClient();
  const policy = useQuery({ queryKey: ['sign-in', 'second-factor'], queryFn: () => api.GET('/sign-in/second-factor') });
  const change = useMutation({
    mutationFn: (required: boolean) => api.PUT('/sign-in/second-factor', { body: { required } }),
    onSuccess: (answer) => queryClient.setQueryData(['sign-in', 'second-factor'], answer),
  });
  const required = policy.data?.required ?? false;
  const refused = change.error instanceof ApiError && change.error.status === 403;
  return (
    <section aria-labelledby="second-factor-policy-title">
      <h2 id="second-factor-policy-title">{t('policy.title')}</h2>
      <ErrorMessage error={policy.error} />
      <label className="switch">
        <input type="checkbox" role="switch" aria-checked={required} checked={required} disabled={!policy.data || change.isPending} onChange={(e) => change.mutate(e.target.checked)} />
        {t('policy.require')}
      </label>
      <p className="help">{required ? t('policy.on') : t('policy.off')}</p>
      <ErrorMessage error={change.error} />
      {refused && (
        <p>
          <Link to={path('account')}>{t('policy.setUpYours')}</Link>
        </p>
      )}
    </section>
  );
}

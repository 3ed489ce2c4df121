import { useEffect, useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError } from '../api/admin-client.ts';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { Modal } from '../components/modal.tsx';
import { CopyButton } from './copy-button.tsx';

/** A list typed as text: one item per comma or line. */
const listOf = (text: string) =>
  text
    .split(/[,\n]/)
    .map((item) => item.trim())
    .filter(Boolean);

interface Draft {
  issuer: string;
  clientId: string;
  clientSecret: string;
  allowedEmailDomains: string;
  groupsClaim: string;
  adminGroups: string;
  userGroups: string;
  ssoOnly: boolean;
}

const EMPTY: Draft = { issuer: '', clientId: '', clientSecret: '', allowedEmailDomains: '', groupsClaim: 'groups', adminGroups: '', userGroups: '', ssoOnly: false };

/**
 * The tenant's single sign-on (OpenID Connect): the provider, the client registered there, who may sign in and in
 * which role, and single sign-on only. The addresses to register at the provider are shown with copy buttons;
 * "Test sign-in" runs the provider's sign-in in a new tab and says what it would do, without signing anyone in.
 */
export function SingleSignOn() {
  const { t } = useI18n();
  const { api, projectId } = useProject();
  const queryClient = useQueryClient();
  const settings = useQuery({
    queryKey: ['sign-in', 'oidc'],
    queryFn: async () => {
      try {
        return await api.GET('/sign-in/oidc');
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) return null;
        throw error;
      }
    },
  });
  const current = settings.data;
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [saved, setSaved] = useState(false);
  const [removing, setRemoving] = useState(false);
  useEffect(() => {
    if (current) setDraft({ issuer: current.issuer, clientId: current.clientId, clientSecret: '', allowedEmailDomains: current.allowedEmailDomains.join(', '), groupsClaim: current.groupsClaim, adminGroups: current.adminGroups.join(', '), userGroups: current.userGroups.join(', '), ssoOnly: current.ssoOnly });
  }, [current]);
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['sign-in', 'oidc'] });
  const save = useMutation({
    mutationFn: () =>
      api.PUT('/sign-in/oidc', {
        body: {
          issuer: draft.issuer.trim(),
          clientId: draft.clientId.trim(),
          ...(draft.clientSecret ? { clientSecret: draft.clientSecret } : {}),
          allowedEmailDomains: listOf(draft.allowedEmailDomains),
          groupsClaim: draft.groupsClaim.trim() || 'groups',
          adminGroups: listOf(draft.adminGroups),
          userGroups: listOf(draft.userGroups),
          ssoOnly: draft.ssoOnly,
        },
      }),
    onSuccess: async () => {
      setSaved(true);
      await refresh();
    },
  });
  const remove = useMutation({
    mutationFn: () => api.DELETE('/sign-in/oidc'),
    onSuccess: async () => {
      setRemoving(false);
      setDraft(EMPTY);
      await refresh();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    save.mutate();
  };
  const field = (key: keyof Omit<Draft, 'ssoOnly'>, label: string, options: { hint?: string; type?: string; required?: boolean; placeholder?: string } = {}) => (
    <label>
      {label}
      <input type={options.type ?? 'text'} value={draft[key]} required={options.required} placeholder={options.placeholder} autoComplete="off" onChange={(e) => setDraft({ ...draft, [key]: e.target.value })} />
      {options.hint && <small>{options.hint}</small>}
    </label>
  );
  return (
    <section aria-labelledby="sso-title">
      <h2 id="sso-title">{t('sso.title')}</h2>
      <p>{current ? t('sso.on') : t('sso.off')}</p>
      <ErrorMessage error={settings.error} />
      {current && (
        <dl className="sso-addresses">
          <dt>{t('sso.redirectUri')}</dt>
          <dd>
            <code>{current.redirectUri}</code> <CopyButton text={current.redirectUri} />
          </dd>
          <dt>{t('sso.logoutUri')}</dt>
          <dd>
            <code>{current.backchannelLogoutUri}</code> <CopyButton text={current.backchannelLogoutUri} />
          </dd>
        </dl>
      )}
      <form onSubmit={submit} className="sso-form">
        {field('issuer', t('sso.issuer'), { required: true, placeholder: 'https://login.example.com/realms/staff', hint: t('sso.issuerHint') })}
        {field('clientId', t('sso.clientId'), { required: true })}
        {field('clientSecret', t('sso.clientSecret'), { type: 'password', required: !current, ...(current ? { placeholder: t('sso.secretKept') } : {}) })}
        {field('allowedEmailDomains', t('sso.domains'), { required: true, placeholder: 'example.com', hint: t('sso.domainsHint') })}
        {field('groupsClaim', t('sso.groupsClaim'))}
        {field('adminGroups', t('sso.adminGroups'), { required: true, hint: t('sso.adminGroupsHint') })}
        {field('userGroups', t('sso.userGroups'), { hint: t('sso.userGroupsHint') })}
        <label className="checkbox">
          <input type="checkbox" checked={draft.ssoOnly} onChange={(e) => setDraft({ ...draft, ssoOnly: e.target.checked })} />
          {t('sso.ssoOnly')}
        </label>
        <div className="actions">
          <button type="submit" className="primary" disabled={save.isPending}>
            {t('sso.save')}
          </button>
          {current && (
            <a className="button" href={`/admin/v1/auth/oidc/start?projectId=${encodeURIComponent(projectId)}&test=true`} target="_blank" rel="noopener">
              {t('sso.test')}
            </a>
          )}
          {current && (
            <button type="button" onClick={() => setRemoving(true)}>
              {t('sso.remove')}
            </button>
          )}
        </div>
      </form>
      <ErrorMessage error={save.error} />
      {saved && !save.isPending && (
        <p className="notice" role="status">
          {t('sso.saved')}
        </p>
      )}
      <Modal open={removing} title={t('sso.removeTitle')}>
        <p>{t('sso.removeText')}</p>
        <ErrorMessage error={remove.error} />
        <div className="dialog-actions">
          <button type="button" className="danger" disabled={remove.isPending} onClick={() => remove.mutate()}>
            {t('sso.remove')}
          </button>
          <button type="button" onClick={() => setRemoving(false)}>
            {t('admin.cancel')}
          </button>
        </div>
      </Modal>
    </section>
  );
}

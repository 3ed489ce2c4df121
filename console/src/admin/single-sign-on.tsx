import { useEffect, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { AdminSchema } from '@annals/client';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { CopyButton } from './copy-button.tsx';
import { SamlSettingsForm } from './saml-sign-on.tsx';
import { listOf, orNone, SsoFormActions, SsoFormOutcome, useSsoSettings } from './sso-parts.tsx';
import { RoleGroupsEditor, roleGroupRows, roleGroupsOf, type RoleGroupRow } from './sso-role-groups.tsx';

type Protocol = 'oidc' | 'saml';

/**
 * The tenant's single sign-on: one identity provider, through OpenID Connect or SAML 2.0. While none is set up
 * the administrator chooses the protocol and fills in its form; once one is, its form shows (and Remove, after
 * which the choice is back).
 */
export function SingleSignOn() {
  const { t } = useI18n();
  const { api } = useProject();
  const oidc = useQuery({ queryKey: ['sign-in', 'oidc'], queryFn: () => orNone(api.GET('/sign-in/oidc')) });
  const saml = useQuery({ queryKey: ['sign-in', 'saml'], queryFn: () => orNone(api.GET('/sign-in/saml')) });
  const [chosen, setChosen] = useState<Protocol>('oidc');
  const loaded = oidc.isSuccess && saml.isSuccess;
  // The one set up, else the one chosen. The form keeps its place in the tree as it is first saved, so that what
  // was typed in it (a SAML certificate) and the "saved" notice stay.
  const protocol: Protocol = oidc.data ? 'oidc' : saml.data ? 'saml' : chosen;
  return (
    <section aria-labelledby="sso-title">
      <h2 id="sso-title">{t('sso.title')}</h2>
      <ErrorMessage error={oidc.error ?? saml.error} />
      {loaded && (
        <>
          {!oidc.data && !saml.data && (
            <>
              <p>{t('sso.off')}</p>
              <fieldset className="sso-protocol">
                <legend>{t('sso.protocol')}</legend>
                {(['oidc', 'saml'] as const).map((option) => (
                  <label key={option} className="inline">
                    <input type="radio" name="sso-protocol" value={option} checked={chosen === option} onChange={() => setChosen(option)} />
                    {t(option === 'oidc' ? 'sso.protocolOidc' : 'sso.protocolSaml')}
                  </label>
                ))}
              </fieldset>
            </>
          )}
          {protocol === 'oidc' ? <OidcSettingsForm current={oidc.data ?? null} /> : <SamlSettingsForm current={saml.data ?? null} />}
        </>
      )}
    </section>
  );
}

interface Draft {
  issuer: string;
  clientId: string;
  clientSecret: string;
  allowedEmailDomains: string;
  groupsClaim: string;
  adminGroups: string;
  userGroups: string;
  roleGroups: RoleGroupRow[];
  ssoOnly: boolean;
}

const EMPTY: Draft = { issuer: '', clientId: '', clientSecret: '', allowedEmailDomains: '', groupsClaim: 'groups', adminGroups: '', userGroups: '', roleGroups: [], ssoOnly: false };

/**
 * OpenID Connect: the provider, the client registered there, who may sign in and in which role (the custom roles
 * of groups too), and single sign-on only. The addresses to register at the provider are shown with copy buttons; "Test sign-in" runs the provider's
 * sign-in in a new tab and says what it would do, without signing anyone in.
 */
function OidcSettingsForm({ current }: { current: AdminSchema<'OidcSettings'> | null }) {
  const { t } = useI18n();
  const { api, projectId } = useProject();
  const [draft, setDraft] = useState<Draft>(EMPTY);
  useEffect(() => {
    if (current) setDraft({ issuer: current.issuer, clientId: current.clientId, clientSecret: '', allowedEmailDomains: current.allowedEmailDomains.join(', '), groupsClaim: current.groupsClaim, adminGroups: current.adminGroups.join(', '), userGroups: current.userGroups.join(', '), roleGroups: roleGroupRows(current.roleGroups), ssoOnly: current.ssoOnly });
  }, [current]);
  const { save, remove, submit, saved, removing, setRemoving } = useSsoSettings({
    save: () =>
      api.PUT('/sign-in/oidc', {
        body: {
          issuer: draft.issuer.trim(),
          clientId: draft.clientId.trim(),
          ...(draft.clientSecret ? { clientSecret: draft.clientSecret } : {}),
          allowedEmailDomains: listOf(draft.allowedEmailDomains),
          groupsClaim: draft.groupsClaim.trim() || 'groups',
          adminGroups: listOf(draft.adminGroups),
          userGroups: listOf(draft.userGroups),
          roleGroups: roleGroupsOf(draft.roleGroups),
          ssoOnly: draft.ssoOnly,
        },
      }),
    remove: () => api.DELETE('/sign-in/oidc'),
    onRemoved: () => setDraft(EMPTY),
  });
  const field = (key: keyof Omit<Draft, 'ssoOnly' | 'roleGroups'>, label: string, options: { hint?: string; type?: string; required?: boolean; placeholder?: string } = {}) => (
    <label>
      {label}
      <input type={options.type ?? 'text'} value={draft[key]} required={options.required} placeholder={options.placeholder} autoComplete="off" onChange={(e) => setDraft({ ...draft, [key]: e.target.value })} />
      {options.hint && <small>{options.hint}</small>}
    </label>
  );
  return (
    <>
      <p>{current ? t('sso.on') : t('sso.oidcOff')}</p>
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
        <RoleGroupsEditor rows={draft.roleGroups} onChange={(roleGroups) => setDraft({ ...draft, roleGroups })} />
        <label className="checkbox">
          <input type="checkbox" checked={draft.ssoOnly} onChange={(e) => setDraft({ ...draft, ssoOnly: e.target.checked })} />
          {t('sso.ssoOnly')}
        </label>
        <SsoFormActions protocol="oidc" projectId={projectId} setUp={Boolean(current)} saving={save.isPending} onRemove={() => setRemoving(true)} />
      </form>
      <SsoFormOutcome save={save} saved={saved} remove={remove} removing={removing} setRemoving={setRemoving} />
    </>
  );
}

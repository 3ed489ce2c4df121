import { useEffect, useRef, useState } from 'react';
import type { AdminSchema } from '@annals/client';
import { useI18n } from '../i18n/i18n.tsx';
import { useProject } from '../shell/project-context.tsx';
import { useSession } from '../session/session.tsx';
import { addressesOf, ServiceProviderAddresses } from './saml-service-provider.tsx';
import { listOf, SsoFormActions, SsoFormOutcome, useSsoSettings } from './sso-parts.tsx';
import { RoleGroupsEditor, roleGroupRows, roleGroupsOf, type RoleGroupRow } from './sso-role-groups.tsx';

type SamlSettings = AdminSchema<'SamlSettings'>;
type Certificate = SamlSettings['idpCertificates'][number];

interface Draft {
  idpEntityId: string;
  ssoUrl: string;
  sloUrl: string;
  /** The certificates' PEM: one, or two while the provider changes keys. */
  certificates: string[];
  allowedEmailDomains: string;
  emailAttribute: string;
  groupsAttribute: string;
  adminGroups: string;
  userGroups: string;
  roleGroups: RoleGroupRow[];
  ssoOnly: boolean;
  wantAssertionsEncrypted: boolean;
}

type TextKey = Exclude<keyof Draft, 'certificates' | 'roleGroups' | 'ssoOnly' | 'wantAssertionsEncrypted'>;

const EMPTY: Draft = { idpEntityId: '', ssoUrl: '', sloUrl: '', certificates: [''], allowedEmailDomains: '', emailAttribute: 'email', groupsAttribute: 'groups', adminGroups: '', userGroups: '', roleGroups: [], ssoOnly: false, wantAssertionsEncrypted: false };
const DAY_MS = 24 * 60 * 60 * 1000;
/** A certificate that ends this soon is flagged: time to get the provider's next one. */
const EXPIRY_WARNING_DAYS = 30;

/**
 * SAML 2.0: the identity provider (its entity ID, single sign-on URL and signing certificates), who may sign in
 * and in which role (the custom roles of groups too), whether assertions must come encrypted, and single sign-on only. What to register at the provider (entity ID, ACS URL, single
 * logout, metadata, this service's certificate) shows with copy buttons, before the settings exist too (from the page's origin), with
 * "Make a new key pair" once they do; each of the provider's certificates in use shows with its subject and end of validity,
 * flagged when it is past or near. The service answers what a certificate says, never its text: the PEM is
 * pasted again whenever the settings are saved (the form says so), and kept in the form for further saves.
 */
export function SamlSettingsForm({ current }: { current: SamlSettings | null }) {
  const { t } = useI18n();
  const { api, projectId } = useProject();
  const { session } = useSession();
  const [draft, setDraft] = useState<Draft>(EMPTY);
  useEffect(() => {
    if (!current) return;
    // What was pasted stays (the service never answers it); as many boxes as certificates in use.
    setDraft((before) => ({
      idpEntityId: current.idpEntityId,
      ssoUrl: current.ssoUrl,
      sloUrl: current.sloUrl ?? '',
      certificates: current.idpCertificates.length > 1 && before.certificates.length < 2 ? [...before.certificates, ''] : before.certificates,
      allowedEmailDomains: current.allowedEmailDomains.join(', '),
      emailAttribute: current.emailAttribute,
      groupsAttribute: current.groupsAttribute,
      adminGroups: current.adminGroups.join(', '),
      userGroups: current.userGroups.join(', '),
      roleGroups: roleGroupRows(current.roleGroups),
      ssoOnly: current.ssoOnly,
      wantAssertionsEncrypted: current.wantAssertionsEncrypted,
    }));
  }, [current]);
  const form = useRef<HTMLFormElement>(null);
  const { save, remove, submit, saveWith, saved, removing, setRemoving } = useSsoSettings({
    // Every field each time (the settings are replaced); a new key pair only when asked for.
    save: ({ newSpCertificate }) =>
      api.PUT('/sign-in/saml', {
        body: {
          idpEntityId: draft.idpEntityId.trim(),
          ssoUrl: draft.ssoUrl.trim(),
          sloUrl: draft.sloUrl.trim() || null,
          idpCertificates: draft.certificates.map((pem) => pem.trim()).filter(Boolean),
          allowedEmailDomains: listOf(draft.allowedEmailDomains),
          // Empty: the NameID is the address (when its format is emailAddress).
          emailAttribute: draft.emailAttribute.trim(),
          ...(draft.groupsAttribute.trim() ? { groupsAttribute: draft.groupsAttribute.trim() } : {}),
          adminGroups: listOf(draft.adminGroups),
          userGroups: listOf(draft.userGroups),
          roleGroups: roleGroupsOf(draft.roleGroups),
          ssoOnly: draft.ssoOnly,
          wantAssertionsEncrypted: draft.wantAssertionsEncrypted,
          ...(newSpCertificate ? { newSpCertificate: true } : {}),
        },
      }),
    remove: () => api.DELETE('/sign-in/saml'),
    onRemoved: () => setDraft(EMPTY),
  });
  const field = (key: TextKey, label: string, options: { hint?: string; required?: boolean; placeholder?: string } = {}) => (
    <label>
      {label}
      <input type="text" value={draft[key]} required={options.required} placeholder={options.placeholder} autoComplete="off" onChange={(e) => setDraft({ ...draft, [key]: e.target.value })} />
      {options.hint && <small>{options.hint}</small>}
    </label>
  );
  const setCertificate = (index: number, pem: string) => setDraft({ ...draft, certificates: draft.certificates.map((before, i) => (i === index ? pem : before)) });
  return (
    <>
      <p>{current ? t('sso.samlOn') : t('sso.samlOff')}</p>
      {!current && <p className="muted small">{t('sso.samlRegister')}</p>}
      <ServiceProviderAddresses
        addresses={current ?? (session ? addressesOf(session.user.tenantId) : null)}
        certificate={current?.spCertificate ?? null}
        onNewKeyPair={current ? { ready: () => form.current?.reportValidity() ?? false, make: () => saveWith({ newSpCertificate: true }), making: save.isPending } : undefined}
      />
      <form ref={form} onSubmit={submit} className="sso-form">
        {field('idpEntityId', t('sso.samlIdpEntityId'), { required: true, placeholder: 'https://idp.example.com/saml/metadata', hint: t('sso.samlIdpEntityIdHint') })}
        {field('ssoUrl', t('sso.samlSsoUrl'), { required: true, placeholder: 'https://idp.example.com/saml/sso', hint: t('sso.samlSsoUrlHint') })}
        {field('sloUrl', t('sso.samlSloUrl'), { placeholder: 'https://idp.example.com/saml/slo', hint: t('sso.samlSloUrlHint') })}
        {current && <Certificates certificates={current.idpCertificates} />}
        {draft.certificates.map((pem, index) => (
          <label key={index}>
            {index === 0 ? t('sso.samlCertificate') : t('sso.samlSecondCertificate')}
            <textarea className="pem" rows={5} value={pem} required spellCheck={false} placeholder={'-----BEGIN CERTIFICATE-----\n…\n-----END CERTIFICATE-----'} onChange={(e) => setCertificate(index, e.target.value)} />
            <small>{index === 0 ? `${t('sso.samlCertificateHint')}${current ? ` ${t('sso.samlCertificateAgain')}` : ''}` : t('sso.samlSecondHint')}</small>
          </label>
        ))}
        <div>
          {draft.certificates.length < 2 ? (
            <button type="button" onClick={() => setDraft({ ...draft, certificates: [...draft.certificates, ''] })}>
              {t('sso.samlAddCertificate')}
            </button>
          ) : (
            <button type="button" onClick={() => setDraft({ ...draft, certificates: draft.certificates.slice(0, 1) })}>
              {t('sso.samlDropCertificate')}
            </button>
          )}
        </div>
        {field('allowedEmailDomains', t('sso.domains'), { required: true, placeholder: 'example.com', hint: t('sso.samlDomainsHint') })}
        {field('emailAttribute', t('sso.samlEmailAttribute'), { hint: t('sso.samlEmailAttributeHint') })}
        {field('groupsAttribute', t('sso.samlGroupsAttribute'))}
        {field('adminGroups', t('sso.adminGroups'), { required: true, hint: t('sso.adminGroupsHint') })}
        {field('userGroups', t('sso.userGroups'), { hint: t('sso.userGroupsHint') })}
        <RoleGroupsEditor rows={draft.roleGroups} onChange={(roleGroups) => setDraft({ ...draft, roleGroups })} />
        <div className="checkbox-with-hint">
          <label className="checkbox">
            <input type="checkbox" checked={draft.wantAssertionsEncrypted} aria-describedby="saml-encrypted-hint" onChange={(e) => setDraft({ ...draft, wantAssertionsEncrypted: e.target.checked })} />
            {t('sso.samlWantEncrypted')}
          </label>
          <small id="saml-encrypted-hint">{t('sso.samlWantEncryptedHint')}</small>
        </div>
        <label className="checkbox">
          <input type="checkbox" checked={draft.ssoOnly} onChange={(e) => setDraft({ ...draft, ssoOnly: e.target.checked })} />
          {t('sso.ssoOnly')}
        </label>
        <SsoFormActions protocol="saml" projectId={projectId} setUp={Boolean(current)} saving={save.isPending} onRemove={() => setRemoving(true)} />
      </form>
      <SsoFormOutcome save={save} saved={saved} savedNotice={save.variables?.newSpCertificate ? t('sso.samlNewKeyPairMade') : undefined} remove={remove} removing={removing} setRemoving={setRemoving} />
    </>
  );
}

/** The provider's certificates in use: who each names, until when, and a warning when that is past or near. */
function Certificates({ certificates }: { certificates: Certificate[] }) {
  const { t, language } = useI18n();
  const day = new Intl.DateTimeFormat(language, { dateStyle: 'medium' });
  return (
    <div className="sso-certificates">
      <h3>{t('sso.samlCertificates')}</h3>
      <ul>
        {certificates.map((certificate) => {
          const date = day.format(new Date(certificate.validTo));
          const left = Date.parse(certificate.validTo) - Date.now();
          const warning = left <= 0 ? t('sso.samlExpired', { date }) : left <= EXPIRY_WARNING_DAYS * DAY_MS ? t('sso.samlExpiring', { date }) : null;
          return (
            <li key={certificate.fingerprint256}>
              <span className="subject">{certificate.subject.replace(/\n/g, ', ')}</span> <span className="muted">{t('sso.samlValidUntil', { date })}</span>
              {warning && <p className="cert-warning">{warning}</p>}
              <small className="muted fingerprint">
                {t('sso.samlFingerprint')} {certificate.fingerprint256}
              </small>
            </li>
          );
        })}
      </ul>
    </div>
  );
}

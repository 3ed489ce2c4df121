import { useState } from 'react';
import type { AdminSchema } from '@annals/client';
import { useI18n } from '../i18n/i18n.tsx';
import { Modal } from '../components/modal.tsx';
import { CopyButton } from './copy-button.tsx';

/**
 * What the SAML form shows of this service, to register at the provider: its addresses for the tenant and its
 * certificate (the key pair the service made when SAML was set up, which signs its requests and to which the
 * provider may encrypt assertions), with the way to make a new key pair.
 */

type SamlSettings = AdminSchema<'SamlSettings'>;
type Addresses = Pick<SamlSettings, 'spEntityId' | 'acsUrl' | 'sloServiceUrl'>;
type ServiceCertificate = NonNullable<SamlSettings['spCertificate']>;

/** This service's addresses for the tenant as the service will answer them (before the settings exist, from the page's own origin). */
export function addressesOf(tenantId: string): Addresses {
  const base = `${window.location.origin}/admin/v1/auth/saml`;
  return { spEntityId: `${base}/metadata/${tenantId}`, acsUrl: `${base}/acs`, sloServiceUrl: `${base}/slo/${tenantId}` };
}

/**
 * What to register at the provider, with copy buttons: the entity ID (also the metadata's address), the ACS, the
 * single logout service and this service's certificate (null: none yet, the next save makes one).
 * `onNewKeyPair`, given once the settings exist: the button that makes a new key pair, after a confirmation.
 */
export function ServiceProviderAddresses({ addresses, certificate, onNewKeyPair }: { addresses: Addresses | null; certificate: ServiceCertificate | null; onNewKeyPair?: NewKeyPairProps | undefined }) {
  const { t } = useI18n();
  if (!addresses) return null;
  return (
    <dl className="sso-addresses">
      <dt>{t('sso.samlEntityId')}</dt>
      <dd>
        <code>{addresses.spEntityId}</code> <CopyButton text={addresses.spEntityId} />
      </dd>
      <dt>{t('sso.samlAcsUrl')}</dt>
      <dd>
        <code>{addresses.acsUrl}</code> <CopyButton text={addresses.acsUrl} />
      </dd>
      <dt>{t('sso.samlSloService')}</dt>
      <dd>
        <code>{addresses.sloServiceUrl}</code> <CopyButton text={addresses.sloServiceUrl} />
      </dd>
      <dt>{t('sso.samlMetadata')}</dt>
      <dd>
        <a href={addresses.spEntityId} target="_blank" rel="noopener">
          {t('sso.samlMetadataOpen')}
        </a>
        <span className="muted small">{t('sso.samlMetadataSame')}</span>
        <CopyButton text={addresses.spEntityId} />
      </dd>
      <dt className="sso-sp-certificate-title">{t('sso.samlSpCertificate')}</dt>
      <dd className="sso-sp-certificate">
        {certificate ? <CertificateShown certificate={certificate} onNewKeyPair={onNewKeyPair} /> : <span className="muted small">{t('sso.samlSpCertificateNone')}</span>}
      </dd>
    </dl>
  );
}

/** This service's certificate: who it names, until when, its SHA-256 fingerprint and its PEM to copy. */
function CertificateShown({ certificate, onNewKeyPair }: { certificate: ServiceCertificate; onNewKeyPair?: NewKeyPairProps | undefined }) {
  const { t, language } = useI18n();
  const date = new Intl.DateTimeFormat(language, { dateStyle: 'medium' }).format(new Date(certificate.validTo));
  return (
    <>
      <span>
        <span className="subject">{certificate.subject.replace(/\n/g, ', ')}</span> <span className="muted">{t('sso.samlValidUntil', { date })}</span>
      </span>
      <small className="muted fingerprint">
        {t('sso.samlFingerprint')} <span className="sp-fingerprint">{certificate.fingerprint256}</span>
      </small>
      <textarea className="pem" readOnly rows={4} spellCheck={false} value={certificate.pem} aria-label={t('sso.samlSpCertificatePem')} onFocus={(e) => e.target.select()} />
      <span className="sp-certificate-actions">
        <CopyButton text={certificate.pem} />
        {onNewKeyPair && <NewKeyPair {...onNewKeyPair} />}
      </span>
      <small className="muted">{t('sso.samlSpCertificateHint')}</small>
    </>
  );
}

interface NewKeyPairProps {
  /** Whether the form can be saved as it is (its browser checks shown where not). */
  ready: () => boolean;
  /** Saves the form with a new key pair. */
  make: () => void;
  making: boolean;
}

/** "Make a new key pair": once the form can be saved, a dialog says what it changes at the provider, then saves with a new key pair. */
function NewKeyPair({ ready, make, making }: NewKeyPairProps) {
  const { t } = useI18n();
  const [asking, setAsking] = useState(false);
  return (
    <>
      <button type="button" disabled={making} onClick={() => ready() && setAsking(true)}>
        {t('sso.samlNewKeyPair')}
      </button>
      <Modal open={asking} title={t('sso.samlNewKeyPairTitle')} onClose={() => setAsking(false)}>
        <p>{t('sso.samlNewKeyPairText')}</p>
        <p>{t('sso.samlNewKeyPairSaves')}</p>
        <div className="dialog-actions">
          <button
            type="button"
            className="danger"
            onClick={() => {
              setAsking(false);
              make();
            }}
          >
            {t('sso.samlNewKeyPair')}
          </button>
          <button type="button" onClick={() => setAsking(false)}>
            {t('admin.cancel')}
          </button>
        </div>
      </Modal>
    </>
  );
}

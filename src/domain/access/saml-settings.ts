import { invalid } from '../domain-error.ts';
import { emailDomainsValue, groupsValue, isLoopbackHost, withRoleGroups, type RoleGroup } from './oidc-settings.ts';

/**
 * A tenant's SAML 2.0 sign-in, as the tenant decider keeps it and tenant.saml-configured carries it: for
 * organisations whose identity provider speaks only SAML. The provider's signing certificates are public. The
 * service's own key pair for the tenant (`spCertificate`, public, and `sealedSpKey`, its private key sealed with the
 * secrets key for the record `saml-sp:<tenantId>`, never in clear) signs its authentication and logout requests
 * and lets the provider encrypt its assertions to it; settings recorded before it existed have none.
 */
export interface SamlSettings {
  /** The identity provider's entity ID (its Issuer in every response). */
  idpEntityId: string;
  /** Where the browser is sent with the authentication request (HTTP-Redirect binding): https, or http on a loopback address. */
  ssoUrl: string;
  /** Where this service answers the provider's logout requests (its single logout service, HTTP-Redirect binding); null: the SSO URL. */
  sloUrl: string | null;
  /** The provider's signing certificates (PEM): assertions must be signed by one of them. Two during a rotation. */
  idpCertificates: string[];
  /** Lower-cased domain names; a person signs in only with an e-mail address in one of them. */
  allowedEmailDomains: string[];
  /** The attribute that holds the person's e-mail address (the NameID when it is an e-mail address and this is empty). */
  emailAttribute: string;
  /** The attribute that lists the person's groups. */
  groupsAttribute: string;
  adminGroups: string[];
  userGroups: string[];
  /** Groups whose members sign in with one of the organisation's own roles (see RoleGroup); absent: none. */
  roleGroups?: RoleGroup[];
  ssoOnly: boolean;
  /** This service's certificate for the tenant (PEM): the provider checks its requests' signatures and encrypts assertions with it. */
  spCertificate?: string;
  /** Its private key, sealed (see samlSpKeyContext). */
  sealedSpKey?: string;
  /** Refuse an answer whose assertion is not encrypted (to spCertificate). */
  wantAssertionsEncrypted?: boolean;
}

/** The additional authenticated data a tenant's SAML key is sealed with: a sealed key copied to another tenant does not open. */
export function samlSpKeyContext(tenantId: string): string {
  return `saml-sp:${tenantId}`;
}

export const DEFAULT_SAML_EMAIL_ATTRIBUTE = 'email';
export const DEFAULT_SAML_GROUPS_ATTRIBUTE = 'groups';
const PEM_CERTIFICATE = /^-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----\r?\n?$/;

/** The settings as given, checked and normalised (VALIDATION_ERROR otherwise). Certificates are checked for their form here, for what they hold by the application. */
export function samlSettingsValue(settings: SamlSettings): SamlSettings {
  const idpEntityId = settings.idpEntityId.trim();
  if (idpEntityId.length === 0 || idpEntityId.length > 1024 || /\s/.test(idpEntityId)) throw invalid('idpEntityId: the provider\'s entity ID, 1 to 1024 characters without spaces');
  const certificates = [...new Set(settings.idpCertificates.map((pem) => `${pem.trim()}\n`))];
  if (certificates.length === 0 || certificates.length > 3) throw invalid('idpCertificates: one to three signing certificates of the provider (PEM)');
  if (certificates.some((pem) => !PEM_CERTIFICATE.test(pem) || pem.length > 16_384)) throw invalid('idpCertificates: each is one PEM certificate (-----BEGIN CERTIFICATE----- ... -----END CERTIFICATE-----)');
  const attribute = (value: string, name: string, allowEmpty: boolean) => {
    const trimmed = value.trim();
    if ((trimmed.length === 0 && !allowEmpty) || trimmed.length > 500 || /\s/.test(trimmed)) throw invalid(`${name}: the name of an attribute, without spaces`);
    return trimmed;
  };
  const adminGroups = groupsValue(settings.adminGroups, 'adminGroups');
  if (adminGroups.length === 0) throw invalid('adminGroups must name at least one group: the people who may administer the tenant through sign-on');
  return {
    idpEntityId,
    ssoUrl: ssoUrlValue(settings.ssoUrl, 'ssoUrl'),
    sloUrl: settings.sloUrl === null || settings.sloUrl.trim() === '' ? null : ssoUrlValue(settings.sloUrl, 'sloUrl'),
    idpCertificates: certificates,
    allowedEmailDomains: emailDomainsValue(settings.allowedEmailDomains),
    emailAttribute: attribute(settings.emailAttribute, 'emailAttribute', true),
    groupsAttribute: attribute(settings.groupsAttribute, 'groupsAttribute', false),
    adminGroups,
    userGroups: groupsValue(settings.userGroups, 'userGroups'),
    ...withRoleGroups(settings.roleGroups),
    ssoOnly: settings.ssoOnly,
    ...serviceProviderKeys(settings),
  };
}

/** The service's key pair as given (both or neither; the key sealed; the certificate one PEM), and the encryption rule, which needs it. */
function serviceProviderKeys(settings: SamlSettings): Pick<SamlSettings, 'spCertificate' | 'sealedSpKey' | 'wantAssertionsEncrypted'> {
  const { spCertificate, sealedSpKey } = settings;
  if ((spCertificate === undefined) !== (sealedSpKey === undefined)) throw invalid("the service's SAML certificate and its key are recorded together");
  if (spCertificate === undefined || sealedSpKey === undefined) {
    if (settings.wantAssertionsEncrypted) throw invalid("wantAssertionsEncrypted needs the service's SAML certificate, which the provider encrypts to");
    return {};
  }
  const certificate = `${spCertificate.trim()}\n`;
  if (!PEM_CERTIFICATE.test(certificate) || certificate.length > 16_384) throw invalid("spCertificate: the service's certificate, one PEM certificate");
  if (!/^v1\./.test(sealedSpKey)) throw invalid("the service's SAML key must be sealed before it is recorded");
  return { spCertificate: certificate, sealedSpKey, ...(settings.wantAssertionsEncrypted ? { wantAssertionsEncrypted: true } : {}) };
}

function ssoUrlValue(value: string, name: 'ssoUrl' | 'sloUrl'): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw invalid(`${name} must be an absolute URL: the provider's single ${name === 'ssoUrl' ? 'sign-on' : 'logout'} service (HTTP-Redirect binding)`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) throw invalid(`${name} must use https (plain http only for a provider on this machine)`);
  if (url.hash || url.username || url.password) throw invalid(`${name} must not carry a fragment or credentials`);
  return url.href;
}

export function sameSamlSettings(a: SamlSettings | null, b: SamlSettings): boolean {
  return a !== null && JSON.stringify(a) === JSON.stringify(b);
}

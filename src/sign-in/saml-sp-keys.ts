import { generate } from 'selfsigned';
import type { Clock } from '../clock.ts';
import { samlSpKeyContext, type SamlSettings } from '../domain/access/saml-settings.ts';
import type { SecretBox } from '../security/secret-box.ts';

/** How long the service's SAML certificate for a tenant is valid: providers check it, and rotating it means registering the new one there. */
const VALIDITY_YEARS = 10;

/**
 * This service's key pair as a SAML service provider for a tenant: made once, when the tenant sets SAML up (or
 * when an administrator asks for a new one), kept in the log like the OpenID Connect client secret (the private key
 * sealed with the secrets key for `saml-sp:<tenantId>`, so every instance with that key signs and decrypts alike),
 * and published in the tenant's metadata. RSA 2048 with SHA-256, self-signed: providers trust the certificate
 * they were given, not a chain.
 */
export async function newServiceProviderKeys(tenantId: string, box: SecretBox, clock: Clock): Promise<Required<Pick<SamlSettings, 'spCertificate' | 'sealedSpKey'>>> {
  const now = clock.now();
  const notAfter = new Date(now);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + VALIDITY_YEARS);
  const pems = await generate([{ name: 'commonName', value: `annals SAML ${tenantId}` }], {
    keyType: 'rsa',
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate: new Date(now.getTime() - 60_000),
    notAfterDate: notAfter,
    extensions: [{ name: 'basicConstraints', cA: false }, { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, dataEncipherment: true }],
  });
  return { spCertificate: pems.cert, sealedSpKey: box.seal(pems.private, samlSpKeyContext(tenantId)) };
}

/** The private key of the tenant's SAML key pair, opened for signing and decrypting (never kept beyond the call). */
export function serviceProviderKey(tenantId: string, settings: SamlSettings, box: SecretBox): string | undefined {
  return settings.sealedSpKey ? box.open(settings.sealedSpKey, samlSpKeyContext(tenantId)) : undefined;
}

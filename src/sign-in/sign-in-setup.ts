import type { Clock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import type { AccessService } from '../application/access-service.ts';
import type { ProjectionWatermark } from '../application/projection-watermark.ts';
import type { ReadModelReader } from '../read-models/read-model-reader.ts';
import { SecretBox } from '../security/secret-box.ts';
import { outboundPolicy } from '../security/ssrf-guard.ts';
import { resolveSecretsKey } from '../security/secrets-key.ts';
import { OidcRelyingParty } from './oidc-relying-party.ts';
import { OidcSignIn } from './oidc-sign-in.ts';
import { SecondFactorChecks } from './second-factor.ts';
import { SecondFactorSignIn } from './second-factor-sign-in.ts';
import { SamlSignIn } from './saml-sign-in.ts';

/** Single sign-on and the second factor as the admin routes use them (API role), from the settings: secrets sealed with SECRETS_KEY, providers reached through OUTBOUND_ALLOWLIST. */
export interface SignInServices {
  oidc: OidcSignIn;
  box: SecretBox;
  relyingParty: OidcRelyingParty;
  /** The second factor of password sign-in: its checks (codes, passkeys, tickets) and the sign-in's second step. */
  secondFactorChecks: SecondFactorChecks;
  secondFactor: SecondFactorSignIn;
  /** Sign-in through a tenant's SAML 2.0 provider. */
  saml: SamlSignIn;
}

export function signInServicesFor(config: Config, deps: { access: AccessService; reader: ReadModelReader; watermark: ProjectionWatermark; clock: Clock }): SignInServices {
  const box = new SecretBox(resolveSecretsKey(config));
  const relyingParty = new OidcRelyingParty({ policy: outboundPolicy(config.outboundAllowlist), now: () => deps.clock.now().getTime() });
  const secondFactorChecks = new SecondFactorChecks({ box, clock: deps.clock });
  return { box, relyingParty, oidc: new OidcSignIn({ ...deps, box, relyingParty }), secondFactorChecks, secondFactor: new SecondFactorSignIn({ checks: secondFactorChecks, access: deps.access }), saml: new SamlSignIn({ ...deps, box }) };
}

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

/** Single sign-on as the admin routes use it (API role), from the settings: secrets sealed with SECRETS_KEY, providers reached through OUTBOUND_ALLOWLIST. */
export interface SignInServices {
  oidc: OidcSignIn;
  box: SecretBox;
  relyingParty: OidcRelyingParty;
}

export function signInServicesFor(config: Config, deps: { access: AccessService; reader: ReadModelReader; watermark: ProjectionWatermark; clock: Clock }): SignInServices {
  const box = new SecretBox(resolveSecretsKey(config));
  const relyingParty = new OidcRelyingParty({ policy: outboundPolicy(config.outboundAllowlist), now: () => deps.clock.now().getTime() });
  return { box, relyingParty, oidc: new OidcSignIn({ ...deps, box, relyingParty }) };
}

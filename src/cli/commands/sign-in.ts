import { AccessService } from '../../application/access-service.ts';
import { loadAggregate } from '../../application/command-handler.ts';
import { systemClock } from '../../clock.ts';
import { tenantStream } from '../../domain/access/access-streams.ts';
import { notFound } from '../../domain/domain-error.ts';
import { tenantDecider, type Tenant } from '../../domain/access/tenant-decider.ts';
import { hasSecondFactor } from '../../domain/access/second-factor.ts';
import type { EventLog } from '../../event-store/event-log.ts';
import { operatorCaller, parseCommandArgs, printResult, required, UsageError, withStores, type CommandGroup } from '../cli-support.ts';
import { COMMAND_USAGE } from '../usage.ts';

const USAGE = COMMAND_USAGE['sign-in'];

/** The settings as an operator may see them: everything but the sealed secret (SAML's certificates are public). */
function shown(tenantId: string, tenant: Tenant) {
  const oidc = tenant.oidc ? (({ sealedClientSecret: _sealed, ...rest }) => ({ ...rest, clientSecretSet: true }))(tenant.oidc) : null;
  return { tenantId, oidc, saml: tenant.saml ?? null };
}

async function tenantOf(log: EventLog, tenantId: string): Promise<Tenant> {
  const { state } = await loadAggregate(log, tenantStream(tenantId), tenantDecider);
  if (!state) throw notFound(`No tenant ${tenantId}.`);
  return state;
}

/**
 * sign-in show | allow-passwords | remove: the tenant's single sign-on from the command line, for the operator
 * with a shell when nobody can sign in any more (the provider down, its client secret expired, with single
 * sign-on only on). allow-passwords keeps single sign-on and lets passwords in again; remove removes it. Both are
 * recorded as the tenant admins' changes are (tenant.oidc-configured / tenant.oidc-removed), by the operator.
 *
 * sign-in reset-second-factor --user | second-factor --tenant --required: for the last tenant admin who lost their
 * authenticator app and recovery codes (nobody else may reset it), and the tenant's second factor policy;
 * recorded as user.second-factor-reset and tenant.second-factor-policy-changed, by the operator.
 */
export const signInCommands: CommandGroup = {
  name: 'sign-in',
  usage: USAGE,
  async run(args) {
    const { values, positionals } = parseCommandArgs(args, { tenant: { type: 'string' }, user: { type: 'string' }, required: { type: 'string' } }, USAGE);
    const [command, extra] = positionals;
    if (extra !== undefined) throw new UsageError(`unexpected argument: ${extra}`, USAGE);
    if (command === 'reset-second-factor') {
      const userId = required(values.user, '--user', USAGE);
      const result = await withStores(async ({ log }) => {
        const access = new AccessService({ log, clock: systemClock });
        const user = await access.secondFactor.user(userId);
        if (!user) throw notFound(`No user ${userId}.`);
        await access.secondFactor.reset(operatorCaller(), userId);
        return { userId, email: user.email, reset: hasSecondFactor(user.secondFactor) || (user.secondFactor?.recoveryCodeHashes.length ?? 0) > 0 };
      });
      printResult(result);
      return 0;
    }
    if (command === 'second-factor') {
      const tenantId = required(values.tenant, '--tenant', USAGE);
      const wanted = required(values.required, '--required', USAGE);
      if (wanted !== 'true' && wanted !== 'false') throw new UsageError('--required is true or false', USAGE);
      const result = await withStores(({ log }) => new AccessService({ log, clock: systemClock }).secondFactor.setPolicy(operatorCaller(), tenantId, wanted === 'true'));
      printResult({ tenantId, secondFactorRequired: result.required });
      return 0;
    }
    if (command !== 'show' && command !== 'allow-passwords' && command !== 'remove') throw new UsageError(command ? `unknown sign-in command: ${command}` : 'sign-in needs a command', USAGE);
    const tenantId = required(values.tenant, '--tenant', USAGE);
    const result = await withStores(async ({ log }) => {
      const tenant = await tenantOf(log, tenantId);
      if (command === 'show') return shown(tenantId, tenant);
      const access = new AccessService({ log, clock: systemClock });
      if (command === 'remove') {
        if (tenant.oidc) await access.signIn.removeOidc(operatorCaller(), tenantId);
        if (tenant.saml) await access.signIn.removeSaml(operatorCaller(), tenantId);
        return { tenantId, oidc: null, saml: null, removed: Boolean(tenant.oidc || tenant.saml) };
      }
      if (tenant.oidc) await access.signIn.configureOidc(operatorCaller(), tenantId, { ...tenant.oidc, ssoOnly: false });
      else if (tenant.saml) await access.signIn.configureSaml(operatorCaller(), tenantId, { ...tenant.saml, ssoOnly: false });
      else throw notFound(`Tenant ${tenantId} has no single sign-on: passwords sign in already.`);
      return shown(tenantId, await tenantOf(log, tenantId));
    });
    printResult(result);
    return 0;
  },
};

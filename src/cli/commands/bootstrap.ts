import { AccessService, checkBootstrapInput } from '../../application/access-service.ts';
import { systemClock } from '../../clock.ts';
import { localesFrom, note, operatorCaller, parseCommandArgs, passwordFrom, printResult, required, UsageError, withStores, type CommandGroup } from '../cli-support.ts';
import { COMMAND_USAGE } from '../usage.ts';

const USAGE = COMMAND_USAGE.bootstrap;

/**
 * bootstrap: a tenant, a project, its first tenant_admin, an agent key (scope full) and a public key.
 * Prints one JSON object on stdout: {tenantId, projectId, adminEmail, agentKey, publicApiKey}; the keys
 * are shown this once. Everything is validated before the first append (AccessService.bootstrap), so bad
 * input writes nothing.
 */
export const bootstrapCommand: CommandGroup = {
  name: 'bootstrap',
  usage: USAGE,
  async run(args) {
    const { values, positionals } = parseCommandArgs(
      args,
      {
        project: { type: 'string' },
        plan: { type: 'string' },
        'admin-email': { type: 'string' },
        'admin-password': { type: 'string' },
        'project-slug': { type: 'string' },
        locales: { type: 'string' },
        'tenant-name': { type: 'string' },
      },
      USAGE,
    );
    if (positionals.length > 0) throw new UsageError(`unexpected argument: ${positionals[0]}`, USAGE);
    const input = {
      projectName: required(values.project, '--project', USAGE),
      plan: required(values.plan, '--plan', USAGE),
      adminEmail: required(values['admin-email'], '--admin-email', USAGE),
      adminPassword: passwordFrom(values['admin-password'], '--admin-password', USAGE),
      ...(values['project-slug'] === undefined ? {} : { projectSlug: values['project-slug'] }),
      ...(values['tenant-name'] === undefined ? {} : { tenantName: values['tenant-name'] }),
      ...(values.locales === undefined ? {} : { contentLocales: localesFrom(values.locales, USAGE)! }),
    };

    // Refuse bad values before opening (and perhaps creating) the stores.
    checkBootstrapInput(input);
    const result = await withStores(async ({ log }) => {
      note('bootstrap: writing tenant, project, admin user and keys');
      return new AccessService({ log, clock: systemClock }).bootstrap(operatorCaller(), input);
    });
    note(`bootstrap: tenant ${result.tenantId}, project ${result.projectId} (slug ${result.projectSlug}), tenant_admin ${result.adminEmail}`);
    note(`bootstrap: agent key ${result.agentKey.prefix}… (id ${result.agentKey.keyId}) and public key ${result.publicKey.prefix}… (id ${result.publicKey.keyId}) issued; they are shown once, store them now`);
    printResult({
      tenantId: result.tenantId,
      projectId: result.projectId,
      adminEmail: result.adminEmail,
      agentKey: result.agentKey.key,
      publicApiKey: result.publicKey.key,
    });
    return 0;
  },
};

import { AccessService } from '../../application/access-service.ts';
import { systemClock } from '../../clock.ts';
import { operatorCaller, parseCommandArgs, passwordFrom, printResult, required, UsageError, withStores, type CommandGroup } from '../cli-support.ts';
import { COMMAND_USAGE } from '../usage.ts';

const USAGE = COMMAND_USAGE.users;

/**
 * users create: a console user in a tenant. Prints {userId, email, role} (e-mail and role normalised).
 * users set-role: a member's role (or custom role) as an operator gives it. Prints {userId, email, role, roleId}.
 * users roles: the tenant's custom roles. Prints {tenantId, roles: [...]}.
 */
export const usersCommands: CommandGroup = {
  name: 'users',
  usage: USAGE,
  async run(args) {
    const { values, positionals } = parseCommandArgs(
      args,
      { tenant: { type: 'string' }, email: { type: 'string' }, password: { type: 'string' }, role: { type: 'string' }, user: { type: 'string' }, 'role-id': { type: 'string' }, json: { type: 'boolean' } },
      USAGE,
    );
    const [command, extra] = positionals;
    if (extra !== undefined) throw new UsageError(`unexpected argument: ${extra}`, USAGE);
    if (command === 'set-role') {
      const userId = required(values.user, '--user', USAGE);
      const role = required(values.role, '--role', USAGE);
      const changed = await withStores(({ log }) => new AccessService({ log, clock: systemClock }).changeUserRole(operatorCaller(), userId, role, { roleId: values['role-id'] ?? null }));
      printResult({ userId: changed.userId, email: changed.email, role: changed.role, roleId: changed.roleId });
      return 0;
    }
    if (command === 'roles') {
      const tenantId = required(values.tenant, '--tenant', USAGE);
      const roles = await withStores(({ log }) => new AccessService({ log, clock: systemClock }).roles.roles(tenantId));
      printResult({ tenantId, roles: roles.map(({ roleId, name, description, capabilities, formSetIds }) => ({ roleId, name, description, capabilities, formSetIds })) });
      return 0;
    }
    if (command !== 'create') throw new UsageError(command ? `unknown users command: ${command}` : 'users needs a command', USAGE);
    const input = {
      tenantId: required(values.tenant, '--tenant', USAGE),
      email: required(values.email, '--email', USAGE),
      role: required(values.role, '--role', USAGE),
      password: passwordFrom(values.password, '--password', USAGE),
    };
    const user = await withStores(({ log }) => new AccessService({ log, clock: systemClock }).createUser(operatorCaller(), input));
    printResult({ userId: user.userId, email: user.email, role: user.role });
    return 0;
  },
};

import { AccessService } from '../../application/access-service.ts';
import { systemClock } from '../../clock.ts';
import { operatorCaller, parseCommandArgs, passwordFrom, printResult, required, UsageError, withStores, type CommandGroup } from '../cli-support.ts';
import { COMMAND_USAGE } from '../usage.ts';

const USAGE = COMMAND_USAGE.users;

/** users create: a console user in a tenant. Prints {userId, email, role} (e-mail and role normalised). */
export const usersCommands: CommandGroup = {
  name: 'users',
  usage: USAGE,
  async run(args) {
    const { values, positionals } = parseCommandArgs(
      args,
      { tenant: { type: 'string' }, email: { type: 'string' }, password: { type: 'string' }, role: { type: 'string' } },
      USAGE,
    );
    const [command, extra] = positionals;
    if (command !== 'create') throw new UsageError(command ? `unknown users command: ${command}` : 'users needs a command', USAGE);
    if (extra !== undefined) throw new UsageError(`unexpected argument: ${extra}`, USAGE);
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

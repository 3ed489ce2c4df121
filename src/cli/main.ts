/**
 * Operator commands: `npm run cli -- <group> [command] [options]`. One module per group in ./commands:
 *
 *   projections status | rebuild | retry | skip   read models: status, rebuild with swap, poison events
 *   bootstrap                                     a tenant, project, first tenant_admin, agent and public key
 *   users create                                  a console user in a tenant
 *   keys create | revoke                          agent and public API keys
 *   projects set-plan                             a project's plan
 *
 * Results go to stdout (one JSON object for the account commands), logs and progress to stderr. Commands
 * run as the 'operator' caller, against the stores the service's configuration names (DATA_DIR, or
 * EVENTSTORE_CONNECTION_STRING and MONGODB_URL), beside a running service.
 *
 * Exit codes: 0 done; 1 failed (a name already taken, not found, a plan limit, a store problem);
 * 2 usage or configuration error, or an invalid value (VALIDATION_ERROR).
 */
import { ConfigError } from '../config/config.ts';
import { DomainError } from '../domain/domain-error.ts';
import { StoreStartupError } from '../service/open-stores.ts';
import { OperationError } from '../projection-engine/projection-operations.ts';
import { RebuildPausedError } from '../projection-engine/rebuild.ts';
import { UsageError, type CommandGroup } from './cli-support.ts';
import { projectionsCommands } from './commands/projections.ts';
import { bootstrapCommand } from './commands/bootstrap.ts';
import { usersCommands } from './commands/users.ts';
import { keysCommands } from './commands/keys.ts';
import { projectsCommands } from './commands/projects.ts';
import { demoCommand } from './commands/demo.ts';
import { logCommands } from './commands/log.ts';

const GROUPS: readonly CommandGroup[] = [projectionsCommands, bootstrapCommand, usersCommands, keysCommands, projectsCommands, demoCommand, logCommands];

const USAGE = GROUPS.map((g) => g.usage).join('\n');

async function main(argv: string[]): Promise<number> {
  // The group is the first word that is not an option; everything else goes to the group's own parser.
  const at = argv.findIndex((arg) => !arg.startsWith('-'));
  const help = argv.some((arg) => arg === '--help' || arg === '-h');
  if (at === -1) {
    process.stdout.write(`usage:\n${USAGE}\n`);
    return help ? 0 : 2;
  }
  const group = GROUPS.find((g) => g.name === argv[at]);
  if (!group) throw new UsageError(`unknown command: ${argv.filter((a) => !a.startsWith('-')).join(' ')}`, USAGE);
  if (help) {
    process.stdout.write(`usage:\n${group.usage}\n`);
    return 0;
  }
  return group.run([...argv.slice(0, at), ...argv.slice(at + 1)]);
}

/** One line on stderr for the error, and the exit code it means. */
function report(error: unknown): number {
  if (error instanceof UsageError) {
    process.stderr.write(`${error.message}\n${error.usage ? `usage:\n${error.usage}\n` : ''}`);
    return 2;
  }
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    return 2;
  }
  if (error instanceof DomainError) {
    process.stderr.write(`${error.code}: ${error.message}${error.hint ? ` ${error.hint}` : ''}\n`);
    return error.code === 'VALIDATION_ERROR' ? 2 : 1;
  }
  if (error instanceof StoreStartupError || error instanceof OperationError || error instanceof RebuildPausedError) {
    process.stderr.write(`${error.message}\n`);
    return 1;
  }
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => process.exit(report(error)),
);

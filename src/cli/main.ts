/**
 * Operator commands: `annals <group> [command] [options]` (the package bin; `npm run cli --` is an alias).
 * One module per group in ./commands:
 *
 *   projections status | rebuild | retry | skip   read models: status, rebuild with swap, poison events
 *   bootstrap                                     a tenant, project, first tenant_admin, agent and public key
 *   users create                                  a console user in a tenant
 *   sign-in show | allow-passwords | remove       a tenant's single sign-on, when nobody can sign in any more
 *   keys create | revoke                          agent and public API keys
 *   projects set-plan                             a project's plan
 *   demo                                          a demo project to look at
 *   log export | import | verify                  move an event log between event stores
 *   media copy | verify                           carry media bytes between blob stores; check them against the log's digests
 *   backup <dir> | restore <dir>                  a consistent copy of DATA_DIR, and putting it back
 *   audit verify | export | public-key | anchor   the tamper-evident log: chains, signed exports, anchors
 *
 * stdout carries the result only: with --json (accepted by every command) exactly one JSON document, also
 * when the command fails ({"error": {code, message, hint?}}); logs, progress and notes go to stderr.
 * Commands run as the 'operator' caller, against the stores the service's configuration names (DATA_DIR,
 * or EVENTSTORE_CONNECTION_STRING and MONGODB_URL), beside a running service.
 *
 * Exit codes: 0 done; 1 failed (a name already taken, not found, a plan limit, a store problem);
 * 2 usage or configuration error, or an invalid value (VALIDATION_ERROR).
 */
import { ConfigError } from '../config/config.ts';
import { DomainError } from '../domain/domain-error.ts';
import { StoreStartupError } from '../service/open-stores.ts';
import { OperationError } from '../projection-engine/projection-operations.ts';
import { RebuildPausedError } from '../projection-engine/rebuild.ts';
import { printResult, UsageError, type CommandGroup, type CommandOptions } from './cli-support.ts';
import { COMMAND_USAGE } from './usage.ts';
import { BackupError } from '../backup/backup-manifest.ts';
import { DataDirLockedError, DataDirUnusableError } from '../data-dir/data-dir-lock.ts';
import { AuditKeySetupError } from '../audit/audit-key-files.ts';
import { KeyChainError } from '../audit/key-chain.ts';
import { AuditKeyRetiredError } from '../audit/audit-keys.ts';
import { AuditExportUnavailableError } from '../audit/audit-export.ts';

/**
 * Each group's module, loaded only when its group is named: a command pays for its own dependencies (the
 * demo's image codec, the log's compression, the audit's signing), not every group's (~0.3 s a run).
 */
const GROUPS: ReadonlyArray<readonly [name: keyof typeof COMMAND_USAGE, load: () => Promise<CommandGroup>]> = [
  ['projections', async () => (await import('./commands/projections.ts')).projectionsCommands],
  ['bootstrap', async () => (await import('./commands/bootstrap.ts')).bootstrapCommand],
  ['users', async () => (await import('./commands/users.ts')).usersCommands],
  ['sign-in', async () => (await import('./commands/sign-in.ts')).signInCommands],
  ['keys', async () => (await import('./commands/keys.ts')).keysCommands],
  ['projects', async () => (await import('./commands/projects.ts')).projectsCommands],
  ['demo', async () => (await import('./commands/demo.ts')).demoCommand],
  ['log', async () => (await import('./commands/log.ts')).logCommands],
  ['media', async () => (await import('./commands/media.ts')).mediaCommands],
  ['backup', async () => (await import('./commands/backup.ts')).backupCommand],
  ['restore', async () => (await import('./commands/backup.ts')).restoreCommand],
  ['audit', async () => (await import('./commands/audit.ts')).auditCommands],
];

/** Every group's usage, for a run that names none (or one that does not exist); no group is loaded for it. */
function usage(): string {
  return GROUPS.map(([name]) => COMMAND_USAGE[name]).join('\n');
}

async function main(argv: string[], options: CommandOptions): Promise<number> {
  // The group is the first word that is not an option; everything else goes to the group's own parser.
  const at = argv.findIndex((arg) => !arg.startsWith('-'));
  const help = argv.some((arg) => arg === '--help' || arg === '-h');
  if (at === -1) {
    if (!help) throw new UsageError('a command is needed', usage());
    process.stdout.write(`usage:\n${usage()}\n`);
    return 0;
  }
  const load = GROUPS.find(([name]) => name === argv[at])?.[1];
  if (!load) throw new UsageError(`unknown command: ${argv.filter((a) => !a.startsWith('-')).join(' ')}`, usage());
  const group = await load();
  if (help) {
    process.stdout.write(`usage:\n${group.usage}\n`);
    return 0;
  }
  return group.run([...argv.slice(0, at), ...argv.slice(at + 1)], options);
}

/** What went wrong, for stderr (one line, then the usage where it helps) and for --json. */
interface Failure {
  exitCode: number;
  code: string;
  message: string;
  hint?: string;
  /** The text for stderr. */
  text: string;
}

function failureOf(error: unknown): Failure {
  if (error instanceof UsageError) {
    return { exitCode: 2, code: 'USAGE_ERROR', message: error.message, text: `${error.message}\n${error.usage ? `usage:\n${error.usage}\n` : ''}` };
  }
  if (error instanceof ConfigError) return { exitCode: 2, code: 'CONFIGURATION_ERROR', message: error.message, text: `${error.message}\n` };
  if (error instanceof DomainError) {
    return {
      exitCode: error.code === 'VALIDATION_ERROR' ? 2 : 1,
      code: error.code,
      message: error.message,
      ...(error.hint ? { hint: error.hint } : {}),
      text: `${error.code}: ${error.message}${error.hint ? ` ${error.hint}` : ''}\n`,
    };
  }
  if (error instanceof StoreStartupError) return { exitCode: 1, code: 'STORE_UNAVAILABLE', message: error.message, text: `${error.message}\n` };
  if (error instanceof OperationError) return { exitCode: 1, code: 'OPERATION_FAILED', message: error.message, text: `${error.message}\n` };
  if (error instanceof BackupError) return { exitCode: error.exitCode, code: error.code, message: error.message, text: `${error.message}\n` };
  if (error instanceof DataDirLockedError) return { exitCode: 1, code: 'DATA_DIR_LOCKED', message: error.message, text: `${error.message}\n` };
  if (error instanceof DataDirUnusableError) return { exitCode: 1, code: 'DATA_DIR_UNUSABLE', message: error.message, text: `${error.message}\n` };
  if (error instanceof AuditKeySetupError) return { exitCode: 2, code: 'AUDIT_KEY_SETUP', message: error.message, text: `${error.message}\n` };
  if (error instanceof KeyChainError) return { exitCode: 1, code: 'AUDIT_KEY_CHAIN_INVALID', message: error.message, text: `${error.message}\n` };
  if (error instanceof AuditKeyRetiredError) return { exitCode: 1, code: 'AUDIT_KEY_RETIRED', message: error.message, text: `${error.message}\n` };
  if (error instanceof AuditExportUnavailableError) return { exitCode: 1, code: 'AUDIT_EXPORT_UNAVAILABLE', message: error.message, text: `audit export: ${error.message}\n` };
  if (error instanceof RebuildPausedError) return { exitCode: 1, code: 'REBUILD_PAUSED', message: error.message, text: `${error.message}\n` };
  const message = error instanceof Error ? error.message : String(error);
  return { exitCode: 1, code: 'INTERNAL_ERROR', message, text: `${error instanceof Error ? (error.stack ?? message) : message}\n` };
}

/** The error on stderr and, with --json, as the one JSON document on stdout; resolves to the exit code. */
function report(error: unknown, options: CommandOptions): number {
  const failure = failureOf(error);
  process.stderr.write(failure.text);
  if (options.json) printResult({ error: { code: failure.code, message: failure.message, ...(failure.hint ? { hint: failure.hint } : {}) } });
  return failure.exitCode;
}

// stdout is for results: anything a library prints with console.log goes to stderr instead.
console.log = console.info = console.debug = (...args: unknown[]) => console.error(...args);

const argv = process.argv.slice(2);
// --json is understood by every command; a command that prints JSON anyway just keeps doing so.
const options: CommandOptions = { json: argv.includes('--json') };
main(
  argv.filter((arg) => arg !== '--json'),
  options,
).then(
  (code) => process.exit(code),
  (error: unknown) => process.exit(report(error, options)),
);

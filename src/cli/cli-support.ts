import os from 'node:os';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { pino, type Logger } from 'pino';
import { loadConfig, type Config } from '../config/config.ts';
import { createLogger } from '../logging/logger.ts';
import { systemClock } from '../clock.ts';
import { EventLog } from '../event-store/event-log.ts';
import { serviceEventCatalog } from '../service/event-catalog.ts';
import { openStores, type Stores } from '../service/open-stores.ts';
import type { OperatorPrincipal } from '../domain/access/caller.ts';
import { PASSWORD_ENV } from './usage.ts';

/**
 * What the operator commands share: one command group per module in ./commands, the usage error, the
 * stores opened from the same configuration as the service, the operator caller, and stdout for results
 * only (logs and progress go to stderr).
 */
export interface CommandGroup {
  name: string;
  /** Usage lines of the group, each starting with `annals <group>`. */
  usage: string;
  /** Runs the group with the arguments after its name (--json taken out); resolves to the exit code. */
  run(args: string[], options: CommandOptions): Promise<number>;
}

/** Options every command understands. */
export interface CommandOptions {
  /** --json: the result as exactly one JSON document on stdout (the account commands print JSON anyway). */
  json: boolean;
}

/** Wrong or missing arguments: exit code 2, the message, then the usage of the group. */
export class UsageError extends Error {
  override name = 'UsageError';
  constructor(
    message: string,
    readonly usage?: string,
  ) {
    super(message);
  }
}

/** node:util parseArgs, strict, with its errors (unknown option, missing value) turned into UsageError. */
export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T, usage: string) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) throw new UsageError((error as Error).message, usage);
    throw error;
  }
}

/** A required string option: UsageError naming it when absent or blank. */
export function required(value: string | undefined, flag: string, usage: string): string {
  if (value === undefined || value.trim() === '') throw new UsageError(`missing ${flag}`, usage);
  return value;
}

export interface CliContext {
  config: Config;
  logger: Logger;
  stores: Stores;
  log: EventLog;
}

/** Opens the configured stores (as `npm start` would), runs `work`, and closes them whatever happens. */
export async function withStores<T>(work: (context: CliContext) => Promise<T>): Promise<T> {
  const config = loadConfig();
  // Results go to stdout; the service's own log lines go to stderr, warnings and up only.
  const logger = createLogger({ level: config.logLevel === 'silent' ? 'silent' : 'warn', destination: pino.destination(2) });
  const stores = await openStores(config, logger);
  try {
    return await work({ config, logger, stores, log: new EventLog(stores.events, serviceEventCatalog(), systemClock) });
  } finally {
    await stores.close();
  }
}

/** The caller of every operator command: trusted with everything, named in the audit trail by OS user. */
export function operatorCaller(): OperatorPrincipal {
  let name = '';
  try {
    name = os.userInfo().username;
  } catch {
    // No passwd entry (some containers): fall back to the environment.
  }
  return { kind: 'operator', operatorId: name || process.env['USER'] || 'unknown' };
}

/** Writes one JSON document (one line) to stdout: the command's result, for people and for `jq`. */
export function printResult(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** A progress or notice line on stderr, never on stdout. */
export function note(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** The password from the flag, else from ANNALS_ADMIN_PASSWORD; UsageError when neither is set. */
export function passwordFrom(flagValue: string | undefined, flag: string, usage: string): string {
  if (flagValue !== undefined) return flagValue;
  const fromEnv = process.env[PASSWORD_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  throw new UsageError(`missing ${flag} (or set ${PASSWORD_ENV})`, usage);
}

/** "en,ja" -> { locales: ['en', 'ja'], defaultLocale: 'en' }: the first is the default. */
export function localesFrom(value: string | undefined, usage: string): { locales: string[]; defaultLocale: string } | undefined {
  if (value === undefined) return undefined;
  const locales = value.split(',').map((l) => l.trim()).filter((l) => l.length > 0);
  if (locales.length === 0) throw new UsageError('--locales needs at least one locale, for example en,ja', usage);
  return { locales, defaultLocale: locales[0]! };
}

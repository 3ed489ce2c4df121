import path from 'node:path';
import { z } from 'zod';

export const ROLES = ['api', 'projector'] as const;
export type Role = (typeof ROLES)[number];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** One environment variable: its schema, and what to tell an operator who set it wrong. */
interface Setting<T> {
  schema: z.ZodType<T>;
  allowed: string;
  /** Shown in messages instead of the value (connection strings may hold passwords). */
  secret?: boolean;
}

const integer = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'not a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min, `below ${min}`).max(max, `above ${max}`));

const url = (schemes: readonly string[]) =>
  z.string().refine((value) => {
    try {
      return schemes.includes(new URL(value).protocol.replace(/:$/, ''));
    } catch {
      return false;
    }
  }, `not a ${schemes.join(' or ')} URL`);

/** Every variable the service reads. The README's configuration table mirrors this. */
const settings = {
  PORT: { schema: integer(0, 65535).default(8080), allowed: 'a port number from 0 to 65535 (default 8080)' },
  HOST: { schema: z.string().min(1).default('0.0.0.0'), allowed: 'an address to listen on (default 0.0.0.0)' },
  DATA_DIR: { schema: z.string().min(1).default('./data'), allowed: 'a folder path (default ./data)' },
  LOG_LEVEL: { schema: z.enum(LOG_LEVELS).default('info'), allowed: `one of ${LOG_LEVELS.join(', ')} (default info)` },
  EVENTSTORE_CONNECTION_STRING: {
    schema: url(['esdb', 'esdb+discover', 'kurrentdb', 'kurrentdb+discover', 'kdb', 'kdb+discover']).optional(),
    allowed: 'an esdb:// or kurrentdb:// connection string; unset for the embedded SQLite event store',
    secret: true,
  },
  MONGODB_URL: {
    schema: url(['mongodb', 'mongodb+srv']).optional(),
    allowed: 'a mongodb:// or mongodb+srv:// URL; unset for the embedded SQLite read models',
    secret: true,
  },
  ROLES: {
    schema: z
      .string()
      .transform((v) => v.split(',').map((r) => r.trim()).filter(Boolean))
      .pipe(z.array(z.enum(ROLES)).min(1, 'no role named'))
      .default([...ROLES]),
    allowed: `a comma-separated list of ${ROLES.join(', ')} (default: all)`,
  },
  READINESS_MAX_LAG_MS: {
    schema: integer(100, 3_600_000).default(5000),
    allowed: 'milliseconds from 100 to 3600000 (default 5000): /readyz fails when a projection is further behind',
  },
  SCHEDULED_PUBLISH_INTERVAL_MS: {
    schema: integer(1000, 86_400_000).default(300_000),
    allowed: 'milliseconds from 1000 to 86400000 (default 300000, 5 minutes) between runs of the scheduled-publishing job',
  },
  SESSION_SECRET: {
    schema: z.string().min(32, 'shorter than 32 characters').optional(),
    allowed: 'at least 32 random characters signing console sessions and preview tokens; required with EVENTSTORE_CONNECTION_STRING (all instances share it); on the embedded default one is generated into DATA_DIR/session-secret when unset',
    secret: true,
  },
  SHUTDOWN_GRACE_MS: {
    schema: integer(0, 600_000).default(10_000),
    allowed: 'milliseconds from 0 to 600000 (default 10000) that in-flight requests get on SIGTERM',
  },
} satisfies Record<string, Setting<unknown>>;

type Settings = typeof settings;
type Parsed = { [K in keyof Settings]: z.output<Settings[K]['schema']> };

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  logLevel: (typeof LOG_LEVELS)[number];
  eventStore: { kind: 'sqlite'; file: string } | { kind: 'eventstoredb'; connectionString: string };
  readModels: { kind: 'sqlite'; file: string } | { kind: 'mongodb'; url: string };
  roles: ReadonlySet<Role>;
  readinessMaxLagMs: number;
  shutdownGraceMs: number;
  scheduledPublishIntervalMs: number;
  /** Unset on the embedded default: see resolveSessionSecret. */
  sessionSecret: string | undefined;
}

/** A bad setting: the message is one line naming the variable, the problem and what is allowed. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = {} as Record<string, unknown>;
  const problems: string[] = [];
  for (const [name, setting] of Object.entries(settings) as Array<[keyof Settings, Setting<unknown>]>) {
    const raw = env[name] === '' ? undefined : env[name];
    const result = setting.schema.safeParse(raw);
    if (result.success) {
      parsed[name] = result.data;
    } else {
      const shown = setting.secret ? '(value hidden)' : JSON.stringify(raw);
      const problem = result.error.issues[0]?.message ?? 'invalid';
      problems.push(`${name}=${shown}: ${problem}; allowed: ${setting.allowed}`);
    }
  }
  const p = parsed as Parsed;
  if (problems.length === 0 && p.EVENTSTORE_CONNECTION_STRING && !p.SESSION_SECRET) {
    problems.push(`SESSION_SECRET is unset: required with EVENTSTORE_CONNECTION_STRING; allowed: ${settings.SESSION_SECRET.allowed}`);
  }
  if (problems.length > 0) throw new ConfigError(problems.join('\n'));
  const dataDir = path.resolve(p.DATA_DIR);
  return {
    port: p.PORT,
    host: p.HOST,
    dataDir,
    logLevel: p.LOG_LEVEL,
    eventStore: p.EVENTSTORE_CONNECTION_STRING
      ? { kind: 'eventstoredb', connectionString: p.EVENTSTORE_CONNECTION_STRING }
      : { kind: 'sqlite', file: path.join(dataDir, 'events.sqlite') },
    readModels: p.MONGODB_URL ? { kind: 'mongodb', url: p.MONGODB_URL } : { kind: 'sqlite', file: path.join(dataDir, 'read-models.sqlite') },
    roles: new Set(p.ROLES),
    readinessMaxLagMs: p.READINESS_MAX_LAG_MS,
    shutdownGraceMs: p.SHUTDOWN_GRACE_MS,
    sessionSecret: p.SESSION_SECRET,
    scheduledPublishIntervalMs: p.SCHEDULED_PUBLISH_INTERVAL_MS,
  };
}

/** Names, rules and defaults of every setting, for the README and `cli config`. */
export function describeSettings(): Array<{ name: string; allowed: string }> {
  return Object.entries(settings).map(([name, s]) => ({ name, allowed: s.allowed }));
}

import path from 'node:path';
import { defaultKeysDatabaseOf, readModelsDatabaseOf } from '../read-models/mongo-url.ts';
import { type LOG_LEVELS, settings, type Parsed, type Role, type Setting, type Settings } from './settings.ts';

export { ROLES, describeSettings, type Role } from './settings.ts';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  logLevel: (typeof LOG_LEVELS)[number];
  eventStore: { kind: 'sqlite'; file: string } | { kind: 'eventstoredb'; connectionString: string };
  /** On MongoDB, `keysDatabase` holds the key store (MONGODB_KEYS_DATABASE), never the read models' database. */
  readModels: { kind: 'sqlite'; file: string } | { kind: 'mongodb'; url: string; keysDatabase: string };
  roles: ReadonlySet<Role>;
  readinessMaxLagMs: number;
  shutdownGraceMs: number;
  shutdownDeadlineMs: number;
  scheduledPublishIntervalMs: number;
  /** AGGREGATE_CACHE_MB in bytes: memory for recent aggregate states in each process (0: no cache). */
  aggregateCacheBytes: number;
  /** WORKING_COPY_RETENTION_DAYS: days an untouched working copy is kept. */
  workingCopyRetentionDays: number;
  /** The HTTP server's limits (timeouts, connections) and load shedding. */
  http: HttpLimitsConfig;
  /** Console sessions: token lifetime and how many sign-in password checks run at once. */
  sessions: { ttlSeconds: number; passwordHashConcurrency: number };
  /** Unset on the embedded default: see resolveSessionSecret. */
  sessionSecret: string | undefined;
  trustProxy: boolean;
  /** OPERATOR_TENANT_IDS, lower-case: see isServiceOperator. */
  operatorTenantIds: string[];
  publicCacheMaxAgeSeconds: number;
  sitemapUrlsPerFile: number;
  /** SYNC_STREAMS_PER_CLIENT, SYNC_STREAMS_MAX and SYNC_HEARTBEAT_MS: the sync feed's event streams. */
  syncStreams: { perClient: number; max: number; heartbeatMs: number };
  publicResponseCacheBytes: number;
  /** OUTBOUND_ALLOWLIST entries (host names and CIDR ranges), parsed with outboundPolicy. */
  outboundAllowlist: string[];
  /** Base64 of 32 bytes; unset on the embedded default: see resolveSecretsKey. */
  secretsKey: string | undefined;
  webhooks: { timeoutMs: number; caFile: string | undefined; concurrency: number; concurrencyPerWebhook: number };
  media: MediaConfig;
  /** Contact forms: mail, hosted pages, spam protection (see src/contact-forms). */
  contactForms: ContactFormsConfig;
  /** translate_entry_locales: the DeepL-compatible provider (see src/translation). */
  translation: TranslationConfig;
  /** GET /metrics: METRICS and METRICS_TOKEN. */
  metrics: { enabled: boolean; token: string | undefined };
  /** The log's Merkle tree and its checkpoints (AUDIT_*). */
  audit: AuditConfig;
}

export interface AuditConfig {
  /** The audit signing key (see src/audit/open-audit-key-ring.ts). */
  key: AuditKeyConfig;
  /** The embedded log tree store (DATA_DIR/log-tree.sqlite); with MONGODB_URL the tree lives there. */
  treeFile: string;
  /** The log's name in signed notes: checkpoints' origin line and their keys' name (src/audit/log-origin.ts). */
  origin: string | undefined;
  checkpointDir: string | undefined;
  witnesses: Array<{ url: string; vkey: string }>;
  tsaUrl: string | undefined;
  /** The shortest time between two checkpoints recorded in the log for webhooks. */
  webhookIntervalMs: number;
  acceptCheckpointMismatch: string | undefined;
}

/** Where the audit key is: the key store (the fallback), a key file, or a PKCS#11 token; the chain file beside the last two. */
export type AuditKeyConfig =
  | { kind: 'key-store' }
  | { kind: 'key-file'; file: string; chainFile: string }
  | { kind: 'pkcs11'; module: string; token: { label: string } | { slot: bigint }; pin: { value: string } | { file: string }; keyLabel: string; chainFile: string };

export interface HttpLimitsConfig {
  keepAliveTimeoutMs: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  maxConnections: number;
  /** 0: no limit. */
  maxConnectionsPerClient: number;
  maxInFlight: number;
  /** 0: no shedding on event-loop delay (HTTP_MAX_IN_FLIGHT still applies). */
  loadShedLagMs: number;
}

export interface TranslationConfig {
  /** TRANSLATION_API_URL; unset: no provider (translation answers what to configure). */
  apiUrl: string | undefined;
  /** TRANSLATION_API_KEY; never logged or shown. */
  apiKey: string | undefined;
  timeoutMs: number;
}

export interface ContactFormsConfig {
  mailFrom: string;
  /** SMTP_URL; unset: .eml files in DATA_DIR/mail. */
  smtpUrl: string | undefined;
  mailDir: string;
  /** MAIL_FOLDER_KEEP_DAYS: days .eml files are kept in mailDir; 0 keeps them all. */
  mailFolderKeepDays: number;
  /** CONSOLE_URL; unset: the service's own /console. */
  consoleUrl: string | undefined;
  /** CONTACT_HOSTS, lower-case. */
  hosts: string[];
  powDifficulty: number;
  noJsMinSeconds: number;
  submitRateLimit: number;
  submitMaxBytes: number;
}

/** Media uploads and where their bytes live (S3 when S3_BUCKET is set, else DATA_DIR/media). */
export interface MediaConfig {
  maxBytes: number;
  sourceTimeoutMs: number;
  blobs:
    | { kind: 'local-folder'; dir: string }
    | {
        kind: 's3';
        bucket: string;
        region: string;
        endpoint: string | undefined;
        forcePathStyle: boolean;
        credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
      };
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
  if (problems.length === 0 && p.MONGODB_URL && p.MONGODB_KEYS_DATABASE === readModelsDatabaseOf(p.MONGODB_URL)) {
    problems.push(`MONGODB_KEYS_DATABASE=${JSON.stringify(p.MONGODB_KEYS_DATABASE)}: the read models' database, which a rebuild may drop with every key in it; allowed: ${settings.MONGODB_KEYS_DATABASE.allowed}`);
  }
  if (problems.length === 0 && p.EVENTSTORE_CONNECTION_STRING && !p.SESSION_SECRET) {
    problems.push(`SESSION_SECRET is unset: required with EVENTSTORE_CONNECTION_STRING; allowed: ${settings.SESSION_SECRET.allowed}`);
  }
  if (problems.length === 0 && p.EVENTSTORE_CONNECTION_STRING && !p.SECRETS_KEY) {
    problems.push(`SECRETS_KEY is unset: required with EVENTSTORE_CONNECTION_STRING; allowed: ${settings.SECRETS_KEY.allowed}`);
  }
  if (problems.length === 0 && (p.S3_ACCESS_KEY_ID === undefined) !== (p.S3_SECRET_ACCESS_KEY === undefined)) {
    const missing = p.S3_ACCESS_KEY_ID === undefined ? 'S3_ACCESS_KEY_ID' : 'S3_SECRET_ACCESS_KEY';
    problems.push(`${missing} is unset: S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are set together; allowed: ${settings[missing].allowed}`);
  }
  if (problems.length === 0 && p.SHUTDOWN_DEADLINE_MS !== undefined && p.SHUTDOWN_DEADLINE_MS <= p.SHUTDOWN_GRACE_MS) {
    problems.push(`SHUTDOWN_DEADLINE_MS=${JSON.stringify(String(p.SHUTDOWN_DEADLINE_MS))}: not above SHUTDOWN_GRACE_MS (${p.SHUTDOWN_GRACE_MS}); allowed: ${settings.SHUTDOWN_DEADLINE_MS.allowed}`);
  }
  if (problems.length === 0 && p.HTTP_HEADERS_TIMEOUT_MS > p.HTTP_REQUEST_TIMEOUT_MS) {
    problems.push(`HTTP_HEADERS_TIMEOUT_MS=${JSON.stringify(String(p.HTTP_HEADERS_TIMEOUT_MS))}: above HTTP_REQUEST_TIMEOUT_MS (${p.HTTP_REQUEST_TIMEOUT_MS}); allowed: ${settings.HTTP_HEADERS_TIMEOUT_MS.allowed}`);
  }
  if (problems.length === 0) problems.push(...auditKeyProblems(p));
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
    readModels: p.MONGODB_URL
      ? { kind: 'mongodb', url: p.MONGODB_URL, keysDatabase: p.MONGODB_KEYS_DATABASE ?? defaultKeysDatabaseOf(p.MONGODB_URL) }
      : { kind: 'sqlite', file: path.join(dataDir, 'read-models.sqlite') },
    roles: new Set(p.ROLES),
    readinessMaxLagMs: p.READINESS_MAX_LAG_MS,
    shutdownGraceMs: p.SHUTDOWN_GRACE_MS,
    // Unset: the grace period and five seconds to stop the projectors and close the stores.
    shutdownDeadlineMs: p.SHUTDOWN_DEADLINE_MS ?? p.SHUTDOWN_GRACE_MS + 5000,
    sessions: { ttlSeconds: p.SESSION_TTL_MINUTES * 60, passwordHashConcurrency: p.PASSWORD_HASH_CONCURRENCY },
    http: {
      keepAliveTimeoutMs: p.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      headersTimeoutMs: p.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: p.HTTP_REQUEST_TIMEOUT_MS,
      maxConnections: p.HTTP_MAX_CONNECTIONS,
      maxConnectionsPerClient: p.HTTP_MAX_CONNECTIONS_PER_CLIENT,
      maxInFlight: p.HTTP_MAX_IN_FLIGHT,
      loadShedLagMs: p.LOAD_SHED_LAG_MS,
    },
    sessionSecret: p.SESSION_SECRET,
    scheduledPublishIntervalMs: p.SCHEDULED_PUBLISH_INTERVAL_MS,
    aggregateCacheBytes: p.AGGREGATE_CACHE_MB * 1024 * 1024,
    workingCopyRetentionDays: p.WORKING_COPY_RETENTION_DAYS,
    trustProxy: p.TRUST_PROXY,
    operatorTenantIds: p.OPERATOR_TENANT_IDS,
    publicCacheMaxAgeSeconds: p.PUBLIC_CACHE_MAX_AGE,
    sitemapUrlsPerFile: p.SITEMAP_URLS_PER_FILE,
    syncStreams: { perClient: p.SYNC_STREAMS_PER_CLIENT, max: p.SYNC_STREAMS_MAX, heartbeatMs: p.SYNC_HEARTBEAT_MS },
    publicResponseCacheBytes: p.PUBLIC_RESPONSE_CACHE_MB * 1024 * 1024,
    outboundAllowlist: p.OUTBOUND_ALLOWLIST,
    secretsKey: p.SECRETS_KEY,
    webhooks: {
      timeoutMs: p.WEBHOOK_TIMEOUT_MS,
      caFile: p.WEBHOOK_CA_FILE === undefined ? undefined : path.resolve(p.WEBHOOK_CA_FILE),
      concurrency: p.WEBHOOK_CONCURRENCY,
      concurrencyPerWebhook: p.WEBHOOK_CONCURRENCY_PER_WEBHOOK,
    },
    contactForms: {
      mailFrom: p.MAIL_FROM,
      smtpUrl: p.SMTP_URL,
      mailDir: path.join(dataDir, 'mail'),
      mailFolderKeepDays: p.MAIL_FOLDER_KEEP_DAYS,
      consoleUrl: p.CONSOLE_URL,
      hosts: p.CONTACT_HOSTS,
      powDifficulty: p.CONTACT_POW_DIFFICULTY,
      noJsMinSeconds: p.CONTACT_NOJS_MIN_SECONDS,
      submitRateLimit: p.CONTACT_SUBMIT_RATE_LIMIT,
      submitMaxBytes: p.CONTACT_SUBMIT_MAX_BYTES,
    },
    translation: { apiUrl: p.TRANSLATION_API_URL, apiKey: p.TRANSLATION_API_KEY, timeoutMs: p.TRANSLATION_TIMEOUT_MS },
    metrics: { enabled: p.METRICS, token: p.METRICS_TOKEN },
    audit: {
      key: auditKeyConfig(p),
      treeFile: path.join(dataDir, 'log-tree.sqlite'),
      origin: p.AUDIT_LOG_ORIGIN,
      checkpointDir: p.AUDIT_CHECKPOINT_DIR === undefined ? undefined : path.resolve(p.AUDIT_CHECKPOINT_DIR),
      witnesses: p.AUDIT_WITNESSES ?? [],
      tsaUrl: p.AUDIT_TSA_URL,
      webhookIntervalMs: p.AUDIT_CHECKPOINT_WEBHOOK_SECONDS * 1000,
      acceptCheckpointMismatch: p.AUDIT_ACCEPT_CHECKPOINT_MISMATCH,
    },
    media: {
      maxBytes: p.MEDIA_MAX_BYTES,
      sourceTimeoutMs: p.MEDIA_SOURCE_TIMEOUT_MS,
      blobs: p.S3_BUCKET
        ? {
            kind: 's3',
            bucket: p.S3_BUCKET,
            region: p.S3_REGION,
            endpoint: p.S3_ENDPOINT,
            forcePathStyle: p.S3_FORCE_PATH_STYLE,
            credentials: p.S3_ACCESS_KEY_ID && p.S3_SECRET_ACCESS_KEY ? { accessKeyId: p.S3_ACCESS_KEY_ID, secretAccessKey: p.S3_SECRET_ACCESS_KEY } : undefined,
          }
        : { kind: 'local-folder', dir: path.join(dataDir, 'media') },
    },
  };
}

/** The audit key's settings that do not fit together, one message each. */
function auditKeyProblems(p: Parsed): string[] {
  const problems: string[] = [];
  const pkcs11 = ['AUDIT_PKCS11_TOKEN', 'AUDIT_PKCS11_SLOT', 'AUDIT_PKCS11_PIN', 'AUDIT_PKCS11_PIN_FILE', 'AUDIT_PKCS11_KEY_LABEL'] as const;
  if (p.AUDIT_KEY_FILE && p.AUDIT_PKCS11_MODULE) problems.push('AUDIT_KEY_FILE and AUDIT_PKCS11_MODULE are both set: the audit key is in a key file or in a PKCS#11 token, not both');
  if (!p.AUDIT_PKCS11_MODULE) {
    const stray = pkcs11.filter((name) => p[name] !== undefined);
    if (stray.length > 0) problems.push(`${stray.join(', ')} set without AUDIT_PKCS11_MODULE; allowed: ${settings.AUDIT_PKCS11_MODULE.allowed}`);
  } else {
    if ((p.AUDIT_PKCS11_TOKEN === undefined) === (p.AUDIT_PKCS11_SLOT === undefined)) problems.push(`AUDIT_PKCS11_MODULE needs exactly one of AUDIT_PKCS11_TOKEN and AUDIT_PKCS11_SLOT; allowed: ${settings.AUDIT_PKCS11_TOKEN.allowed}`);
    if ((p.AUDIT_PKCS11_PIN === undefined) === (p.AUDIT_PKCS11_PIN_FILE === undefined)) problems.push(`AUDIT_PKCS11_MODULE needs exactly one of AUDIT_PKCS11_PIN and AUDIT_PKCS11_PIN_FILE; allowed: ${settings.AUDIT_PKCS11_PIN_FILE.allowed}`);
    if (p.AUDIT_PKCS11_KEY_LABEL === undefined) problems.push(`AUDIT_PKCS11_KEY_LABEL is unset: required with AUDIT_PKCS11_MODULE; allowed: ${settings.AUDIT_PKCS11_KEY_LABEL.allowed}`);
  }
  if ((p.AUDIT_KEY_FILE || p.AUDIT_PKCS11_MODULE) && !p.AUDIT_KEY_CHAIN_FILE) problems.push(`AUDIT_KEY_CHAIN_FILE is unset: required with ${p.AUDIT_KEY_FILE ? 'AUDIT_KEY_FILE' : 'AUDIT_PKCS11_MODULE'}; allowed: ${settings.AUDIT_KEY_CHAIN_FILE.allowed}`);
  if (!p.AUDIT_KEY_FILE && !p.AUDIT_PKCS11_MODULE && p.AUDIT_KEY_CHAIN_FILE) problems.push('AUDIT_KEY_CHAIN_FILE is set without AUDIT_KEY_FILE or AUDIT_PKCS11_MODULE: the key store\'s key has no chain file');
  return problems;
}

function auditKeyConfig(p: Parsed): AuditKeyConfig {
  if (p.AUDIT_KEY_FILE) return { kind: 'key-file', file: path.resolve(p.AUDIT_KEY_FILE), chainFile: path.resolve(p.AUDIT_KEY_CHAIN_FILE!) };
  if (p.AUDIT_PKCS11_MODULE) {
    return {
      kind: 'pkcs11',
      module: p.AUDIT_PKCS11_MODULE,
      token: p.AUDIT_PKCS11_TOKEN !== undefined ? { label: p.AUDIT_PKCS11_TOKEN } : { slot: p.AUDIT_PKCS11_SLOT! },
      pin: p.AUDIT_PKCS11_PIN !== undefined ? { value: p.AUDIT_PKCS11_PIN } : { file: path.resolve(p.AUDIT_PKCS11_PIN_FILE!) },
      keyLabel: p.AUDIT_PKCS11_KEY_LABEL!,
      chainFile: path.resolve(p.AUDIT_KEY_CHAIN_FILE!),
    };
  }
  return { kind: 'key-store' };
}

/**
 * The environment variables the service reads: each one's schema (parsing, default, bounds) and what to tell an
 * operator who set it wrong. config.ts turns them into the Config the service runs with.
 */
import os from 'node:os';
import { z } from 'zod';
import { outboundPolicy } from '../security/ssrf-guard.ts';
import { isValidDatabaseName } from '../read-models/mongo-url.ts';

export const ROLES = ['api', 'projector'] as const;
export type Role = (typeof ROLES)[number];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** One environment variable: its schema, and what to tell an operator who set it wrong. */
export interface Setting<T> {
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

/** Every variable the service reads. docs/configuration.md mirrors this. */
export const settings = {
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
  MONGODB_KEYS_DATABASE: {
    schema: z.string().refine(isValidDatabaseName, 'not a MongoDB database name').optional(),
    allowed: "a MongoDB database name (default: the read models' database followed by _keys) holding the contact-form submission keys and the signing keys, apart from the read models, which are rebuilt (their database dropped); never the read models' database",
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
    allowed: 'milliseconds from 100 to 3600000 (default 5000): /readyz fails when a projection is further behind (and, after a start, until it has folded what the log held then)',
  },
  SCHEDULED_PUBLISH_INTERVAL_MS: {
    schema: integer(1000, 86_400_000).default(300_000),
    allowed: 'milliseconds from 1000 to 86400000 (default 300000, 5 minutes) between runs of the scheduled-publishing job',
  },
  AGGREGATE_CACHE_MB: {
    schema: integer(0, 4096).default(64),
    allowed: 'megabytes from 0 to 4096 (default 64) of recent aggregate states (entries) each process keeps in memory, verified against the log before use; 0 turns the cache off (stored snapshots still apply)',
  },
  WORKING_COPY_RETENTION_DAYS: {
    schema: integer(1, 3650).default(30),
    allowed: 'days from 1 to 3650 (default 30) that a working copy (unsaved typing the console keeps on the server) left untouched is kept; older ones are removed once an hour',
  },
  SESSION_SECRET: {
    schema: z.string().min(32, 'shorter than 32 characters').optional(),
    allowed: 'at least 32 random characters signing console sessions and preview tokens; required with EVENTSTORE_CONNECTION_STRING (all instances share it); on the embedded default one is generated into DATA_DIR/session-secret when unset',
    secret: true,
  },
  OUTBOUND_ALLOWLIST: {
    schema: z
      .string()
      .transform((v) => v.split(',').map((h) => h.trim()).filter(Boolean))
      .superRefine((entries, ctx) => {
        try {
          outboundPolicy(entries);
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: (error as Error).message });
        }
      })
      .default([]),
    allowed: 'a comma-separated list of host names and CIDR ranges that outbound requests (webhooks, media source URLs, chat notifications) may reach although they are loopback, private or link-local (default: none)',
  },
  SECRETS_KEY: {
    schema: z
      .string()
      .refine((v) => /^[A-Za-z0-9+/]+={0,2}$/.test(v) && Buffer.from(v, 'base64').length === 32, 'not the base64 of 32 bytes')
      .optional(),
    allowed: 'the base64 of 32 random bytes (openssl rand -base64 32) encrypting stored secrets such as webhook signing secrets; required with EVENTSTORE_CONNECTION_STRING (all instances share it); on the embedded default one is generated into DATA_DIR/secrets-key when unset',
    secret: true,
  },
  WEBHOOK_TIMEOUT_MS: {
    schema: integer(100, 10_000).default(10_000),
    allowed: 'milliseconds from 100 to 10000 (default 10000) a webhook receiver gets to answer before the delivery counts as failed',
  },
  WEBHOOK_CA_FILE: {
    schema: z.string().min(1).optional(),
    allowed: "a path to a PEM bundle of extra certificate authorities trusted for webhook receivers, added to Node's default roots (default: none)",
  },
  WEBHOOK_CONCURRENCY: {
    schema: integer(1, 1000).default(16),
    allowed: 'a whole number from 1 to 1000 (default 16): webhook deliveries in flight at once, over all webhooks',
  },
  WEBHOOK_CONCURRENCY_PER_WEBHOOK: {
    schema: integer(1, 100).default(4),
    allowed: 'a whole number from 1 to 100 (default 4): webhook deliveries in flight at once to one webhook',
  },
  TRUST_PROXY: {
    schema: z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1').default(false),
    allowed: 'true or false (default false): honour X-Forwarded-Host, X-Forwarded-Proto and X-Forwarded-For from a reverse proxy in front of the service',
  },
  PUBLIC_CACHE_MAX_AGE: {
    schema: integer(0, 86_400).default(0),
    allowed: 'seconds from 0 to 86400 (default 0: caches revalidate every use with the ETag, so a publish shows at once) that public JSON and XML responses may be reused',
  },
  PUBLIC_RESPONSE_CACHE_MB: {
    schema: integer(0, 4096).default(64),
    allowed: 'megabytes from 0 to 4096 (default 64) of public API responses kept in memory per process, valid until the read models change; 0 turns the cache off',
  },
  SITEMAP_URLS_PER_FILE: {
    schema: integer(1, 50_000).default(50_000),
    allowed: 'URLs from 1 to 50000 (default 50000, the sitemap protocol limit) per sitemap file; beyond it the sitemap becomes an index of numbered parts',
  },
  SYNC_STREAMS_PER_CLIENT: {
    schema: integer(1, 1000).default(4),
    allowed: 'from 1 to 1000 (default 4): event streams of the sync feed (GET /sync/events) one client address may hold open at once; one more answers 429',
  },
  SYNC_STREAMS_MAX: {
    schema: integer(1, 100_000).default(1000),
    allowed: 'from 1 to 100000 (default 1000): event streams of the sync feed the process holds open at once; one more answers 503',
  },
  SYNC_HEARTBEAT_MS: {
    schema: integer(1000, 300_000).default(15_000),
    allowed: 'ms from 1000 to 300000 (default 15000): how often a quiet event stream of the sync feed gets a comment line, so that proxies keep it open',
  },
  MEDIA_MAX_BYTES: {
    schema: integer(1, 5 * 1024 ** 3).default(50 * 1024 ** 2),
    allowed: 'bytes from 1 to 5368709120 (default 52428800, 50 MiB): the largest media file accepted by upload (multipart, base64 or source URL); larger answers 413',
  },
  MEDIA_SOURCE_TIMEOUT_MS: {
    schema: integer(100, 600_000).default(30_000),
    allowed: 'milliseconds from 100 to 600000 (default 30000) that fetching a media sourceUrl may take, headers and body together',
  },
  S3_BUCKET: {
    schema: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'not an S3 bucket name').optional(),
    allowed: 'an S3 bucket name: media bytes go to S3 (or an S3-compatible store) instead of DATA_DIR/media (default: unset, the local folder)',
  },
  S3_REGION: {
    schema: z.string().min(1).default('us-east-1'),
    allowed: 'an S3 region (default us-east-1)',
  },
  S3_ENDPOINT: {
    schema: url(['http', 'https']).optional(),
    allowed: 'an http(s) URL of an S3-compatible endpoint such as MinIO (default: unset, AWS S3)',
  },
  S3_FORCE_PATH_STYLE: {
    schema: z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1').default(false),
    allowed: 'true or false (default false): path-style bucket addressing, which MinIO and most S3-compatible stores need',
  },
  S3_ACCESS_KEY_ID: {
    schema: z.string().min(1).optional(),
    allowed: 'the S3 access key id; set with S3_SECRET_ACCESS_KEY, or leave both unset for the AWS default credential chain',
    secret: true,
  },
  S3_SECRET_ACCESS_KEY: {
    schema: z.string().min(1).optional(),
    allowed: 'the S3 secret access key; set with S3_ACCESS_KEY_ID, or leave both unset for the AWS default credential chain',
    secret: true,
  },
  MAIL_FROM: {
    schema: z
      .string()
      .trim()
      .refine((v) => /^(?:[^<>\r\n]*<)?[^\s<>@]+@[^\s<>@]+>?$/.test(v) && !/[\r\n]/.test(v), 'not an e-mail address (address, or Name <address>)')
      .default('annals <no-reply@localhost>'),
    allowed: 'the sender of contact-form notices and autoreplies: an address or Name <address> (default annals <no-reply@localhost>); its domain also names the Message-IDs',
  },
  SMTP_URL: {
    schema: url(['smtp', 'smtps']).optional(),
    allowed: 'an smtp:// (STARTTLS when offered) or smtps:// (TLS) connection URL such as smtp://user:pass@mail.example.com:587; unset for .eml files in DATA_DIR/mail',
    secret: true,
  },
  MAIL_FOLDER_KEEP_DAYS: {
    schema: integer(0, 36_500).default(30),
    allowed: 'days from 0 to 36500 (default 30) that notices written as .eml files into DATA_DIR/mail (SMTP_URL unset) are kept; older ones are removed once an hour; 0 keeps every file',
  },
  CONSOLE_URL: {
    schema: url(['http', 'https']).optional(),
    allowed: 'the web console\'s base URL, which notices link into (review notices: {CONSOLE_URL}/p/{projectId}/review/{revisionId}; contact-form notices: {CONSOLE_URL}/p/{projectId}/contact-forms/{formId}/submissions/{submissionId}); default the service\'s own /console',
  },
  OPERATOR_TENANT_IDS: {
    schema: z
      .string()
      .transform((v) => v.split(',').map((id) => id.trim().toLowerCase()).filter(Boolean))
      .pipe(z.array(z.uuid('not a tenant id (a UUID)')))
      .default([]),
    allowed: "a comma-separated list of tenant ids whose tenant_admins are the service's operators (retry, skip and rebuild projections, see failing events); default none, in which case the tenant_admins of the only tenant are, while the service holds one",
  },
  CONTACT_HOSTS: {
    schema: z
      .string()
      .transform((v) => v.split(',').map((h) => h.trim().toLowerCase()).filter(Boolean))
      .pipe(z.array(z.string().regex(/^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/, 'not a host name')))
      .default([]),
    allowed: 'a comma-separated list of host names whose requests are hosted contact pages (/{projectSlug}/{formSlug}); default none (the pages are always at /contact/{projectSlug}/{formSlug} on any host)',
  },
  CONTACT_POW_DIFFICULTY: {
    schema: integer(1, 32).default(16),
    allowed: 'leading zero bits from 1 to 32 (default 16, about 65 000 SHA-256 hashes, a second or so in a browser) that the hosted contact page\'s proof-of-work challenge asks for',
  },
  CONTACT_NOJS_MIN_SECONDS: {
    schema: integer(0, 3600).default(15),
    allowed: 'seconds from 0 to 3600 (default 15) a hosted contact page must have been open before it is accepted without the proof of work (browsers without JavaScript); 0 refuses submissions without the proof of work',
  },
  CONTACT_SUBMIT_RATE_LIMIT: {
    schema: integer(1, 100_000).default(10),
    allowed: 'contact-form submissions from 1 to 100000 (default 10) accepted per client IP address per 60 seconds (public submit and hosted pages together); more answer 429',
  },
  CONTACT_SUBMIT_MAX_BYTES: {
    schema: integer(1024, 1024 * 1024).default(64 * 1024),
    allowed: 'bytes from 1024 to 1048576 (default 65536): the largest contact-form submission body; larger answers 413',
  },
  TRANSLATION_API_URL: {
    schema: url(['http', 'https']).optional(),
    allowed: 'an http(s) URL of a DeepL-compatible translation endpoint (POST {text: [...], source_lang, target_lang} answering {translations: [{text}]}), e.g. https://api-free.deepl.com/v2/translate; unset: translate_entry_locales answers that no provider is configured',
  },
  TRANSLATION_API_KEY: {
    schema: z.string().min(1).optional(),
    allowed: 'the translation provider\'s API key, sent as Authorization: DeepL-Auth-Key <key> (default: unset, no Authorization header)',
    secret: true,
  },
  TRANSLATION_TIMEOUT_MS: {
    schema: integer(100, 600_000).default(30_000),
    allowed: 'milliseconds from 100 to 600000 (default 30000) that one request to the translation provider may take',
  },
  METRICS: {
    schema: z.enum(['on', 'off', 'true', 'false', '1', '0']).transform((v) => v === 'on' || v === 'true' || v === '1').default(true),
    allowed: 'on or off (default on): GET /metrics answers in the Prometheus text format; off answers 404',
  },
  METRICS_TOKEN: {
    schema: z.string().min(16, 'shorter than 16 characters').optional(),
    allowed: 'at least 16 characters: GET /metrics then answers only requests with Authorization: Bearer <token> (default: unset, answered to anyone who can reach the port)',
    secret: true,
  },
  AUDIT_CHECKPOINT_DIR: {
    schema: z.string().min(1).optional(),
    allowed: 'a folder outside DATA_DIR where every signed checkpoint of the log is appended to checkpoints.ndjson, and which the start-up check holds the log to (default: unset, checkpoints stay in the log tree store only)',
  },
  AUDIT_WITNESSES: {
    schema: z
      .string()
      .transform((value, context) => {
        try {
          return JSON.parse(value) as unknown;
        } catch {
          context.addIssue({ code: 'custom', message: 'not JSON' });
          return z.NEVER;
        }
      })
      .pipe(z.array(z.object({ url: url(['http', 'https']), vkey: z.string().regex(/^[^\s+]+\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+$/, 'not a vkey') }).strict()).max(16))
      .optional(),
    allowed: 'a JSON array of C2SP tlog-witness witnesses, [{"url": "https://witness.example/", "vkey": "<name>+<hash>+<key>"}]: each checkpoint is sent to <url>add-checkpoint with its consistency proof and their cosignatures are kept beside it (default: none)',
  },
  AUDIT_TSA_URL: {
    schema: url(['http', 'https']).optional(),
    allowed: 'an RFC 3161 timestamp authority URL: each checkpoint published is timestamped (default: unset, none)',
  },
  AUDIT_CHECKPOINT_WEBHOOK_SECONDS: {
    schema: integer(1, 86_400).default(300),
    allowed: 'seconds from 1 to 86400 (default 300): a checkpoint is recorded in the log for webhooks subscribed to log.checkpoint at most this often, while the log changes',
  },
  AUDIT_ACCEPT_CHECKPOINT_MISMATCH: {
    schema: z.string().trim().min(10, 'shorter than 10 characters').max(500).optional(),
    allowed: 'why the service may take writes although its log does not extend its last published checkpoint (at least 10 characters): the override is recorded in the log (audit.checkpoint-mismatch-overridden) with this reason; unset it once the cause is dealt with (default: unset, writes are refused on a mismatch)',
  },
  SHUTDOWN_GRACE_MS: {
    schema: integer(0, 600_000).default(10_000),
    allowed: 'milliseconds from 0 to 600000 (default 10000) that in-flight requests get on SIGTERM',
  },
  SHUTDOWN_DEADLINE_MS: {
    schema: integer(1000, 3_600_000).optional(),
    allowed: 'milliseconds from 1000 to 3600000, above SHUTDOWN_GRACE_MS (default SHUTDOWN_GRACE_MS + 5000, 15000 with the default grace): after SIGTERM the process ends within this long whatever it is still waiting for (logged), with exit code 1',
  },
  HTTP_KEEP_ALIVE_TIMEOUT_MS: {
    schema: integer(1000, 600_000).default(65_000),
    allowed: 'milliseconds from 1000 to 600000 (default 65000) an idle keep-alive connection stays open; keep it above the idle timeout of a load balancer in front (60 s on the common ones)',
  },
  HTTP_HEADERS_TIMEOUT_MS: {
    schema: integer(1000, 600_000).default(20_000),
    allowed: 'milliseconds from 1000 to 600000 (default 20000) a client gets to send a request\'s headers (slow-header attacks), from its first byte, or on a new connection from its opening (a connection that sends nothing is closed after it); at most HTTP_REQUEST_TIMEOUT_MS',
  },
  HTTP_REQUEST_TIMEOUT_MS: {
    schema: integer(1000, 3_600_000).default(300_000),
    allowed: 'milliseconds from 1000 to 3600000 (default 300000) a client gets to send a whole request, body included (large uploads)',
  },
  HTTP_MAX_CONNECTIONS: {
    schema: integer(1, 1_000_000).default(8192),
    allowed: 'a whole number from 1 to 1000000 (default 8192) of connections open at once; further ones are closed as they arrive. Keep it below the process\'s open-file limit (ulimit -n) with room for data files',
  },
  HTTP_MAX_CONNECTIONS_PER_CLIENT: {
    schema: integer(0, 1_000_000).default(100),
    allowed: 'a whole number from 0 to 1000000 (default 100; 0: no limit) of connections open at once from one client (an IPv4 address, an IPv6 /64), further ones closed as they arrive; with TRUST_PROXY, of requests in progress at once from one forwarded client, further ones answered 429',
  },
  HTTP_MAX_IN_FLIGHT: {
    schema: integer(1, 1_000_000).default(512),
    allowed: 'a whole number from 1 to 1000000 (default 512) of requests in progress at once; more are answered 503 with Retry-After at once',
  },
  LOAD_SHED_LAG_MS: {
    schema: integer(0, 60_000).default(100),
    allowed: 'milliseconds from 0 to 60000 (default 100; 0 turns it off) of event-loop delay which, once it has lasted 500 ms, has new requests of the clients that sent the most in the last second (over 16 and over a tenth of all) answered 503 with Retry-After (all requests past three times the bound), for 2 s at least and until the delay falls below half the bound',
  },
  SESSION_TTL_MINUTES: {
    schema: integer(5, 10_080).default(720),
    allowed: 'minutes from 5 to 10080 (default 720, 12 hours) that a console session token stays valid; shorter means signing in more often',
  },
  AUDIT_KEY_FILE: {
    schema: z.string().min(1).optional(),
    allowed: 'a path outside DATA_DIR to the audit signing key: an Ed25519 private key in PKCS#8 PEM (openssl genpkey -algorithm ed25519), readable by the service and writable by no one it runs as, unreadable by others; unset with AUDIT_PKCS11_MODULE unset: the key store\'s key (a start-up warning says what that does not protect against)',
  },
  AUDIT_KEY_CHAIN_FILE: {
    schema: z.string().min(1).optional(),
    allowed: 'a path outside DATA_DIR to the audit key chain (every audit key with its validity, each announced by the key before it); required with AUDIT_KEY_FILE or AUDIT_PKCS11_MODULE; created at the first start',
  },
  AUDIT_PKCS11_MODULE: {
    schema: z.string().min(1).optional(),
    allowed: 'the path to a PKCS#11 module (e.g. /usr/lib/softhsm/libsofthsm2.so): the audit key is an Ed25519 key in that HSM, signing with CKM_EDDSA; needs AUDIT_PKCS11_TOKEN or AUDIT_PKCS11_SLOT, AUDIT_PKCS11_PIN or AUDIT_PKCS11_PIN_FILE, AUDIT_PKCS11_KEY_LABEL and AUDIT_KEY_CHAIN_FILE',
  },
  AUDIT_PKCS11_TOKEN: { schema: z.string().min(1).optional(), allowed: 'the label of the PKCS#11 token holding the audit key (or AUDIT_PKCS11_SLOT)' },
  AUDIT_PKCS11_SLOT: { schema: z.string().regex(/^\d{1,20}$/, 'not a slot id (a whole number)').transform(BigInt).optional(), allowed: 'the id of the PKCS#11 slot holding the audit key (or AUDIT_PKCS11_TOKEN)' },
  AUDIT_PKCS11_PIN: { schema: z.string().min(1).optional(), allowed: 'the PKCS#11 user PIN (or AUDIT_PKCS11_PIN_FILE); never logged', secret: true },
  AUDIT_PKCS11_PIN_FILE: { schema: z.string().min(1).optional(), allowed: 'a path outside DATA_DIR to a file holding the PKCS#11 user PIN (or AUDIT_PKCS11_PIN), with the same permissions as a key file' },
  AUDIT_PKCS11_KEY_LABEL: { schema: z.string().min(1).optional(), allowed: 'the CKA_LABEL of the audit key in the PKCS#11 token (an Ed25519 key pair, private and public objects with the same CKA_ID)' },
  AUDIT_LOG_ORIGIN: {
    schema: z.string().regex(/^[^\s+]{1,255}$/u, 'contains a space or "+", or is longer than 255 characters').optional(),
    allowed: 'the log\'s name in signed notes (its checkpoints\' origin line and its keys\' signed-note name), a schema-less URL you control such as cms.example.com/annals-log, without spaces or "+"; default annals/<the first audit key id\'s first 16 characters>. Keep it for the life of the log: witnesses know the log by it',
  },
  PASSWORD_HASH_CONCURRENCY: {
    schema: integer(1, 64).default(Math.max(1, os.availableParallelism() - 1)),
    allowed: 'a whole number from 1 to 64 (default: the CPU cores less one, at least 1) of sign-in password checks run at once; more wait in a queue of 64, beyond which sign-in answers 503',
  },
} satisfies Record<string, Setting<unknown>>;

export type Settings = typeof settings;
/** The settings as parsed from the environment, by variable name. */
export type Parsed = { [K in keyof Settings]: z.output<Settings[K]['schema']> };

/** Names, rules and defaults of every setting, for docs/configuration.md and `cli config`. */
export function describeSettings(): Array<{ name: string; allowed: string }> {
  return Object.entries(settings).map(([name, s]) => ({ name, allowed: s.allowed }));
}

import path from 'node:path';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config/config.ts';

describe('configuration from the environment', () => {
  it('defaults to the embedded stores under ./data on port 8080 with every role', () => {
    const config = loadConfig({});
    expect(config.port).to.equal(8080);
    expect(config.dataDir).to.equal(path.resolve('data'));
    expect(config.eventStore).to.deep.equal({ kind: 'sqlite', file: path.resolve('data/events.sqlite') });
    expect(config.readModels).to.deep.equal({ kind: 'sqlite', file: path.resolve('data/read-models.sqlite') });
    expect([...config.roles]).to.deep.equal(['api', 'projector']);
    expect(config.logLevel).to.equal('info');
  });

  it('chooses EventStoreDB and MongoDB when their URLs are set', () => {
    const config = loadConfig({ EVENTSTORE_CONNECTION_STRING: 'esdb://localhost:2113?tls=false', MONGODB_URL: 'mongodb://localhost:27017/annals', ROLES: 'api', SESSION_SECRET: 's'.repeat(40), SECRETS_KEY: Buffer.alloc(32, 7).toString('base64') });
    expect(config.eventStore).to.deep.equal({ kind: 'eventstoredb', connectionString: 'esdb://localhost:2113?tls=false' });
    // The key store's database is the read models' followed by _keys unless MONGODB_KEYS_DATABASE names one.
    expect(config.readModels).to.deep.equal({ kind: 'mongodb', url: 'mongodb://localhost:27017/annals', keysDatabase: 'annals_keys' });
    expect([...config.roles]).to.deep.equal(['api']);
  });

  const rejects: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: '99999' }, /^PORT="99999": above 65535; allowed: a port number from 0 to 65535/],
    [{ PORT: '-1' }, /^PORT="-1": not a whole number/],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL="loud": .*; allowed: one of fatal, error, warn, info, debug, trace, silent/],
    [{ ROLES: 'api,cook' }, /^ROLES="api,cook": .*; allowed: a comma-separated list of api, projector/],
    [{ READINESS_MAX_LAG_MS: '5' }, /^READINESS_MAX_LAG_MS="5": below 100/],
    [{ MONGODB_URL: 'postgres://u:pw@h/db' }, /^MONGODB_URL=\(value hidden\): not a mongodb or mongodb\+srv URL/],
    [{ EVENTSTORE_CONNECTION_STRING: 'http://admin:pw@h:2113' }, /^EVENTSTORE_CONNECTION_STRING=\(value hidden\): not a esdb/],
    [{ SHUTDOWN_GRACE_MS: '20000', SHUTDOWN_DEADLINE_MS: '20000' }, /^SHUTDOWN_DEADLINE_MS="20000": not above SHUTDOWN_GRACE_MS \(20000\)/],
    [{ HTTP_REQUEST_TIMEOUT_MS: '10000' }, /^HTTP_HEADERS_TIMEOUT_MS="20000": above HTTP_REQUEST_TIMEOUT_MS \(10000\)/],
    [{ LOAD_SHED_LAG_MS: 'soon' }, /^LOAD_SHED_LAG_MS="soon": not a whole number/],
    [{ SESSION_TTL_MINUTES: '1' }, /^SESSION_TTL_MINUTES="1": below 5/],
  ];

  it('reads the HTTP limits, load shedding, session and shutdown settings (issue 12), the deadline following the grace period unless set', () => {
    const defaults = loadConfig({});
    expect(defaults.http).to.deep.equal({ keepAliveTimeoutMs: 65_000, headersTimeoutMs: 20_000, requestTimeoutMs: 300_000, maxConnections: 8192, maxConnectionsPerClient: 100, maxInFlight: 512, loadShedLagMs: 100 });
    expect(defaults.sessions.ttlSeconds).to.equal(12 * 60 * 60);
    expect(defaults.sessions.passwordHashConcurrency).to.be.at.least(1);
    expect(defaults.shutdownDeadlineMs).to.equal(15_000);
    expect(loadConfig({ SHUTDOWN_GRACE_MS: '60000' }).shutdownDeadlineMs).to.equal(65_000);
    expect(loadConfig({ SHUTDOWN_DEADLINE_MS: '30000' }).shutdownDeadlineMs).to.equal(30_000);
    expect(loadConfig({ SESSION_TTL_MINUTES: '30', PASSWORD_HASH_CONCURRENCY: '2', LOAD_SHED_LAG_MS: '0' })).to.deep.include({ sessions: { ttlSeconds: 1800, passwordHashConcurrency: 2 } });
  });
  for (const [env, message] of rejects) {
    it(`rejects ${Object.entries(env).map(([k, v]) => `${k}=${v}`).join(' ')} with one clear line`, () => {
      let error: unknown;
      try {
        loadConfig(env);
      } catch (e) {
        error = e;
      }
      expect(error).to.be.instanceOf(ConfigError);
      expect((error as Error).message).to.match(message);
      expect((error as Error).message.split('\n')).to.have.length(1);
      expect((error as Error).message).not.to.include(':pw@');
    });
  }

  it('requires SESSION_SECRET with EventStoreDB, where instances must share it, and refuses a short one without showing it', () => {
    expect(() => loadConfig({ EVENTSTORE_CONNECTION_STRING: 'esdb://localhost:2113?tls=false' })).to.throw(ConfigError, /^SESSION_SECRET is unset: required with EVENTSTORE_CONNECTION_STRING/);
    expect(() => loadConfig({ SESSION_SECRET: 'short-secret' })).to.throw(ConfigError, /^SESSION_SECRET=\(value hidden\): shorter than 32 characters/);
  });

  it('reads the outbound allowlist and the webhook settings, and refuses a malformed allowlist entry or secrets key without showing the key', () => {
    const defaults = loadConfig({});
    expect(defaults.outboundAllowlist).to.deep.equal([]);
    expect(defaults.secretsKey).to.equal(undefined);
    expect(defaults.webhooks).to.deep.equal({ timeoutMs: 10_000, caFile: undefined, concurrency: 16, concurrencyPerWebhook: 4 });
    const key = Buffer.alloc(32, 1).toString('base64');
    const config = loadConfig({ OUTBOUND_ALLOWLIST: ' localhost, 10.0.0.0/8,::1 ', SECRETS_KEY: key, WEBHOOK_TIMEOUT_MS: '500', WEBHOOK_CA_FILE: 'ca.pem', WEBHOOK_CONCURRENCY: '2', WEBHOOK_CONCURRENCY_PER_WEBHOOK: '1' });
    expect(config.outboundAllowlist).to.deep.equal(['localhost', '10.0.0.0/8', '::1']);
    expect(config.secretsKey).to.equal(key);
    expect(config.webhooks).to.deep.equal({ timeoutMs: 500, caFile: path.resolve('ca.pem'), concurrency: 2, concurrencyPerWebhook: 1 });
    expect(() => loadConfig({ OUTBOUND_ALLOWLIST: 'localhost,10.0.0.0/40' })).to.throw(ConfigError, /^OUTBOUND_ALLOWLIST=.*"10\.0\.0\.0\/40" is not valid/);
    expect(() => loadConfig({ WEBHOOK_TIMEOUT_MS: '20000' })).to.throw(ConfigError, /^WEBHOOK_TIMEOUT_MS="20000": above 10000/);
    const shortKey = Buffer.alloc(16, 3).toString('base64');
    expect(() => loadConfig({ SECRETS_KEY: shortKey })).to.throw(ConfigError, /^SECRETS_KEY=\(value hidden\): not the base64 of 32 bytes/).with.property('message').that.does.not.include(shortKey);
    expect(() => loadConfig({ EVENTSTORE_CONNECTION_STRING: 'esdb://localhost:2113?tls=false', SESSION_SECRET: 's'.repeat(40) })).to.throw(ConfigError, /^SECRETS_KEY is unset: required with EVENTSTORE_CONNECTION_STRING/);
  });

  it('reads the media settings: a size limit, a source timeout, and the local folder DATA_DIR/media unless S3_BUCKET names a bucket', () => {
    const defaults = loadConfig({});
    expect(defaults.media).to.deep.equal({ maxBytes: 52_428_800, sourceTimeoutMs: 30_000, blobs: { kind: 'local-folder', dir: path.resolve('data/media') } });
    const s3 = loadConfig({ MEDIA_MAX_BYTES: '1000', S3_BUCKET: 'annals-media', S3_REGION: 'eu-west-1', S3_ENDPOINT: 'http://127.0.0.1:9000', S3_FORCE_PATH_STYLE: 'true', S3_ACCESS_KEY_ID: 'AKIA', S3_SECRET_ACCESS_KEY: 'very-secret' });
    expect(s3.media).to.deep.equal({
      maxBytes: 1000,
      sourceTimeoutMs: 30_000,
      blobs: { kind: 's3', bucket: 'annals-media', region: 'eu-west-1', endpoint: 'http://127.0.0.1:9000', forcePathStyle: true, credentials: { accessKeyId: 'AKIA', secretAccessKey: 'very-secret' } },
    });
    expect(loadConfig({ S3_BUCKET: 'annals-media' }).media.blobs).to.deep.equal({ kind: 's3', bucket: 'annals-media', region: 'us-east-1', endpoint: undefined, forcePathStyle: false, credentials: undefined });
    expect(() => loadConfig({ MEDIA_MAX_BYTES: '0' })).to.throw(ConfigError, /^MEDIA_MAX_BYTES="0": below 1/);
    expect(() => loadConfig({ S3_BUCKET: 'Not_A_Bucket' })).to.throw(ConfigError, /^S3_BUCKET="Not_A_Bucket": not an S3 bucket name/);
    expect(() => loadConfig({ S3_ENDPOINT: 'ftp://x' })).to.throw(ConfigError, /^S3_ENDPOINT="ftp:\/\/x": not a http or https URL/);
    expect(() => loadConfig({ S3_BUCKET: 'b-1', S3_SECRET_ACCESS_KEY: 'very-secret' }))
      .to.throw(ConfigError, /^S3_ACCESS_KEY_ID is unset: S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are set together/)
      .with.property('message').that.does.not.include('very-secret');
  });

  it('reads the contact-form settings: mail sender and transport, console link base, contact hosts, challenge and submit limits', () => {
    expect(loadConfig({}).contactForms).to.deep.equal({
      mailFrom: 'annals <no-reply@localhost>', smtpUrl: undefined, mailDir: path.resolve('data/mail'), mailFolderKeepDays: 30, consoleUrl: undefined, hosts: [],
      powDifficulty: 16, noJsMinSeconds: 15, submitRateLimit: 10, submitMaxBytes: 65_536,
    });
    const set = loadConfig({ MAIL_FROM: 'Shop <shop@example.com>', SMTP_URL: 'smtp://u:p4ss@mail.example.com:587', CONSOLE_URL: 'https://console.example.com', CONTACT_HOSTS: 'Contact.Example.com, forms.example.org', CONTACT_POW_DIFFICULTY: '20', CONTACT_NOJS_MIN_SECONDS: '0', CONTACT_SUBMIT_RATE_LIMIT: '5', CONTACT_SUBMIT_MAX_BYTES: '2048', MAIL_FOLDER_KEEP_DAYS: '0' });
    expect(set.contactForms).to.deep.include({ mailFolderKeepDays: 0, mailFrom: 'Shop <shop@example.com>', smtpUrl: 'smtp://u:p4ss@mail.example.com:587', consoleUrl: 'https://console.example.com', hosts: ['contact.example.com', 'forms.example.org'], powDifficulty: 20, noJsMinSeconds: 0, submitRateLimit: 5, submitMaxBytes: 2048 });
    expect(() => loadConfig({ SMTP_URL: 'http://u:p4ss@mail.example.com' })).to.throw(ConfigError, /^SMTP_URL=\(value hidden\): not a smtp or smtps URL/).with.property('message').that.does.not.include('p4ss');
    expect(() => loadConfig({ MAIL_FROM: 'nobody' })).to.throw(ConfigError, /^MAIL_FROM="nobody": not an e-mail address/);
    expect(() => loadConfig({ CONTACT_HOSTS: 'ok.example.com,not a host' })).to.throw(ConfigError, /^CONTACT_HOSTS=.*not a host name/);
    expect(() => loadConfig({ CONTACT_POW_DIFFICULTY: '40' })).to.throw(ConfigError, /^CONTACT_POW_DIFFICULTY="40": above 32/);
    expect(() => loadConfig({ MAIL_FOLDER_KEEP_DAYS: '-1' })).to.throw(ConfigError, /^MAIL_FOLDER_KEEP_DAYS="-1"/);
    expect(() => loadConfig({ MAIL_FOLDER_KEEP_DAYS: '1.5' })).to.throw(ConfigError, /^MAIL_FOLDER_KEEP_DAYS="1.5"/);
  });

  it('reads the translation provider settings: unset by default, the key never shown', () => {
    expect(loadConfig({}).translation).to.deep.equal({ apiUrl: undefined, apiKey: undefined, timeoutMs: 30_000 });
    const set = loadConfig({ TRANSLATION_API_URL: 'https://api-free.deepl.com/v2/translate', TRANSLATION_API_KEY: 'k3y:fx', TRANSLATION_TIMEOUT_MS: '5000' });
    expect(set.translation).to.deep.equal({ apiUrl: 'https://api-free.deepl.com/v2/translate', apiKey: 'k3y:fx', timeoutMs: 5000 });
    expect(() => loadConfig({ TRANSLATION_API_URL: 'deepl.com' })).to.throw(ConfigError, /^TRANSLATION_API_URL="deepl.com": not a http or https URL/);
    expect(() => loadConfig({ TRANSLATION_API_KEY: 'k3y:fx', TRANSLATION_TIMEOUT_MS: '1' })).to.throw(ConfigError, /^TRANSLATION_TIMEOUT_MS="1": below 100/).with.property('message').that.does.not.include('k3y');
  });

  it('reports every bad setting at once, one per line', () => {
    expect(() => loadConfig({ PORT: 'x', LOG_LEVEL: 'y' })).to.throw(ConfigError).with.property('message').that.matches(/^PORT=.*\nLOG_LEVEL=/);
  });
});

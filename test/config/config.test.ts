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
    const config = loadConfig({ EVENTSTORE_CONNECTION_STRING: 'esdb://localhost:2113?tls=false', MONGODB_URL: 'mongodb://localhost:27017/annals', ROLES: 'api', SESSION_SECRET: 's'.repeat(40) });
    expect(config.eventStore).to.deep.equal({ kind: 'eventstoredb', connectionString: 'esdb://localhost:2113?tls=false' });
    expect(config.readModels).to.deep.equal({ kind: 'mongodb', url: 'mongodb://localhost:27017/annals' });
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
  ];
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

  it('reports every bad setting at once, one per line', () => {
    expect(() => loadConfig({ PORT: 'x', LOG_LEVEL: 'y' })).to.throw(ConfigError).with.property('message').that.matches(/^PORT=.*\nLOG_LEVEL=/);
  });
});

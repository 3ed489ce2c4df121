import path from 'node:path';
import { expect } from 'chai';
import { tempDir } from '../support/temp-dir.ts';
import { runEntry, startServiceProcess, type StartedService } from '../support/child-process.ts';
import { eventually } from '../support/engine-fixture.ts';
import { SqliteKeyStore } from '../../src/key-store/sqlite-key-store.ts';
import { replayKeyId } from '../../src/application/issued-key-replay.ts';

const PASSWORD = 'correct horse battery staple';

/** Issue 12: a key revoked through the CLI is refused by a running service before the CLI returns. */
describe('operator CLI: keys revoke against a running service', function () {
  this.timeout(120_000);
  /**
   * One project and one service for the file: each test revokes keys of its own (the first the bootstrap's, the
   * others keys it issues), so they need no data folder and service each (a bootstrap and a service start,
   * two process starts a test).
   */
  let dataDir: string;
  let project: { projectId: string; agentKey: string; publicApiKey: string };
  let service: StartedService | undefined;
  /** The ids of the bootstrap's keys (the first test revokes them). */
  let bootstrapKeys: { agent: string; public: string };
  before(async () => {
    dataDir = path.join(tempDir(), 'data');
    project = await bootstrap(dataDir);
    service = await startServiceProcess({ DATA_DIR: dataDir }, 60_000, { keepRequestLogs: false });
    // Also waits until the service's projections hold the bootstrap (its admin signs in).
    bootstrapKeys = await keyIdOf(service.url, project.projectId);
  });
  after(async () => {
    await service?.stop();
    service = undefined;
  });

  async function bootstrap(dataDir: string): Promise<{ projectId: string; agentKey: string; publicApiKey: string }> {
    const run = await runEntry('src/cli/main.ts', ['bootstrap', '--project', 'Keys', '--plan', 'business', '--admin-email', 'keys@example.com', '--admin-password', PASSWORD], { DATA_DIR: dataDir, ANNALS_ADMIN_PASSWORD: '' });
    expect(run.code, run.stderr).to.equal(0);
    return JSON.parse(run.stdout) as { projectId: string; agentKey: string; publicApiKey: string };
  }

  /** The ids of the bootstrap keys, listed by the console admin (agent keys may not list keys). */
  async function keyIdOf(url: string, projectId: string): Promise<{ agent: string; public: string }> {
    for (let i = 0; i < 100; i++) {
      const login = await fetch(`${url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'keys@example.com', password: PASSWORD }) });
      if (login.status === 200) {
        const { token } = (await login.json()) as { token: string };
        const response = await fetch(`${url}/admin/v1/keys`, { headers: { authorization: `Bearer ${token}`, 'x-project-id': projectId } });
        const { items } = (await response.json()) as { items: Array<{ id: string; type: string }> };
        return { agent: items.find((k) => k.type === 'agent')!.id, public: items.find((k) => k.type === 'public')!.id };
      }
      await new Promise((resolve) => setTimeout(resolve, 100)); // the projections still catching up with the bootstrap
    }
    throw new Error('the bootstrap admin never signed in');
  }

  /** A console session of the bootstrap admin. */
  async function consoleToken(url: string): Promise<string> {
    const login = await fetch(`${url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'keys@example.com', password: PASSWORD }) });
    expect(login.status).to.equal(200);
    return ((await login.json()) as { token: string }).token;
  }

  it('returns only once the service refuses the key: no request sent after it returns is served', async () => {
    const url = service!.url;
    const ids = bootstrapKeys;
    // Requests in a loop with the agent key and the public key, each noting when it was sent.
    const sent: Array<{ at: number; kind: 'agent' | 'public'; status: number }> = [];
    let stop = false;
    const loop = (kind: 'agent' | 'public') =>
      (async () => {
        while (!stop) {
          const at = Date.now();
          const response =
            kind === 'agent'
              ? await fetch(`${url}/admin/v1/form-sets`, { headers: { authorization: `Bearer ${project.agentKey}` } })
              : await fetch(`${url}/public/v1/llms.txt`, { headers: { 'x-service-public-api-key': project.publicApiKey } });
          await response.arrayBuffer();
          sent.push({ at, kind, status: response.status });
        }
      })();
    const loops = [loop('agent'), loop('agent'), loop('public')];
    const answered = (kind: 'agent' | 'public', since: number, status?: number) => sent.filter((r) => r.kind === kind && r.at >= since && (status === undefined || r.status === status)).length;
    // Both keys served before either is revoked.
    await eventually(async () => answered('agent', 0, 200) > 0 && answered('public', 0, 200) > 0, (ok) => ok, 30_000);
    const agent = await runEntry('src/cli/main.ts', ['keys', 'revoke', '--project', project.projectId, '--key-id', ids.agent], { DATA_DIR: dataDir });
    const agentReturned = Date.now();
    const pub = await runEntry('src/cli/main.ts', ['keys', 'revoke', '--project', project.projectId, '--key-id', ids.public], { DATA_DIR: dataDir });
    const publicReturned = Date.now();
    // Enough requests of each kind sent after its revocation returned for the check below to mean something.
    await eventually(async () => answered('agent', agentReturned) >= 5 && answered('public', publicReturned) >= 5, (ok) => ok, 30_000);
    stop = true;
    await Promise.all(loops);
    expect(agent.code, agent.stderr).to.equal(0);
    expect(pub.code, pub.stderr).to.equal(0);
    const servedAfter = sent.filter((r) => r.status === 200 && r.at >= (r.kind === 'agent' ? agentReturned : publicReturned));
    expect(servedAfter, `served after the CLI returned: ${JSON.stringify(servedAfter)}`).to.deep.equal([]);
    expect(JSON.parse(agent.stdout)).to.include({ keyId: ids.agent, type: 'agent', alreadyRevoked: false, inForce: true });
    expect(JSON.parse(pub.stdout)).to.include({ keyId: ids.public, type: 'public', inForce: true });
    expect(sent.filter((r) => r.kind === 'agent' && r.at >= agentReturned).every((r) => r.status === 401)).to.equal(true);
    expect(sent.some((r) => r.status === 200), 'the keys worked before').to.equal(true);
  });

  it('destroys the data key that kept a key issued with an idempotency key for its replays', async () => {
    const token = await consoleToken(service!.url);
    const issued = await fetch(`${service!.url}/admin/v1/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'x-project-id': project.projectId, 'content-type': 'application/json', 'idempotency-key': 'cli-revoke-1' },
      body: JSON.stringify({ type: 'agent', name: 'Replayable' }),
    });
    expect(issued.status).to.equal(201);
    const { id } = (await issued.json()) as { id: string };
    const keys = SqliteKeyStore.open(path.join(dataDir, 'keys.sqlite'));
    try {
      expect(await keys.get(replayKeyId(id))).to.not.equal(null);
      const run = await runEntry('src/cli/main.ts', ['keys', 'revoke', '--project', project.projectId, '--key-id', id], { DATA_DIR: dataDir });
      expect(run.code, run.stderr).to.equal(0);
      expect(await keys.get(replayKeyId(id))).to.equal(null);
      expect(await keys.destroyed(replayKeyId(id))).to.equal(true);
    } finally {
      await keys.close();
    }
  });

  it('says when no service is running, and returns within two seconds', async () => {
    // A key of its own, issued through the running service; then the service stops.
    const issued = await fetch(`${service!.url}/admin/v1/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await consoleToken(service!.url)}`, 'x-project-id': project.projectId, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'agent', name: 'Offline' }),
    });
    expect(issued.status).to.equal(201);
    const ids = { agent: ((await issued.json()) as { id: string }).id };
    await service!.stop();
    service = undefined;
    const started = Date.now();
    const run = await runEntry('src/cli/main.ts', ['keys', 'revoke', '--project', project.projectId, '--key-id', ids.agent], { DATA_DIR: dataDir });
    expect(run.code, run.stderr).to.equal(0);
    expect(JSON.parse(run.stdout)).to.include({ inForce: false, alreadyRevoked: false });
    expect(run.stderr).to.match(/no service is running/);
    // Process start-up included; the wait itself is about 1.5 s.
    expect(Date.now() - started).to.be.below(15_000);
  });
});

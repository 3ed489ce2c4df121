import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { tempDir } from '../support/temp-dir.ts';
import { runEntry, startServiceProcess, type StartedService } from '../support/child-process.ts';
import { eventually } from '../support/engine-fixture.ts';
import { KEY_STORE_KEY_WARNING } from '../../src/audit/open-audit-key-ring.ts';

const mode = (file: string) => fs.statSync(file).mode & 0o777;

describe('service: one writer per DATA_DIR, private files, nothing left by a failed start', function () {
  this.timeout(120_000);
  const running: StartedService[] = [];
  afterEach(async () => {
    for (const service of running.splice(0)) if (service.child.exitCode === null && service.child.signalCode === null) await service.stop('SIGKILL');
  });
  const start = async (env: Record<string, string>) => {
    const service = await startServiceProcess(env);
    running.push(service);
    return service;
  };

  it('refuses a second service with the projector role on the same DATA_DIR, naming the holder; an API-only one (ROLES=api) may run beside it', async () => {
    const dataDir = path.join(tempDir(), 'data');
    const first = await start({ DATA_DIR: dataDir });
    const second = await runEntry('src/main.ts', [], { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' });
    expect(second.code).to.equal(1);
    expect(second.stderr).to.match(new RegExp(`cannot start: the data folder ${dataDir} is in use by pid ${first.child.pid} on .*service with roles api,projector.*ROLES=api`));
    // The first one goes on undisturbed.
    expect((await fetch(`${first.url}/readyz`)).status).to.equal(200);
    const replica = await start({ DATA_DIR: dataDir, ROLES: 'api' });
    expect((await fetch(`${replica.url}/healthz`)).status).to.equal(200);
    expect((await fetch(`${replica.url}/admin/v1/form-sets`)).status).to.equal(401);
    expect((await replica.stop('SIGTERM')).code).to.equal(0);
    expect((await first.stop('SIGTERM')).code).to.equal(0);
    // Released on a clean exit: the next start takes it.
    const third = await start({ DATA_DIR: dataDir });
    expect((await fetch(`${third.url}/healthz`)).status).to.equal(200);
  });

  it('a holder killed with SIGKILL leaves no stale lock: the next start takes the DATA_DIR at once', async () => {
    const dataDir = path.join(tempDir(), 'data');
    const first = await start({ DATA_DIR: dataDir });
    const killed = await first.stop('SIGKILL');
    expect(killed.signal).to.equal('SIGKILL');
    const began = Date.now();
    const next = await start({ DATA_DIR: dataDir });
    expect((await fetch(`${next.url}/readyz`)).status).to.equal(200);
    expect(Date.now() - began).to.be.below(15_000);
  });

  it('a start that fails (port in use) leaves an empty DATA_DIR empty, and a missing one missing', async () => {
    const server = net.createServer().listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const port = String((server.address() as net.AddressInfo).port);
    try {
      const empty = tempDir();
      const failed = await runEntry('src/main.ts', [], { DATA_DIR: empty, PORT: port, HOST: '127.0.0.1' });
      expect(failed.code).to.equal(1);
      expect(failed.stderr).to.match(/EADDRINUSE|address already in use/i);
      expect(fs.readdirSync(empty)).to.deep.equal([]);
      const missing = path.join(tempDir(), 'not-yet');
      expect((await runEntry('src/main.ts', [], { DATA_DIR: missing, PORT: port, HOST: '127.0.0.1' })).code).to.equal(1);
      expect(fs.existsSync(missing)).to.equal(false);
      // A DATA_DIR holding data keeps it all.
      const used = path.join(tempDir(), 'data');
      const service = await start({ DATA_DIR: used });
      await service.stop('SIGTERM');
      const files = fs.readdirSync(used).sort();
      expect((await runEntry('src/main.ts', [], { DATA_DIR: used, PORT: port, HOST: '127.0.0.1' })).code).to.equal(1);
      expect(fs.readdirSync(used).sort()).to.deep.equal(files);
    } finally {
      server.close();
    }
  });

  it('creates DATA_DIR 0700 and every store, key, secret and lock file in it 0600 (WAL files and mail included)', async () => {
    const dataDir = path.join(tempDir(), 'data');
    const demo = await runEntry('src/cli/main.ts', ['demo'], { DATA_DIR: dataDir });
    expect(demo.code, demo.stderr).to.equal(0);
    const { publicBase } = JSON.parse(demo.stdout) as { publicBase: string };
    const service = await start({ DATA_DIR: dataDir });
    const submitted = await fetch(`${service.url}${new URL(publicBase, service.url).pathname}/contact-forms/contact/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Ada', email: 'ada@example.com', message: 'Files must be private.' }),
    });
    expect(submitted.status).to.equal(200);
    const mailDir = path.join(dataDir, 'mail');
    await eventually(async () => (fs.existsSync(mailDir) ? fs.readdirSync(mailDir) : []), (files) => files.filter((f) => f.endsWith('.eml')).length >= 2, 20_000);

    expect(mode(dataDir)).to.equal(0o700);
    const files = fs.readdirSync(dataDir);
    for (const name of ['events.sqlite', 'read-models.sqlite', 'keys.sqlite', 'session-secret', 'secrets-key', 'annals.lock']) expect(files).to.include(name);
    for (const name of files.filter((f) => fs.statSync(path.join(dataDir, f)).isFile())) expect(mode(path.join(dataDir, name)), name).to.equal(0o600);
    expect(files.filter((f) => /-(wal|shm)$/.test(f))).to.not.be.empty;
    expect(mode(mailDir)).to.equal(0o700);
    for (const name of fs.readdirSync(mailDir)) expect(mode(path.join(mailDir, name)), name).to.equal(0o600);
    // Nothing to warn about but the audit key kept in the key store (nothing configured: README "The tamper-evident log").
    expect(service.logs().filter((l) => l['level'] === 'warn').map((l) => l['msg'])).to.deep.equal([KEY_STORE_KEY_WARNING]);
  });

  it('warns at start when DATA_DIR or files in it are readable by other users', async () => {
    const dataDir = path.join(tempDir(), 'data');
    const first = await start({ DATA_DIR: dataDir });
    await first.stop('SIGTERM');
    fs.chmodSync(dataDir, 0o755);
    fs.chmodSync(path.join(dataDir, 'events.sqlite'), 0o644);
    const service = await start({ DATA_DIR: dataDir });
    const warnings = service.logs().filter((l) => l['level'] === 'warn').map((l) => String(l['msg']));
    expect(warnings.some((w) => w.includes(`the data folder ${dataDir} is open to other users (mode 0755)`) && w.includes('chmod 700')), warnings.join('\n')).to.equal(true);
    expect(warnings.some((w) => w.includes('events.sqlite (0644)'))).to.equal(true);
  });
});

import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import sharp from 'sharp';
import { tempDir } from '../support/temp-dir.ts';
import { runEntry, startServiceProcess, type StartedService } from '../support/child-process.ts';
import { eventually } from '../support/engine-fixture.ts';
import { KEY_STORE_KEY_WARNING } from '../../src/audit/open-audit-key-ring.ts';

const mode = (file: string) => fs.statSync(file).mode & 0o777;

/** Every file and folder under `root` (not root itself), by path relative to it, with its mode. */
function walk(root: string): Array<{ path: string; mode: number; directory: boolean }> {
  const out: Array<{ path: string; mode: number; directory: boolean }> = [];
  for (const entry of fs.readdirSync(root, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    try {
      out.push({ path: path.relative(root, full), mode: fs.lstatSync(full).mode & 0o777, directory: entry.isDirectory() });
    } catch {
      // Gone meanwhile (a WAL file checkpointed away).
    }
  }
  return out;
}

/** The agent key of a project bootstrapped on the data folder (`annals bootstrap`, as an operator does). */
async function bootstrapProject(dataDir: string): Promise<string> {
  const args = ['bootstrap', '--project', 'Files', '--plan', 'business', '--admin-email', 'admin@example.com', '--admin-password', 'correct horse battery staple'];
  const bootstrapped = await runEntry('src/cli/main.ts', args, { DATA_DIR: dataDir });
  expect(bootstrapped.code, bootstrapped.stderr).to.equal(0);
  return (JSON.parse(bootstrapped.stdout) as { agentKey: string }).agentKey;
}

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
  /**
   * A data folder a service has used and left (bootstrapped, served, an image uploaded through the API,
   * stopped cleanly), every file and folder in it private. The tests that need one (a failed start keeps it
   * all; loosened modes are warned about) each take a copy of one made once: a bootstrap and a service run
   * are two process starts, and what these tests check is what a later start does with the files, not how they
   * came to be. fs.cpSync keeps each file's and folder's mode; the copy is checked private all the same.
   */
  let used: Promise<string> | undefined;
  const usedDataDir = async (): Promise<string> => {
    used ??= (async () => {
      const dataDir = path.join(tempDir(), 'data');
      const agentKey = await bootstrapProject(dataDir);
      const service = await startServiceProcess({ DATA_DIR: dataDir });
      try {
        const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 10, g: 10, b: 200 } } }).png().toBuffer();
        const uploaded = await fetch(`${service.url}/admin/v1/media`, { method: 'POST', headers: { authorization: `Bearer ${agentKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ base64: png.toString('base64'), fileName: 'blue.png' }) });
        expect(uploaded.status, await uploaded.clone().text()).to.equal(201);
      } finally {
        const stopped = await service.stop('SIGTERM');
        expect(stopped.code, stopped.stderr).to.equal(0);
      }
      // The uploads through the API, as everything else, private at any depth.
      expect(walk(dataDir).filter((entry) => entry.path.startsWith(`media${path.sep}`) && !entry.directory)).to.not.be.empty;
      expect(walk(dataDir).filter((entry) => entry.mode !== (entry.directory ? 0o700 : 0o600))).to.deep.equal([]);
      return dataDir;
    })();
    const copy = path.join(tempDir(), 'data');
    fs.cpSync(await used, copy, { recursive: true });
    expect(walk(copy).filter((entry) => entry.mode !== (entry.directory ? 0o700 : 0o600)), 'the copy is as private as the original').to.deep.equal([]);
    expect(mode(copy)).to.equal(0o700);
    return copy;
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
    const replicaStopped = await replica.stop('SIGTERM');
    expect(replicaStopped.code, `signal ${replicaStopped.signal}\n${replicaStopped.stderr}\n${replicaStopped.stdout.slice(-4000)}`).to.equal(0);
    const firstStopped = await first.stop('SIGTERM');
    expect(firstStopped.code, `signal ${firstStopped.signal}\n${firstStopped.stderr}`).to.equal(0);
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
      const missing = path.join(tempDir(), 'not-yet');
      // A DATA_DIR holding data (a service ran on it and stopped) keeps it all.
      const used = await usedDataDir();
      const files = fs.readdirSync(used).sort();
      expect(files).to.include.members(['events.sqlite', 'read-models.sqlite', 'keys.sqlite', 'session-secret', 'media']);
      // Three starts on three folders, each failing on its own: run at once.
      const failStart = (dataDir: string) => runEntry('src/main.ts', [], { DATA_DIR: dataDir, PORT: port, HOST: '127.0.0.1' });
      const [failed, failedMissing, failedUsed] = await Promise.all([failStart(empty), failStart(missing), failStart(used)]);
      expect(failed.code).to.equal(1);
      expect(failed.stderr).to.match(/EADDRINUSE|address already in use/i);
      expect(fs.readdirSync(empty)).to.deep.equal([]);
      expect(failedMissing.code).to.equal(1);
      expect(fs.existsSync(missing)).to.equal(false);
      expect(failedUsed.code).to.equal(1);
      expect(fs.readdirSync(used).sort()).to.deep.equal(files);
    } finally {
      server.close();
    }
  });

  it('creates DATA_DIR 0700 and every store, key, secret and lock file in it 0600 (WAL files, mail and media at any depth included)', async () => {
    const dataDir = path.join(tempDir(), 'data');
    const demo = await runEntry('src/cli/main.ts', ['demo'], { DATA_DIR: dataDir });
    expect(demo.code, demo.stderr).to.equal(0);
    const { publicBase, agentKey } = JSON.parse(demo.stdout) as { publicBase: string; agentKey: string };
    const service = await start({ DATA_DIR: dataDir });
    // An upload through the API (the demo's own images came through the CLI), as JSON and as multipart.
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 200, g: 10, b: 10 } } }).png().toBuffer();
    const uploaded = await fetch(`${service.url}/admin/v1/media`, { method: 'POST', headers: { authorization: `Bearer ${agentKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ base64: png.toString('base64'), fileName: 'red.png' }) });
    expect(uploaded.status, await uploaded.clone().text()).to.equal(201);
    const form = new FormData();
    form.append('file', new Blob([png], { type: 'image/png' }), 'multipart.png');
    const multipart = await fetch(`${service.url}/admin/v1/media`, { method: 'POST', headers: { authorization: `Bearer ${agentKey}` }, body: form });
    expect(multipart.status, await multipart.clone().text()).to.equal(201);
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
    // Everything under DATA_DIR, at any depth: the demo's media and the uploads with their WebP variants.
    const all = walk(dataDir);
    expect(all.filter((entry) => entry.path.startsWith(`media${path.sep}`) && !entry.directory).length).to.be.at.least(4);
    expect(all.filter((entry) => entry.mode !== (entry.directory ? 0o700 : 0o600)).map((entry) => `${entry.path} ${entry.mode.toString(8)}`)).to.deep.equal([]);
    // Nothing to warn about but the audit key kept in the key store (nothing configured: docs/operations.md "The tamper-evident log").
    expect(service.logs().filter((l) => l['level'] === 'warn').map((l) => l['msg'])).to.deep.equal([KEY_STORE_KEY_WARNING]);
  });

  it('warns at start when DATA_DIR or files in it are readable by other users', async () => {
    const dataDir = await usedDataDir();
    fs.chmodSync(dataDir, 0o755);
    fs.chmodSync(path.join(dataDir, 'events.sqlite'), 0o644);
    const service = await start({ DATA_DIR: dataDir });
    const warnings = service.logs().filter((l) => l['level'] === 'warn').map((l) => String(l['msg']));
    expect(warnings.some((w) => w.includes(`the data folder ${dataDir} is open to other users (mode 0755)`) && w.includes('chmod 700')), warnings.join('\n')).to.equal(true);
    expect(warnings.some((w) => w.includes('events.sqlite (0644)'))).to.equal(true);
  });

  it('warns at start about media files and folders at any depth that other users may read, naming them', async () => {
    // A service ran on it and an image was uploaded through the API, all private (usedDataDir checks).
    const dataDir = await usedDataDir();
    // Loosened as an older version (0644 files, 0755 folders), a copy or another program would leave them.
    const blob = walk(dataDir).find((entry) => entry.path.startsWith(`media${path.sep}`) && !entry.directory)!;
    const folder = path.dirname(blob.path);
    fs.chmodSync(path.join(dataDir, blob.path), 0o644);
    fs.chmodSync(path.join(dataDir, folder), 0o755);
    fs.chmodSync(path.join(dataDir, 'session-secret'), 0o640);
    const service = await start({ DATA_DIR: dataDir });
    const warnings = await eventually(async () => service.logs().filter((l) => l['level'] === 'warn' && l['msg'] !== KEY_STORE_KEY_WARNING).map((l) => String(l['msg'])), (list) => list.length > 0);
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.include(`${blob.path} (0644)`).and.include(`${folder}/ (0755)`).and.include('session-secret (0640)').and.include(`chmod -R go-rwx ${dataDir}`);
    // It still serves: a warning, as the README says, not a refusal.
    expect((await fetch(`${service.url}/readyz`)).status).to.equal(200);
  });
});

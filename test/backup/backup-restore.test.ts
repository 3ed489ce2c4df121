import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { tempDir } from '../support/temp-dir.ts';
import { runEntry, startServiceProcess, type StartedService } from '../support/child-process.ts';
import { eventually } from '../support/engine-fixture.ts';
import { acquireDataDirLock } from '../../src/data-dir/data-dir-lock.ts';

interface Demo {
  projectId: string;
  agentKey: string;
  adminEmail: string;
  adminPassword: string;
  publicBase: string;
}

const cli = (dataDir: string, args: string[], env: Record<string, string> = {}) => runEntry('src/cli/main.ts', args, { DATA_DIR: dataDir, ...env });

/** One acknowledged write: what it made, and when its answer arrived. */
interface Ack {
  kind: 'entry' | 'submission';
  id: string;
  at: number;
}

async function json(response: Response): Promise<any> {
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

describe('annals backup and restore', function () {
  this.timeout(300_000);
  const running: StartedService[] = [];
  afterEach(async () => {
    for (const service of running.splice(0)) if (service.child.exitCode === null && service.child.signalCode === null) await service.stop('SIGKILL');
  });

  it('restores a backup taken while the service writes: every acknowledged write is there, every submission still readable', async () => {
    const source = path.join(tempDir(), 'data');
    const demoRun = await cli(source, ['demo']);
    expect(demoRun.code, demoRun.stderr).to.equal(0);
    const demo = JSON.parse(demoRun.stdout) as Demo;
    const service = await startServiceProcess({ DATA_DIR: source, CONTACT_SUBMIT_RATE_LIMIT: '100000' });
    running.push(service);
    const admin = (url: string, init: RequestInit = {}) =>
      fetch(`${service.url}/admin/v1${url}`, { ...init, headers: { authorization: `Bearer ${demo.agentKey}`, 'content-type': 'application/json', ...init.headers } });
    const created = await admin('/form-sets', { method: 'POST', body: JSON.stringify({ slug: 'notes', name: 'Notes', fields: [{ key: 'title', type: 'text', label: 'Title', required: true }] }) });
    expect(created.status).to.equal(201);
    const formSetId = (await json(created)).id as string;
    const publicBase = `${service.url}${new URL(demo.publicBase, service.url).pathname}`;

    // Write load: entries through the admin API and contact submissions (each with its own key in
    // keys.sqlite) through the public API, several at a time, until told to stop.
    const acked: Ack[] = [];
    const failures: string[] = [];
    // On a busy machine the service may shed the writers' load (503, retryable, nothing written): they wait
    // Retry-After and go on, as a client must. Any other answer but success is a failure.
    const shedThenWaited = async (response: Response): Promise<boolean> => {
      if (response.status !== 503 || ((await response.clone().json()) as { error?: { retryable?: boolean } }).error?.retryable !== true) return false;
      await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get('retry-after') ?? 1) * 1000));
      return true;
    };
    let stop = false;
    let n = 0;
    const entryWriter = async () => {
      while (!stop) {
        const k = n++;
        const response = await admin(`/form-sets/${formSetId}/entries`, { method: 'POST', body: JSON.stringify({ slug: `note-${k}`, fields: { title: { en: `Note ${k}` } } }) });
        if (response.status === 201) acked.push({ kind: 'entry', id: (await json(response)).entry.id, at: Date.now() });
        else if (!(await shedThenWaited(response))) failures.push(`entry ${response.status} ${await response.text()}`);
      }
    };
    const submissionWriter = async () => {
      while (!stop) {
        const k = n++;
        const response = await fetch(`${publicBase}/contact-forms/contact/submit`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Writer ${k}`, email: `w${k}@example.com`, message: `Message ${k}` }),
        });
        if (response.status === 200) acked.push({ kind: 'submission', id: (await json(response)).submissionId, at: Date.now() });
        else if (!(await shedThenWaited(response))) failures.push(`submission ${response.status} ${await response.text()}`);
      }
    };
    const writers = [entryWriter(), entryWriter(), entryWriter(), submissionWriter(), submissionWriter()];
    await eventually(async () => acked.length, (count) => count >= 30, 60_000);

    const backupDir = path.join(tempDir(), 'backup');
    const ackedBefore = acked.slice();
    const backup = await cli(source, ['backup', backupDir, '--json']);
    const ackedByEnd = acked.length;
    expect(backup.code, backup.stderr).to.equal(0);
    const summary = JSON.parse(backup.stdout) as { eventLogHead: string; files: number };
    expect(backup.stderr).to.match(/backup: event log \(events\.sqlite/);
    // Writing went on while the backup ran, and after it.
    await eventually(async () => acked.length, (count) => count >= ackedByEnd + 10, 60_000);
    stop = true;
    await Promise.all(writers);
    expect(failures).to.deep.equal([]);
    expect(ackedByEnd).to.be.greaterThan(ackedBefore.length);
    await service.stop('SIGTERM');

    const target = path.join(tempDir(), 'restored');
    const restore = await cli(target, ['restore', backupDir, '--json']);
    expect(restore.code, restore.stderr).to.equal(0);
    expect(JSON.parse(restore.stdout)).to.include({ dataDir: target, eventLogHead: summary.eventLogHead, files: summary.files });

    const restored = await startServiceProcess({ DATA_DIR: target });
    running.push(restored);
    await eventually(async () => (await fetch(`${restored.url}/readyz`)).status, (status) => status === 200, 30_000);
    const login = await fetch(`${restored.url}/admin/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: demo.adminEmail, password: demo.adminPassword }) });
    expect(login.status).to.equal(200);
    const session = { authorization: `Bearer ${(await json(login)).token}`, 'x-project-id': demo.projectId };
    const forms = await json(await fetch(`${restored.url}/admin/v1/contact-forms`, { headers: session }));
    const formId = forms.items.find((f: { slug: string }) => f.slug === 'contact').id as string;

    // A restored service folding its log on a busy machine may shed a read (503, retryable): read again after
    // Retry-After, as a client must.
    const read = async (url: string, init: RequestInit): Promise<Response> => {
      for (;;) {
        const response = await fetch(url, init);
        if (!(await shedThenWaited(response))) return response;
      }
    };
    // Every write acknowledged before the backup began is in the restored service.
    for (const ack of ackedBefore) {
      if (ack.kind === 'entry') {
        const entry = await read(`${restored.url}/admin/v1/entries/${ack.id}`, { headers: { authorization: `Bearer ${demo.agentKey}` } });
        expect(entry.status, `entry ${ack.id}`).to.equal(200);
      } else {
        const submission = await read(`${restored.url}/admin/v1/contact-forms/${formId}/submissions/${ack.id}`, { headers: session });
        expect(submission.status, `submission ${ack.id}`).to.equal(200);
        expect((await json(submission)).values.message, `submission ${ack.id}`).to.match(/^Message \d+$/);
      }
    }
    // Every submission the restored log holds can be read: no key was missing from the copy, including
    // those of submissions made while the backup ran.
    let cursor: string | null = null;
    let seen = 0;
    do {
      const list = await json(await read(`${restored.url}/admin/v1/contact-forms/${formId}/submissions?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { headers: session }));
      for (const item of list.items as Array<{ id: string; values: unknown }>) expect(item.values, item.id).to.not.equal(null);
      seen += list.items.length;
      cursor = list.nextCursor as string | null;
    } while (cursor !== null);
    expect(seen).to.be.at.least(ackedBefore.filter((a) => a.kind === 'submission').length);
  });

  it('backs up a stopped service too; refuses a non-empty target, a DATA_DIR another process holds, and a damaged backup', async () => {
    const source = path.join(tempDir(), 'data');
    expect((await cli(source, ['demo'])).code).to.equal(0);
    const once = await startServiceProcess({ DATA_DIR: source });
    running.push(once);
    await once.stop('SIGTERM');
    const backupDir = path.join(tempDir(), 'backup');
    const backup = await cli(source, ['backup', backupDir]);
    expect(backup.code, backup.stderr).to.equal(0);
    expect(fs.statSync(backupDir).mode & 0o777).to.equal(0o700);
    for (const entry of fs.readdirSync(backupDir, { withFileTypes: true, recursive: true })) {
      expect(fs.statSync(path.join(entry.parentPath, entry.name)).mode & 0o777, entry.name).to.equal(entry.isDirectory() ? 0o700 : 0o600);
    }
    // The demo's Open Graph images are media: the backup has them too.
    expect(fs.readdirSync(backupDir).sort()).to.deep.equal(['annals-backup.json', 'events.sqlite', 'keys.sqlite', 'media', 'read-models.sqlite', 'secrets-key', 'session-secret', 'working-copies.sqlite']);
    expect(fs.readdirSync(path.join(backupDir, 'media'), { recursive: true }).filter((name) => String(name).includes('/'))).to.have.length(8);

    const again = await cli(source, ['backup', backupDir, '--json']);
    expect(again.code).to.equal(2);
    expect(JSON.parse(again.stdout).error.code).to.equal('BAD_TARGET');
    const intoSource = await cli(source, ['restore', backupDir, '--json']);
    expect(intoSource.code).to.equal(2);
    expect(intoSource.stderr).to.match(/is not empty: restore only into an empty data folder/);

    // Another process holding the (still empty) target's writer lock: refused at once, nothing written.
    const target = path.join(tempDir(), 'target');
    const held = acquireDataDirLock(target, 'test holder');
    try {
      const busy = await cli(target, ['restore', backupDir, '--json']);
      expect(busy.code).to.equal(1);
      expect(JSON.parse(busy.stdout).error.code).to.equal('DATA_DIR_LOCKED');
      expect(busy.stderr).to.match(/is in use by pid \d+ .*test holder/);
      expect(fs.readdirSync(target)).to.deep.equal(['annals.lock']);
    } finally {
      held.release();
    }

    fs.appendFileSync(path.join(backupDir, 'keys.sqlite'), 'x');
    const fresh = path.join(tempDir(), 'fresh');
    const damaged = await cli(fresh, ['restore', backupDir, '--json']);
    expect(damaged.code).to.equal(1);
    expect(JSON.parse(damaged.stdout).error).to.include({ code: 'BAD_BACKUP' });
    expect(damaged.stderr).to.match(/keys\.sqlite .* is damaged/);
    expect(fs.existsSync(fresh)).to.equal(false);
  });

  it('with EventStoreDB or MongoDB configured, says what to use instead and touches nothing', async () => {
    const result = await cli(tempDir(), ['backup', path.join(tempDir(), 'b'), '--json'], {
      MONGODB_URL: 'mongodb://127.0.0.1:1/annals',
    });
    expect(result.code).to.equal(2);
    expect(JSON.parse(result.stdout).error.code).to.equal('NOT_EMBEDDED');
    expect(result.stderr).to.match(/MongoDB: use mongodump \/ mongorestore/);
  });
});

import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { runEntry, spawnEntry, startServiceProcess, type StartedService } from '../support/child-process.ts';
import { tempDir } from '../support/temp-dir.ts';

/** A service process with ROLES=projector: it listens nowhere; resolves once it says it runs. */
async function startProjectorProcess(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawnEntry('src/main.ts', [], { ...env, ROLES: 'projector' });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the projector process did not start in 30 s\n${output}`)), 30_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('"msg":"annals running"')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`the projector process exited (${code})\n${output}`)));
  });
  return child;
}

describe('split topology: an API-only process (ROLES=api) beside a projector process on one DATA_DIR', function () {
  this.timeout(120_000);
  let projector: ChildProcess | undefined;
  let api: StartedService | undefined;
  let call: (method: string, route: string, body?: unknown) => Promise<{ status: number; body: any }>;

  before(async () => {
    const dataDir = path.join(tempDir(), 'data');
    const bootstrap = await runEntry('src/cli/main.ts', ['bootstrap', '--project', 'Split', '--plan', 'business', '--admin-email', 'split@example.com', '--admin-password', 'correct horse battery staple', '--json'], { DATA_DIR: dataDir });
    expect(bootstrap.code, bootstrap.stderr).to.equal(0);
    const { agentKey } = JSON.parse(bootstrap.stdout) as { agentKey: string };
    projector = await startProjectorProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    api = await startServiceProcess({ DATA_DIR: dataDir, ROLES: 'api' });
    call = async (method, route, body) => {
      const response = await fetch(`${api!.url}/admin/v1${route}`, {
        method,
        headers: { authorization: `Bearer ${agentKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : null };
    };
    // The projector process folds the bootstrap (the agent key) first.
    const deadline = Date.now() + 30_000;
    while ((await call('GET', '/form-sets')).status !== 200) {
      if (Date.now() > deadline) throw new Error('the API process never accepted the agent key: the projector process did not fold the bootstrap');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  after(async () => {
    await api?.stop();
    if (projector && projector.exitCode === null) {
      const exited = new Promise((resolve) => projector!.once('exit', resolve));
      projector.kill('SIGTERM');
      await exited;
    }
  });

  it('answers a save once the projector process has folded it, in well under the 0.3 s a wait for every projection took, and the next read sees it', async () => {
    const formSet = await call('POST', '/form-sets', { slug: 'articles', name: 'Articles', fields: [{ key: 'title', type: 'text', label: 'Title' }] });
    expect(formSet.status, JSON.stringify(formSet.body)).to.equal(201);
    // Read your writes across processes: the form set's list shows it at once.
    expect((await call('GET', '/form-sets')).body.items.map((f: { slug: string }) => f.slug)).to.deep.equal(['articles']);
    const created = await call('POST', `/form-sets/${formSet.body.id}/entries`, { slug: 'first', fields: { title: 'First' } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const entryId = created.body.entry.id as string;
    const took: number[] = [];
    for (let i = 1; i <= 15; i++) {
      const started = performance.now();
      const saved = await call('POST', `/entries/${entryId}/revisions`, { fields: { title: `First, version ${i + 1}` } });
      took.push(performance.now() - started);
      expect(saved.status, JSON.stringify(saved.body)).to.equal(201);
      const read = await call('GET', `/entries/${entryId}`);
      expect(read.body.latestRevision.revisionId, `the read after save ${i}`).to.equal(saved.body.id);
      expect(read.body.title).to.equal(`First, version ${i + 1}`);
      expect(read.body.revisionCount).to.equal(i + 1);
    }
    took.sort((a, b) => a - b);
    // Typically ~10-20 ms here; lenient for a loaded machine, yet far below a wait on projections that do not
    // handle a save (they store their progress only every second now: ~0.5 s on average).
    expect(took[Math.floor(took.length / 2)], `save times ${took.map((t) => t.toFixed(1)).join(', ')} ms`).to.be.below(150);
  });
});

import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { tempDir } from '../support/temp-dir.ts';
import { runEntry, spawnEntry, startServiceProcess } from '../support/child-process.ts';
import { freePort as closedPort } from '../support/ports.ts';

describe('service: start, health and shutdown (npm start)', function () {
  this.timeout(60_000);

  it('starts on the embedded default with its data under DATA_DIR, answers /healthz and /readyz, and stops cleanly on SIGTERM', async () => {
    const dataDir = path.join(tempDir(), 'data');
    const service = await startServiceProcess({ DATA_DIR: dataDir });
    const health = await fetch(`${service.url}/healthz`);
    expect(health.status).to.equal(200);
    expect(await health.json()).to.deep.equal({ status: 'ok' });
    const ready = await fetch(`${service.url}/readyz`);
    const readiness = (await ready.json()) as { ready: boolean; checks: Record<string, { ok: boolean }> };
    expect(ready.status, JSON.stringify(readiness)).to.equal(200);
    expect(Object.keys(readiness.checks)).to.include.members(['event-store', 'read-models', 'projection:audit-trail', 'projection:access']);
    const missing = await fetch(`${service.url}/no-such-route`);
    expect(missing.status).to.equal(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).to.equal('NOT_FOUND');
    expect(fs.readdirSync(dataDir).sort()).to.include.members(['events.sqlite', 'read-models.sqlite']);

    const finished = await service.stop('SIGTERM');
    expect(finished.code).to.equal(0);
    const messages = service.logs().map((l) => l['msg']);
    expect(messages).to.include('stopped cleanly');
    // Structured JSON logs: every line parsed, with level and time.
    for (const line of service.logs()) expect(line).to.have.property('level');
  });

  it('a SIGTERM sent while it starts stops it cleanly once started (exit 0, the data folder free for the next start), not by the signal', async () => {
    const dataDir = path.join(tempDir(), 'data');
    const child = spawnEntry('src/main.ts', [], { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' });
    let stdout = '';
    let signalled = false;
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      // The stores are open, the listener not yet bound: the start is half done.
      if (!signalled && stdout.includes('"msg":"stores open"')) {
        signalled = true;
        child.kill('SIGTERM');
      }
    });
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])));
    expect(signalled, stdout).to.equal(true);
    expect({ code, signal }, stdout).to.deep.equal({ code: 0, signal: null });
    expect(stdout).to.match(/"msg":"shutting down[^\n]*\n(.*\n)*.*"msg":"stopped cleanly"/);
    const next = await startServiceProcess({ DATA_DIR: dataDir });
    expect((await fetch(`${next.url}/readyz`)).status).to.equal(200);
    expect((await next.stop('SIGTERM')).code).to.equal(0);
  });

  it('exits 2 with one line naming a bad setting, the problem and what is allowed', async () => {
    const result = await runEntry('src/main.ts', [], { PORT: 'eighty', DATA_DIR: tempDir() });
    expect(result.code).to.equal(2);
    expect(result.stderr.trim().split('\n')).to.have.length(1);
    expect(result.stderr).to.match(/PORT="eighty": not a whole number; allowed: a port number from 0 to 65535/);
  });

  it('refuses a corrupt event store file with a clear message and leaves it untouched', async () => {
    const dataDir = tempDir();
    const file = path.join(dataDir, 'events.sqlite');
    const garbage = Buffer.alloc(16384, 0x5a);
    fs.writeFileSync(file, garbage);
    const result = await runEntry('src/main.ts', [], { DATA_DIR: dataDir, PORT: '0' });
    expect(result.code).to.equal(1);
    expect(result.stderr).to.match(/cannot start: event store \(SQLite .*events\.sqlite\) unavailable: .*not a SQLite database/);
    expect(fs.readFileSync(file).equals(garbage)).to.equal(true);
    expect(fs.existsSync(path.join(dataDir, 'read-models.sqlite'))).to.equal(false);
  });

  it('refuses a data folder it cannot write, with a clear message', async () => {
    const blocker = path.join(tempDir(), 'not-a-folder');
    fs.writeFileSync(blocker, '');
    const result = await runEntry('src/main.ts', [], { DATA_DIR: path.join(blocker, 'data'), PORT: '0' });
    expect(result.code).to.equal(1);
    expect(result.stderr).to.match(/cannot start: cannot create the data folder .*\/not-a-folder\/data: ENOTDIR/);
  });

  it('exits 1 when EventStoreDB is unreachable, naming it without credentials', async () => {
    const port = await closedPort();
    const result = await runEntry('src/main.ts', [], {
      DATA_DIR: tempDir(), PORT: '0',
      EVENTSTORE_CONNECTION_STRING: `esdb://admin:hunter2@127.0.0.1:${port}?tls=false`,
      SESSION_SECRET: 'a-session-secret-of-at-least-32-characters',
      SECRETS_KEY: Buffer.alloc(32, 1).toString('base64'),
    });
    expect(result.code).to.equal(1);
    expect(result.stderr).to.match(/cannot start: event store \(EventStoreDB esdb:\/\/\*\*\*@127\.0\.0\.1:\d+\?tls=false\) unavailable/);
    expect(result.stderr + result.stdout).not.to.include('hunter2');
  });

  it('exits 1 when MongoDB is unreachable, naming it without credentials, with the event store left intact', async () => {
    const port = await closedPort();
    const dataDir = tempDir();
    const result = await runEntry('src/main.ts', [], {
      DATA_DIR: dataDir, PORT: '0',
      MONGODB_URL: `mongodb://reader:s3cr3t@127.0.0.1:${port}/annals?serverSelectionTimeoutMS=500`,
    });
    expect(result.code).to.equal(1);
    expect(result.stderr).to.match(/cannot start: read models \(MongoDB mongodb:\/\/\*\*\*@127\.0\.0\.1:\d+\/annals.*\) unavailable/);
    expect(result.stderr + result.stdout).not.to.include('s3cr3t');
  });

  it('exits 1 when the port is taken', async () => {
    const server = net.createServer().listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const result = await runEntry('src/main.ts', [], { DATA_DIR: tempDir(), PORT: String(port), HOST: '127.0.0.1' });
      expect(result.code).to.equal(1);
      expect(result.stderr).to.match(/cannot start: .*EADDRINUSE|address already in use/i);
    } finally {
      server.close();
    }
  });
});


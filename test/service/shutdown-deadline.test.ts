import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { shutdownOnSignals } from '../../src/service/shutdown.ts';
import { captureLogger } from '../http/support.ts';
import { entryArgs, runEntry } from '../support/child-process.ts';
import { freePort } from '../support/ports.ts';
import { rawRequest } from '../support/raw-http.ts';
import { tempDir } from '../support/temp-dir.ts';
import { eventually } from '../support/eventually.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Issue 12: SIGTERM ends the process within SHUTDOWN_DEADLINE_MS, whatever it is waiting for. */
describe('service: shutdown with a hard deadline', function () {
  this.timeout(180_000);

  describe('the shutdown sequence', () => {
    const run = (stop: (progress: (step: string) => void) => Promise<void>, deadlineMs = 300, repeatWindowMs?: number) => {
      const log = captureLogger('info');
      const exits: Array<{ code: number; flushed: boolean; at: number }> = [];
      const started = Date.now();
      const shutdown = shutdownOnSignals({ stop, logger: log.logger, deadlineMs, flushMs: 200, ...(repeatWindowMs === undefined ? {} : { repeatWindowMs }), exit: (code, flushed) => exits.push({ code, flushed, at: Date.now() - started }) });
      return { log, exits, shutdown };
    };
    const until = (condition: () => boolean, ms = 5000) => eventually(condition, Boolean, ms, 'condition', 10);

    it('exits 0 once the service has stopped', async () => {
      const { exits, shutdown, log } = run(async (progress) => {
        progress('the stores to close');
      });
      shutdown.onSignal('SIGTERM');
      await until(() => exits.length > 0);
      expect(exits).to.have.length(1);
      expect(exits[0]).to.include({ code: 0, flushed: true });
      expect(log.lines().map((l) => l['msg'])).to.include('stopped cleanly');
    });

    it('at the deadline logs the step it was still waiting for and exits 1', async () => {
      const { exits, shutdown, log } = run((progress) => {
        progress('the HTTP server to drain in-flight requests');
        progress('the projectors to stop at a checkpoint');
        return new Promise(() => undefined);
      });
      shutdown.onSignal('SIGTERM');
      await until(() => exits.length > 0);
      expect(exits[0]!.code).to.equal(1);
      expect(exits[0]!.at).to.be.within(250, 2000);
      const line = log.lines().find((l) => String(l['msg']).startsWith('shutdown deadline'));
      expect(line, log.text()).to.include({ waitingFor: 'the projectors to stop at a checkpoint', deadlineMs: 300, level: 'error' });
    });

    it('a second signal exits 1 at once, naming what it was waiting for; the same signal delivered twice does not', async () => {
      const { exits, shutdown, log } = run((progress) => {
        progress('the webhook dispatcher to finish its deliveries');
        return new Promise(() => undefined);
      }, 60_000, 80);
      shutdown.onSignal('SIGTERM');
      shutdown.onSignal('SIGINT'); // Ctrl-C under npm start: from the terminal and from npm, at once
      // A second signal taken as such logs at once (and ends once the log is drained): neither happens.
      expect(log.lines().map((l) => l['msg'])).to.not.include('second signal: exiting now');
      // Past the repeat window (80 ms here, 1 s by default), a signal is a second one.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(exits).to.deep.equal([]);
      expect(log.lines().map((l) => l['msg'])).to.not.include('second signal: exiting now');
      shutdown.onSignal('SIGINT');
      await until(() => exits.length > 0);
      expect(exits[0]!.code).to.equal(1);
      expect(log.lines().find((l) => l['msg'] === 'second signal: exiting now')).to.include({ waitingFor: 'the webhook dispatcher to finish its deliveries' });
    });
  });

  describe('the service process, its stdout read by nobody, after hostile loads', () => {
    const DEADLINE_MS = 5000;
    let dataDir: string;
    let agentKey: string;
    let projectId: string;
    before(async () => {
      dataDir = path.join(tempDir(), 'data');
      const boot = await runEntry('src/cli/main.ts', ['bootstrap', '--project', 'Shutdown', '--plan', 'business', '--admin-email', 'down@example.com', '--admin-password', 'correct horse battery staple'], { DATA_DIR: dataDir, ANNALS_ADMIN_PASSWORD: '' });
      expect(boot.code, boot.stderr).to.equal(0);
      ({ agentKey, projectId } = JSON.parse(boot.stdout) as { agentKey: string; projectId: string });
    });

    /** `npm start` with stdout to a pipe this test never reads: once it is full, every log write waits. */
    async function start(): Promise<{ url: string; child: ChildProcess; exited: Promise<{ code: number | null; signal: string | null }> }> {
      const port = await freePort();
      const { EVENTSTORE_CONNECTION_STRING: _e, MONGODB_URL: _m, ...inherited } = process.env;
      const child = spawn(process.execPath, entryArgs('src/main.ts'), {
        cwd: ROOT,
        env: { ...inherited, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', SHUTDOWN_GRACE_MS: '2000', SHUTDOWN_DEADLINE_MS: String(DEADLINE_MS) },
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      child.stdout!.pause();
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
      const url = `http://127.0.0.1:${port}`;
      for (let i = 0; i < 300; i++) {
        try {
          if ((await fetch(`${url}/healthz`)).status === 200) return { url, child, exited };
        } catch {
          // not listening yet
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      child.kill('SIGKILL');
      throw new Error('the service did not start');
    }

    async function expectExitWithinDeadline(service: { child: ChildProcess; exited: Promise<{ code: number | null; signal: string | null }> }): Promise<void> {
      const signalled = Date.now();
      service.child.kill('SIGTERM');
      const outcome = await Promise.race([service.exited, new Promise<'alive'>((resolve) => setTimeout(() => resolve('alive'), DEADLINE_MS + 5000))]);
      if (outcome === 'alive') service.child.kill('SIGKILL');
      expect(outcome, `still running ${DEADLINE_MS + 5000} ms after SIGTERM`).to.not.equal('alive');
      expect((outcome as { code: number | null }).code).to.be.oneOf([0, 1]);
      expect(Date.now() - signalled).to.be.below(DEADLINE_MS + 5000);
    }

    const parallel = async (count: number, concurrency: number, one: (i: number) => Promise<unknown>) => {
      let next = 0;
      await Promise.all(Array.from({ length: concurrency }, async () => {
        while (next < count) await one(next++).catch(() => undefined);
      }));
    };

    it('after odd-case paths, bad encodings, parallel idempotent creates and deep JSON', async () => {
      const service = await start();
      const auth = { authorization: `Bearer ${agentKey}` };
      await parallel(300, 8, (i) => rawRequest(service.url, 'GET', i % 2 ? '/ADMIN/V1/FORM-SETS' : `/PUBLIC/P/${projectId}/V1/llms.txt`, { headers: auth, timeoutMs: 3000 }));
      await parallel(200, 8, () => rawRequest(service.url, 'POST', '/admin/v1/auth/login', { headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync('{"email":"a@b.c","password":"x"}').subarray(0, 12), timeoutMs: 3000 }));
      const created = await rawRequest(service.url, 'POST', '/admin/v1/form-sets', { headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ slug: 'posts', name: 'Posts', fields: [{ key: 'title', type: 'text', label: 'Title', required: true }] }) });
      const formSetId = (created.json as { id: string }).id;
      await parallel(20, 20, () => rawRequest(service.url, 'POST', `/admin/v1/form-sets/${formSetId}/entries`, { headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': 'same-key' }, body: JSON.stringify({ slug: 'once', fields: { title: 'Once' } }), timeoutMs: 10_000 }));
      await parallel(50, 8, () => rawRequest(service.url, 'POST', `/admin/v1/form-sets/${formSetId}/entries`, { headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': `deep-${Math.random()}` }, body: `{"slug":"deep","fields":{"title":${'['.repeat(5000)}${']'.repeat(5000)}}}`, timeoutMs: 3000 }));
      await expectExitWithinDeadline(service);
    });

    it('after 1,000 distinct long URLs', async () => {
      const service = await start();
      const pad = 'p'.repeat(3000);
      // 1,000 request lines of over a kilobyte each (the logged path is cut at 1,024 characters), a megabyte of log:
      // many times what the pipe and this side's stream buffer take, so at the signal the service's log is backed
      // up (checked below), what made it hang at exit. More requests only back it up further.
      await parallel(1000, 16, (i) => rawRequest(service.url, 'GET', `/public/p/${projectId}/v1/master-entities?n=${i}&pad=${pad}`, { timeoutMs: 3000 }));
      const stdout = service.child.stdout!;
      await eventually(() => stdout.readableLength, (buffered) => buffered >= stdout.readableHighWaterMark, 30_000, 'the log backed up in the pipe nobody reads');
      await expectExitWithinDeadline(service);
    });

    it('in the middle of a flood of long URLs', async () => {
      const service = await start();
      const pad = 'q'.repeat(3000);
      let stop = false;
      let sent = 0;
      let answered = 0;
      const flood = Promise.all(Array.from({ length: 16 }, async () => {
        while (!stop) await rawRequest(service.url, 'GET', `/public/p/${projectId}/v1/master-entities?n=${sent++}&pad=${pad}`, { timeoutMs: 3000 }).then(() => answered++, () => undefined);
      }));
      // In the middle of it: a few rounds of the 16 connections answered, and the log backed up in the pipe nobody reads.
      const stdout = service.child.stdout!;
      await eventually(() => ({ answered, buffered: stdout.readableLength }), (x) => x.answered >= 64 && x.buffered >= stdout.readableHighWaterMark, 30_000, 'answers to the flood, with the log backed up');
      try {
        await expectExitWithinDeadline(service);
      } finally {
        stop = true;
        await flood;
      }
    });
  });
});

import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { compiledBuild, PROJECT_ROOT } from '../support/compiled-build.ts';
import { tempDir } from '../support/temp-dir.ts';

/** `npm start` as an operator runs it: npm, then the compiled service (dist/) in place of npm's shell. */
interface NpmStart {
  npm: ChildProcess;
  url: string;
  /** The service's own pid, from its log lines. */
  servicePid: number;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const servicePids: number[] = [];

async function npmStart(env: Record<string, string>, options: { detached?: boolean } = {}): Promise<NpmStart> {
  const { EVENTSTORE_CONNECTION_STRING: _e, MONGODB_URL: _m, ...inherited } = process.env;
  const npm = spawn('npm', ['start'], {
    cwd: PROJECT_ROOT,
    env: { ...inherited, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  let output = '';
  npm.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  npm.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => npm.on('exit', (code, signal) => resolve({ code, signal })));
  const listening = await new Promise<{ url: string; pid: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not listen in 30 s\n${output}`)), 30_000);
    const look = () => {
      const line = output.split('\n').find((l) => l.includes('"msg":"annals listening"'));
      if (!line) return;
      clearTimeout(timer);
      const parsed = JSON.parse(line) as { url: string; pid: number };
      resolve({ url: parsed.url, pid: parsed.pid });
    };
    npm.stdout!.on('data', look);
    void exited.then(() => reject(new Error(`npm start exited before listening\n${output}`)));
  });
  servicePids.push(listening.pid);
  return { npm, url: listening.url, servicePid: listening.pid, output: () => output, exited };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function refused(url: string): Promise<boolean> {
  try {
    await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
    return false;
  } catch {
    return true;
  }
}

describe('npm start: the compiled service, stopped by signals sent to npm', function () {
  this.timeout(90_000);
  before(() => compiledBuild());
  // A failed test must not leave a service behind.
  afterEach(() => {
    for (const pid of servicePids.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
  });

  it('runs node on the compiled output (no tsx), and SIGTERM sent to the npm process stops the server cleanly', async () => {
    const started = await npmStart({ DATA_DIR: path.join(tempDir(), 'data') });
    expect((await fetch(`${started.url}/healthz`)).status).to.equal(200);
    // npm's child is the service itself: its shell was replaced by node (exec), so signals reach it.
    expect(parentOf(started.servicePid)).to.equal(started.npm.pid);
    started.npm.kill('SIGTERM');
    const exit = await started.exited;
    expect(exit.code, started.output()).to.equal(0);
    expect(started.output()).to.include('"msg":"stopped cleanly"');
    expect(alive(started.servicePid), 'the service process is gone').to.equal(false);
    expect(await refused(started.url)).to.equal(true);
  });

  it('Ctrl-C in a terminal (SIGINT to npm and the service at once) is one request: a clean stop, not an abrupt exit', async () => {
    const started = await npmStart({ DATA_DIR: path.join(tempDir(), 'data') }, { detached: true });
    process.kill(-started.npm.pid!, 'SIGINT');
    const exit = await started.exited;
    expect(started.output()).to.include('"msg":"stopped cleanly"');
    expect(started.output()).not.to.include('second signal');
    expect(exit.code, started.output()).to.equal(0);
    expect(alive(started.servicePid)).to.equal(false);
  });

  it('a second signal, a second or more after the first, exits at once instead of waiting out the grace period', async () => {
    const started = await npmStart({ DATA_DIR: path.join(tempDir(), 'data'), SHUTDOWN_GRACE_MS: '60000' });
    // A request still arriving (its body half sent) holds the drain open for the whole grace period.
    const url = new URL(started.url);
    const socket = net.connect(Number(url.port), url.hostname);
    await new Promise((r) => socket.once('connect', r));
    socket.write('POST /public/v1/contact-forms/x/submit HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a"');
    await new Promise((r) => setTimeout(r, 200));
    process.kill(started.servicePid, 'SIGTERM');
    await new Promise((r) => setTimeout(r, 1500));
    expect(alive(started.servicePid), 'still draining after the first signal').to.equal(true);
    const second = Date.now();
    process.kill(started.servicePid, 'SIGTERM');
    const exit = await started.exited;
    socket.destroy();
    expect(Date.now() - second).to.be.below(5000);
    expect(exit.code).to.equal(1);
    expect(started.output()).to.include('second signal: exiting now');
  });
});

/** The parent pid of a process, from /proc. */
function parentOf(pid: number): number {
  // /proc/<pid>/stat: "pid (comm) state ppid ...", comm in parentheses may hold spaces.
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

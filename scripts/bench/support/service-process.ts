/**
 * The service under a benchmark, in its own process as `npm run dev` runs it: the demo project seeded into a
 * temporary DATA_DIR, `src/main.ts` of a checkout (this one, or another for before/after figures) started on a
 * free port, and its resident set size read from /proc (Linux only).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface BenchService {
  url: string;
  child: ChildProcess;
  /** The demo project's public base pinned to its id (`/public/p/{projectId}/v1`), without the origin. */
  publicPath: string;
}

function runTsx(serviceRoot: string, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: serviceRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')} exited ${code}: ${err}`))));
  });
}

/**
 * Seeds the demo into a new temporary DATA_DIR and starts the service of `serviceRoot` on it, with `env`
 * added to its environment. Its request log is read and dropped; the service is killed when this process exits.
 */
export async function startDemoService(serviceRoot: string, env: Record<string, string> = {}, say: (line: string) => void = () => undefined): Promise<BenchService> {
  const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'annals-bench-')), 'data');
  say(`seeding the demo into ${dataDir} (service from ${serviceRoot})`);
  const demo = JSON.parse(await runTsx(serviceRoot, [path.join(serviceRoot, 'src/cli/main.ts'), 'demo'], { DATA_DIR: dataDir })) as { projectId: string };
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(serviceRoot, 'src/main.ts')], {
    cwd: serviceRoot,
    env: { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.once('exit', () => child.kill('SIGKILL'));
  const url = await listeningUrl(child);
  return { url, child, publicPath: `/public/p/${demo.projectId}/v1` };
}

/**
 * The URL a service started with its stdout piped (and LOG_LEVEL info) listens on, from its `annals listening`
 * log line; its later lines (requests) are read and dropped. Rejects when it exits first.
 */
export function listeningUrl(child: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let text = '';
    const onData = (d: Buffer) => {
      text += d.toString();
      const match = /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"annals listening"/.exec(text);
      if (match) {
        child.stdout!.off('data', onData);
        child.stdout!.resume(); // request lines are read and dropped
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`service exited (${code}) before listening`)));
  });
}

/** Stops the service with SIGTERM and waits for it to exit. */
export async function stopService(service: BenchService): Promise<void> {
  if (service.child.exitCode !== null) return;
  const exited = new Promise((r) => service.child.once('exit', r));
  service.child.kill('SIGTERM');
  await exited;
}

/** The resident set size of process `pid` in bytes (VmRSS), 0 once it has gone. */
export function rssBytes(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+)\s+kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

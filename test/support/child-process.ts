import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { compiledBuild, compiledPathOf } from './compiled-build.ts';
import { compiledTestProgram } from './compiled-test-program.ts';

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Runs a TypeScript entry point of the project (src/main.ts, src/cli/main.ts) in a child process. */
export function runEntry(entry: string, args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<Finished> {
  return finished(spawnEntry(entry, args, env), `${entry} ${args.join(' ')}`, timeoutMs);
}

/**
 * Runs a program (`npm`, `npx`, node with a package bin) in the project folder (or `cwd`), with the test's
 * environment minus the production store settings, as an operator's shell would.
 */
export function runProgram(command: string, args: string[], env: Record<string, string>, timeoutMs = 60_000, cwd = ROOT): Promise<Finished> {
  const { EVENTSTORE_CONNECTION_STRING: _e, MONGODB_URL: _m, ...rest } = process.env;
  // Nor npm's own variables (npm_config_*, npm_lifecycle_*, ...), which `npm test` gives the tests: with them,
  // `npx annals` took the checkout for a package to install and ran its prepare script, rewriting dist/ under
  // every other test (2026-12-07, caught by a watch on dist/ printing the process tree). A shell has none.
  const inherited = Object.fromEntries(Object.entries(rest).filter(([name]) => !name.toLowerCase().startsWith('npm_')));
  const child = spawn(command, args, { cwd, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return finished(child, `${command} ${args.join(' ')}`, timeoutMs);
}

function finished(child: ChildProcess, what: string, timeoutMs: number): Promise<Finished> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what} did not finish in ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    // 'close', not 'exit': the output is complete only once the streams have closed.
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/**
 * Starts an entry point in a child process. The project's own (`src/main.ts`, `src/cli/main.ts`) run
 * compiled, as `npm start` and the bins do, from a dist/ brought up to date with the sources first
 * (compiled-build.ts): a start costs ~0.7 s less CPU than through tsx's loader, and the suite starts a few
 * hundred. Test programs (under `test/`) run compiled too (compiled-test-program.ts).
 */
export function spawnEntry(entry: string, args: string[], env: Record<string, string>): ChildProcess {
  const { EVENTSTORE_CONNECTION_STRING: _e, MONGODB_URL: _m, ...inherited } = process.env;
  return spawn(process.execPath, [...entryArgs(entry), ...args], {
    cwd: ROOT,
    env: { ...inherited, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** The node arguments that run an entry point (of src/ or a test program under test/), compiled. */
export function entryArgs(entry: string): string[] {
  if (!entry.startsWith('src/')) return ['--enable-source-maps', compiledTestProgram(entry)];
  compiledBuild();
  return [compiledPathOf(entry)];
}

/** A running service started as `npm start` would, on a free port. */
export interface StartedService {
  url: string;
  child: ChildProcess;
  logs: () => Array<Record<string, unknown>>;
  stop(signal?: NodeJS.Signals): Promise<Finished>;
}

/**
 * `keepRequestLogs: false` drops the one-line-per-request log lines from what `logs()` and the exit report hold
 * (load tests send tens of thousands of requests; their lines would only fill the test runner's memory).
 */
export async function startServiceProcess(env: Record<string, string>, timeoutMs = 30_000, options: { keepRequestLogs?: boolean } = {}): Promise<StartedService> {
  const child = spawnEntry('src/main.ts', [], { PORT: '0', HOST: '127.0.0.1', ...env });
  let stdout = '';
  let partial = '';
  const keep = (text: string): string => {
    if (options.keepRequestLogs !== false) return text;
    const lines = (partial + text).split('\n');
    partial = lines.pop()!;
    return lines.filter((line) => !line.includes('"msg":"request"')).map((line) => `${line}\n`).join('');
  };
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<Finished>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start in ${timeoutMs} ms\n${stdout}\n${stderr}`)), timeoutMs);
    child.stdout!.on('data', (d: Buffer) => {
      stdout += keep(d.toString());
      const match = /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"annals listening"/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.on('exit', () => reject(new Error(`service exited before listening\n${stdout}\n${stderr}`)));
  });
  return {
    url,
    child,
    logs: () => stdout.split('\n').filter(Boolean).flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    }),
    stop: (signal = 'SIGTERM') => {
      child.kill(signal);
      return exited;
    },
  };
}

import type { ChildProcess } from 'node:child_process';
import { spawnEntry } from './child-process.ts';

/**
 * The service of test/contact-forms/crash-child.ts, whose mail transport never returns after handing a message
 * over (it prints `SENT <Message-ID>`): resolves with its URL; `sent` collects the Message-IDs handed over.
 * Kill it with `kill` (SIGKILL) to crash exactly between send and record.
 */
export async function startCrashingService(env: Record<string, string>): Promise<{ url: string; child: ChildProcess; sent: string[] }> {
  const child = spawnEntry('test/contact-forms/crash-child.ts', [], { PORT: '0', HOST: '127.0.0.1', ...env });
  const sent: string[] = [];
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`crash child did not start\n${stdout}\n${stderr}`)), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      for (const m of d.toString().matchAll(/^SENT (<[^>]+>)$/gm)) sent.push(m[1]!);
      const match = /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"annals listening"/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.on('exit', () => reject(new Error(`crash child exited\n${stdout}\n${stderr}`)));
  });
  return { url, child, sent };
}

/** SIGKILL, and wait for the process to be gone. */
export async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}

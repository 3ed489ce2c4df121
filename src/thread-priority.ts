/**
 * A thread's own CPU priority. On Linux every thread is a task with a niceness of its own (setpriority on its
 * thread id), so a worker thread doing derived, catch-up work (the log tree's hashing) can yield the cores to
 * the threads that serve requests and commit writes, and still use every idle cycle: a niceness of 10 gets
 * about a tenth of the CPU time of a thread at 0 while both want it, and all of it when nothing else does.
 * Elsewhere threads share their process's priority and this does nothing.
 */
import fs from 'node:fs';
import os from 'node:os';

/**
 * Lowers the calling thread's priority to `niceness` (never raises it: an unprivileged process may not).
 * Answers the thread's niceness afterwards, or null where a thread has no priority of its own or it could not
 * be read (not Linux, no /proc).
 */
export function lowerThisThreadPriority(niceness: number): number | null {
  const tid = thisThreadId();
  if (tid === null) return null;
  try {
    if (os.getPriority(tid) < niceness) os.setPriority(tid, niceness);
    return os.getPriority(tid);
  } catch {
    return null;
  }
}

/** The kernel's id of the calling thread (Linux), from /proc/thread-self: `<pid>/task/<tid>`. */
export function thisThreadId(): number | null {
  if (process.platform !== 'linux') return null;
  try {
    const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isSafeInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null;
  }
}

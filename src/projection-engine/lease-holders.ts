/**
 * Projector lease holders: the name a projector holds a generation's lease under, and whether a holder is a
 * process of this host that is gone (its lease taken over at once).
 */
import os from 'node:os';
import { randomUUID } from 'node:crypto';

/** Tells this process apart from an earlier one with the same pid (a restarted container's pid 1). */
const INCARNATION = randomUUID().slice(0, 8);
let projectorsMade = 0;

/** A lease holder name: host, pid, this process's incarnation, and a number per projector. */
export function leaseHolderName(): string {
  projectorsMade += 1;
  return `${os.hostname()}:${process.pid}:${INCARNATION}:${projectorsMade}`;
}

/**
 * A holder (named by leaseHolderName) that was a process on this host that no longer runs: the same host and
 * a pid that is not alive, or this very pid in another incarnation (as in a container whose process is
 * always pid 1).
 */
export function isDeadLocalHolder(holder: string, self: string): boolean {
  const [host, pidText, incarnation] = holder.split(':');
  const [selfHost, selfPid, selfIncarnation] = self.split(':');
  if (host !== selfHost || !pidText || !/^\d+$/.test(pidText) || incarnation === undefined) return false;
  if (pidText === selfPid) return incarnation !== selfIncarnation;
  try {
    process.kill(Number(pidText), 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Faults a test asks the stand-in to show on its next calls, named by what the server would be going through,
 * not by a status code: each service answers a fault the way KurrentDB answers that condition on that call
 * (Append with a gRPC error, BatchAppend in the response's own status, reads with an error status).
 *
 * - 'access-denied': the caller may not do this (PERMISSION_DENIED, exception "access-denied");
 * - 'not-ready': the node is starting or shutting down (UNAVAILABLE "Server Is Not Ready");
 * - 'timeout': the write did not commit in time (Append: ABORTED "Operation timed out"; BatchAppend: a Timeout
 *   status in the response);
 * - 'not-leader': the node is a follower and the call required the leader (exception "not-leader" naming it);
 * - 'stall': the node answers only after `ms` (a slow disk, a long GC pause); the call then proceeds.
 */
export type Operation = 'append' | 'read-stream' | 'read-all' | 'subscribe' | 'delete' | 'tombstone' | 'server-features';

export type Fault =
  | { kind: 'access-denied' }
  | { kind: 'not-ready' }
  | { kind: 'timeout' }
  | { kind: 'not-leader'; host: string; port: number }
  | { kind: 'stall'; ms: number };

interface Planned {
  fault: Fault;
  remaining: number;
}

export class Faults {
  readonly #planned = new Map<Operation, Planned[]>();

  /** The next `times` calls of `operation` meet `fault` (after any planned before it). */
  next(operation: Operation, fault: Fault, times = 1): void {
    const list = this.#planned.get(operation) ?? [];
    list.push({ fault, remaining: times });
    this.#planned.set(operation, list);
  }

  /** The fault this call of `operation` meets, if any (used up by the call). */
  take(operation: Operation): Fault | undefined {
    const list = this.#planned.get(operation);
    const planned = list?.[0];
    if (!planned) return undefined;
    planned.remaining -= 1;
    if (planned.remaining <= 0) list!.shift();
    return planned.fault;
  }

  clear(): void {
    this.#planned.clear();
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

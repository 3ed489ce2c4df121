/**
 * The test kit's one way to wait for something that happens soon after an action (a projection folding, a
 * file appearing, a process exiting): poll, then fail with what was last seen. Time-dependent behaviour (expiry,
 * scheduling) takes an injected clock instead, never a wait.
 */

const describeValue = (value: unknown) => JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? v.toString() : v)) ?? String(value);

/**
 * Calls `probe` every `everyMs` until `accept` holds for its value (by default: a truthy value), and answers that
 * value; after `timeoutMs` fails naming `what` and the last value.
 */
export async function eventually<T>(probe: () => T | Promise<T>, accept: (value: T) => boolean = Boolean, timeoutMs = 5000, what = 'condition', everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T;
  for (;;) {
    last = await probe();
    if (accept(last)) return last;
    if (Date.now() >= deadline) throw new Error(`${what} not met in ${timeoutMs} ms; last value: ${describeValue(last)}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Retries an assertion until it passes; after `timeoutMs` throws its last failure (with chai's diff). */
export async function eventuallyPasses(assertion: () => void | Promise<void>, timeoutMs = 5000, everyMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await assertion();
      return;
    } catch (error) {
      if (Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  }
}

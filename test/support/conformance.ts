/**
 * Conformance suites are written once and run against every adapter. An adapter whose server is missing
 * passes `pending` with the reason: mocha then lists each test as pending under a title naming the reason.
 */
export interface AdapterHarness<T> {
  /** A fresh, empty adapter instance (its own database, file or namespace). */
  create(): Promise<T>;
  /** Runs once after the suite: stop containers, remove files. */
  teardown?(): Promise<void>;
  /** Runs once before the suite: start containers. */
  setup?(): Promise<void>;
}

export type HarnessOrPending<T> = AdapterHarness<T> | { pending: string };

export function isPending<T>(h: HarnessOrPending<T>): h is { pending: string } {
  return 'pending' in h;
}

/**
 * Declares a conformance suite: `body` receives `test`, which is mocha's `it` when the adapter can run
 * and a declaration of a pending test otherwise, and `adapter()`, the harness.
 */
export function conformanceSuite<T>(
  suiteTitle: string,
  harness: HarnessOrPending<T>,
  body: (api: { test: (title: string, fn: () => Promise<void>) => void; harness: () => AdapterHarness<T> }) => void,
): void {
  const title = isPending(harness) ? `${suiteTitle} [pending: ${harness.pending}]` : suiteTitle;
  describe(title, function () {
    if (!isPending(harness)) {
      before(async function () {
        this.timeout(180_000);
        await harness.setup?.();
      });
      after(async function () {
        this.timeout(60_000);
        await harness.teardown?.();
      });
    }
    body({
      test: (testTitle, fn) => (isPending(harness) ? it(testTitle) : it(testTitle, fn)),
      harness: () => {
        if (isPending(harness)) throw new Error('pending harness has no adapter');
        return harness;
      },
    });
  });
}

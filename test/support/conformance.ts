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
  /**
   * Why the adapter's server cannot do `feature` (a test peer that lacks it, say FerretDB and text indexes),
   * or undefined: tests needing it are then pending with that reason, for that server only. After setup.
   */
  lacks?(feature: string): string | undefined;
}

export type HarnessOrPending<T> = AdapterHarness<T> | { pending: string };

export function isPending<T>(h: HarnessOrPending<T>): h is { pending: string } {
  return 'pending' in h;
}

/**
 * Declares a conformance suite: `body` receives `test`, which is mocha's `it` when the adapter can run
 * and a declaration of a pending test otherwise, and `adapter()`, the harness.
 */
/**
 * Call first in a test (or a `before` hook, for every test of its describe) that needs `feature`: when the
 * harness's server lacks it, the test is pending, its title naming the reason.
 */
export function needsFeature<T>(context: Mocha.Context, harness: AdapterHarness<T>, feature: string, scope: 'test' | 'describe' = 'test'): void {
  const reason = harness.lacks?.(feature);
  if (reason === undefined) return;
  const tests = scope === 'describe' ? (context.test!.parent?.tests ?? []) : [context.test!];
  for (const test of tests) if (!test.title.includes('[pending:')) test.title += ` [pending: ${reason}]`;
  context.skip();
}

export function conformanceSuite<T>(
  suiteTitle: string,
  harness: HarnessOrPending<T>,
  body: (api: { test: (title: string, fn: (this: Mocha.Context) => Promise<void>) => void; harness: () => AdapterHarness<T> }) => void,
): void {
  const title = isPending(harness) ? `${suiteTitle} [pending: ${harness.pending}]` : suiteTitle;
  describe(title, () => {
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

import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { FIXED_SLEEP_SCAN, fixedSleeps } from './fixed-sleep-scan.ts';

/**
 * No fixed sleep over 100 ms in the tests (docs/testing.md, "Waiting in tests"): a test waits for what it waits
 * for with `eventually` (test/support/eventually.ts) or the event itself, moves an injected clock for time-dependent
 * behaviour, and proves that something does not happen with a later event it would have come before, or a window of
 * 100 ms at most. This scans test/ for literal durations of sleeps: `setTimeout(resolve, 500)` (the callback a bare
 * name or `() => resolve()`), `sleep(500)`, `delay(500)`, `await setTimeout(500)` (node:timers/promises). A
 * deadline (`setTimeout(() => reject(...), 30_000)`) is not a sleep. The ones left are listed below, each with why.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
/** This test and the scan it runs, whose own comments show the sleeps it finds. */
const SELF = new Set([import.meta.filename, FIXED_SLEEP_SCAN].map((file) => path.relative(ROOT, file).split(path.sep).join('/')));

/** Sleeps longer than LIMIT_MS that stay, by file: the duration as written, and why it cannot go. */
const ALLOWED: Record<string, Array<{ ms: number; reason: string }>> = {
  'test/audit/checkpoint-webhook.test.ts': [
    {
      ms: 2500,
      reason:
        'proves that no checkpoint is recorded while only its own deliveries change the log: the recorder decides at most once per AUDIT_CHECKPOINT_WEBHOOK_SECONDS (1 s at least, a real timer), and a skipped record leaves no trace to wait for',
    },
  ],
  'test/http/connection-slots.test.ts': [
    { ms: 1200, reason: 'a kept-alive connection must outlive HTTP_HEADERS_TIMEOUT_MS (1000 ms at least) on the real socket; node times it, not the service clock' },
  ],
  'test/application/projection-watermark.test.ts': [
    { ms: 400, reason: 'counts the reads of a bounded backoff (2, 4, 8, 16, 32, then every 50 ms) over a window long enough to tell it from polling every 5 ms and to reach its cap; the backoff has no injection point' },
  ],
  'test/public/public-fast-reads.test.ts': [
    { ms: 600, reason: 'an API-only replica learns of publishes at its next change-feed poll (every 250 ms, not configurable) and shows no sign of having polled: the cached responses are checked still kept after more than one poll' },
  ],
  'test/service/npm-start.test.ts': [
    { ms: 200, reason: 'the half-sent request must reach the service before SIGTERM; the service process (under npm) shows nothing of it' },
    { ms: 1500, reason: 'a second signal counts only a second after the first (REPEATED_SIGNAL_WINDOW_MS): in the process started by npm it has no setting; the in-process test shortens it (shutdown-deadline.test.ts)' },
  ],
  'test/media/media-memory.test.ts': [
    { ms: 200, reason: 'a measurement: the resident memory is sampled 200 ms apart until three samples agree, that spacing is what "settled" means' },
  ],
  'test/fuzz/fuzz-target.ts': [
    { ms: 200, reason: 'retries of the demo admin\'s sign-in while projections catch up or the sign-in is throttled, paced so as not to feed the throttle; not a fixed wait (it only waits after a refusal)' },
  ],
  'test/support/esdb-server.ts': [
    { ms: 500, reason: 'retries a starting KurrentDB container (Docker only) until it answers; not a fixed wait (it only waits after a failed probe)' },
  ],
};

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sources(full);
    return /\.(?:[cm]?[jt]s|tsx)$/.test(entry.name) ? [full] : [];
  });
}

describe('codebase: no fixed sleep over 100 ms in the tests', () => {
  const all = () =>
    sources(path.join(ROOT, 'test'))
      .map((full) => path.relative(ROOT, full).split(path.sep).join('/'))
      .filter((file) => !SELF.has(file))
      .flatMap((file) => fixedSleeps(file, fs.readFileSync(path.join(ROOT, file), 'utf8')));

  it('finds the sleeps it is meant to find, and not deadlines or short ones', () => {
    const found = fixedSleeps(
      'x.ts',
      [
        'await new Promise((resolve) => setTimeout(resolve, 500));',
        'await new Promise((r) => setTimeout(r, 1_100));',
        'await new Promise<void>((resolve) => setTimeout(() => resolve(), 250));',
        'await delay(300);',
        'await sleep(1000);',
        "import { setTimeout } from 'node:timers/promises'; await setTimeout(2000);",
        'const t = setTimeout(\n  resolve,\n  150,\n);',
        'await new Promise((r) => setTimeout(r, 100));',
        'await sleep(20);',
        "setTimeout(() => reject(new Error('late')), 30_000);",
        'setTimeout(resolve, Math.max(0, at - Date.now()));',
      ].join('\n'),
    );
    expect(found.map((s) => s.ms)).to.deep.equal([500, 1100, 250, 300, 1000, 2000, 150]);
  });

  it('has none in test/ but the ones allowed, each with its reason', () => {
    const unexpected: string[] = [];
    const left = new Map(Object.entries(ALLOWED).map(([file, entries]) => [file, [...entries]]));
    for (const sleep of all()) {
      const entries = left.get(sleep.file) ?? [];
      const i = entries.findIndex((e) => e.ms === sleep.ms);
      if (i === -1) unexpected.push(`${sleep.file}:${sleep.line}: ${sleep.text} (${sleep.ms} ms)`);
      else entries.splice(i, 1);
    }
    expect(unexpected, 'fixed sleeps over 100 ms: wait with eventually() for what happens, move an injected clock, or prove the absence with a later event (docs/testing.md)').to.deep.equal([]);
    const stale = [...left].flatMap(([file, entries]) => entries.map((e) => `${file}: ${e.ms} ms`));
    expect(stale, 'allowed sleeps no longer in the tests: remove them from ALLOWED').to.deep.equal([]);
    for (const entries of Object.values(ALLOWED)) for (const e of entries) expect(e.reason.length, 'each allowed sleep says why').to.be.greaterThan(20);
  });
});

/**
 * The scan of test/codebase/fixed-sleeps.test.ts: the sleeps of literal duration over LIMIT_MS in a source's
 * text. Its own comments show the sleeps it finds, so the test leaves this file out of what it scans.
 */

export const LIMIT_MS = 100;

/** This file, for the test to leave out. */
export const FIXED_SLEEP_SCAN = import.meta.filename;

export interface FixedSleep {
  file: string;
  line: number;
  ms: number;
  text: string;
}

const DURATION = String.raw`(\d[\d_]*)`;
const PATTERNS = [
  // setTimeout(resolve, 500), setTimeout(r, 1_000), setTimeout(() => resolve(), 500)
  new RegExp(String.raw`\bsetTimeout\(\s*(?:[A-Za-z_$][\w$]*|\(\)\s*=>\s*[A-Za-z_$][\w$]*\(\s*\))\s*,\s*${DURATION}\s*,?\s*\)`, 'g'),
  // sleep(500), delay(500), await setTimeout(500) from node:timers/promises, wait(500)
  new RegExp(String.raw`(?<![\w$.])(?:sleep|delay|wait|pause)\(\s*${DURATION}\s*[,)]`, 'g'),
  new RegExp(String.raw`\bawait\s+(?:timers\.)?setTimeout\(\s*${DURATION}\s*[,)]`, 'g'),
];

/** The sleeps of literal duration in one file's text longer than LIMIT_MS. */
export function fixedSleeps(file: string, text: string): FixedSleep[] {
  const found: FixedSleep[] = [];
  for (const pattern of PATTERNS) {
    for (const match of text.matchAll(pattern)) {
      const ms = Number(match[1]!.replaceAll('_', ''));
      if (ms <= LIMIT_MS) continue;
      found.push({ file, line: text.slice(0, match.index).split('\n').length, ms, text: match[0] });
    }
  }
  return found.sort((a, b) => a.line - b.line);
}

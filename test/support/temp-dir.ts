import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The folders made, kept on the global object: mocha loads the root hooks (test/support/hooks.ts, which calls
 * cleanupTempDirs) as CommonJS and the test files as ES modules, so each gets an instance of this module of its
 * own; a module-level list filled by the tests' instance was never seen by the hooks', and every folder stayed.
 */
const made: string[] = ((globalThis as { [key: symbol]: string[] | undefined })[Symbol.for('annals.test.tempDirs')] ??= []);

/** A fresh folder under the system temp dir; removed by `cleanupTempDirs()` (registered as a root hook). */
export function tempDir(prefix = 'annals-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export function cleanupTempDirs(): void {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

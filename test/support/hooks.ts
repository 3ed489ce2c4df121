import fs from 'node:fs';
import path from 'node:path';
import { cleanupTempDirs } from './temp-dir.ts';
import { forgetServedDocuments, installResponseValidation } from './response-validation.ts';
import { stopMinioServer } from './minio-server.ts';
import { stopMongoServer } from './mongo-server.ts';

let lastFile: string | undefined;
let fileStartedAt = 0;
let cpuAtStart = 0;

/**
 * CPU this process has used (all its threads) and its children that have ended and been waited for, in ms:
 * what a file costs the machine whatever else runs beside it, unlike its wall time.
 */
function cpuMs(): number {
  const own = process.cpuUsage();
  let children = 0;
  try {
    // Fields 16 and 17 of /proc/self/stat (cutime, cstime), in clock ticks (100 a second on Linux).
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    children = (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    // Not Linux: the children's share is left out.
  }
  return (own.user + own.system) / 1000 + children;
}

/**
 * With ANNALS_TEST_TIMINGS=FILE, each test file's wall time (hooks included: the servers it starts) is added
 * to FILE as a JSON line {file, ms, tests}; scripts/test-timings.ts runs the suite so and prints the slowest.
 * Root hooks run once per file in mocha's parallel mode (npm test), once per run otherwise.
 */
function recordFileTime(root: Mocha.Suite | undefined): void {
  const out = process.env['ANNALS_TEST_TIMINGS'];
  if (!out || !root) return;
  const files = new Set<string>();
  let tests = 0;
  const walk = (suite: Mocha.Suite) => {
    if (suite.file) files.add(suite.file);
    tests += suite.tests.length;
    suite.suites.forEach(walk);
  };
  walk(root);
  const file = files.size === 1 ? [...files][0]! : `${files.size} files`;
  fs.appendFileSync(out, `${JSON.stringify({ file: path.relative(process.cwd(), file), ms: Math.round(performance.now() - fileStartedAt), cpuMs: Math.round(cpuMs() - cpuAtStart), tests })}\n`);
}

/** Mocha root hooks, loaded for every run through .mocharc.json. */
export const mochaHooks = {
  beforeAll(): void {
    fileStartedAt = performance.now();
    if (process.env['ANNALS_TEST_TIMINGS']) cpuAtStart = cpuMs();
    // Every admin and public answer the tests receive is checked against the served OpenAPI documents.
    installResponseValidation();
  },
  beforeEach(this: Mocha.Context): void {
    // A new test file: the servers of the one before are gone, and their ports may be reused by this one's.
    const file = this.currentTest?.file;
    if (file !== lastFile) forgetServedDocuments();
    lastFile = file;
  },
  async afterAll(this: Mocha.Context): Promise<void> {
    recordFileTime(this.test?.parent);
    cleanupTempDirs();
    // The MongoDB suites' shared server (a container or FerretDB), if one was started.
    await stopMongoServer();
    await stopMinioServer();
  },
};

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TSC = path.join(path.dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
const SOURCE_FOLDERS = ['src', 'projections'];
const CONFIGS = ['tsconfig.json', 'tsconfig.build.json'];
const LOCK = path.join(ROOT, 'dist', '.test-build.lock');
/** A build left by a worker that died mid-way is taken over after this long. */
const STALE_LOCK_MS = 120_000;

let fresh = false;

/**
 * Makes sure dist/ holds the compiled form of the sources under test, compiling them exactly as
 * `npm run build` (and so `npm install`) does when any source is newer than its output or has none: the
 * tests of `npm start`, the bins and the Docker image's entry point, and every process the tests start from
 * `src/` (see child-process.ts), then run the sources under test, never a stale build. Costs a few
 * milliseconds when dist/ is current (CI's `npm ci` built it), one compile (~7 s) after an edit.
 *
 * Synchronous, so that spawning a process stays synchronous; mocha's parallel workers share dist/, so one
 * compiles under a lock file while the others wait for it and look again.
 */
export function compiledBuild(): void {
  if (fresh) return;
  for (;;) {
    if (!staleSources()) break;
    if (takeLock()) {
      try {
        const stale = staleSources();
        // Said on stderr: a compile rewrites dist/ under any process the other worker runs from it meanwhile.
        if (stale) {
          const line = `${new Date().toISOString()} compiledBuild (pid ${process.pid}): compiling, ${stale}\n`;
          process.stderr.write(line);
          // Also kept beside the build: a parallel worker's stderr may not reach the run's log.
          fs.appendFileSync(path.join(ROOT, 'dist', '.test-build.log'), line);
          compile();
        }
      } finally {
        fs.rmSync(LOCK, { force: true });
      }
      break;
    }
    waitForLock();
  }
  fresh = true;
}

/**
 * Compiles as `npm run build` does, into a folder of its own, then puts each compiled folder in place with a
 * rename: a process starting meanwhile (another worker's child) loads the old build or the new one, never a
 * half-written one (tsc writes its files one by one for seconds, and a module read while empty has no exports).
 */
function compile(): void {
  const staging = path.join(ROOT, `.dist-build-${process.pid}`);
  try {
    execFileSync(process.execPath, [TSC, '-p', 'tsconfig.build.json', '--outDir', staging], { cwd: ROOT, stdio: 'pipe' });
    for (const folder of SOURCE_FOLDERS) {
      const target = path.join(ROOT, 'dist', folder);
      const old = path.join(ROOT, 'dist', `.${folder}-old-${process.pid}`);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      const had = fs.existsSync(target);
      if (had) fs.renameSync(target, old);
      fs.renameSync(path.join(staging, folder), target);
      if (had) fs.rmSync(old, { recursive: true, force: true });
    }
  } catch (error) {
    const { stdout, stderr, message } = error as { stdout?: Buffer; stderr?: Buffer; message: string };
    throw new Error(`npm run build failed: ${stdout?.toString() ?? ''}${stderr?.toString() || message}`);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/** Why the build is stale: a source (or a compiler configuration) newer than its compiled output, or one without any; null when current. */
function staleSources(): string | null {
  const configsChanged = Math.max(...CONFIGS.map((name) => fs.statSync(path.join(ROOT, name)).mtimeMs));
  for (const folder of SOURCE_FOLDERS) {
    for (const relative of fs.readdirSync(path.join(ROOT, folder), { recursive: true, encoding: 'utf8' })) {
      if (!relative.endsWith('.ts') || relative.endsWith('.d.ts')) continue;
      const source = path.join(ROOT, folder, relative);
      const output = path.join(ROOT, 'dist', folder, relative.replace(/\.ts$/, '.js'));
      let built: number;
      try {
        built = fs.statSync(output).mtimeMs;
      } catch {
        return `${folder}/${relative} has no compiled output`;
      }
      const written = fs.statSync(source).mtimeMs;
      if (built < written || built < configsChanged) return `${folder}/${relative} (${new Date(written).toISOString()}) or a tsconfig (${new Date(configsChanged).toISOString()}) is newer than its output (${new Date(built).toISOString()})`;
    }
  }
  return null;
}

function takeLock(): boolean {
  fs.mkdirSync(path.dirname(LOCK), { recursive: true });
  try {
    fs.writeFileSync(LOCK, String(process.pid), { flag: 'wx' });
    return true;
  } catch {
    try {
      if (Date.now() - fs.statSync(LOCK).mtimeMs > STALE_LOCK_MS) fs.rmSync(LOCK, { force: true });
    } catch {
      // Gone between the two calls: the next round takes it.
    }
    return false;
  }
}

function waitForLock(): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (fs.existsSync(LOCK)) Atomics.wait(pause, 0, 0, 100);
}

export const PROJECT_ROOT = ROOT;

/**
 * The compiled form of a module of src/ (`src/audit/log-tree-thread-worker.ts`), brought up to date: for the
 * threads a service started in the test's process runs, which would otherwise load their modules through
 * tsx's loader on each thread (LogTreeThreadOptions.workerModule).
 */
export function compiledModule(source: string): URL {
  compiledBuild();
  return pathToFileURL(compiledPathOf(source));
}

/** Where the build puts a source of src/ or projections/ (a path relative to the project, or absolute). */
export function compiledPathOf(source: string): string {
  return path.join(ROOT, 'dist', path.relative(ROOT, path.resolve(ROOT, source))).replace(/\.ts$/, '.js');
}

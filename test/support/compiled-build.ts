import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TSC = path.join(path.dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');

let building: Promise<void> | undefined;

/**
 * Compiles the sources into dist/ exactly as `npm run build` (and so `npm install`) does, once per test
 * run: the tests of `npm start`, the `annals` and `annals-mcp` bins and the Docker image's entry point then
 * run the compiled output of the sources under test, never a stale build.
 */
export function compiledBuild(): Promise<void> {
  building ??= promisify(execFile)(process.execPath, [TSC, '-p', 'tsconfig.build.json'], { cwd: ROOT }).then(
    () => undefined,
    (error: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`npm run build failed: ${error.stdout ?? ''}${error.stderr ?? error.message}`);
    },
  );
  return building;
}

export const PROJECT_ROOT = ROOT;

import fs from 'node:fs';
import path from 'node:path';

/**
 * The folder holding this package's package.json, found from the running module: `src/` when run from the
 * sources, `dist/src/` when run compiled (`npm start`, the package bins). Files that ship beside the code
 * without being compiled (docs/help, package.json) are read from here, so both layouts find them.
 */
export const PACKAGE_ROOT = findPackageRoot(import.meta.dirname);

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

/** This package's version, from its package.json. */
export function packageVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

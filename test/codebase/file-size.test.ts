import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
/** A file over this many lines holds more than one job: split it by concern (ARCHITECTURE.md, "Where a change goes"). */
const MAX_LINES = 500;

function sources(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sources(relative);
    return /\.(ts|tsx)$/.test(entry.name) ? [relative] : [];
  });
}

describe('source files have one job each', () => {
  it(`no file in src/, projections/ or console/src/ is over ${MAX_LINES} lines`, () => {
    const long = ['src', 'projections', 'console/src']
      .flatMap(sources)
      .map((file) => ({ file, lines: fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(long, long.join('\n')).to.deep.equal([]);
  });
});

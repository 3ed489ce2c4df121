import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

function sources(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(relative);
    return entry.name.endsWith('.ts') ? [relative] : [];
  });
}

/**
 * The access read model is read through its typed queries (projections/access-queries.ts): no collection-name
 * strings and casts in src/. The three left read what the queries do not offer yet (a project's keys by a page
 * query, issued keys' replays page by page, the number of tenants).
 */
describe('the access read model is read through its typed queries', () => {
  it('src/ names no access collection but where the queries offer nothing yet', () => {
    const allowed = new Set(['src/http/admin/project-routes.ts', 'src/application/operations-overview.ts', 'src/application/replay-key-shredder.ts']);
    const found = sources('src').flatMap((file) =>
      fs
        .readFileSync(path.join(ROOT, file), 'utf8')
        .split('\n')
        .map((line, i) => ({ file, line: i + 1, text: line }))
        .filter(({ text }) => /\.(get|getMany|find|findAll|findWithIds|count)\b[^(]*\(\s*'access'/.test(text)),
    );
    const outside = found.filter(({ file }) => !allowed.has(file)).map(({ file, line, text }) => `${file}:${line}: ${text.trim()}`);
    expect(outside, outside.join('\n')).to.deep.equal([]);
    expect(found.length, 'the allowed ones are still there (else shrink the list)').to.be.at.least(allowed.size);
  });
});

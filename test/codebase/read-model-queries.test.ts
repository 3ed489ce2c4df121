import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { rawReads } from './raw-reads.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

function sources(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(relative);
    return entry.name.endsWith('.ts') ? [relative] : [];
  });
}

/** The read-model layer itself, which reads by name on behalf of everyone (the reader, the stores, the engine). */
const READ_MODEL_LAYER = /^src\/(read-models|projection-engine)\//;

/**
 * Files of src/ that still name a collection in a reader call, each with why. Generic mechanisms (keysetPage,
 * the outbox worker, the operations overview's outbox counts) take a projection and a collection as data and
 * are not listed: their definitions come from the queries modules, and what they call the reader with is a
 * variable, which this check does not flag.
 */
const ALLOWED: Record<string, string> = {
  'src/http/admin/project-routes.ts': "a project's keys by a page query, and an issued key by its collection: accessQueries offers neither yet",
  'src/application/operations-overview.ts': 'the number of tenants: accessQueries offers no count yet',
  'src/application/replay-key-shredder.ts': "issued keys' replays page by page, over two collections: accessQueries offers no such walk yet",
};

/**
 * Read models are read through their typed queries (projections/*-queries.ts): no collection-name strings and
 * casts in src/ outside the read-model layer.
 */
describe('read models are read through their typed queries', () => {
  it('src/ names no collection of a read model but where the queries offer nothing yet', () => {
    const found = sources('src')
      .filter((file) => !READ_MODEL_LAYER.test(file))
      .flatMap((file) => rawReads(fs.readFileSync(path.join(ROOT, file), 'utf8')).map((read) => ({ file, ...read })));
    const outside = found.filter(({ file }) => !(file in ALLOWED)).map(({ file, line, text }) => `${file}:${line}: ${text}`);
    expect(outside, outside.join('\n')).to.deep.equal([]);
    const stale = Object.keys(ALLOWED).filter((file) => !found.some((read) => read.file === file));
    expect(stale, 'allowed files that no longer read by name: shrink the list').to.deep.equal([]);
  });

  it('finds a raw read however it is written', () => {
    const reads = [
      "await reader.get<Doc<EntryDoc>>('content', 'entries', id);",
      "await this.deps.reader.find<X & Record<string, unknown>>(\n  'contact-forms',\n  'forms',\n  { filter },\n);",
      "await reader.find<Doc<EntryViewDoc>>(PUBLIC_CONTENT, 'entry_views', { filter: { slug }, limit: 1 });",
      "reader.count(WEBHOOKS_PROJECTION, 'webhooks', { projectId })",
      "keysetPage(reader, { projection: 'media', collection: 'assets', filter }, query)",
      "return { name: 'review-notices', projection: reviewQueue.name, collection: 'notices' };",
    ];
    for (const read of reads) expect(rawReads(read), read).to.have.length.greaterThan(0);
    const fine = ["ctx.get('If-None-Match')", 'reader.find(list.projection, list.collection, query)', "keysetPage(reader, { ...CONTENT_LISTS.entries, filter }, page)"];
    expect(fine.flatMap(rawReads)).to.deep.equal([]);
  });
});

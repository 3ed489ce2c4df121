import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** GitHub's anchor of a heading: lower case, backticks and punctuation gone, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

function headingsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const match = /^#{1,6} (.*)$/.exec(line);
    if (match && !fenced) anchors.add(anchorOf(match[1]!));
  }
  return anchors;
}

/** The project's documents: the README, ARCHITECTURE.md and docs/ (the benchmark log is a record, not read by link). */
function documents(): string[] {
  return ['README.md', 'ARCHITECTURE.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
}

describe('the documentation: every link between documents leads somewhere', () => {
  it('each relative link names a file of the repository, and each #anchor a heading of its document', () => {
    const anchors = new Map(documents().map((doc) => [doc, headingsOf(fs.readFileSync(path.join(ROOT, doc), 'utf8'))]));
    const broken: string[] = [];
    let checked = 0;
    for (const doc of documents()) {
      for (const match of fs.readFileSync(path.join(ROOT, doc), 'utf8').matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)) {
        const target = match[1]!;
        if (/^[a-z]+:/i.test(target)) continue;
        const [file = '', anchor] = target.split('#') as [string, string | undefined];
        const dest = file ? path.normalize(path.join(path.dirname(doc), file)) : doc;
        checked++;
        if (!fs.existsSync(path.join(ROOT, dest))) broken.push(`${doc}: ${target} (no file ${dest})`);
        else if (anchor && dest.endsWith('.md') && anchors.has(dest) && !anchors.get(dest)!.has(anchor)) broken.push(`${doc}: ${target} (no heading #${anchor} in ${dest})`);
      }
    }
    expect(broken, broken.join('\n')).to.deep.equal([]);
    expect(checked, 'links checked').to.be.greaterThan(30);
  });

  it('the README stays an overview: at most 200 lines, with an index of every document in docs/', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    expect(readme.split('\n').length).to.be.at.most(200);
    for (const doc of documents().filter((d) => d.startsWith('docs/') && d !== 'docs/benchmark-log.md')) expect(readme, doc).to.contain(`](${doc})`);
  });
});

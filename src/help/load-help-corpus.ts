import fs from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../package-root.ts';
import { parseHelpArticle } from './help-article.ts';
import { HelpCorpus } from './help-corpus.ts';

/** docs/help/ of this package: the articles ship with the code that serves them (sources and compiled alike). */
export const HELP_DIR = path.join(PACKAGE_ROOT, 'docs', 'help');

/** Reads every `*.md` of the folder as an article (id: the file name without .md). */
export function loadHelpCorpus(dir: string = HELP_DIR): HelpCorpus {
  const files = fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.md'))
    .sort();
  return new HelpCorpus(files.map((name) => parseHelpArticle(name.slice(0, -'.md'.length), fs.readFileSync(path.join(dir, name), 'utf8'))));
}

let shared: HelpCorpus | undefined;

/** The package's help, read once per process. */
export function sharedHelpCorpus(): HelpCorpus {
  shared ??= loadHelpCorpus();
  return shared;
}

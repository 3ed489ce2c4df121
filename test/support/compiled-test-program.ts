import fs from 'node:fs';
import path from 'node:path';
import { transformSync } from '@swc/core';
import { compiledBuild, compiledPathOf, PROJECT_ROOT } from './compiled-build.ts';

const OUT = path.join(PROJECT_ROOT, 'dist', 'test-programs');
const COMPILED_FOLDERS = ['src', 'projections'].map((folder) => path.join(PROJECT_ROOT, folder) + path.sep);
/** Relative specifiers of static imports, re-exports, side-effect and dynamic imports in swc's output. */
const RELATIVE_SPECIFIER = /(\bfrom\s*|\bimport\s*\(?\s*)(['"])(\.\.?\/[^'"]+)\2/g;

const done = new Map<string, string>();

/**
 * A program under test/ (a child process a test starts: a crashing service, a projection run to kill) in
 * JavaScript, as the project's own entry points run from dist/: its types stripped by swc, its imports of
 * src/ and projections/ pointed at their compiled form in dist/ (brought up to date first), its imports of
 * other test modules compiled the same way beside it, under dist/test-programs/ (.mjs). Starting one so
 * costs about a second of CPU less than through tsx's loader, which resolves and loads each of the few
 * hundred modules a service imports through its hooks. Returns the compiled file's path.
 */
export function compiledTestProgram(entry: string): string {
  compiledBuild();
  return compile(path.resolve(PROJECT_ROOT, entry));
}

function compile(source: string): string {
  const known = done.get(source);
  if (known) return known;
  const output = path.join(OUT, path.relative(PROJECT_ROOT, source).replace(/\.ts$/, '.mjs'));
  done.set(source, output);
  const { code } = transformSync(fs.readFileSync(source, 'utf8'), {
    filename: source,
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  });
  const rewritten = code.replace(RELATIVE_SPECIFIER, (_match, lead: string, quote: string, specifier: string) => {
    const target = path.resolve(path.dirname(source), specifier);
    let compiled: string;
    if (COMPILED_FOLDERS.some((folder) => target.startsWith(folder))) compiled = compiledPathOf(target);
    else if (target.endsWith('.ts')) compiled = compile(target);
    else compiled = target;
    let relative = path.relative(path.dirname(output), compiled);
    if (!relative.startsWith('.')) relative = `./${relative}`;
    return `${lead}${quote}${relative}${quote}`;
  });
  // Mocha's parallel workers compile the same programs: each writes whole files, renamed into place.
  if (!fs.existsSync(output) || fs.readFileSync(output, 'utf8') !== rewritten) {
    fs.mkdirSync(path.dirname(output), { recursive: true });
    const temporary = `${output}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, rewritten);
    fs.renameSync(temporary, output);
  }
  return output;
}

// Runs a module of the compiled build (dist/, made by `npm run build`, which `npm install` runs), with a
// clear message instead of a module-not-found stack when the build is missing.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export async function runCompiled(name, relative) {
  const entry = new URL(`../dist/${relative}`, import.meta.url);
  if (!existsSync(entry)) {
    process.stderr.write(`${name}: the compiled build is missing (${fileURLToPath(entry)}): run \`npm run build\` in ${fileURLToPath(new URL('..', import.meta.url))}\n`);
    process.exit(1);
  }
  await import(entry.href);
}

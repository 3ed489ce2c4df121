import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../support/temp-dir.ts';

const DOCS = path.resolve(import.meta.dirname, '../../docs/audit.md');

/** The shell block of docs/audit.md that checks an export's signature with openssl, exactly as an auditor reads it. */
export function documentedOpensslCheck(): string {
  const text = fs.readFileSync(DOCS, 'utf8');
  const marker = text.indexOf('<!-- tested: test/audit/audit-key-insider.test.ts runs this block as it is -->');
  if (marker < 0) throw new Error('docs/audit.md: the tested openssl block is gone');
  const block = /```sh\n([\s\S]*?)```/.exec(text.slice(marker));
  if (!block) throw new Error('docs/audit.md: no sh block after the marker');
  return block[1]!;
}

/** Runs the documented check with bash in a folder holding the export and the key list under the names it uses. */
export function verifyWithOpensslAsDocumented(bundle: string, keyList: string): { code: number | null; stdout: string; stderr: string } {
  const dir = tempDir();
  fs.copyFileSync(bundle, path.join(dir, 'export.ndjson'));
  fs.copyFileSync(keyList, path.join(dir, 'audit-keys.json'));
  const run = spawnSync('bash', ['-euo', 'pipefail', '-c', documentedOpensslCheck()], { cwd: dir, encoding: 'utf8' });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

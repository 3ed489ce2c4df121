import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ensurePrivateDir } from '../data-dir/private-files.ts';

const FILE = 'secrets-key';

/**
 * The key that seals stored secrets (webhook signing secrets): 32 bytes. Configured (SECRETS_KEY, base64)
 * in production, where every instance must share it (config.ts requires it with EventStoreDB); on the
 * embedded default, generated once into DATA_DIR/secrets-key (mode 0600) so that `npm start` needs no
 * setup and sealed secrets keep opening after restarts. Losing the key makes every sealed secret
 * unusable: recreate the webhooks then.
 */
export function resolveSecretsKey(config: { secretsKey: string | undefined; dataDir: string }): Buffer {
  if (config.secretsKey) return Buffer.from(config.secretsKey, 'base64');
  const file = path.join(config.dataDir, FILE);
  const existing = readKey(file);
  if (existing) return existing;
  ensurePrivateDir(config.dataDir);
  const key = randomBytes(32);
  try {
    fs.writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  } catch (error) {
    // Another process of the same data folder wrote it first: use theirs.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const theirs = readKey(file);
    if (!theirs) throw new Error(`${file} exists but does not hold the base64 of 32 bytes`);
    return theirs;
  }
}

function readKey(file: string): Buffer | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const key = Buffer.from(text, 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold the base64 of 32 bytes: fix or remove it (removing it makes stored webhook secrets unusable)`);
  return key;
}

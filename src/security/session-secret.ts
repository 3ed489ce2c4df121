import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ensurePrivateDir } from '../data-dir/private-files.ts';

/**
 * The secret that signs console sessions and preview tokens. Configured (SESSION_SECRET) in production,
 * where every instance must share it; on the embedded default, generated once into DATA_DIR/session-secret
 * (mode 0600) so that `npm start` needs no setup and sessions survive restarts.
 */
export function resolveSessionSecret(config: { sessionSecret: string | undefined; dataDir: string }): string {
  if (config.sessionSecret) return config.sessionSecret;
  const file = path.join(config.dataDir, 'session-secret');
  try {
    const existing = fs.readFileSync(file, 'utf8').trim();
    if (existing.length >= 32) return existing;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  ensurePrivateDir(config.dataDir);
  const secret = randomBytes(48).toString('base64url');
  fs.writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  return secret;
}

// npm run client:generate: starts the service on a throwaway data directory, reads the OpenAPI documents it
// serves, and writes the TypeScript client's generated types (clients/typescript/src/generated/).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../src/config/config.ts';
import { startService } from '../src/service/service.ts';
import { systemClock } from '../src/clock.ts';
import { PACKAGE_ROOT } from '../src/package-root.ts';
import { generatedFiles } from '../clients/typescript/scripts/generate-types.mjs';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'annals-client-types-'));
const service = await startService(loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' }), { logger: pino({ level: 'silent' }), clock: systemClock });
try {
  const [admin, pub] = await Promise.all(['admin', 'public'].map(async (api) => (await fetch(`${service.url}/${api}/v1/openapi.json`)).json()));
  const target = path.join(PACKAGE_ROOT, 'clients', 'typescript', 'src', 'generated');
  for (const [name, text] of Object.entries(await generatedFiles(admin, pub))) {
    writeFileSync(path.join(target, name), text);
    process.stderr.write(`wrote ${path.relative(PACKAGE_ROOT, path.join(target, name))}\n`);
  }
} finally {
  await service.stop();
  rmSync(dataDir, { recursive: true, force: true });
}

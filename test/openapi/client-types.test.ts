import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { generatedFiles } from '../../clients/typescript/scripts/generate-types.mjs';
import { PACKAGE_ROOT } from '../../src/package-root.ts';
import { startAdminFixture, type AdminFixture } from '../admin/support.ts';

/**
 * The TypeScript client's generated types are committed (clients/typescript/src/generated/): they must be
 * what openapi-typescript makes of the documents the service serves now, so a route whose answer changes
 * without `npm run client:generate` fails here, and the client never drifts from the service.
 */
describe('@annals/client: the committed types are those of the served documents', function () {
  this.timeout(60_000);
  let f: AdminFixture;
  before(async () => {
    f = await startAdminFixture();
  });
  after(() => f.stop());

  it('regenerating from /admin/v1/openapi.json and /public/v1/openapi.json changes no file', async () => {
    const [admin, pub] = await Promise.all(['admin', 'public'].map(async (api) => (await fetch(`${f.service.url}/${api}/v1/openapi.json`)).json()));
    const generated = await generatedFiles(admin, pub);
    expect(Object.keys(generated)).to.have.members(['admin.ts', 'public.ts', 'idempotent-operations.ts']);
    for (const [name, text] of Object.entries(generated)) {
      const committed = readFileSync(path.join(PACKAGE_ROOT, 'clients', 'typescript', 'src', 'generated', name), 'utf8');
      expect(committed === text, `clients/typescript/src/generated/${name} differs from what the served documents give: run npm run client:generate and commit the result`).to.equal(true);
    }
  });
});

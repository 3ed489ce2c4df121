import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { runProgram } from '../support/child-process.ts';
import { tempDir } from '../support/temp-dir.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DEPCRUISE = path.join(ROOT, 'node_modules/.bin/depcruise');
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');

/** Writes `files` (path relative to a new folder → source) and cruises them with the project's rules. */
async function cruise(files: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const dir = tempDir();
  for (const [file, source] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), source);
  }
  const roots = [...new Set(Object.keys(files).map((file) => file.split('/')[0]!))];
  const run = await runProgram(DEPCRUISE, [...roots, '--config', CONFIG, '--output-type', 'err'], {}, 60_000, dir);
  return { code: run.code, output: run.stdout + run.stderr };
}

/**
 * `npm run lint:deps` (the first step of `npm test`) holds the layers of ARCHITECTURE.md on the real tree; here each
 * rule is shown to fail on a small tree that breaks it, and to pass the same tree without the offending import.
 */
describe('codebase: the dependency rules (.dependency-cruiser.cjs) refuse what breaks a layer', function () {
  this.timeout(60_000);

  it('refuses a cycle, even of type imports, naming both files', async () => {
    const broken = await cruise({
      'src/event-store/a.ts': "import type { B } from './b.ts';\nexport type A = B | 'a';\n",
      'src/event-store/b.ts': "import type { A } from './a.ts';\nexport type B = Exclude<A, 'a'> | 'b';\n",
    });
    expect(broken.code, broken.output).to.not.equal(0);
    expect(broken.output).to.match(/no-circular: src\/event-store\/a\.ts/);
  });

  it('refuses a domain module that imports an adapter or the HTTP layer', async () => {
    const files = {
      'src/domain/decider.ts': "import { store } from '../read-models/store.ts';\nimport { route } from '../http/route.ts';\nexport const decide = () => [store, route];\n",
      'src/read-models/store.ts': 'export const store = 1;\n',
      'src/http/route.ts': 'export const route = 1;\n',
    };
    const broken = await cruise(files);
    expect(broken.code, broken.output).to.not.equal(0);
    expect(broken.output).to.match(/domain-is-pure: src\/domain\/decider\.ts → src\/read-models\/store\.ts/);
    expect(broken.output).to.match(/domain-is-pure: src\/domain\/decider\.ts → src\/http\/route\.ts/);
    const fine = await cruise({ ...files, 'src/domain/decider.ts': 'export const decide = () => [];\n' });
    expect(fine.code, fine.output).to.equal(0);
  });

  it('refuses a feature or the application reaching up into HTTP or the composition, and a projection reaching the application', async () => {
    const broken = await cruise({
      'src/media/upload.ts': "import { notFound } from '../http/errors.ts';\nexport const upload = notFound;\n",
      'src/application/use-case.ts': "import { secret } from '../service/secret.ts';\nexport const useCase = secret;\n",
      'projections/content.ts': "import { useCase } from '../src/application/use-case.ts';\nexport const fold = useCase;\n",
      'src/http/errors.ts': 'export const notFound = 1;\n',
      'src/service/secret.ts': 'export const secret = 1;\n',
    });
    expect(broken.code, broken.output).to.not.equal(0);
    expect(broken.output).to.match(/http-only-from-above: src\/media\/upload\.ts → src\/http\/errors\.ts/);
    expect(broken.output).to.match(/service-only-from-entry-points: src\/application\/use-case\.ts → src\/service\/secret\.ts/);
    expect(broken.output).to.match(/projections-fold-only: projections\/content\.ts → src\/application\/use-case\.ts/);
  });

  it('refuses the read-model port reaching up into the projection engine, and security into the domain', async () => {
    const broken = await cruise({
      'src/read-models/store.ts': "import { supervisor } from '../projection-engine/supervisor.ts';\nexport const store = supervisor;\n",
      'src/projection-engine/supervisor.ts': 'export const supervisor = 1;\n',
      'src/security/tokens.ts': "import type { Role } from '../domain/principal.ts';\nexport type Claims = { role: Role };\n",
      'src/domain/principal.ts': "export type Role = 'admin';\n",
    });
    expect(broken.code, broken.output).to.not.equal(0);
    expect(broken.output).to.match(/read-models-below-the-engine: src\/read-models\/store\.ts → src\/projection-engine\/supervisor\.ts/);
    expect(broken.output).to.match(/security-below-the-domain: src\/security\/tokens\.ts → src\/domain\/principal\.ts/);
  });

  it('lets the composition and the entry points use every layer', async () => {
    const fine = await cruise({
      'src/main.ts': "import { start } from './service/service.ts';\nstart();\n",
      'src/service/service.ts': "import { routes } from '../http/routes.ts';\nimport { decide } from '../domain/decider.ts';\nexport const start = () => [routes, decide];\n",
      'src/http/routes.ts': "import { decide } from '../domain/decider.ts';\nexport const routes = decide;\n",
      'src/domain/decider.ts': 'export const decide = 1;\n',
    });
    expect(fine.code, fine.output).to.equal(0);
  });
});

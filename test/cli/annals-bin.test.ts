import path from 'node:path';
import { expect } from 'chai';
import { compiledBuild, PROJECT_ROOT } from '../support/compiled-build.ts';
import { runProgram, type Finished } from '../support/child-process.ts';
import { tempDir } from '../support/temp-dir.ts';

const PASSWORD = 'correct horse battery';
const BIN = path.join(PROJECT_ROOT, 'bin', 'annals.mjs');

/** `annals ...` as installed: the package bin, running the compiled build. */
function annals(dataDir: string, args: string[]): Promise<Finished> {
  return runProgram(process.execPath, [BIN, ...args], { DATA_DIR: dataDir, ANNALS_ADMIN_PASSWORD: '', LOG_LEVEL: 'info' });
}

/**
 * stdout holds exactly one JSON document and nothing else (no banner, no log line, no second document):
 * what `annals ... --json | jq` needs.
 */
function oneJsonDocument(result: Finished): any {
  let parsed: unknown;
  try {
    parsed = JSON.parse(result.stdout);
  } catch {
    expect.fail(`stdout is not one JSON document:\n${result.stdout}\n(stderr: ${result.stderr})`);
  }
  expect(result.stdout, 'one line, ending in a newline').to.equal(`${JSON.stringify(parsed)}\n`);
  return parsed;
}

describe('annals: the operator CLI as a package bin, --json output for scripts', function () {
  this.timeout(180_000);
  let dataDir: string;
  let ids: { tenantId: string; projectId: string };

  before(async () => {
    compiledBuild();
    dataDir = path.join(tempDir(), 'data');
  });

  it('every --json command prints exactly one JSON document on stdout, and the notes on stderr', async () => {
    const boot = await annals(dataDir, ['bootstrap', '--project', 'Bin Site', '--plan', 'standard', '--admin-email', 'bin@example.com', '--admin-password', PASSWORD, '--json']);
    expect(boot.code, boot.stderr).to.equal(0);
    ids = oneJsonDocument(boot);
    expect(boot.stderr).to.match(/^bootstrap: /m);

    const runs: Array<[string[], (doc: any) => void]> = [
      [['users', 'create', '--tenant', ids.tenantId, '--email', 'ed@example.com', '--role', 'editor', '--password', PASSWORD, '--json'], (d) => expect(d.role).to.equal('tenant_user')],
      [['keys', 'create', '--project', ids.projectId, '--type', 'agent', '--scope', 'content', '--name', 'Importer', '--json'], (d) => expect(d.key).to.match(/^sk-agent-/)],
      [['keys', 'create', '--project', ids.projectId, '--type', 'public', '--json'], (d) => expect(d.key).to.match(/^service_pub_/)],
      [['projects', 'set-plan', '--project', ids.projectId, '--plan', 'business', '--json'], (d) => expect(d).to.include({ plan: 'business', previousPlan: 'standard' })],
      [['projections', 'status', '--json'], (d) => expect(d.map((p: { name: string }) => p.name)).to.include('access')],
      [['projections', 'rebuild', 'access', '--json'], (d) => expect(d[0]).to.include({ projection: 'access' })],
      [['demo', '--json'], (d) => expect(d.formSets).to.deep.equal(['blog', 'news'])],
      [['media', 'copy', '--from', path.join(dataDir, 'media'), '--to', path.join(dataDir, '..', 'media-copy'), '--json'], (d) => expect(d).to.include({ assets: 8, copied: 8, verified: true })],
      [['media', 'verify', '--quick', '--json'], (d) => expect(d).to.include({ quick: true, verified: true })],
      [['log', 'export', '--to', path.join(dataDir, '..', 'log.ndjson'), '--json'], (d) => expect(d.events).to.be.greaterThan(0)],
      [['log', 'verify', path.join(dataDir, '..', 'log.ndjson'), '--json'], (d) => expect(d.verified).to.equal(true)],
    ];
    for (const [args, check] of runs) {
      const result = await annals(dataDir, args);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).to.equal(0);
      check(oneJsonDocument(result));
    }
    const revoke = await annals(dataDir, ['keys', 'revoke', '--project', ids.projectId, '--key-id', (await keyId(dataDir, ids.projectId)), '--json']);
    expect(oneJsonDocument(revoke)).to.include({ alreadyRevoked: false });
  });

  it('a failing --json command prints one JSON error document on stdout, the message on stderr, and its exit code', async () => {
    const cases: Array<{ args: string[]; exit: number; code: string }> = [
      { args: ['tenants', 'list', '--json'], exit: 2, code: 'USAGE_ERROR' },
      { args: ['projects', 'set-plan', '--project', ids.projectId, '--plan', 'platinum', '--json'], exit: 2, code: 'VALIDATION_ERROR' },
      { args: ['users', 'create', '--tenant', ids.tenantId, '--email', 'ed@example.com', '--role', 'editor', '--password', PASSWORD, '--json'], exit: 1, code: 'CONFLICT' },
      { args: ['projections', 'retry', 'no-such-projection', '--json'], exit: 1, code: 'OPERATION_FAILED' },
      { args: ['media', 'copy', '--from', 's3://AKID:hunter2@annals-media', '--json'], exit: 2, code: 'USAGE_ERROR' },
    ];
    for (const c of cases) {
      const result = await annals(dataDir, c.args);
      expect(result.code, `${c.args.join(' ')}: ${result.stderr}`).to.equal(c.exit);
      const doc = oneJsonDocument(result);
      expect(doc.error.code, c.args.join(' ')).to.equal(c.code);
      expect(result.stderr).to.include(doc.error.message.split('\n')[0]);
      expect(result.stdout + result.stderr, 'no credentials echoed').not.to.include('hunter2');
    }
  });

  it('runs as `npx annals` and as `npm run -s cli --`, with stdout still one JSON document', async () => {
    const viaNpx = await runProgram('npx', ['--no-install', 'annals', 'projections', 'status', '--json'], { DATA_DIR: dataDir });
    expect(viaNpx.code, viaNpx.stderr).to.equal(0);
    expect(oneJsonDocument(viaNpx)).to.be.an('array');
    const viaNpm = await runProgram('npm', ['run', '-s', 'cli', '--', 'projections', 'status', '--json'], { DATA_DIR: dataDir });
    expect(viaNpm.code, viaNpm.stderr).to.equal(0);
    expect(oneJsonDocument(viaNpm)).to.be.an('array');
  });
});

/** The id of an active agent key of the project, through the CLI's own JSON (a fresh key to revoke). */
async function keyId(dataDir: string, projectId: string): Promise<string> {
  const created = await annals(dataDir, ['keys', 'create', '--project', projectId, '--type', 'agent', '--json']);
  return (oneJsonDocument(created) as { keyId: string }).keyId;
}

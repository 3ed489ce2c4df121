import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { parse as parseYaml } from 'yaml';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadConfig } from '../../src/config/config.ts';
import { compiledBuild, PROJECT_ROOT } from '../support/compiled-build.ts';
import { dockerCompose, needing, requireProgram } from '../support/system-program.ts';
import { runProgram } from '../support/child-process.ts';
import { tempDir } from '../support/temp-dir.ts';

const run = promisify(execFile);

/** The Dockerfile as instructions, continuation lines joined, comments dropped. */
function dockerfile(): Array<{ instruction: string; args: string }> {
  const text = fs.readFileSync(path.join(PROJECT_ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [instruction, ...rest] = line.split(/\s+/);
      return { instruction: instruction!.toUpperCase(), args: rest.join(' ') };
    });
}

/** The instructions of each stage, by stage name. */
function stages(): Map<string, Array<{ instruction: string; args: string }>> {
  const result = new Map<string, Array<{ instruction: string; args: string }>>();
  let current: Array<{ instruction: string; args: string }> | undefined;
  for (const step of dockerfile()) {
    if (step.instruction === 'FROM') {
      const name = /\bAS\s+(\S+)/i.exec(step.args)?.[1] ?? `stage-${result.size}`;
      result.set(name, (current = []));
    } else current?.push(step);
  }
  return result;
}

/**
 * No Docker engine exists where these tests were written, so the image is never built here. What can be
 * checked without one is: the compose file (validated by Docker Compose itself, and its settings by the
 * service's own configuration rules), the Dockerfile's promises, and that the files its runtime stage
 * holds, with production dependencies only, run the service.
 */
describe(needing(dockerCompose, 'docker-compose.yml: the service wired to EventStoreDB, MongoDB, MinIO (with its bucket) and Mailpit'), function () {
  this.timeout(60_000);
  let services: Record<string, any>;

  before(async function () {
    const [command, ...prefix] = requireProgram(this, dockerCompose).split(' ');
    // As on a fresh machine: none of the file's overridable settings in the environment.
    const { ANNALS_SESSION_SECRET: _s, ANNALS_SECRETS_KEY: _k, MINIO_ROOT_PASSWORD: _m, ...env } = process.env;
    const { stdout } = await run(command!, [...prefix, '--file', 'docker-compose.yml', 'config'], { cwd: PROJECT_ROOT, env });
    services = (parseYaml(stdout) as { services: Record<string, any> }).services;
  });

  it('validates, and runs the service built from the Dockerfile after its stores are healthy and the bucket made', () => {
    expect(Object.keys(services).sort()).to.deep.equal(['annals', 'eventstore', 'mailpit', 'minio', 'minio-bucket', 'mongodb']);
    const annals = services['annals'];
    expect(path.resolve(annals.build.context)).to.equal(PROJECT_ROOT);
    expect(annals.depends_on).to.deep.include({
      eventstore: { condition: 'service_healthy' },
      mongodb: { condition: 'service_healthy' },
      'minio-bucket': { condition: 'service_completed_successfully' },
    });
    expect(services['minio-bucket'].depends_on).to.deep.include({ minio: { condition: 'service_healthy' } });
    expect(services['minio-bucket'].restart).to.equal('no');
    expect(services['minio-bucket'].entrypoint.join(' ')).to.include(`mc mb --ignore-existing local/${annals.environment.S3_BUCKET}`);
  });

  it('sets every setting the service requires with these stores, each valid by the service\'s own rules', () => {
    const environment = services['annals'].environment as Record<string, string>;
    const config = loadConfig(environment);
    expect(config.eventStore).to.deep.equal({ kind: 'eventstoredb', connectionString: 'esdb://eventstore:2113?tls=false' });
    expect(config.readModels).to.deep.equal({ kind: 'mongodb', url: 'mongodb://mongodb:27017/annals' });
    expect(config.sessionSecret).to.be.a('string');
    expect(config.secretsKey).to.be.a('string');
    expect(config.media.blobs).to.deep.include({ kind: 's3', bucket: 'annals-media', endpoint: 'http://minio:9000', forcePathStyle: true });
    expect(config.contactForms.smtpUrl).to.equal('smtp://mailpit:1025');
    // The MinIO credentials the service uses are the server's.
    expect(environment['S3_ACCESS_KEY_ID']).to.equal(services['minio'].environment.MINIO_ROOT_USER);
    expect(environment['S3_SECRET_ACCESS_KEY']).to.equal(services['minio'].environment.MINIO_ROOT_PASSWORD);
  });
});

describe('Dockerfile: multi-stage, non-root, production dependencies only, HEALTHCHECK, node as PID 1', function () {
  this.timeout(180_000);

  it('builds in one stage, installs production dependencies in another, and runs as node on dist/ with a health check', () => {
    const all = stages();
    const runtime = [...all.values()].at(-1)!;
    expect(all.size).to.be.at.least(3);
    const runs = (steps: Array<{ instruction: string; args: string }>) => steps.filter((s) => s.instruction === 'RUN').map((s) => s.args).join('\n');
    expect(runs(all.get('build')!)).to.include('npm run build');
    expect(runs(all.get('production-dependencies')!)).to.include('npm ci --omit=dev');
    // Installed with --ignore-scripts: every native addon among the production dependencies is built after.
    const rebuilt = /npm rebuild ([^\n&]+)/.exec(runs(all.get('production-dependencies')!))?.[1]?.trim().split(/\s+/) ?? [];
    const addons = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: PROJECT_ROOT, encoding: 'utf8' })
      .split('\n')
      .filter((dir) => dir && fs.existsSync(path.join(dir, 'binding.gyp')))
      .map((dir) => path.relative(path.join(PROJECT_ROOT, 'node_modules'), dir));
    expect(addons).to.include.members(['better-sqlite3', 'zstd-napi']);
    expect(rebuilt).to.have.members(addons);
    // The runtime stage installs nothing: it copies compiled output and production dependencies.
    expect(runs(runtime)).not.to.match(/npm (ci|install)/);
    const copies = runtime.filter((s) => s.instruction === 'COPY').map((s) => s.args);
    expect(copies).to.include.members(['--from=production-dependencies /app/node_modules ./node_modules', '--from=build /app/dist ./dist']);
    const users = runtime.filter((s) => s.instruction === 'USER');
    expect(users.at(-1)?.args).to.equal('node');
    expect(runtime.find((s) => s.instruction === 'HEALTHCHECK')?.args).to.include('/healthz');
    // Exec form: node itself is PID 1 and gets SIGTERM (no shell in between).
    expect(runtime.find((s) => s.instruction === 'CMD')?.args).to.equal('["node", "dist/src/main.js"]');
    expect(runtime.some((s) => s.instruction === 'ENTRYPOINT')).to.equal(false);
    // Everything copied from the build context exists.
    for (const step of dockerfile().filter((s) => s.instruction === 'COPY' && !s.args.startsWith('--from'))) {
      for (const source of step.args.split(/\s+/).slice(0, -1)) expect(fs.existsSync(path.join(PROJECT_ROOT, source)), `COPY ${source}`).to.equal(true);
    }
  });

  it('the runtime stage\'s files with production dependencies only run the service, the annals CLI and the help corpus', async () => {
    await compiledBuild();
    // The image's /app: package.json, dist/, bin/, docs/help/ and the production dependency tree alone.
    const app = path.join(tempDir(), 'app');
    fs.mkdirSync(path.join(app, 'node_modules'), { recursive: true });
    fs.mkdirSync(path.join(app, 'docs'));
    fs.copyFileSync(path.join(PROJECT_ROOT, 'package.json'), path.join(app, 'package.json'));
    for (const folder of ['dist', 'bin', path.join('docs', 'help')]) fs.cpSync(path.join(PROJECT_ROOT, folder), path.join(app, folder), { recursive: true });
    const production = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: PROJECT_ROOT, encoding: 'utf8' })
      .split('\n')
      .map((line) => path.relative(path.join(PROJECT_ROOT, 'node_modules'), line))
      .filter((relative) => relative !== '' && !relative.startsWith('..') && !relative.includes(`${path.sep}node_modules${path.sep}`));
    expect(production).to.include('better-sqlite3').and.not.include('tsx').and.not.include('typescript');
    for (const name of production) {
      fs.mkdirSync(path.dirname(path.join(app, 'node_modules', name)), { recursive: true });
      fs.symlinkSync(path.join(PROJECT_ROOT, 'node_modules', name), path.join(app, 'node_modules', name));
    }

    const dataDir = path.join(tempDir(), 'data');
    const cli = (args: string[]) => runProgram(process.execPath, [path.join(app, 'bin', 'annals.mjs'), ...args], { DATA_DIR: dataDir });
    const boot = await cli(['bootstrap', '--project', 'Image', '--plan', 'business', '--admin-email', 'image@example.com', '--admin-password', 'correct horse battery', '--json']);
    expect(boot.code, boot.stderr).to.equal(0);
    const { agentKey } = JSON.parse(boot.stdout) as { agentKey: string };

    const { spawn } = await import('node:child_process');
    const { EVENTSTORE_CONNECTION_STRING: _e, MONGODB_URL: _m, ...inherited } = process.env;
    const service = spawn(process.execPath, ['dist/src/main.js'], { cwd: app, env: { ...inherited, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let output = '';
      const url = await new Promise<string>((resolve, reject) => {
        service.stdout!.on('data', (d: Buffer) => {
          output += d.toString();
          const match = /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"annals listening"/.exec(output);
          if (match) resolve(match[1]!);
        });
        service.stderr!.on('data', (d: Buffer) => (output += d.toString()));
        service.on('exit', () => reject(new Error(`the service exited:\n${output}`)));
      });
      expect((await fetch(`${url}/healthz`)).status).to.equal(200);
      // The help corpus (docs/help, not compiled) is found from dist/ through the remote MCP tools.
      const client = new Client({ name: 'image-check', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/admin/v1/mcp`), { requestInit: { headers: { Authorization: `Bearer ${agentKey}` } } }));
      try {
        const answer = (await client.callTool({ name: 'search_admin_help', arguments: { query: 'webhook signature' } })) as { isError?: boolean; content: Array<{ text: string }> };
        expect(answer.isError ?? false, answer.content[0]?.text).to.equal(false);
        expect(JSON.parse(answer.content[0]!.text).results[0].articleId).to.equal('webhooks');
      } finally {
        await client.close();
      }
    } finally {
      service.kill('SIGTERM');
      await new Promise((resolve) => (service.exitCode !== null ? resolve(null) : service.once('exit', resolve)));
    }
  });
});

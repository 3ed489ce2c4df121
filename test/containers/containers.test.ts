import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import vm from 'node:vm';
import { expect } from 'chai';
import { parse as parseYaml } from 'yaml';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadConfig } from '../../src/config/config.ts';
import { compiledBuild, PROJECT_ROOT } from '../support/compiled-build.ts';
import { curl, dockerCompose, needing, requireProgram } from '../support/system-program.ts';
import { reviewConsoleLinkFor } from '../../src/review-notices/review-notice-messages.ts';
import { startAdminFixture } from '../admin/support.ts';
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
    expect(Object.keys(services).sort()).to.deep.equal(['annals', 'eventstore', 'mailpit', 'minio', 'minio-bucket', 'mongodb', 'mongodb-replica-set']);
    const annals = services['annals'];
    expect(path.resolve(annals.build.context)).to.equal(PROJECT_ROOT);
    expect(annals.depends_on).to.deep.include({
      eventstore: { condition: 'service_healthy' },
      mongodb: { condition: 'service_healthy' },
      'mongodb-replica-set': { condition: 'service_completed_successfully' },
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
    // The keys' database beside the read models' (a rebuild never drops it).
    expect(config.readModels).to.deep.equal({ kind: 'mongodb', url: 'mongodb://mongodb:27017/annals?replicaSet=rs0', keysDatabase: 'annals_keys' });
    expect(config.sessionSecret).to.be.a('string');
    expect(config.secretsKey).to.be.a('string');
    expect(config.media.blobs).to.deep.include({ kind: 's3', bucket: 'annals-media', endpoint: 'http://minio:9000', forcePathStyle: true });
    expect(config.contactForms.smtpUrl).to.equal('smtp://mailpit:1025');
    // The MinIO credentials the service uses are the server's.
    expect(environment['S3_ACCESS_KEY_ID']).to.equal(services['minio'].environment.MINIO_ROOT_USER);
    expect(environment['S3_SECRET_ACCESS_KEY']).to.equal(services['minio'].environment.MINIO_ROOT_PASSWORD);
  });
  it('CONSOLE_URL is the console the service serves, so the links in notices open it (not /admin/v1, where they answered 404)', async function () {
    this.timeout(60_000);
    const environment = services['annals'].environment as Record<string, string>;
    const consoleUrl = new URL(loadConfig(environment).contactForms.consoleUrl!);
    // The address a browser on the machine running compose uses: the service's published port, on localhost.
    const published = (services['annals'].ports as Array<{ published: number | string; target: number }>).find((port) => Number(port.target) === 8080)!;
    expect([consoleUrl.protocol, consoleUrl.hostname, consoleUrl.port]).to.deep.equal(['http:', 'localhost', String(published.published)]);
    const f = await startAdminFixture({ env: { CONSOLE_URL: environment['CONSOLE_URL']! } });
    try {
      // A review notice's link, as the service writes it, opened on the running service.
      const link = new URL(reviewConsoleLinkFor(consoleUrl.href, f.project.projectId, '7d9e5d9a-3f3a-4c47-9a55-0a4f2f1d0001'));
      const opened = await fetch(new URL(link.pathname, f.service.url), { headers: { Accept: 'text/html' } });
      expect(opened.status, link.pathname).to.equal(200);
      expect(opened.headers.get('content-type')).to.match(/^text\/html/);
      // What the old value linked to.
      const before = await fetch(new URL(`/admin/v1/p/${f.project.projectId}/review/7d9e5d9a-3f3a-4c47-9a55-0a4f2f1d0001`, f.service.url), { headers: { Accept: 'text/html' } });
      expect(before.status).to.equal(404);
    } finally {
      await f.stop();
    }
  });

  it('MongoDB is a single-node replica set (transactions), initiated once by a one-shot service; the service names the set', () => {
    const mongodb = services['mongodb'];
    const command = mongodb.command as string[];
    const name = command[command.indexOf('--replSet') + 1];
    expect(name).to.equal('rs0');
    expect(command).to.include('--bind_ip_all');
    const url = new URL(services['annals'].environment.MONGODB_URL as string);
    expect(url.searchParams.get('replicaSet')).to.equal(name);
    expect(mongodb.healthcheck.test.join(' ')).to.include('db.hello().isWritablePrimary');
    const init = services['mongodb-replica-set'];
    expect(init.image).to.equal(mongodb.image);
    expect(init.depends_on).to.deep.include({ mongodb: { condition: 'service_started' } });
    expect(init.restart).to.equal('no');
    const entrypoint = (init.entrypoint as string[]).join(' ');
    // Waits for mongod to answer, then runs the script below (compose writes $$ for a literal $).
    expect(entrypoint).to.include(`until mongosh --quiet --host ${url.host} --eval 'db.adminCommand("ping")'`);
    expect(entrypoint).to.match(new RegExp(`mongosh --quiet --host ${url.host} --eval "\\$\\$?REPLICA_SET_INIT"$`));

    // The init script, run as mongosh would run it against three servers: one never initiated, one
    // initiated already (a restart), one failing otherwise.
    const script = new vm.Script(init.environment.REPLICA_SET_INIT as string);
    const run = (status: () => unknown) => {
      const initiated: unknown[] = [];
      let hellos = 0;
      const printed: string[] = [];
      const sandbox = {
        rs: { status, initiate: (config: unknown) => initiated.push(config) },
        db: { hello: () => ({ isWritablePrimary: ++hellos > 2 }) },
        sleep: () => undefined,
        print: (line: string) => printed.push(line),
      };
      script.runInNewContext(sandbox);
      return { initiated, printed };
    };
    const fresh = run(() => {
      throw Object.assign(new Error('no replset config has been received'), { codeName: 'NotYetInitialized' });
    });
    expect(fresh.initiated).to.deep.equal([{ _id: name, members: [{ _id: 0, host: url.host }] }]);
    expect(fresh.printed.at(-1)).to.include('is primary');
    expect(run(() => ({ ok: 1 })).initiated).to.deep.equal([]);
    expect(() => run(() => {
      throw Object.assign(new Error('unauthorized'), { codeName: 'Unauthorized' });
    })).to.throw('unauthorized');
    // The member's address is the mongodb service's name and port, which the other containers resolve.
    expect(url.hostname).to.equal('mongodb');
    expect(url.port).to.equal('27017');
  });

  it('EventStoreDB is healthy only once its node is the leader, which takes writes (not on /health/live, which answers before)', async function () {
    requireProgram(this, curl);
    const check = services['eventstore'].healthcheck.test as string[];
    expect(check[0]).to.equal('CMD-SHELL');
    expect(check[1]).not.to.include('/health/live');
    // The node's HTTP API, as a stand-in answering GET /info as EventStoreDB 24.10 does (state in lower case).
    let info: { status: number; body: string } = { status: 200, body: '' };
    const server = http.createServer((request, response) => {
      if (request.url === '/info') response.writeHead(info.status, { 'content-type': 'application/json' }).end(info.body);
      else response.writeHead(204).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const healthy = async (): Promise<boolean> => {
      const command = check[1]!.replace('localhost:2113', `127.0.0.1:${port}`);
      expect(command).to.not.equal(check[1]);
      try {
        await run('sh', ['-c', command], { timeout: 10_000 });
        return true;
      } catch {
        return false;
      }
    };
    const node = (state: string) => JSON.stringify({ dbVersion: '24.10.0', esVersion: '24.10.0', state, features: { projections: false } });
    try {
      for (const state of ['initializing', 'discoverleader', 'unknown', 'preleader', 'follower', 'readonlyreplica', 'shuttingdown']) {
        info = { status: 200, body: node(state) };
        expect(await healthy(), state).to.equal(false);
      }
      info = { status: 503, body: '' };
      expect(await healthy(), 'HTTP 503').to.equal(false);
      info = { status: 200, body: node('leader') };
      expect(await healthy(), 'leader').to.equal(true);
      info = { status: 200, body: JSON.stringify({ esVersion: '24.10.0', state: 'leader' }, null, 2) };
      expect(await healthy(), 'leader, pretty-printed').to.equal(true);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(await healthy(), 'nothing listening').to.equal(false);
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
    compiledBuild();
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

import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { collect, type RecordedEvent } from '../../src/event-store/event-store.ts';
import { hashApiKey } from '../../src/security/api-keys.ts';
import { verifyPassword } from '../../src/security/password-hashing.ts';
import { tempDir } from '../support/temp-dir.ts';
import { runEntry, type Finished } from '../support/child-process.ts';

const PASSWORD = 'correct horse battery';

function cli(dataDir: string, args: string[], env: Record<string, string> = {}): Promise<Finished> {
  return runEntry('src/cli/main.ts', args, { DATA_DIR: dataDir, ANNALS_ADMIN_PASSWORD: '', ...env });
}

const bootstrapArgs = (overrides: Record<string, string | null> = {}): string[] => {
  const flags: Record<string, string | null> = {
    '--project': 'Acme Site',
    '--plan': 'free',
    '--admin-email': 'admin@acme.example',
    '--admin-password': PASSWORD,
    ...overrides,
  };
  return ['bootstrap', ...Object.entries(flags).flatMap(([flag, value]) => (value === null ? [] : [flag, value]))];
};

/** The one JSON object a command prints: stdout must hold exactly that. */
function onlyJson(result: Finished): Record<string, unknown> {
  expect(result.code, result.stderr).to.equal(0);
  const lines = result.stdout.trim().split('\n');
  expect(lines, result.stdout).to.have.length(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

async function readLog(dataDir: string): Promise<{ head: bigint | null; events: RecordedEvent[] }> {
  const file = path.join(dataDir, 'events.sqlite');
  if (!fs.existsSync(file)) return { head: null, events: [] };
  const store = SqliteEventStore.open(file);
  try {
    return { head: await store.headPosition(), events: await collect(store.readAll({ after: 'start' })) };
  } finally {
    await store.close();
  }
}

describe('operator CLI: bootstrap, users, keys, projects', function () {
  this.timeout(120_000);

  it('bootstrap prints exactly one JSON object with the keys shown once, progress on stderr, secrets only as hashes in the log', async () => {
    const dataDir = tempDir();
    const result = await cli(dataDir, [...bootstrapArgs({ '--admin-email': 'Admin@Acme.example' }), '--locales', 'en,ja', '--project-slug', 'acme']);
    const out = onlyJson(result);
    expect(Object.keys(out)).to.deep.equal(['tenantId', 'projectId', 'adminEmail', 'agentKey', 'publicApiKey']);
    expect(out['adminEmail']).to.equal('admin@acme.example');
    expect(out['agentKey']).to.match(/^sk-agent-[A-Za-z0-9_-]{43}$/);
    expect(out['publicApiKey']).to.match(/^service_pub_[A-Za-z0-9_-]{43}$/);
    expect(result.stderr).to.match(/bootstrap: tenant .* project .* \(slug acme\)/);
    expect(result.stderr).to.not.include(out['agentKey'] as string);

    const { events } = await readLog(dataDir);
    const byType = (type: string) => events.filter((e) => e.type === type);
    expect(byType('project.created')[0]!.data).to.deep.include({ projectId: out['projectId'], tenantId: out['tenantId'], slug: 'acme', plan: 'free', contentLocales: { locales: ['en', 'ja'], defaultLocale: 'en' } });
    const user = byType('user.created')[0]!.data as { email: string; role: string; passwordHash: string };
    expect(user).to.include({ email: 'admin@acme.example', role: 'tenant_admin' });
    expect(await verifyPassword(PASSWORD, user.passwordHash)).to.equal(true);
    expect(byType('agent-key.issued')[0]!.data).to.deep.include({ scope: 'full', hash: hashApiKey(out['agentKey'] as string) });
    expect(byType('public-key.issued')[0]!.data).to.deep.include({ hash: hashApiKey(out['publicApiKey'] as string) });
    for (const event of events) {
      const text = JSON.stringify(event, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
      for (const secret of [PASSWORD, out['agentKey'] as string, out['publicApiKey'] as string]) expect(text).to.not.include(secret);
      expect(event.metadata.actor.type).to.equal('operator');
    }
  });

  it('bad input exits 2 (usage, invalid values) or 1 (taken names) with one clear line, and writes nothing', async () => {
    const dataDir = tempDir();
    // Invalid values on an empty data folder: refused before the stores are even opened.
    const badPlan = await cli(dataDir, bootstrapArgs({ '--plan': 'gold' }));
    expect(badPlan.code).to.equal(2);
    expect(badPlan.stderr.trim()).to.equal('VALIDATION_ERROR: plan must be one of free, solo, standard, business, enterprise');
    expect(badPlan.stdout).to.equal('');
    expect(fs.existsSync(path.join(dataDir, 'events.sqlite'))).to.equal(false);

    expect(onlyJson(await cli(dataDir, bootstrapArgs()))).to.have.property('projectId');
    const { head } = await readLog(dataDir);
    expect(head).to.not.equal(null);

    const cases: Array<{ args: string[]; env?: Record<string, string>; code: number; line: RegExp }> = [
      { args: bootstrapArgs({ '--project': 'Other', '--plan': 'platinum' }), code: 2, line: /^VALIDATION_ERROR: plan must be one of/ },
      { args: bootstrapArgs({ '--project': 'Other', '--admin-email': 'not-an-email' }), code: 2, line: /^VALIDATION_ERROR: email must be an e-mail address/ },
      { args: bootstrapArgs({ '--project': 'Other', '--admin-email': 'o@acme.example', '--admin-password': 'short' }), code: 2, line: /^VALIDATION_ERROR: password must be at least 8 characters/ },
      { args: bootstrapArgs({ '--project': 'Other', '--admin-email': 'o@acme.example', '--admin-password': null }), code: 2, line: /^missing --admin-password \(or set ANNALS_ADMIN_PASSWORD\)/ },
      { args: bootstrapArgs({ '--project': null }), code: 2, line: /^missing --project/ },
      { args: [...bootstrapArgs({ '--project': 'Other' }), '--colour', 'red'], code: 2, line: /Unknown option '--colour'/ },
      { args: [...bootstrapArgs({ '--project': 'Other', '--admin-email': 'o@acme.example' }), '--project-slug', 'Not A Slug'], code: 2, line: /^VALIDATION_ERROR: slug must be/ },
      { args: [...bootstrapArgs({ '--project': 'Other', '--admin-email': 'o@acme.example' }), '--locales', 'en,klingon'], code: 2, line: /^VALIDATION_ERROR: locales: "klingon"/ },
      { args: bootstrapArgs({ '--project': 'Acme  site', '--admin-email': 'o@acme.example' }), code: 1, line: /^CONFLICT: The project slug "acme-site" is already in use\./ },
      { args: bootstrapArgs({ '--project': 'Other', '--admin-email': 'ADMIN@acme.example' }), code: 1, line: /^CONFLICT: The e-mail address "admin@acme\.example" is already in use\./ },
      { args: ['bootstrap', '--project', 'Other', '--plan', 'free', '--admin-email', 'o@acme.example'], env: { ANNALS_ADMIN_PASSWORD: 'short' }, code: 2, line: /^VALIDATION_ERROR: password must be at least 8/ },
    ];
    for (const c of cases) {
      const result = await cli(dataDir, c.args, c.env);
      expect(result.code, `${c.args.join(' ')}\n${result.stderr}`).to.equal(c.code);
      expect(result.stdout, c.args.join(' ')).to.equal('');
      expect(result.stderr.split('\n').find((l) => l.trim() !== '' && !l.startsWith('bootstrap:'))).to.match(c.line);
    }
    expect((await readLog(dataDir)).head).to.equal(head);
  });

  it('users create, keys create and revoke, projects set-plan: one JSON object each; plan limits and unknown ids exit 1', async () => {
    const dataDir = tempDir();
    const boot = onlyJson(await cli(dataDir, bootstrapArgs({ '--plan': 'solo' }), {}));
    const tenantId = boot['tenantId'] as string;
    const projectId = boot['projectId'] as string;

    // The password from ANNALS_ADMIN_PASSWORD, off the command line.
    const editor = onlyJson(await cli(dataDir, ['users', 'create', '--tenant', tenantId, '--email', 'Ed@Acme.example', '--role', 'editor'], { ANNALS_ADMIN_PASSWORD: 'editor password' }));
    expect(Object.keys(editor)).to.deep.equal(['userId', 'email', 'role']);
    expect(editor).to.deep.include({ email: 'ed@acme.example', role: 'tenant_user' });
    const reviewer = onlyJson(await cli(dataDir, ['users', 'create', '--tenant', tenantId, '--email', 'rev@acme.example', '--role', 'tenant_admin', '--password', PASSWORD]));
    expect(reviewer).to.deep.include({ role: 'tenant_admin' });
    const taken = await cli(dataDir, ['users', 'create', '--tenant', tenantId, '--email', 'ED@acme.example', '--role', 'reviewer', '--password', PASSWORD]);
    expect(taken.code).to.equal(1);
    expect(taken.stderr).to.match(/^CONFLICT: The e-mail address "ed@acme\.example" is already in use/);
    const badRole = await cli(dataDir, ['users', 'create', '--tenant', tenantId, '--email', 'x@acme.example', '--role', 'owner', '--password', PASSWORD]);
    expect(badRole.code).to.equal(2);
    expect(badRole.stderr).to.match(/^VALIDATION_ERROR: role must be tenant_admin or tenant_user/);
    const noTenant = await cli(dataDir, ['users', 'create', '--tenant', '00000000-0000-4000-8000-000000000000', '--email', 'x@acme.example', '--role', 'editor', '--password', PASSWORD]);
    expect(noTenant.code).to.equal(1);
    expect(noTenant.stderr).to.match(/^NOT_FOUND: tenant not found/);

    // Solo: the bootstrap agent key is the one active key allowed.
    const second = await cli(dataDir, ['keys', 'create', '--project', projectId, '--type', 'agent', '--scope', 'content']);
    expect(second.code).to.equal(1);
    expect(second.stdout).to.equal('');
    expect(second.stderr).to.match(/^PLAN_REQUIRED: The Solo plan allows one active agent key per project/);

    const plan = onlyJson(await cli(dataDir, ['projects', 'set-plan', '--project', projectId, '--plan', 'standard']));
    expect(plan).to.deep.equal({ projectId, plan: 'standard', previousPlan: 'solo' });
    const badPlan = await cli(dataDir, ['projects', 'set-plan', '--project', projectId, '--plan', 'gold']);
    expect(badPlan.code).to.equal(2);

    const agent = onlyJson(await cli(dataDir, ['keys', 'create', '--project', projectId, '--type', 'agent', '--scope', 'content', '--name', 'CI']));
    expect(agent).to.deep.include({ projectId, type: 'agent', scope: 'content', name: 'CI' });
    expect(agent['key']).to.match(/^sk-agent-/);
    expect(agent['prefix']).to.equal((agent['key'] as string).slice(0, 12));
    const pub = onlyJson(await cli(dataDir, ['keys', 'create', '--project', projectId, '--type', 'public']));
    expect(pub).to.deep.include({ projectId, type: 'public' });
    expect(pub['key']).to.match(/^service_pub_/);

    const revokeAgent = onlyJson(await cli(dataDir, ['keys', 'revoke', '--project', projectId, '--key-id', agent['keyId'] as string]));
    expect(revokeAgent).to.deep.include({ keyId: agent['keyId'], type: 'agent', alreadyRevoked: false });
    const revokePublic = onlyJson(await cli(dataDir, ['keys', 'revoke', '--project', projectId, '--key-id', pub['keyId'] as string]));
    expect(revokePublic).to.deep.include({ type: 'public', alreadyRevoked: false });
    expect(onlyJson(await cli(dataDir, ['keys', 'revoke', '--project', projectId, '--key-id', pub['keyId'] as string]))).to.deep.include({ alreadyRevoked: true });
    const unknown = await cli(dataDir, ['keys', 'revoke', '--project', projectId, '--key-id', '00000000-0000-4000-8000-000000000000']);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.match(/^NOT_FOUND: agent key not found/);
    const badType = await cli(dataDir, ['keys', 'create', '--project', projectId, '--type', 'secret']);
    expect(badType.code).to.equal(2);
    expect(badType.stderr).to.match(/^--type must be agent or public/);
    const badScope = await cli(dataDir, ['keys', 'create', '--project', projectId, '--type', 'agent', '--scope', 'admin']);
    expect(badScope.code).to.equal(2);
    expect(badScope.stderr).to.match(/^VALIDATION_ERROR: scope must be one of full, content, schema/);

    const { events } = await readLog(dataDir);
    const keyEvents = events.filter((e) => e.streamId === `project-keys-${projectId}`).map((e) => e.type);
    expect(keyEvents).to.deep.equal(['agent-key.issued', 'public-key.issued', 'agent-key.issued', 'public-key.issued', 'agent-key.revoked', 'public-key.revoked']);
    expect(events.filter((e) => e.type === 'project.plan-changed')).to.have.length(1);
    for (const event of events) {
      const text = JSON.stringify(event, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
      for (const secret of ['editor password', PASSWORD, agent['key'] as string, pub['key'] as string]) expect(text).to.not.include(secret);
    }
  });

  it('users set-role and users roles: an operator gives a member a role (when no tenant admin is left); an unknown custom role exits 1', async () => {
    const dataDir = tempDir();
    const boot = onlyJson(await cli(dataDir, bootstrapArgs()));
    const tenantId = boot['tenantId'] as string;
    const member = onlyJson(await cli(dataDir, ['users', 'create', '--tenant', tenantId, '--email', 'member@acme.example', '--role', 'tenant_user', '--password', PASSWORD]));
    const promoted = onlyJson(await cli(dataDir, ['users', 'set-role', '--user', member['userId'] as string, '--role', 'tenant_admin']));
    expect(promoted).to.deep.equal({ userId: member['userId'], email: 'member@acme.example', role: 'tenant_admin', roleId: null });
    const unknown = await cli(dataDir, ['users', 'set-role', '--user', member['userId'] as string, '--role', 'tenant_user', '--role-id', '00000000-0000-4000-8000-000000000000']);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.match(/^NOT_FOUND: The organisation has no role 00000000-0000-4000-8000-000000000000/);
    expect(onlyJson(await cli(dataDir, ['users', 'roles', '--tenant', tenantId]))).to.deep.equal({ tenantId, roles: [] });
    const { events } = await readLog(dataDir);
    const changed = events.filter((e) => e.type === 'user.role-changed');
    expect(changed.map((e) => e.data)).to.deep.equal([{ userId: member['userId'], role: 'tenant_admin', previousRole: 'tenant_user' }]);
    expect(changed[0]!.metadata.actor).to.deep.include({ type: 'operator' });
  });

  it('prints the usage of every group with --help, and exits 2 for an unknown command', async () => {
    const dataDir = tempDir();
    const help = await cli(dataDir, ['--help']);
    expect(help.code).to.equal(0);
    for (const line of ['projections status', 'bootstrap --project', 'users create', 'users set-role', 'users roles', 'keys create', 'keys revoke', 'projects set-plan', 'ANNALS_ADMIN_PASSWORD']) expect(help.stdout).to.include(line);
    const unknown = await cli(dataDir, ['tenants', 'list']);
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.match(/^unknown command: tenants list/);
    const unknownSub = await cli(dataDir, ['users', 'delete']);
    expect(unknownSub.code).to.equal(2);
    expect(unknownSub.stderr).to.match(/^unknown users command: delete/);
  });
});

import path from 'node:path';
import { expect } from 'chai';
import { ManualClock } from '../../src/clock.ts';
import { EventLog } from '../../src/event-store/event-log.ts';
import type { EventStore } from '../../src/event-store/event-store.ts';
import { collect } from '../../src/event-store/event-store.ts';
import { UnavailableError } from '../../src/event-store/errors.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { serviceEventCatalog } from '../../src/service/event-catalog.ts';
import { AccessService, PROJECT_SLUG_SCOPE, slugFromName, USER_EMAIL_SCOPE } from '../../src/application/access-service.ts';
import { loadAggregate } from '../../src/application/command-handler.ts';
import { Reservations } from '../../src/application/reservations.ts';
import { keyDecider } from '../../src/domain/access/key-decider.ts';
import { userDecider } from '../../src/domain/access/user-decider.ts';
import { projectDecider } from '../../src/domain/access/project-decider.ts';
import { projectKeysStream, projectStream, userStream } from '../../src/domain/access/access-streams.ts';
import type { Caller } from '../../src/domain/access/caller.ts';
import { DomainError, type DomainErrorCode } from '../../src/domain/domain-error.ts';
import { hashApiKey } from '../../src/security/api-keys.ts';
import { verifyPassword } from '../../src/security/password-hashing.ts';
import { tempDir } from '../support/temp-dir.ts';

const operator: Caller = { kind: 'operator', operatorId: 'ops' };
const PASSWORD = 'correct horse battery';

async function failure(promise: Promise<unknown>, code: DomainErrorCode, message?: RegExp): Promise<DomainError> {
  const caught = await promise.then(
    () => null,
    (error: unknown) => error,
  );
  expect(caught, `expected ${code}`).to.be.instanceOf(DomainError);
  const error = caught as DomainError;
  expect(error.code, error.message).to.equal(code);
  if (message) expect(error.message).to.match(message);
  return error;
}

/** Every event of the log as JSON text (data and metadata), for secret scans. */
async function logText(log: EventLog): Promise<string[]> {
  const events = await collect(log.readAll({ after: 'start' }));
  return events.map((e) => JSON.stringify({ ...e, revision: String(e.revision), position: String(e.position) }));
}

describe('AccessService: tenants, projects, users and keys on the event log', () => {
  let store: SqliteEventStore;
  let log: EventLog;
  let access: AccessService;
  let reservations: Reservations;

  beforeEach(() => {
    store = SqliteEventStore.open(path.join(tempDir(), 'events.sqlite'));
    log = new EventLog(store, serviceEventCatalog(), new ManualClock('2026-05-01T09:00:00.000Z'));
    access = new AccessService({ log, clock: new ManualClock('2026-05-01T09:00:00.000Z') });
    reservations = new Reservations(log);
  });
  afterEach(() => store.close());

  async function tenantAndProject(plan = 'free', slug = 'acme-site') {
    const tenant = await access.createTenant(operator, { name: 'Acme' });
    const project = await access.createProject(operator, { tenantId: tenant.tenantId, name: 'Acme Site', plan, slug });
    return { tenantId: tenant.tenantId, projectId: project.projectId };
  }

  it('creates a tenant, a project, a user and keys, each returning its ids and the position of its last append', async () => {
    const tenant = await access.createTenant(operator, { name: 'Acme' });
    const project = await access.createProject(operator, {
      tenantId: tenant.tenantId,
      name: 'Acme Site',
      plan: 'standard',
      contentLocales: { locales: ['en', 'JA'], defaultLocale: 'en' },
    });
    expect(project).to.deep.include({ tenantId: tenant.tenantId, slug: 'acme-site', plan: 'standard', contentLocales: { locales: ['en', 'ja'], defaultLocale: 'en' } });
    expect(project.position > tenant.position).to.equal(true);

    const user = await access.createUser(operator, { tenantId: tenant.tenantId, email: '  Jane@Example.COM ', password: PASSWORD, role: 'editor' });
    expect(user).to.deep.include({ tenantId: tenant.tenantId, email: 'jane@example.com', role: 'tenant_user' });
    const stored = (await loadAggregate(log, userStream(user.userId), userDecider)).state!;
    expect(await verifyPassword(PASSWORD, stored.passwordHash)).to.equal(true);
    expect(await reservations.ownerOf(USER_EMAIL_SCOPE, 'jane@example.com')).to.equal(user.userId);
    expect(await reservations.ownerOf(PROJECT_SLUG_SCOPE, 'acme-site')).to.equal(project.projectId);

    const agent = await access.issueAgentKey(operator, project.projectId, 'content', 'CI agent');
    expect(agent.key).to.match(/^sk-agent-[A-Za-z0-9_-]{43}$/);
    expect(agent).to.deep.include({ projectId: project.projectId, prefix: agent.key.slice(0, 12), scope: 'content', name: 'CI agent' });
    const pub = await access.issuePublicKey(operator, project.projectId);
    expect(pub.key).to.match(/^service_pub_[A-Za-z0-9_-]{43}$/);
    expect(pub.position).to.equal(await log.headPosition());

    // Keys verify by hash: the stored hash is the SHA-256 of the key shown once.
    const keys = (await loadAggregate(log, projectKeysStream(project.projectId), keyDecider)).state;
    expect(keys.agentKeys.map((k) => [k.id, k.hash, k.prefix])).to.deep.equal([[agent.keyId, hashApiKey(agent.key), agent.prefix]]);
    expect(keys.publicKeys.map((k) => [k.id, k.hash])).to.deep.equal([[pub.keyId, hashApiKey(pub.key)]]);
    expect(keys.agentKeys.find((k) => k.hash === hashApiKey(`sk-agent-${'x'.repeat(43)}`))).to.equal(undefined);

    // Every event names the operator as its actor.
    const events = await collect(log.readAll({ after: 'start' }));
    expect(new Set(events.map((e) => `${e.metadata.actor.type}:${e.metadata.actor.id}`))).to.deep.equal(new Set(['operator:ops']));
  });

  it('keeps clear passwords and keys out of the log: every event, data and metadata, is scanned', async () => {
    const result = await access.bootstrap(operator, { projectName: 'Scan Me', plan: 'business', adminEmail: 'admin@scan.example', adminPassword: PASSWORD });
    const { tenantId, projectId } = result;
    const other = await access.createUser(operator, { tenantId, email: 'ed@scan.example', password: 'another secret pw', role: 'tenant_user' });
    const agent = await access.issueAgentKey(operator, projectId, 'full', 'second');
    const pub = await access.issuePublicKey(operator, projectId);
    await access.revokeAgentKey(operator, projectId, agent.keyId);
    expect(other.userId).to.be.a('string');

    const secrets = [PASSWORD, 'another secret pw', result.agentKey.key, result.publicKey.key, agent.key, pub.key];
    const texts = await logText(log);
    expect(texts.length).to.be.greaterThan(8);
    for (const text of texts) for (const secret of secrets) expect(text.includes(secret), `${secret.slice(0, 12)}… in ${text.slice(0, 80)}`).to.equal(false);
    // What is there instead: hashes and display prefixes.
    expect(texts.some((t) => t.includes(hashApiKey(agent.key)))).to.equal(true);
    expect(texts.some((t) => t.includes('"passwordHash":"scrypt$'))).to.equal(true);
  });

  it('refuses an e-mail already in use, in any case, and a project slug already in use: CONFLICT', async () => {
    const { tenantId } = await tenantAndProject();
    await access.createUser(operator, { tenantId, email: 'jane@example.com', password: PASSWORD, role: 'tenant_admin' });
    const head = await log.headPosition();
    await failure(access.createUser(operator, { tenantId, email: 'JANE@example.com', password: PASSWORD, role: 'tenant_user' }), 'CONFLICT', /e-mail address "jane@example.com" is already in use/);

    const otherTenant = await access.createTenant(operator, { name: 'Other' });
    const afterTenant = await log.headPosition();
    await failure(access.createProject(operator, { tenantId: otherTenant.tenantId, name: 'Whatever', slug: 'acme-site', plan: 'solo' }), 'CONFLICT', /project slug "acme-site" is already in use/);
    // Derived from the name: "Acme Site!" -> acme-site, taken too.
    await failure(access.createProject(operator, { tenantId: otherTenant.tenantId, name: 'Acme Site!', plan: 'solo' }), 'CONFLICT');
    expect(await log.headPosition()).to.equal(afterTenant);
    expect(afterTenant! > head!).to.equal(true);
  });

  it('gives an e-mail to exactly one of many concurrent creations', async () => {
    const { tenantId } = await tenantAndProject();
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => access.createUser(operator, { tenantId, email: 'race@example.com', password: PASSWORD, role: 'tenant_user' })),
    );
    const winners = results.filter((r) => r.status === 'fulfilled');
    expect(winners).to.have.length(1);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as DomainError).code).to.equal('CONFLICT');
    const winner = (winners[0] as PromiseFulfilledResult<{ userId: string }>).value;
    expect(await reservations.ownerOf(USER_EMAIL_SCOPE, 'race@example.com')).to.equal(winner.userId);
  });

  it('claims nothing on bad input: invalid e-mail, weak password, unknown role, bad slug, bad locales, unknown tenant', async () => {
    const { tenantId } = await tenantAndProject();
    const head = await log.headPosition();
    await failure(access.createUser(operator, { tenantId, email: 'not-an-email', password: PASSWORD, role: 'tenant_user' }), 'VALIDATION_ERROR', /email/);
    await failure(access.createUser(operator, { tenantId, email: 'ok@example.com', password: 'short', role: 'tenant_user' }), 'VALIDATION_ERROR', /at least 8/);
    await failure(access.createUser(operator, { tenantId, email: 'ok@example.com', password: PASSWORD, role: 'owner' }), 'VALIDATION_ERROR', /role/);
    await failure(access.createUser(operator, { tenantId: '00000000-0000-4000-8000-000000000000', email: 'ok@example.com', password: PASSWORD, role: 'tenant_user' }), 'NOT_FOUND');
    await failure(access.createProject(operator, { tenantId, name: 'X', slug: '-bad-', plan: 'free' }), 'VALIDATION_ERROR', /slug/);
    await failure(access.createProject(operator, { tenantId, name: 'Good', slug: 'good', plan: 'gold' }), 'VALIDATION_ERROR', /plan must be one of/);
    await failure(access.createProject(operator, { tenantId, name: 'Good', slug: 'good', plan: 'free', contentLocales: { locales: ['en'], defaultLocale: 'ja' } }), 'VALIDATION_ERROR', /defaultLocale/);
    await failure(access.createProject(operator, { tenantId, name: '日本語', plan: 'free' }), 'VALIDATION_ERROR', /slug/);
    expect(await log.headPosition()).to.equal(head);
    expect(await reservations.ownerOf(USER_EMAIL_SCOPE, 'ok@example.com')).to.equal(null);
    expect(await reservations.ownerOf(PROJECT_SLUG_SCOPE, 'good')).to.equal(null);
  });

  it('releases the claim when the append after it fails, so the name can be used again', async () => {
    const { tenantId } = await tenantAndProject();
    // A store that fails appends to user streams (say, the connection drops between the claim and the append).
    const failing = new Proxy(store, {
      get(target, property, receiver) {
        if (property === 'append') {
          return (streamId: string, ...rest: Parameters<EventStore['append']> extends [string, ...infer R] ? R : never) =>
            streamId.startsWith('user-') ? Promise.reject(new UnavailableError('store went away')) : target.append(streamId, ...rest);
        }
        const value = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as EventStore;
    const flaky = new AccessService({ log: new EventLog(failing, serviceEventCatalog(), new ManualClock()), clock: new ManualClock() });
    const caught = await flaky.createUser(operator, { tenantId, email: 'lost@example.com', password: PASSWORD, role: 'tenant_user' }).then(() => null, (e: unknown) => e);
    expect(caught).to.be.instanceOf(UnavailableError);
    expect(await reservations.ownerOf(USER_EMAIL_SCOPE, 'lost@example.com')).to.equal(null);
    // It was claimed, then released: no orphaned claim.
    const reservationEvents = (await collect(log.readAll({ after: 'start' }))).filter((e) => e.type.startsWith('reservation.') && (e.data as { key: string }).key === 'lost@example.com');
    expect(reservationEvents.map((e) => e.type)).to.deep.equal(['reservation.claimed', 'reservation.released']);
    const user = await access.createUser(operator, { tenantId, email: 'lost@example.com', password: PASSWORD, role: 'tenant_user' });
    expect(await reservations.ownerOf(USER_EMAIL_SCOPE, 'lost@example.com')).to.equal(user.userId);
  });

  it('allows one active agent key on Free (PLAN_REQUIRED for a second), again after a revoke, several from Standard', async () => {
    const { projectId } = await tenantAndProject('free');
    const first = await access.issueAgentKey(operator, projectId, 'full', 'one');
    const head = await log.headPosition();
    await failure(access.issueAgentKey(operator, projectId, 'content', 'two'), 'PLAN_REQUIRED', /Free plan allows one active agent key/);
    expect(await log.headPosition()).to.equal(head);
    // Public keys are not limited.
    await access.issuePublicKey(operator, projectId);
    await access.issuePublicKey(operator, projectId);

    const revoked = await access.revokeKey(operator, projectId, first.keyId);
    expect(revoked).to.deep.include({ keyId: first.keyId, type: 'agent', changed: true, revokedAt: '2026-05-01T09:00:00.000Z' });
    const again = await access.revokeAgentKey(operator, projectId, first.keyId);
    expect(again).to.deep.include({ changed: false, position: revoked.position });
    await access.issueAgentKey(operator, projectId, 'schema', 'replacement');

    const plan = await access.changePlan(operator, projectId, 'standard');
    expect(plan).to.deep.include({ plan: 'standard', previousPlan: 'free', changed: true });
    await access.issueAgentKey(operator, projectId, 'full', 'second');
    await access.issueAgentKey(operator, projectId, 'full', 'third');
    const keys = (await loadAggregate(log, projectKeysStream(projectId), keyDecider)).state;
    expect(keys.agentKeys.filter((k) => k.revokedAt === null).map((k) => k.name)).to.deep.equal(['replacement', 'second', 'third']);
    expect(await access.changePlan(operator, projectId, 'STANDARD')).to.deep.include({ changed: false, previousPlan: 'standard' });
  });

  it('revokes public keys; unknown key ids and projects are NOT_FOUND; scopes and plans are checked', async () => {
    const { projectId } = await tenantAndProject();
    const pub = await access.issuePublicKey(operator, projectId);
    expect(await access.revokeKey(operator, projectId, pub.keyId)).to.deep.include({ type: 'public', changed: true });
    await failure(access.revokeKey(operator, projectId, '00000000-0000-4000-8000-000000000000'), 'NOT_FOUND', /key not found/);
    await failure(access.issuePublicKey(operator, '00000000-0000-4000-8000-000000000000'), 'NOT_FOUND', /project not found/);
    await failure(access.issueAgentKey(operator, projectId, 'admin', 'x'), 'VALIDATION_ERROR', /scope must be one of full, content, schema/);
    await failure(access.changePlan(operator, projectId, 'gold'), 'VALIDATION_ERROR');
  });

  it('patches content locales', async () => {
    const { projectId } = await tenantAndProject();
    const patched = await access.patchContentLocales(operator, projectId, { locales: ['en', 'ja'], defaultLocale: 'ja' });
    expect(patched).to.deep.include({ changed: true, contentLocales: { locales: ['en', 'ja'], defaultLocale: 'ja' } });
    expect((await loadAggregate(log, projectStream(projectId), projectDecider)).state!.contentLocales.defaultLocale).to.equal('ja');
    expect(await access.patchContentLocales(operator, projectId, { defaultLocale: 'ja' })).to.deep.include({ changed: false, position: patched.position });
    await failure(access.patchContentLocales(operator, projectId, { defaultLocale: 'fr' }), 'VALIDATION_ERROR');
  });

  it('applies the callers permissions and tenant isolation', async () => {
    const { tenantId, projectId } = await tenantAndProject('standard');
    const other = await tenantAndProject('standard', 'other-site');
    const admin: Caller = { kind: 'user', userId: '11111111-1111-4111-8111-111111111111', tenantId, role: 'tenant_admin' };
    const editor: Caller = { ...admin, role: 'tenant_user' };
    const agent: Caller = { kind: 'agent', keyId: '22222222-2222-4222-8222-222222222222', tenantId, projectId, scope: 'full' };

    await access.createUser(admin, { tenantId, email: 'new@example.com', password: PASSWORD, role: 'tenant_user' });
    await access.issueAgentKey(admin, projectId, 'full', 'by admin');
    await failure(access.createTenant(admin, { name: 'Mine' }), 'FORBIDDEN', /only an operator/);
    await failure(access.createUser(editor, { tenantId, email: 'x@example.com', password: PASSWORD, role: 'tenant_user' }), 'FORBIDDEN');
    await failure(access.issueAgentKey(agent, projectId, 'full', 'by agent'), 'FORBIDDEN', /Agent keys can never issue other API keys/);
    await failure(access.changePlan(agent, projectId, 'business'), 'FORBIDDEN');
    // Another tenant's project and tenant do not exist for this admin.
    await failure(access.issuePublicKey(admin, other.projectId), 'NOT_FOUND');
    await failure(access.createUser(admin, { tenantId: other.tenantId, email: 'y@example.com', password: PASSWORD, role: 'tenant_user' }), 'NOT_FOUND');
    expect(await reservations.ownerOf(USER_EMAIL_SCOPE, 'x@example.com')).to.equal(null);
  });

  describe('bootstrap', () => {
    it('writes a tenant, a project, a tenant_admin, a full agent key and a public key under one correlation id', async () => {
      const result = await access.bootstrap(operator, { projectName: 'Café Site', plan: 'free', adminEmail: 'Admin@Example.com', adminPassword: PASSWORD, contentLocales: { locales: ['en', 'ja'], defaultLocale: 'en' } });
      expect(result).to.deep.include({ projectSlug: 'cafe-site', adminEmail: 'admin@example.com', position: await log.headPosition() });
      expect(result.agentKey.key).to.match(/^sk-agent-/);
      expect(result.publicKey.key).to.match(/^service_pub_/);
      const events = await collect(log.readAll({ after: 'start' }));
      expect(events.map((e) => e.type)).to.deep.equal([
        'reservation.claimed',
        'reservation.claimed',
        'tenant.created',
        'project.created',
        'user.created',
        'agent-key.issued',
        'public-key.issued',
      ]);
      // The five writes share one correlation id (the claims go through Reservations, which makes its own).
      expect(new Set(events.slice(2).map((e) => e.metadata.correlationId)).size).to.equal(1);
      const user = (await loadAggregate(log, userStream(result.userId), userDecider)).state!;
      expect(user).to.deep.include({ role: 'tenant_admin', tenantId: result.tenantId, email: 'admin@example.com' });
      const keys = (await loadAggregate(log, projectKeysStream(result.projectId), keyDecider)).state;
      expect(keys.agentKeys[0]).to.deep.include({ scope: 'full', hash: hashApiKey(result.agentKey.key) });
    });

    it('writes nothing on bad input or a taken name', async () => {
      await access.bootstrap(operator, { projectName: 'First', plan: 'solo', adminEmail: 'first@example.com', adminPassword: PASSWORD });
      const head = await log.headPosition();
      const good = { projectName: 'Second', plan: 'solo', adminEmail: 'second@example.com', adminPassword: PASSWORD };
      await failure(access.bootstrap(operator, { ...good, plan: 'gold' }), 'VALIDATION_ERROR', /plan/);
      await failure(access.bootstrap(operator, { ...good, adminEmail: 'nope' }), 'VALIDATION_ERROR', /email/);
      await failure(access.bootstrap(operator, { ...good, adminPassword: 'short' }), 'VALIDATION_ERROR', /password/);
      await failure(access.bootstrap(operator, { ...good, projectSlug: 'Bad Slug' }), 'VALIDATION_ERROR', /slug/);
      await failure(access.bootstrap(operator, { ...good, contentLocales: { locales: ['english'], defaultLocale: 'english' } }), 'VALIDATION_ERROR', /locales/);
      await failure(access.bootstrap(operator, { ...good, projectSlug: 'first' }), 'CONFLICT', /project slug "first"/);
      await failure(access.bootstrap(operator, { ...good, adminEmail: 'FIRST@example.com' }), 'CONFLICT', /e-mail address "first@example.com"/);
      await failure(access.bootstrap({ kind: 'user', userId: '11111111-1111-4111-8111-111111111111', tenantId: '33333333-3333-4333-8333-333333333333', role: 'tenant_admin' }, good), 'FORBIDDEN');
      expect(await log.headPosition()).to.equal(head);
    });
  });

  it('derives project slugs from names', () => {
    expect(slugFromName('  My  Great Site! ')).to.equal('my-great-site');
    expect(slugFromName('Crème Brûlée & Co.')).to.equal('creme-brulee-co');
    expect(slugFromName('a'.repeat(70))).to.have.length(63);
    expect(() => slugFromName('ブログ')).to.throw(DomainError, /slug/);
  });
});

/**
 * The first tenant, project, tenant_admin and keys of an installation, all or nothing on bad input (bootstrap),
 * and the checks of its input that need no store (checkBootstrapInput). See AccessService.
 */
import { randomUUID } from 'node:crypto';
import { fold } from '../domain/decider.ts';
import type { Plan } from '../domain/plans.ts';
import { actorOf, type Caller } from '../domain/access/caller.ts';
import { emailAddress, projectSlug } from '../domain/access/access-values.ts';
import { tenantDecider } from '../domain/access/tenant-decider.ts';
import { projectDecider } from '../domain/access/project-decider.ts';
import { userDecider } from '../domain/access/user-decider.ts';
import { keyDecider, type KeyCommand, type KeyContext } from '../domain/access/key-decider.ts';
import { newApiKey } from '../security/api-keys.ts';
import { hashPassword } from '../security/password-hashing.ts';
import { PROJECT_SLUG_SCOPE, USER_EMAIL_SCOPE, type WriteOptions, type BootstrapInput, type BootstrapResult } from './access-service-types.ts';
import { slugFromName, planValue, checkPassword, taken, positionOf } from './access-input.ts';
import type { AccessWriter } from './access-writer.ts';
import type { TenantProjectAccess } from './tenant-project-access.ts';
import type { UserAccess } from './user-access.ts';

export class AccessBootstrap {
  readonly #w: AccessWriter;
  readonly #tenants: TenantProjectAccess;
  readonly #users: UserAccess;

  constructor(writer: AccessWriter, tenants: TenantProjectAccess, users: UserAccess) {
    this.#w = writer;
    this.#tenants = tenants;
    this.#users = users;
  }

  /**
   * A tenant, a project, its first tenant_admin, an agent key (scope full) and a public key.
   *
   * All or nothing on bad input: every command is first decided against the empty aggregates (each one's
   * validation and permission checks, with the very ids, password hash and key material that will be
   * written), and the slug and e-mail are checked to be free, before anything is appended. Then the slug
   * and the e-mail are claimed, so a concurrent bootstrap that takes either one fails before a tenant is
   * written; only a store failure part-way can leave a partial result (the claims of aggregates not
   * yet written are then released).
   */
  async bootstrap(caller: Caller, input: BootstrapInput, options: WriteOptions = {}): Promise<BootstrapResult> {
    const context = { caller };
    const write: WriteOptions = { correlationId: options.correlationId ?? randomUUID() };
    const ids = { tenantId: randomUUID(), projectId: randomUUID(), userId: randomUUID(), agentKeyId: randomUUID(), publicKeyId: randomUUID() };

    // 1. Decide everything, in memory.
    const { email, plan, slug } = checkBootstrapInput(input);
    const tenantCommand = { type: 'create-tenant' as const, tenantId: ids.tenantId, name: input.tenantName ?? input.projectName };
    this.#w.dryRun(tenantDecider, tenantCommand, tenantDecider.initialState(), context);
    const projectCommand = {
      type: 'create-project' as const,
      projectId: ids.projectId,
      tenantId: ids.tenantId,
      name: input.projectName,
      slug,
      plan,
      ...(input.contentLocales ? { contentLocales: input.contentLocales } : {}),
    };
    const project = fold(projectDecider, this.#w.dryRun(projectDecider, projectCommand, projectDecider.initialState(), context))!;
    const passwordHash = await hashPassword(input.adminPassword);
    const userCommand = { type: 'create-user' as const, userId: ids.userId, tenantId: ids.tenantId, email, role: 'tenant_admin', passwordHash };
    this.#w.dryRun(userDecider, userCommand, userDecider.initialState(), context);
    const agent = newApiKey('agent');
    const pub = newApiKey('public');
    const agentCommand: KeyCommand = { type: 'issue-agent-key', keyId: ids.agentKeyId, scope: 'full', name: input.agentKeyName ?? 'bootstrap', prefix: agent.prefix, hash: agent.hash };
    const publicCommand: KeyCommand = { type: 'issue-public-key', keyId: ids.publicKeyId, prefix: pub.prefix, hash: pub.hash };
    const keyContext: KeyContext = { caller, project: { id: project.id, tenantId: project.tenantId, plan: project.plan }, now: this.#w.clock.now() };
    const afterAgent = fold(keyDecider, this.#w.dryRun(keyDecider, agentCommand, keyDecider.initialState(), keyContext));
    this.#w.dryRun(keyDecider, publicCommand, afterAgent, keyContext);

    // 2. Names free? (Reads only.)
    if ((await this.#w.reservations.ownerOf(PROJECT_SLUG_SCOPE, slug)) !== null) throw taken('project slug', slug);
    if ((await this.#w.reservations.ownerOf(USER_EMAIL_SCOPE, email)) !== null) throw taken('e-mail address', email);

    // 3. Claim both names, then write.
    const actor = actorOf(caller);
    await this.#w.reservations.claim(PROJECT_SLUG_SCOPE, slug, ids.projectId, actor, 'project slug');
    let projectWritten = false;
    let userWritten = false;
    try {
      await this.#w.reservations.claim(USER_EMAIL_SCOPE, email, ids.userId, actor, 'e-mail address');
      await this.#tenants.createTenant(caller, { name: tenantCommand.name, tenantId: ids.tenantId }, write);
      await this.#tenants.createProject(caller, { tenantId: ids.tenantId, name: input.projectName, plan, slug, projectId: ids.projectId, ...(input.contentLocales ? { contentLocales: input.contentLocales } : {}) }, write);
      projectWritten = true;
      await this.#users.createUserWithHash(caller, { tenantId: ids.tenantId, email, role: 'tenant_admin', userId: ids.userId }, passwordHash, write);
      userWritten = true;
      await this.#w.keys(caller, ids.projectId, agentCommand, write);
      const publicKey = await this.#w.keys(caller, ids.projectId, publicCommand, write);
      return {
        tenantId: ids.tenantId,
        projectId: ids.projectId,
        projectSlug: slug,
        userId: ids.userId,
        adminEmail: email,
        agentKey: { keyId: ids.agentKeyId, key: agent.key, prefix: agent.prefix },
        publicKey: { keyId: ids.publicKeyId, key: pub.key, prefix: pub.prefix },
        position: positionOf(publicKey),
      };
    } catch (error) {
      if (!userWritten) await this.#w.reservations.release(USER_EMAIL_SCOPE, email, ids.userId, actor).catch(() => undefined);
      if (!projectWritten) await this.#w.reservations.release(PROJECT_SLUG_SCOPE, slug, ids.projectId, actor).catch(() => undefined);
      throw error;
    }
  }
}

/**
 * The checks of bootstrap's input that need no store (plan, e-mail, password, slug, locales, names),
 * for a caller that wants to refuse bad input before opening anything. VALIDATION_ERROR naming the
 * problem; otherwise the normalised e-mail, plan and slug. bootstrap runs it (and more) itself.
 */
export function checkBootstrapInput(input: BootstrapInput): { email: string; plan: Plan; slug: string } {
  const plan = planValue(input.plan);
  const email = emailAddress(input.adminEmail);
  checkPassword(input.adminPassword);
  const slug = projectSlug(input.projectSlug ?? slugFromName(input.projectName));
  const context = { caller: { kind: 'operator', operatorId: 'check' } as const };
  const tenantId = randomUUID();
  tenantDecider.decide({ type: 'create-tenant', tenantId, name: input.tenantName ?? input.projectName }, tenantDecider.initialState(), context);
  projectDecider.decide(
    { type: 'create-project', projectId: randomUUID(), tenantId, name: input.projectName, slug, plan, ...(input.contentLocales ? { contentLocales: input.contentLocales } : {}) },
    projectDecider.initialState(),
    context,
  );
  return { email, plan, slug };
}

/**
 * Tenants and projects: creating them (a project's slug reserved system-wide). See AccessService.
 */
import { randomUUID } from 'node:crypto';
import { assertCallerSeesTenant, type Caller } from '../domain/access/caller.ts';
import { projectSlug } from '../domain/access/access-values.ts';
import { projectStream, tenantStream } from '../domain/access/access-streams.ts';
import { tenantDecider } from '../domain/access/tenant-decider.ts';
import { projectDecider } from '../domain/access/project-decider.ts';
import { handleCommand } from './command-handler.ts';
import { PROJECT_SLUG_SCOPE, type WriteOptions, type CreateTenantInput, type CreateProjectInput, type TenantCreated, type ProjectCreated } from './access-service-types.ts';
import { slugFromName, planValue, positionOf } from './access-input.ts';
import type { AccessWriter } from './access-writer.ts';

export class TenantProjectAccess {
  readonly #w: AccessWriter;

  constructor(writer: AccessWriter) {
    this.#w = writer;
  }

  async createTenant(caller: Caller, input: CreateTenantInput, options: WriteOptions = {}): Promise<TenantCreated> {
    const tenantId = input.tenantId ?? randomUUID();
    const result = await handleCommand(this.#w.log, tenantStream(tenantId), tenantDecider, { type: 'create-tenant', tenantId, name: input.name }, { caller }, this.#w.append(caller, options));
    return { tenantId, position: positionOf(result) };
  }

  /** Creates a project in an existing tenant, reserving its slug system-wide (CONFLICT when taken). */
  async createProject(caller: Caller, input: CreateProjectInput, options: WriteOptions = {}): Promise<ProjectCreated> {
    assertCallerSeesTenant(caller, input.tenantId, 'tenant');
    await this.#w.requireTenant(input.tenantId);
    const projectId = input.projectId ?? randomUUID();
    const slug = input.slug ?? slugFromName(input.name);
    const command = {
      type: 'create-project' as const,
      projectId,
      tenantId: input.tenantId,
      name: input.name,
      slug,
      plan: planValue(input.plan),
      ...(input.contentLocales ? { contentLocales: input.contentLocales } : {}),
    };
    const result = await this.#w.createReserved(
      caller,
      { scope: PROJECT_SLUG_SCOPE, key: projectSlug(slug), owner: projectId, what: 'project slug' },
      projectStream(projectId),
      projectDecider,
      command,
      { caller },
      options,
    );
    const project = result.state!;
    return { projectId, tenantId: project.tenantId, slug: project.slug, plan: project.plan, contentLocales: project.contentLocales, position: positionOf(result) };
  }
}

/**
 * The tenant's custom roles, as they are recorded on the tenant's stream: defined, changed and removed by a
 * tenant_admin (or an operator). What each role may do is decided where it is used (src/domain/capabilities.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Caller } from '../domain/access/caller.ts';
import { tenantStream } from '../domain/access/access-streams.ts';
import { tenantDecider } from '../domain/access/tenant-decider.ts';
import type { CustomRole, CustomRoleInput } from '../domain/access/custom-roles.ts';
import { auditProject } from '../domain/access/access-values.ts';
import { notFound } from '../domain/domain-error.ts';
import { handleCommand, loadAggregate } from './command-handler.ts';
import { positionOf } from './access-input.ts';
import type { AccessWriter } from './access-writer.ts';
import type { WriteOptions } from './access-service-types.ts';

type Audit = WriteOptions & { projectId?: string };

export interface RoleChanged {
  role: CustomRole;
  position: bigint;
}

export class RoleAccess {
  readonly #w: AccessWriter;

  constructor(writer: AccessWriter) {
    this.#w = writer;
  }

  /** The tenant's roles as its stream has them (the read model may be a moment behind). */
  async roles(tenantId: string): Promise<readonly CustomRole[]> {
    const { state } = await loadAggregate(this.#w.log, tenantStream(tenantId), tenantDecider);
    if (!state) throw notFound('tenant not found');
    return Object.values(state.roles ?? {});
  }

  async define(caller: Caller, tenantId: string, input: CustomRoleInput, options: Audit & { roleId?: string } = {}): Promise<RoleChanged> {
    const roleId = options.roleId ?? randomUUID();
    return this.#change(caller, tenantId, roleId, { type: 'define-role', roleId, definition: input, ...auditProject(options) }, options);
  }

  async redefine(caller: Caller, tenantId: string, roleId: string, input: CustomRoleInput, options: Audit = {}): Promise<RoleChanged> {
    return this.#change(caller, tenantId, roleId, { type: 'redefine-role', roleId, definition: input, ...auditProject(options) }, options);
  }

  /** Removes a role no member holds (`holders`: the members holding it, as the caller counted them; CONFLICT when any). */
  async remove(caller: Caller, tenantId: string, roleId: string, holders: number, options: Audit = {}): Promise<{ position: bigint }> {
    const result = await handleCommand(this.#w.log, tenantStream(tenantId), tenantDecider, { type: 'remove-role', roleId, holders, ...auditProject(options) }, { caller }, this.#w.append(caller, options));
    return { position: positionOf(result) };
  }

  async #change(caller: Caller, tenantId: string, roleId: string, command: Parameters<typeof tenantDecider.decide>[0], options: Audit): Promise<RoleChanged> {
    const result = await handleCommand(this.#w.log, tenantStream(tenantId), tenantDecider, command, { caller }, this.#w.append(caller, options));
    const role = result.state?.roles?.[roleId];
    if (!role) throw notFound(`No role ${roleId}.`);
    return { role, position: positionOf(result) };
  }
}

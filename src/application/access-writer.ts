/**
 * How the access services write: the aggregates a command needs loaded first (tenant, project), the dry run
 * and the claim of a reserved name before an append (createReserved), and the append's context (actor,
 * correlation id).
 */
import type { Clock } from '../clock.ts';
import type { AppendContext, EventLog } from '../event-store/event-log.ts';
import type { Decider, DomainEvent } from '../domain/decider.ts';
import { notFound } from '../domain/domain-error.ts';
import { actorOf, assertCallerSeesProject, type Caller } from '../domain/access/caller.ts';
import type { KeyEvent } from '../domain/access/access-events.ts';
import { projectKeysStream, projectStream, tenantStream, userStream } from '../domain/access/access-streams.ts';
import { tenantDecider } from '../domain/access/tenant-decider.ts';
import { projectDecider, type Project, type ProjectCommand } from '../domain/access/project-decider.ts';
import type { ProjectEvent } from '../domain/access/access-events.ts';
import { keyDecider, type KeyCommand, type KeyContext, type ProjectKeys } from '../domain/access/key-decider.ts';
import { handleCommand, loadAggregate, type CommandResult } from './command-handler.ts';
import { userDecider, type UserCommand, type UserContext, type UserState } from '../domain/access/user-decider.ts';
import type { UserEvent } from '../domain/access/access-events.ts';
import type { AggregateSnapshots } from './aggregate-snapshots.ts';
import { Reservations } from './reservations.ts';
import type { AccessServiceDeps, WriteOptions, ProjectWriteOptions } from './access-service-types.ts';

export class AccessWriter {
  readonly log: EventLog;
  readonly clock: Clock;
  readonly reservations: Reservations;
  readonly #userSnapshots: AggregateSnapshots<UserState> | undefined;

  constructor(deps: AccessServiceDeps) {
    this.log = deps.log;
    this.clock = deps.clock;
    this.reservations = new Reservations(deps.log);
    this.#userSnapshots = deps.userSnapshots;
  }

  /** A user as their stream has them now (from a verified snapshot when there is one); null for no such user. */
  async loadUser(userId: string): Promise<UserState> {
    return (await loadAggregate(this.log, userStream(userId), userDecider, this.#userSnapshots)).state;
  }

  /** A command on a user's aggregate, loaded through the user snapshots. */
  user(caller: Caller, userId: string, command: UserCommand, context: UserContext, options: WriteOptions & { actor?: AppendContext['actor'] }): Promise<CommandResult<UserState, UserEvent>> {
    const append = options.actor ? { ...this.append(caller, options), actor: options.actor } : this.append(caller, options);
    return handleCommand(this.log, userStream(userId), userDecider, command, context, append, { snapshots: this.#userSnapshots });
  }

  /** Decide (dry run) -> claim -> append; the claim is released when the append fails. */
  async createReserved<State, Command, Event extends DomainEvent, Context>(
    caller: Caller,
    name: { scope: string; key: string; owner: string; what: string },
    streamId: string,
    decider: Decider<State, Command, Event, Context>,
    command: Command,
    context: Context,
    options: WriteOptions,
  ): Promise<CommandResult<State, Event>> {
    this.dryRun(decider, command, decider.initialState(), context);
    const actor = actorOf(caller);
    const heldBefore = (await this.reservations.ownerOf(name.scope, name.key)) === name.owner;
    await this.reservations.claim(name.scope, name.key, name.owner, actor, name.what);
    try {
      return await handleCommand(this.log, streamId, decider, command, context, this.append(caller, options));
    } catch (error) {
      if (!heldBefore) await this.reservations.release(name.scope, name.key, name.owner, actor).catch(() => undefined);
      throw error;
    }
  }

  async project(caller: Caller, projectId: string, command: ProjectCommand, options: ProjectWriteOptions): Promise<CommandResult<Project | null, ProjectEvent>> {
    await this.requireProject(caller, projectId);
    const context = { caller, ...(options.clientIp === undefined ? {} : { clientIp: options.clientIp }) };
    return handleCommand(this.log, projectStream(projectId), projectDecider, command, context, this.append(caller, options));
  }

  async keys(caller: Caller, projectId: string, command: KeyCommand, options: WriteOptions): Promise<CommandResult<ProjectKeys, KeyEvent>> {
    const project = await this.requireProject(caller, projectId);
    const context: KeyContext = { caller, project: { id: project.id, tenantId: project.tenantId, plan: project.plan }, now: this.clock.now() };
    return handleCommand(this.log, projectKeysStream(project.id), keyDecider, command, context, this.append(caller, options));
  }

  /**
   * Decides the command without appending, and checks each event against its catalog schema (what the
   * append would check): every refusal that bad input can cause happens here, before any write.
   */
  dryRun<State, Command, Event extends DomainEvent, Context>(decider: Decider<State, Command, Event, Context>, command: Command, state: State, context: Context): Event[] {
    const events = decider.decide(command, state, context);
    for (const event of events) this.log.catalog.validate(event.type, event.data);
    return events;
  }

  /**
   * What a user command is decided with: the caller, and the tenant's custom roles (from its stream) when a member
   * acts (their grants bound what they may give or act on) or a role is given in `tenantId`'s tenant.
   */
  async userContext(caller: Caller, tenantId?: string): Promise<UserContext> {
    const rolesTenant = tenantId ?? (caller.kind === 'user' ? caller.tenantId : undefined);
    if (rolesTenant === undefined) return { caller };
    const { state } = await loadAggregate(this.log, tenantStream(rolesTenant), tenantDecider);
    return { caller, roles: state?.roles ?? {} };
  }

  async requireTenant(tenantId: string): Promise<void> {
    const { state } = await loadAggregate(this.log, tenantStream(tenantId), tenantDecider);
    if (!state) throw notFound('tenant not found');
  }

  async requireProject(caller: Caller, projectId: string): Promise<Project> {
    const { state } = await loadAggregate(this.log, projectStream(projectId), projectDecider);
    if (!state) throw notFound('project not found');
    assertCallerSeesProject(caller, state);
    return state;
  }

  append(caller: Caller, options: WriteOptions): AppendContext {
    return { actor: actorOf(caller), ...(options.correlationId ? { correlationId: options.correlationId } : {}) };
  }
}

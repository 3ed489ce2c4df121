import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { AppendContext, EventLog } from '../event-store/event-log.ts';
import { fold, type Decider, type DomainEvent } from '../domain/decider.ts';
import { conflict, invalid, notFound } from '../domain/domain-error.ts';
import { PLANS, type Plan } from '../domain/plans.ts';
import type { AgentScope, UserRole } from '../domain/principal.ts';
import { actorOf, assertCallerSeesProject, assertCallerSeesTenant, type Caller } from '../domain/access/caller.ts';
import type { KeyEvent } from '../domain/access/access-events.ts';
import { emailAddress, projectSlug } from '../domain/access/access-values.ts';
import { projectKeysStream, projectStream, tenantStream, userStream } from '../domain/access/access-streams.ts';
import { tenantDecider } from '../domain/access/tenant-decider.ts';
import { domainChanges, projectDecider, type ApprovalPolicy, type ContentLocales, type IpAllowlistEntry, type LoginAppearance, type Project, type ProjectCommand, type SealedChatWebhook, type SiteSettings } from '../domain/access/project-decider.ts';
import type { ProjectEvent } from '../domain/access/access-events.ts';
import { hostnameList } from '../domain/access/access-values.ts';
import { INVITATION_REFUSED, roleValue, userDecider, type Invitation, type UserCommand } from '../domain/access/user-decider.ts';
import { DomainError } from '../domain/domain-error.ts';
import { AGENT_KEY_SCOPES, keyDecider, type KeyCommand, type KeyContext, type ProjectKeys } from '../domain/access/key-decider.ts';
import { newApiKey } from '../security/api-keys.ts';
import { hashPassword, passwordProblem } from '../security/password-hashing.ts';
import { handleCommand, loadAggregate, type CommandResult } from './command-handler.ts';
import { Reservations } from './reservations.ts';

/**
 * Tenants, projects, users and API keys: the application service the operator CLI uses now and the
 * admin HTTP API will use. Each method takes the Caller (permissions and tenant isolation are decided by
 * the access deciders, never here), appends through handleCommand, and returns the ids it made plus
 * `position`: the global log position of its last append (of the stream's last event for a no-op), so
 * an admin read can wait for projections to reach it (read your writes).
 *
 * Secrets: passwords are hashed here (scrypt, security/password-hashing.ts) and only the hash reaches the
 * command and the event; keys are generated here (security/api-keys.ts), returned in clear once, and only
 * their display prefix and SHA-256 reach the command and the event. The deciders and the event schemas
 * refuse anything else, so a mistake cannot write a secret to the log.
 *
 * Uniqueness across aggregates, with Reservations (a stream per name, claimed with "no stream"):
 *   - a project slug in the whole system: scope PROJECT_SLUG_SCOPE, owner the project id;
 *   - a user's e-mail in the whole system: scope USER_EMAIL_SCOPE, key the normalised address (trimmed,
 *     lower-cased), owner the user id.
 * No orphaned claims on bad input: a create first decides the command against the empty aggregate (a dry
 * run of the same pure decider, so every validation and permission check runs), then claims, then
 * appends. If the append still fails (a concurrent writer, an event-schema refusal, the store), the claim
 * is released again, unless the owner already held it before this call (a retry of an earlier attempt
 * with the same id: its claim is not ours to drop). A release that itself fails leaves the claim held by
 * an id without an aggregate; the error of the append is what the caller sees.
 */
export const PROJECT_SLUG_SCOPE = 'project-slug';
export const USER_EMAIL_SCOPE = 'user-email';
/** A custom domain in the whole system: key the normalised host name, owner the project id. */
export const CUSTOM_DOMAIN_SCOPE = 'custom-domain';

export interface AccessServiceDeps {
  log: EventLog;
  clock: Clock;
}

/** Per-call options: a correlation id ties every event of one request (or one CLI command) together. */
export interface WriteOptions {
  correlationId?: string;
}

export interface CreateTenantInput {
  name: string;
  /** Given by an idempotent caller (reserved ids); a fresh UUID otherwise. */
  tenantId?: string;
}

export interface CreateProjectInput {
  tenantId: string;
  name: string;
  /** One of PLANS; anything else is a VALIDATION_ERROR. */
  plan: string;
  /** Default: derived from the name (slugFromName). */
  slug?: string;
  /** Default: en only. */
  contentLocales?: { locales: string[]; defaultLocale: string };
  projectId?: string;
}

/** How long an invitation's link can be used. */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** An invitation's link token, in clear (`{userId}.{secret}`, to be mailed), and what the log keeps of it. */
export interface InvitationLink {
  token: string;
  expiresAt: string;
  invitation: Invitation;
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export interface CreateUserInput {
  tenantId: string;
  email: string;
  /** In clear, only to be hashed here; never stored. */
  password: string;
  /** tenant_admin or tenant_user; the aliases editor and reviewer are tenant_user. */
  role: string;
  userId?: string;
}

export interface IssueKeyOptions extends WriteOptions {
  keyId?: string;
}

export interface TenantCreated {
  tenantId: string;
  position: bigint;
}

export interface ProjectCreated {
  projectId: string;
  tenantId: string;
  slug: string;
  plan: Plan;
  contentLocales: ContentLocales;
  position: bigint;
}

export interface UserChanged extends UserCreated {
  disabled: boolean;
}

export interface UserCreated {
  userId: string;
  tenantId: string;
  /** Normalised: trimmed and lower-cased. */
  email: string;
  /** Normalised: an alias given is stored as tenant_user. */
  role: UserRole;
  position: bigint;
}

export interface AgentKeyIssued {
  keyId: string;
  projectId: string;
  /** The whole key, in clear: shown to the caller once and never again (only its hash is stored). */
  key: string;
  prefix: string;
  scope: AgentScope;
  name: string;
  position: bigint;
}

export interface PublicKeyIssued {
  keyId: string;
  projectId: string;
  /** The whole key, in clear: shown once. */
  key: string;
  prefix: string;
  position: bigint;
}

export interface KeyRevoked {
  keyId: string;
  projectId: string;
  type: 'agent' | 'public';
  revokedAt: string;
  /** False when the key had been revoked before (nothing appended). */
  changed: boolean;
  position: bigint;
}

export interface PlanChanged {
  projectId: string;
  plan: Plan;
  previousPlan: Plan;
  changed: boolean;
  position: bigint;
}

export interface ContentLocalesPatched {
  projectId: string;
  contentLocales: ContentLocales;
  changed: boolean;
  position: bigint;
}

/** Options of project-setting writes made through the console: the caller's address guards against lock-out. */
export interface ProjectWriteOptions extends WriteOptions {
  /** The console caller's address; with it a user cannot change the IP allowlist so that it refuses them. */
  clientIp?: string;
}

export interface ProjectSettingChanged<T> {
  projectId: string;
  value: T;
  changed: boolean;
  position: bigint;
}

export interface IpAllowlistEntryAdded {
  projectId: string;
  entry: IpAllowlistEntry;
  position: bigint;
}

export interface BootstrapInput {
  projectName: string;
  plan: string;
  adminEmail: string;
  /** In clear, only to be hashed; never stored. */
  adminPassword: string;
  /** Default: derived from the project name. */
  projectSlug?: string;
  /** Default: the project name. */
  tenantName?: string;
  /** Default: en only. */
  contentLocales?: { locales: string[]; defaultLocale: string };
  /** Default: 'bootstrap'. */
  agentKeyName?: string;
}

export interface BootstrapResult {
  tenantId: string;
  projectId: string;
  projectSlug: string;
  userId: string;
  adminEmail: string;
  agentKey: { keyId: string; key: string; prefix: string };
  publicKey: { keyId: string; key: string; prefix: string };
  position: bigint;
}

export class AccessService {
  readonly #log: EventLog;
  readonly #clock: Clock;
  readonly #reservations: Reservations;

  constructor(deps: AccessServiceDeps) {
    this.#log = deps.log;
    this.#clock = deps.clock;
    this.#reservations = new Reservations(deps.log);
  }

  async createTenant(caller: Caller, input: CreateTenantInput, options: WriteOptions = {}): Promise<TenantCreated> {
    const tenantId = input.tenantId ?? randomUUID();
    const result = await handleCommand(this.#log, tenantStream(tenantId), tenantDecider, { type: 'create-tenant', tenantId, name: input.name }, { caller }, this.#append(caller, options));
    return { tenantId, position: positionOf(result) };
  }

  /** Creates a project in an existing tenant, reserving its slug system-wide (CONFLICT when taken). */
  async createProject(caller: Caller, input: CreateProjectInput, options: WriteOptions = {}): Promise<ProjectCreated> {
    assertCallerSeesTenant(caller, input.tenantId, 'tenant');
    await this.#requireTenant(input.tenantId);
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
    const result = await this.#createReserved(
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

  /**
   * Creates a console user in an existing tenant, reserving the normalised e-mail system-wide (CONFLICT
   * when taken, whatever its case). The password is checked (length), hashed, and forgotten.
   */
  async createUser(caller: Caller, input: CreateUserInput, options: WriteOptions = {}): Promise<UserCreated> {
    assertCallerSeesTenant(caller, input.tenantId, 'tenant');
    const email = emailAddress(input.email);
    roleValue(input.role);
    checkPassword(input.password);
    await this.#requireTenant(input.tenantId);
    return this.#createUserWithHash(caller, { ...input, email }, await hashPassword(input.password), options);
  }

  /**
   * Invites a console user by e-mail: the user is created with a password nobody knows (a random secret, hashed
   * and forgotten) and an invitation whose link holds a new secret; only the secret's SHA-256 is recorded. The
   * link's token (`{userId}.{secret}`) is in the result, in clear, once: to be mailed, never stored.
   */
  async inviteUser(caller: Caller, input: Omit<CreateUserInput, 'password'>, options: WriteOptions = {}): Promise<UserCreated & { invitation: InvitationLink }> {
    assertCallerSeesTenant(caller, input.tenantId, 'tenant');
    const email = emailAddress(input.email);
    roleValue(input.role);
    await this.#requireTenant(input.tenantId);
    const userId = input.userId ?? randomUUID();
    const link = this.#newInvitation(userId);
    const created = await this.#createUserWithHash(caller, { ...input, userId, email }, await hashPassword(randomBytes(32).toString('base64url')), options, link.invitation);
    return { ...created, invitation: link };
  }

  /** Sends a pending invitation again with a new link (the earlier link stops working). CONFLICT once accepted. */
  async inviteAgain(caller: Caller, userId: string, options: WriteOptions = {}): Promise<UserChanged & { invitation: InvitationLink }> {
    const link = this.#newInvitation(userId);
    const changed = await this.#changeUser(caller, userId, { type: 'invite-again', invitation: link.invitation }, options);
    return { ...changed, invitation: link };
  }

  /**
   * The invitee chooses a password with the link's token, before it expires; the link is then spent. One refusal
   * (UNAUTHORIZED) for every bad token, whatever is wrong with it.
   */
  async acceptInvitation(token: string, password: string, options: WriteOptions = {}): Promise<UserChanged> {
    const match = /^([0-9a-f-]{36})\.([A-Za-z0-9_-]{43})$/.exec(token.trim());
    if (!match) throw new DomainError('UNAUTHORIZED', INVITATION_REFUSED);
    checkPassword(password);
    const [, userId, secret] = match as unknown as [string, string, string];
    const caller: Caller = { kind: 'operator', operatorId: 'invitation' };
    const command: UserCommand = { type: 'accept-invitation', tokenHash: sha256Hex(secret), passwordHash: await hashPassword(password), now: this.#clock.now().toISOString() };
    // The invitee acts: the events are theirs in the log.
    const result = await handleCommand(this.#log, userStream(userId), userDecider, command, { caller }, { ...options, actor: { type: 'user', id: userId } });
    const user = result.state!;
    return { userId, tenantId: user.tenantId, email: user.email, role: user.role, disabled: user.disabled, position: positionOf(result) };
  }

  #newInvitation(userId: string): InvitationLink {
    const secret = randomBytes(32).toString('base64url');
    const expiresAt = new Date(this.#clock.now().getTime() + INVITATION_TTL_MS).toISOString();
    return { token: `${userId}.${secret}`, expiresAt, invitation: { tokenHash: sha256Hex(secret), expiresAt } };
  }

  /** Changes a member's role (members.manage: tenant_admin; never one's own). Unchanged when it already has it. */
  async changeUserRole(caller: Caller, userId: string, role: string, options: WriteOptions = {}): Promise<UserChanged> {
    return this.#changeUser(caller, userId, { type: 'change-role', role }, options);
  }

  /** Disables a member: sign-in and every session of theirs are refused from then on (never one's own account). */
  async disableUser(caller: Caller, userId: string, options: WriteOptions = {}): Promise<UserChanged> {
    return this.#changeUser(caller, userId, { type: 'disable-user' }, options);
  }

  async #changeUser(caller: Caller, userId: string, command: UserCommand, options: WriteOptions): Promise<UserChanged> {
    const result = await handleCommand(this.#log, userStream(userId), userDecider, command, { caller }, this.#append(caller, options));
    const user = result.state!;
    return { userId, tenantId: user.tenantId, email: user.email, role: user.role, disabled: user.disabled, position: positionOf(result) };
  }

  /**
   * Signs out one console session of the calling user: its token is refused from now on, on every process
   * and after restarts (user.session-revoked, folded into the access read model). Returns the position to
   * wait for, so the caller's next request already sees it.
   */
  async signOut(caller: Caller, session: { sessionId: string; expiresAt: Date }, options: WriteOptions = {}): Promise<{ position: bigint }> {
    if (caller.kind !== 'user') throw invalid('Only a console session signs out; agent keys are revoked instead.');
    const command = { type: 'revoke-session' as const, sessionId: session.sessionId, expiresAt: session.expiresAt.toISOString() };
    const result = await handleCommand(this.#log, userStream(caller.userId), userDecider, command, { caller }, this.#append(caller, options));
    return { position: positionOf(result) };
  }

  /**
   * Issues an agent key (scope full, content or schema). PLAN_REQUIRED when the plan allows one active
   * agent key (Free, Solo) and the project has one. The key is in the result, in clear, once.
   */
  async issueAgentKey(caller: Caller, projectId: string, scope: string, name: string, options: IssueKeyOptions = {}): Promise<AgentKeyIssued> {
    const keyScope = scopeValue(scope);
    const material = newApiKey('agent');
    const keyId = options.keyId ?? randomUUID();
    const result = await this.#keys(caller, projectId, { type: 'issue-agent-key', keyId, scope: keyScope, name, prefix: material.prefix, hash: material.hash }, options);
    const issued = result.state.agentKeys.find((k) => k.id === keyId)!;
    return { keyId, projectId, key: material.key, prefix: material.prefix, scope: issued.scope, name: issued.name, position: positionOf(result) };
  }

  async issuePublicKey(caller: Caller, projectId: string, options: IssueKeyOptions = {}): Promise<PublicKeyIssued> {
    const material = newApiKey('public');
    const keyId = options.keyId ?? randomUUID();
    const result = await this.#keys(caller, projectId, { type: 'issue-public-key', keyId, prefix: material.prefix, hash: material.hash }, options);
    return { keyId, projectId, key: material.key, prefix: material.prefix, position: positionOf(result) };
  }

  /** Revokes an agent key; revoking one already revoked changes nothing. NOT_FOUND for an unknown id. */
  async revokeAgentKey(caller: Caller, projectId: string, keyId: string, options: WriteOptions = {}): Promise<KeyRevoked> {
    const result = await this.#keys(caller, projectId, { type: 'revoke-agent-key', keyId }, options);
    return revoked(result, projectId, keyId, 'agent');
  }

  async revokePublicKey(caller: Caller, projectId: string, keyId: string, options: WriteOptions = {}): Promise<KeyRevoked> {
    const result = await this.#keys(caller, projectId, { type: 'revoke-public-key', keyId }, options);
    return revoked(result, projectId, keyId, 'public');
  }

  /** Revokes a key of either kind, found by id in the project's keys. NOT_FOUND when it is neither. */
  async revokeKey(caller: Caller, projectId: string, keyId: string, options: WriteOptions = {}): Promise<KeyRevoked> {
    const project = await this.#requireProject(caller, projectId);
    const { state } = await loadAggregate(this.#log, projectKeysStream(project.id), keyDecider);
    if (state.publicKeys.some((k) => k.id === keyId)) return this.revokePublicKey(caller, projectId, keyId, options);
    // Unknown ids go to the agent-key path too, whose decider answers NOT_FOUND.
    return this.revokeAgentKey(caller, projectId, keyId, options);
  }

  async changePlan(caller: Caller, projectId: string, plan: string, options: WriteOptions = {}): Promise<PlanChanged> {
    const before = await this.#requireProject(caller, projectId);
    const result = await handleCommand(this.#log, projectStream(projectId), projectDecider, { type: 'change-plan', plan: planValue(plan) }, { caller }, this.#append(caller, options));
    const event = result.events[0];
    const previousPlan = event?.type === 'project.plan-changed' ? event.data.previousPlan : before.plan;
    return { projectId, plan: result.state!.plan, previousPlan, changed: result.events.length > 0, position: positionOf(result) };
  }

  /** A patch: give locales, defaultLocale or both. The default locale must be one of the locales. */
  async patchContentLocales(caller: Caller, projectId: string, patch: { locales?: string[]; defaultLocale?: string }, options: WriteOptions = {}): Promise<ContentLocalesPatched> {
    await this.#requireProject(caller, projectId);
    const command = {
      type: 'patch-content-locales' as const,
      ...(patch.locales === undefined ? {} : { locales: patch.locales }),
      ...(patch.defaultLocale === undefined ? {} : { defaultLocale: patch.defaultLocale }),
    };
    const result = await handleCommand(this.#log, projectStream(projectId), projectDecider, command, { caller }, this.#append(caller, options));
    return { projectId, contentLocales: result.state!.contentLocales, changed: result.events.length > 0, position: positionOf(result) };
  }

  /** A patch of the console login page's appearance: an absent field is unchanged, null clears it. */
  async updateLoginAppearance(
    caller: Caller,
    projectId: string,
    patch: { logoUrl?: string | null; primaryColor?: string | null; accentColor?: string | null; message?: string | null },
    options: WriteOptions = {},
  ): Promise<ProjectSettingChanged<LoginAppearance>> {
    const result = await this.#project(caller, projectId, { type: 'update-login-appearance', ...definedOnly(patch) }, options);
    return { projectId, value: result.state!.loginAppearance, changed: result.events.length > 0, position: positionOf(result) };
  }

  /** A patch of the site settings (siteUrl, siteName, description): an absent field is unchanged, null clears it. */
  /** Sets the project's approval policy (tenant_admin sessions and operators; agent keys are refused). */
  async setApprovalPolicy(caller: Caller, projectId: string, patch: { humanApproval?: boolean | undefined; fourEyes?: boolean | undefined }): Promise<ProjectSettingChanged<ApprovalPolicy>> {
    const result = await this.#project(caller, projectId, { type: 'set-approval-policy', ...definedOnly(patch) }, {});
    return { projectId, value: result.state!.approvalPolicy, changed: result.events.length > 0, position: positionOf(result) };
  }

  /** Sets where review notices are also posted (a chat webhook, sealed by the caller's application), or removes it with null. */
  async setReviewNoticeChat(caller: Caller, projectId: string, chatWebhook: SealedChatWebhook | null): Promise<ProjectSettingChanged<string | null>> {
    const result = await this.#project(caller, projectId, { type: 'set-review-notice-chat', chatWebhook }, {});
    return { projectId, value: result.state!.reviewNoticeChat?.display ?? null, changed: result.events.length > 0, position: positionOf(result) };
  }

  /** The signed-in user's own notice preferences (nobody else's). */
  async setNoticePreferences(caller: Caller, userId: string, preferences: { reviewNotices: boolean }): Promise<{ userId: string; reviewNotices: boolean; position: bigint }> {
    const result = await handleCommand(this.#log, userStream(userId), userDecider, { type: 'set-notice-preferences', reviewNotices: preferences.reviewNotices }, { caller }, this.#append(caller, {}));
    return { userId, reviewNotices: result.state!.reviewNotices ?? true, position: positionOf(result) };
  }

  async updateSiteSettings(
    caller: Caller,
    projectId: string,
    patch: { siteUrl?: string | null; siteName?: string | null; description?: string | null },
    options: WriteOptions = {},
  ): Promise<ProjectSettingChanged<SiteSettings>> {
    const result = await this.#project(caller, projectId, { type: 'update-site-settings', ...definedOnly(patch) }, options);
    return { projectId, value: result.state!.siteSettings, changed: result.events.length > 0, position: positionOf(result) };
  }

  /**
   * Adds a console login IP allowlist entry (Business plan and above: PLAN_REQUIRED below; VALIDATION_ERROR
   * for a bad CIDR; CONFLICT for a range already listed). With `clientIp`, a console user cannot add an
   * entry that would refuse their own address.
   */
  async addIpAllowlistEntry(caller: Caller, projectId: string, input: { cidr: string; label?: string | null }, options: ProjectWriteOptions & { entryId?: string } = {}): Promise<IpAllowlistEntryAdded> {
    const entryId = options.entryId ?? randomUUID();
    const result = await this.#project(caller, projectId, { type: 'add-ip-allowlist-entry', entryId, cidr: input.cidr, label: input.label ?? null }, options);
    const entry = result.state!.consoleIpAllowlist.find((e) => e.id === entryId)!;
    return { projectId, entry: { ...entry }, position: positionOf(result) };
  }

  /** Removes an allowlist entry (every plan, so a downgraded project can clear its list). NOT_FOUND for an unknown id. */
  async removeIpAllowlistEntry(caller: Caller, projectId: string, entryId: string, options: ProjectWriteOptions = {}): Promise<{ projectId: string; entryId: string; position: bigint }> {
    const result = await this.#project(caller, projectId, { type: 'remove-ip-allowlist-entry', entryId }, options);
    return { projectId, entryId, position: positionOf(result) };
  }

  /**
   * Replaces the project's custom domains. Each added host is reserved system-wide first (CONFLICT naming
   * it when another project holds it); after the append the removed hosts are released. When the append
   * fails, the hosts this call claimed are released again.
   */
  async setCustomDomains(caller: Caller, projectId: string, domains: readonly string[], options: WriteOptions = {}): Promise<ProjectSettingChanged<string[]>> {
    const before = await this.#requireProject(caller, projectId);
    const command: ProjectCommand = { type: 'set-custom-domains', domains: [...domains] };
    // Dry run: permission and host-name checks before any claim.
    this.#dryRun(projectDecider, command, before, { caller });
    const next = hostnameList(domains);
    const { added, removed } = domainChanges(before.customDomains, next);
    const actor = actorOf(caller);
    const claimed: string[] = [];
    let result: CommandResult<Project | null, ProjectEvent>;
    try {
      for (const host of added) {
        const heldBefore = (await this.#reservations.ownerOf(CUSTOM_DOMAIN_SCOPE, host)) === projectId;
        await this.#reservations.claim(CUSTOM_DOMAIN_SCOPE, host, projectId, actor, 'custom domain');
        if (!heldBefore) claimed.push(host);
      }
      result = await handleCommand(this.#log, projectStream(projectId), projectDecider, command, { caller }, this.#append(caller, options));
    } catch (error) {
      for (const host of claimed) await this.#reservations.release(CUSTOM_DOMAIN_SCOPE, host, projectId, actor).catch(() => undefined);
      throw error;
    }
    // The stream's state after the append decides what is released (a concurrent change may have re-added a host).
    const now = result.state!.customDomains;
    for (const host of removed) {
      if (!now.includes(host)) await this.#reservations.release(CUSTOM_DOMAIN_SCOPE, host, projectId, actor).catch(() => undefined);
    }
    return { projectId, value: [...now], changed: result.events.length > 0, position: positionOf(result) };
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
    this.#dryRun(tenantDecider, tenantCommand, tenantDecider.initialState(), context);
    const projectCommand = {
      type: 'create-project' as const,
      projectId: ids.projectId,
      tenantId: ids.tenantId,
      name: input.projectName,
      slug,
      plan,
      ...(input.contentLocales ? { contentLocales: input.contentLocales } : {}),
    };
    const project = fold(projectDecider, this.#dryRun(projectDecider, projectCommand, projectDecider.initialState(), context))!;
    const passwordHash = await hashPassword(input.adminPassword);
    const userCommand = { type: 'create-user' as const, userId: ids.userId, tenantId: ids.tenantId, email, role: 'tenant_admin', passwordHash };
    this.#dryRun(userDecider, userCommand, userDecider.initialState(), context);
    const agent = newApiKey('agent');
    const pub = newApiKey('public');
    const agentCommand: KeyCommand = { type: 'issue-agent-key', keyId: ids.agentKeyId, scope: 'full', name: input.agentKeyName ?? 'bootstrap', prefix: agent.prefix, hash: agent.hash };
    const publicCommand: KeyCommand = { type: 'issue-public-key', keyId: ids.publicKeyId, prefix: pub.prefix, hash: pub.hash };
    const keyContext: KeyContext = { caller, project: { id: project.id, tenantId: project.tenantId, plan: project.plan }, now: this.#clock.now() };
    const afterAgent = fold(keyDecider, this.#dryRun(keyDecider, agentCommand, keyDecider.initialState(), keyContext));
    this.#dryRun(keyDecider, publicCommand, afterAgent, keyContext);

    // 2. Names free? (Reads only.)
    if ((await this.#reservations.ownerOf(PROJECT_SLUG_SCOPE, slug)) !== null) throw taken('project slug', slug);
    if ((await this.#reservations.ownerOf(USER_EMAIL_SCOPE, email)) !== null) throw taken('e-mail address', email);

    // 3. Claim both names, then write.
    const actor = actorOf(caller);
    await this.#reservations.claim(PROJECT_SLUG_SCOPE, slug, ids.projectId, actor, 'project slug');
    let projectWritten = false;
    let userWritten = false;
    try {
      await this.#reservations.claim(USER_EMAIL_SCOPE, email, ids.userId, actor, 'e-mail address');
      await this.createTenant(caller, { name: tenantCommand.name, tenantId: ids.tenantId }, write);
      await this.createProject(caller, { tenantId: ids.tenantId, name: input.projectName, plan, slug, projectId: ids.projectId, ...(input.contentLocales ? { contentLocales: input.contentLocales } : {}) }, write);
      projectWritten = true;
      await this.#createUserWithHash(caller, { tenantId: ids.tenantId, email, role: 'tenant_admin', userId: ids.userId }, passwordHash, write);
      userWritten = true;
      await this.#keys(caller, ids.projectId, agentCommand, write);
      const publicKey = await this.#keys(caller, ids.projectId, publicCommand, write);
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
      if (!userWritten) await this.#reservations.release(USER_EMAIL_SCOPE, email, ids.userId, actor).catch(() => undefined);
      if (!projectWritten) await this.#reservations.release(PROJECT_SLUG_SCOPE, slug, ids.projectId, actor).catch(() => undefined);
      throw error;
    }
  }

  // ---- internals

  async #createUserWithHash(
    caller: Caller,
    input: { tenantId: string; email: string; role: string; userId?: string },
    passwordHash: string,
    options: WriteOptions,
    invitation?: Invitation,
  ): Promise<UserCreated> {
    const userId = input.userId ?? randomUUID();
    const email = emailAddress(input.email);
    const result = await this.#createReserved(
      caller,
      { scope: USER_EMAIL_SCOPE, key: email, owner: userId, what: 'e-mail address' },
      userStream(userId),
      userDecider,
      { type: 'create-user', userId, tenantId: input.tenantId, email, role: input.role, passwordHash, ...(invitation ? { invitation } : {}) },
      { caller },
      options,
    );
    const user = result.state!;
    return { userId, tenantId: user.tenantId, email: user.email, role: user.role, position: positionOf(result) };
  }

  /** Decide (dry run) -> claim -> append; the claim is released when the append fails. */
  async #createReserved<State, Command, Event extends DomainEvent, Context>(
    caller: Caller,
    name: { scope: string; key: string; owner: string; what: string },
    streamId: string,
    decider: Decider<State, Command, Event, Context>,
    command: Command,
    context: Context,
    options: WriteOptions,
  ): Promise<CommandResult<State, Event>> {
    this.#dryRun(decider, command, decider.initialState(), context);
    const actor = actorOf(caller);
    const heldBefore = (await this.#reservations.ownerOf(name.scope, name.key)) === name.owner;
    await this.#reservations.claim(name.scope, name.key, name.owner, actor, name.what);
    try {
      return await handleCommand(this.#log, streamId, decider, command, context, this.#append(caller, options));
    } catch (error) {
      if (!heldBefore) await this.#reservations.release(name.scope, name.key, name.owner, actor).catch(() => undefined);
      throw error;
    }
  }

  async #project(caller: Caller, projectId: string, command: ProjectCommand, options: ProjectWriteOptions): Promise<CommandResult<Project | null, ProjectEvent>> {
    await this.#requireProject(caller, projectId);
    const context = { caller, ...(options.clientIp === undefined ? {} : { clientIp: options.clientIp }) };
    return handleCommand(this.#log, projectStream(projectId), projectDecider, command, context, this.#append(caller, options));
  }

  async #keys(caller: Caller, projectId: string, command: KeyCommand, options: WriteOptions): Promise<CommandResult<ProjectKeys, KeyEvent>> {
    const project = await this.#requireProject(caller, projectId);
    const context: KeyContext = { caller, project: { id: project.id, tenantId: project.tenantId, plan: project.plan }, now: this.#clock.now() };
    return handleCommand(this.#log, projectKeysStream(project.id), keyDecider, command, context, this.#append(caller, options));
  }

  /**
   * Decides the command without appending, and checks each event against its catalog schema (what the
   * append would check): every refusal that bad input can cause happens here, before any write.
   */
  #dryRun<State, Command, Event extends DomainEvent, Context>(decider: Decider<State, Command, Event, Context>, command: Command, state: State, context: Context): Event[] {
    const events = decider.decide(command, state, context);
    for (const event of events) this.#log.catalog.validate(event.type, event.data);
    return events;
  }

  async #requireTenant(tenantId: string): Promise<void> {
    const { state } = await loadAggregate(this.#log, tenantStream(tenantId), tenantDecider);
    if (!state) throw notFound('tenant not found');
  }

  async #requireProject(caller: Caller, projectId: string): Promise<Project> {
    const { state } = await loadAggregate(this.#log, projectStream(projectId), projectDecider);
    if (!state) throw notFound('project not found');
    assertCallerSeesProject(caller, state);
    return state;
  }

  #append(caller: Caller, options: WriteOptions): AppendContext {
    return { actor: actorOf(caller), ...(options.correlationId ? { correlationId: options.correlationId } : {}) };
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

/**
 * A project slug from a display name: lower-cased, accents dropped, every run of other characters one
 * hyphen, at most 63 characters. VALIDATION_ERROR when nothing is left (a name in a script without
 * Latin letters or digits): give the slug then.
 */
export function slugFromName(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  if (slug.length === 0) throw invalid(`slug: none can be derived from the name ${JSON.stringify(name)}`, 'Give a slug: lowercase letters, digits and hyphens, for example my-site.');
  return slug;
}

/** Drops the fields left undefined, so a patch command names only what the caller gave. */
function definedOnly<T extends Record<string, unknown>>(patch: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)) as never;
}

function planValue(plan: string): Plan {
  const value = plan.trim().toLowerCase();
  if (!(PLANS as readonly string[]).includes(value)) throw invalid(`plan must be one of ${PLANS.join(', ')}`);
  return value as Plan;
}

function scopeValue(scope: string): AgentScope {
  const value = scope.trim().toLowerCase();
  if (!(AGENT_KEY_SCOPES as readonly string[]).includes(value)) throw invalid(`scope must be one of ${AGENT_KEY_SCOPES.join(', ')}`);
  return value as AgentScope;
}

function checkPassword(password: string): void {
  const problem = passwordProblem(password);
  if (problem) throw invalid(problem);
}

function taken(what: string, key: string) {
  return conflict(`The ${what} "${key}" is already in use.`, `Choose another ${what}.`);
}

function revoked(result: CommandResult<ProjectKeys, KeyEvent>, projectId: string, keyId: string, type: 'agent' | 'public'): KeyRevoked {
  const keys = type === 'agent' ? result.state.agentKeys : result.state.publicKeys;
  const key = keys.find((k) => k.id === keyId)!;
  return { keyId, projectId, type, revokedAt: key.revokedAt!, changed: result.events.length > 0, position: positionOf(result) };
}

/** Every method here appends to, or reads from, a stream that exists, so there is always a position. */
function positionOf(result: { position: bigint | null }): bigint {
  if (result.position === null) throw new Error('expected a log position after a write');
  return result.position;
}


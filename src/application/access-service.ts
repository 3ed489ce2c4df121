import { RoleAccess } from './role-access.ts';
import type { Caller } from '../domain/access/caller.ts';
import type { ApprovalPolicy, LoginAppearance, SealedChatWebhook, SiteSettings } from '../domain/access/project-decider.ts';
import { AccessBootstrap } from './access-bootstrap.ts';
import type {
  AccessServiceDeps,
  AgentKeyIssued,
  BootstrapInput,
  BootstrapResult,
  ContentLocalesPatched,
  CreateProjectInput,
  CreateTenantInput,
  CreateUserInput,
  InvitationLink,
  IpAllowlistEntryAdded,
  IssueKeyOptions,
  KeyRevoked,
  PlanChanged,
  ProjectCreated,
  ProjectSettingChanged,
  ProjectWriteOptions,
  PublicKeyIssued,
  TenantCreated,
  UserChanged,
  UserCreated,
  WriteOptions,
} from './access-service-types.ts';
import { AccessWriter } from './access-writer.ts';
import { KeyAccess } from './key-access.ts';
import { ProjectSettingsAccess } from './project-settings-access.ts';
import { TenantProjectAccess } from './tenant-project-access.ts';
import { UserAccess } from './user-access.ts';
import { SignInAccess } from './sign-in-access.ts';
import { SecondFactorAccess } from './second-factor-access.ts';

export * from './access-service-types.ts';
export { checkBootstrapInput } from './access-bootstrap.ts';
export { slugFromName } from './access-input.ts';

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
 *
 * The work is done by one service per concern, which this composes: tenants and projects
 * (tenant-project-access.ts), users (user-access.ts), keys (key-access.ts), project settings
 * (project-settings-access.ts) and bootstrap (access-bootstrap.ts), all writing through one AccessWriter.
 */
export class AccessService {
  readonly #tenants: TenantProjectAccess;
  readonly #users: UserAccess;
  readonly #keys: KeyAccess;
  readonly #settings: ProjectSettingsAccess;
  readonly #bootstrap: AccessBootstrap;
  /** The tenant's single sign-on and what a sign-in through it records. */
  readonly signIn: SignInAccess;
  readonly secondFactor: SecondFactorAccess;
  /** The tenant's custom roles. */
  readonly roles: RoleAccess;

  constructor(deps: AccessServiceDeps) {
    const writer = new AccessWriter(deps);
    this.#tenants = new TenantProjectAccess(writer);
    this.#users = new UserAccess(writer);
    this.#keys = new KeyAccess(writer);
    this.#settings = new ProjectSettingsAccess(writer);
    this.#bootstrap = new AccessBootstrap(writer, this.#tenants, this.#users);
    this.signIn = new SignInAccess(writer, this.#users);
    this.secondFactor = new SecondFactorAccess(writer);
    this.roles = new RoleAccess(writer);
  }

  createTenant(caller: Caller, input: CreateTenantInput, options: WriteOptions = {}): Promise<TenantCreated> {
    return this.#tenants.createTenant(caller, input, options);
  }

  createProject(caller: Caller, input: CreateProjectInput, options: WriteOptions = {}): Promise<ProjectCreated> {
    return this.#tenants.createProject(caller, input, options);
  }

  createUser(caller: Caller, input: CreateUserInput, options: WriteOptions = {}): Promise<UserCreated> {
    return this.#users.createUser(caller, input, options);
  }

  inviteUser(caller: Caller, input: Omit<CreateUserInput, 'password'>, options: WriteOptions = {}): Promise<UserCreated & { invitation: InvitationLink }> {
    return this.#users.inviteUser(caller, input, options);
  }

  inviteAgain(caller: Caller, userId: string, options: WriteOptions = {}): Promise<UserChanged & { invitation: InvitationLink }> {
    return this.#users.inviteAgain(caller, userId, options);
  }

  acceptInvitation(token: string, password: string, options: WriteOptions = {}): Promise<UserChanged> {
    return this.#users.acceptInvitation(token, password, options);
  }

  changeUserRole(caller: Caller, userId: string, role: string, options: WriteOptions & { roleId?: string | null; projectId?: string } = {}): Promise<UserChanged> {
    return this.#users.changeUserRole(caller, userId, role, options);
  }

  disableUser(caller: Caller, userId: string, options: WriteOptions = {}): Promise<UserChanged> {
    return this.#users.disableUser(caller, userId, options);
  }

  signOut(caller: Caller, session: { sessionId: string; expiresAt: Date }, options: WriteOptions = {}): Promise<{ position: bigint }> {
    return this.#users.signOut(caller, session, options);
  }

  issueAgentKey(caller: Caller, projectId: string, scope: string, name: string, options: IssueKeyOptions = {}): Promise<AgentKeyIssued> {
    return this.#keys.issueAgentKey(caller, projectId, scope, name, options);
  }

  issuePublicKey(caller: Caller, projectId: string, options: IssueKeyOptions = {}): Promise<PublicKeyIssued> {
    return this.#keys.issuePublicKey(caller, projectId, options);
  }

  revokeAgentKey(caller: Caller, projectId: string, keyId: string, options: WriteOptions = {}): Promise<KeyRevoked> {
    return this.#keys.revokeAgentKey(caller, projectId, keyId, options);
  }

  revokePublicKey(caller: Caller, projectId: string, keyId: string, options: WriteOptions = {}): Promise<KeyRevoked> {
    return this.#keys.revokePublicKey(caller, projectId, keyId, options);
  }

  revokeKey(caller: Caller, projectId: string, keyId: string, options: WriteOptions = {}): Promise<KeyRevoked> {
    return this.#keys.revokeKey(caller, projectId, keyId, options);
  }

  changePlan(caller: Caller, projectId: string, plan: string, options: WriteOptions = {}): Promise<PlanChanged> {
    return this.#settings.changePlan(caller, projectId, plan, options);
  }

  patchContentLocales(caller: Caller, projectId: string, patch: { locales?: string[]; defaultLocale?: string }, options: WriteOptions = {}): Promise<ContentLocalesPatched> {
    return this.#settings.patchContentLocales(caller, projectId, patch, options);
  }

  updateLoginAppearance(
    caller: Caller,
    projectId: string,
    patch: { logoUrl?: string | null; primaryColor?: string | null; accentColor?: string | null; message?: string | null },
    options: WriteOptions = {},
  ): Promise<ProjectSettingChanged<LoginAppearance>> {
    return this.#settings.updateLoginAppearance(caller, projectId, patch, options);
  }

  setApprovalPolicy(caller: Caller, projectId: string, patch: { humanApproval?: boolean | undefined; fourEyes?: boolean | undefined }): Promise<ProjectSettingChanged<ApprovalPolicy>> {
    return this.#settings.setApprovalPolicy(caller, projectId, patch);
  }

  setReviewNoticeChat(caller: Caller, projectId: string, chatWebhook: SealedChatWebhook | null): Promise<ProjectSettingChanged<string | null>> {
    return this.#settings.setReviewNoticeChat(caller, projectId, chatWebhook);
  }

  setNoticePreferences(caller: Caller, userId: string, preferences: { reviewNotices: boolean }): Promise<{ userId: string; reviewNotices: boolean; position: bigint }> {
    return this.#users.setNoticePreferences(caller, userId, preferences);
  }

  updateSiteSettings(
    caller: Caller,
    projectId: string,
    patch: { siteUrl?: string | null; siteName?: string | null; description?: string | null },
    options: WriteOptions = {},
  ): Promise<ProjectSettingChanged<SiteSettings>> {
    return this.#settings.updateSiteSettings(caller, projectId, patch, options);
  }

  addIpAllowlistEntry(caller: Caller, projectId: string, input: { cidr: string; label?: string | null }, options: ProjectWriteOptions & { entryId?: string } = {}): Promise<IpAllowlistEntryAdded> {
    return this.#settings.addIpAllowlistEntry(caller, projectId, input, options);
  }

  removeIpAllowlistEntry(caller: Caller, projectId: string, entryId: string, options: ProjectWriteOptions = {}): Promise<{ projectId: string; entryId: string; position: bigint }> {
    return this.#settings.removeIpAllowlistEntry(caller, projectId, entryId, options);
  }

  setCustomDomains(caller: Caller, projectId: string, domains: readonly string[], options: WriteOptions = {}): Promise<ProjectSettingChanged<string[]>> {
    return this.#settings.setCustomDomains(caller, projectId, domains, options);
  }

  bootstrap(caller: Caller, input: BootstrapInput, options: WriteOptions = {}): Promise<BootstrapResult> {
    return this.#bootstrap.bootstrap(caller, input, options);
  }
}

/**
 * The access services' inputs, options and results, and the names they reserve (see AccessService).
 */
import type { AggregateSnapshots } from './aggregate-snapshots.ts';
import type { UserState } from '../domain/access/user-decider.ts';
import type { Clock } from '../clock.ts';
import type { EventLog } from '../event-store/event-log.ts';
import type { Plan } from '../domain/plans.ts';
import type { AgentScope, UserRole } from '../domain/principal.ts';
import type { ContentLocales, IpAllowlistEntry } from '../domain/access/project-decider.ts';
import type { Invitation } from '../domain/access/user-decider.ts';

export const PROJECT_SLUG_SCOPE = 'project-slug';
export const USER_EMAIL_SCOPE = 'user-email';
/** A custom domain in the whole system: key the normalised host name, owner the project id. */
export const CUSTOM_DOMAIN_SCOPE = 'custom-domain';

export interface AccessServiceDeps {
  log: EventLog;
  clock: Clock;
  /** Users' aggregates from a verified snapshot or cached state (a user's stream grows by a sign-in each session). */
  userSnapshots?: AggregateSnapshots<UserState>;
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


export interface CreateUserInput {
  tenantId: string;
  email: string;
  /** In clear, only to be hashed here; never stored. */
  password: string;
  /** tenant_admin or tenant_user; the aliases editor and reviewer are tenant_user. */
  role: string;
  /** One of the tenant's custom roles (role is then tenant_user). */
  roleId?: string | null;
  userId?: string;
  /** The project the admin acted in, whose audit log shows the new member. */
  projectId?: string;
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
  /** The tenant's custom role the user holds; null: none. */
  roleId: string | null;
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

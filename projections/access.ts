import { accessEvents, type AccessEvent } from '../src/domain/access/access-events.ts';
import { DEFAULT_APPROVAL_POLICY, strictestOf, type ApprovalPolicy, type ContentLocales, type IpAllowlistEntry, type LoginAppearance, type SiteSettings } from '../src/domain/access/project-decider.ts';
import type { Plan } from '../src/domain/plans.ts';
import type { AgentScope, UserRole } from '../src/domain/principal.ts';
import { defineProjection, type ProjectionView } from '../src/projection-engine/projection.ts';
import { personFromActor, type Person } from '../src/domain/access/people.ts';
import { EVERYTHING } from '../src/projection-engine/change-feed.ts';
import type { Doc } from '../src/read-models/read-model-store.ts';
import type { OidcSettings } from '../src/domain/access/oidc-settings.ts';
import type { SamlSettings } from '../src/domain/access/saml-settings.ts';
import { NO_SECOND_FACTOR_SUMMARY, type SecondFactorSummary } from '../src/domain/access/second-factor.ts';
import type { CustomRole } from '../src/domain/access/custom-roles.ts';
import { createHash } from 'node:crypto';

/**
 * Who may sign in and with what: tenants, projects (with every setting the console and the public side
 * read), custom domains, console users and API keys. Sign-in, key authentication and tenant isolation
 * read these documents; the log is never read on a request.
 *
 * Collections (documents are plain JSON; times are the event's ISO 8601 UTC strings):
 * - `tenants`, id tenantId, with the tenant's OpenID Connect settings (`oidc`; its client secret sealed);
 * - `identities`, id oidcIdentityId(issuer, subject): the user an identity provider's subject signs in as;
 * - `sso_sessions`, id the session's id: sessions begun through a provider, found by the provider's session id
 *   or the user when the provider logs them out (dropped when revoked, or expired at the user's next sign-in);
 * - `projects`, id projectId; `loginBranding` holds the login appearance settings (logoUrl, primaryColor,
 *   accentColor, message), `ipAllowlist` every entry whatever the plan (enforce it only on Business and
 *   above: see effectiveIpAllowlist in project-decider.ts);
 * - `domains`, id the host name: which project a custom domain resolves to;
 * - `users`, id userId; `email` is trimmed and lower-cased (as user.created carries it); `revokedSessions`
 *   lists signed-out sessions until they expire;
 * - `agent_keys` and `public_keys`, id the SHA-256 hex of the key: what authenticating a key looks up;
 * - `agent_keys_by_id` and `public_keys_by_id`, id keyId: the same documents again, for listing and
 *   revoking by id. They are collections rather than indexes on keyId because a revocation event names
 *   only the key id: the projection finds the hash through them (`apply` reads documents by id only).
 *
 * A key document keeps `revokedAt` once revoked (never deleted), so a revoked key answers 401 for the
 * right reason and stays listed.
 *
 * Two folds read a document other than the one they write, because the event does not carry what they
 * need: a revocation finds the key's hash in the by-id document (immutable), and project.domains-changed
 * finds the hosts it drops in the project's previous customDomains, which is right because commits land
 * whole on every store (see Projection). A handler resolving a host should still check the project lists it.
 */

export interface TenantDoc {
  tenantId: string;
  name: string;
  /** Sign-in through the tenant's OpenID Connect provider (the client secret sealed, as the log holds it); absent or null when not set up. */
  oidc?: OidcSettings | null;
  /** Sign-in through the tenant's SAML 2.0 provider; absent or null when not set up. */
  saml?: SamlSettings | null;
  /** Password sign-in needs a second factor; absent when never required. */
  secondFactorRequired?: boolean;
  /** The tenant's own roles, by name; absent when none was ever defined. */
  roles?: CustomRole[];
  createdAt: string;
  /** Absent on tenants never changed since they were created. */
  updatedAt?: string;
}

/** Who an identity provider's subject is here (user.identity-linked); id: oidcIdentityId(issuer, subject). */
export interface IdentityDoc {
  issuer: string;
  subject: string;
  userId: string;
}

/** A console session begun through an identity provider (user.signed-in), until it is revoked or expires: what the provider's logout ends. */
export interface SsoSessionDoc {
  sessionId: string;
  userId: string;
  issuer: string;
  /** The provider's session id (sid), or null when it sent none. */
  idpSessionId: string | null;
  expiresAt: string;
}

/** The id of an identity's document: its issuer and subject, which together are unique, hashed to a fixed length. */
export function oidcIdentityId(issuer: string, subject: string): string {
  return createHash('sha256').update(`${issuer}\n${subject}`).digest('hex');
}

export interface ProjectDoc {
  projectId: string;
  tenantId: string;
  name: string;
  slug: string;
  plan: Plan;
  contentLocales: ContentLocales;
  customDomains: string[];
  siteSettings: SiteSettings;
  loginBranding: LoginAppearance;
  ipAllowlist: IpAllowlistEntry[];
  /** Absent on documents folded before approval policies existed: read it through approvalPolicyOf. */
  approvalPolicy?: ApprovalPolicy;
  /**
   * The project's usual policy: each rule on once it has been on at any time (read it through
   * usualApprovalPolicyOf). An approval that a rule of it would have refused while the rule was off is flagged.
   */
  usualApprovalPolicy?: ApprovalPolicy;
  /** Review notices' chat webhook as shown (scheme and host; the sealed URL stays in the log), or null. */
  reviewNoticeChat?: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The project's approval policy (the default, both rules off, until one was set). */
export function approvalPolicyOf(project: Pick<ProjectDoc, 'approvalPolicy'>): ApprovalPolicy {
  return project.approvalPolicy ?? { ...DEFAULT_APPROVAL_POLICY };
}

/** The project's usual approval policy (see ProjectDoc.usualApprovalPolicy); never laxer than the policy in force. */
export function usualApprovalPolicyOf(project: Pick<ProjectDoc, 'approvalPolicy' | 'usualApprovalPolicy'>): ApprovalPolicy {
  return strictestOf(approvalPolicyOf(project), project.usualApprovalPolicy ?? DEFAULT_APPROVAL_POLICY);
}

export interface DomainDoc {
  host: string;
  projectId: string;
}

export interface UserDoc {
  userId: string;
  tenantId: string;
  email: string;
  role: UserRole;
  /** The tenant's custom role the user holds (role is then tenant_user); absent or null when none. */
  roleId?: string | null;
  passwordHash: string;
  disabled: boolean;
  /**
   * Sessions signed out and not yet expired (by the JWT's jti): authentication refuses them. Absent on users
   * never signed out. Entries are dropped once expired, when the user's next event is folded.
   */
  revokedSessions?: Array<{ sessionId: string; expiresAt: string }>;
  /** Review notices by e-mail; absent (folded before preferences existed) means on. */
  reviewNotices?: boolean;
  /** When the pending invitation's link expires; null or absent once accepted (or never invited). */
  invitationExpiresAt?: string | null;
  /** The person each identity provider (by issuer) knows as this user; absent when none. */
  identities?: Record<string, string>;
  /** When a session last began (user.signed-in: recorded from this version on); absent when never. */
  lastSignInAt?: string;
  /** What second factor the user has set up (no secrets, no keys: those stay in the log); absent when none ever. */
  secondFactor?: SecondFactorSummary;
  createdAt: string;
  updatedAt: string;
}


export interface AgentKeyDoc {
  keyId: string;
  hash: string;
  projectId: string;
  tenantId: string;
  scope: AgentScope;
  name: string;
  /** The first characters of the key, for lists. */
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
  /** When the key last authenticated a request (to KEY_USAGE_RESOLUTION_MS); absent when never. */
  lastUsedAt?: string;
  /** The person the key acts for: its issuer (see src/domain/access/people.ts); null when the log names none. */
  issuedBy: Person | null;
}

export interface PublicKeyDoc {
  keyId: string;
  hash: string;
  projectId: string;
  tenantId: string;
  prefix: string;
  /** Public keys have no name in the events yet; present only when they do. */
  name?: string;
  createdAt: string;
  revokedAt: string | null;
}


export const access = defineProjection({
  name: 'access',
  // Version 2: the change feed (changes below).
  // Version 3: agent keys' issuedBy (for keys issued before it was recorded, the actor of agent-key.issued), and
  // projects' usualApprovalPolicy.
  // Version 4: tenants' OpenID Connect settings, identities, users' identities and last sign-in.
  // Version 5: tenants' second factor policy and SAML settings, users' second factor summary.
  // Version 6: tenants' custom roles, users' roleId.
  version: 6,
  description: 'Tenants, projects and their settings, custom domains, console users, agent and public keys.',
  collections: {
    tenants: {},
    identities: {},
    sso_sessions: {
      indexes: [
        { name: 'by_idp_session', fields: [['issuer', 1], ['idpSessionId', 1]] },
        // whileFolding: a sign-in drops the user's expired sessions.
        { name: 'by_user', fields: [['userId', 1]], whileFolding: true },
      ],
    },
    projects: {
      indexes: [
        { name: 'by_tenant', fields: [['tenantId', 1], ['name', 1]] },
        { name: 'by_slug', fields: [['slug', 1]], unique: true },
      ],
    },
    domains: {
      indexes: [{ name: 'by_project', fields: [['projectId', 1]] }],
    },
    users: {
      indexes: [
        { name: 'by_email', fields: [['email', 1]], unique: true },
        { name: 'by_tenant', fields: [['tenantId', 1], ['email', 1]] },
      ],
    },
    agent_keys: {
      indexes: [{ name: 'by_project', fields: [['projectId', 1], ['createdAt', 1]] }],
    },
    agent_keys_by_id: {
      // by_created: the replay-key shredder finds keys whose replay window has ended (src/application/replay-key-shredder.ts).
      indexes: [{ name: 'by_project', fields: [['projectId', 1], ['createdAt', 1]] }, { name: 'by_created', fields: [['createdAt', 1]] }],
    },
    public_keys: {
      indexes: [{ name: 'by_project', fields: [['projectId', 1], ['createdAt', 1]] }],
    },
    public_keys_by_id: {
      // by_created: the replay-key shredder finds keys whose replay window has ended (src/application/replay-key-shredder.ts).
      indexes: [{ name: 'by_project', fields: [['projectId', 1], ['createdAt', 1]] }, { name: 'by_created', fields: [['createdAt', 1]] }],
    },
  },
  filter: { eventTypes: accessEvents.map((definition) => definition.type) },
  // Who may read what: caches of public responses drop everything when it changes. The feed tells API-only
  // replicas which commits changed anything (not every one that moved the checkpoint along).
  changes: () => [EVERYTHING],

  async apply(recorded, view) {
    const event = { type: recorded.type, data: recorded.data } as AccessEvent;
    const at = recorded.metadata.occurredAt;
    switch (event.type) {
      case 'tenant.created': {
        const doc: TenantDoc = { tenantId: event.data.tenantId, name: event.data.name, createdAt: at };
        view.put('tenants', doc.tenantId, { ...doc });
        return;
      }
      case 'tenant.oidc-configured': {
        const { tenantId, projectId: _projectId, ...settings } = event.data;
        return updateTenant(view, tenantId, at, { oidc: settings });
      }
      case 'tenant.oidc-removed':
        return updateTenant(view, event.data.tenantId, at, { oidc: null });
      case 'tenant.saml-configured': {
        const { tenantId, projectId: _projectId, ...settings } = event.data;
        return updateTenant(view, tenantId, at, { saml: settings });
      }
      case 'tenant.saml-removed':
        return updateTenant(view, event.data.tenantId, at, { saml: null });
      case 'tenant.second-factor-policy-changed':
        return updateTenant(view, event.data.tenantId, at, { secondFactorRequired: event.data.required });
      case 'tenant.role-defined':
      case 'tenant.role-changed': {
        const { tenantId, projectId: _projectId, ...role } = event.data;
        return updateTenantRoles(view, tenantId, at, (roles) => [...roles.filter((r) => r.roleId !== role.roleId), role]);
      }
      case 'tenant.role-removed':
        return updateTenantRoles(view, event.data.tenantId, at, (roles) => roles.filter((r) => r.roleId !== event.data.roleId));

      case 'project.created': {
        const d = event.data;
        const doc: ProjectDoc = {
          projectId: d.projectId,
          tenantId: d.tenantId,
          name: d.name,
          slug: d.slug,
          plan: d.plan,
          contentLocales: { locales: [...d.contentLocales.locales], defaultLocale: d.contentLocales.defaultLocale },
          customDomains: [],
          siteSettings: { siteUrl: null, siteName: null, description: null },
          loginBranding: { logoUrl: null, primaryColor: null, accentColor: null, message: null },
          ipAllowlist: [],
          approvalPolicy: { ...DEFAULT_APPROVAL_POLICY },
          usualApprovalPolicy: { ...DEFAULT_APPROVAL_POLICY },
          reviewNoticeChat: null,
          createdAt: at,
          updatedAt: at,
        };
        view.put('projects', doc.projectId, { ...doc });
        return;
      }
      case 'project.renamed':
        return updateProject(view, event.data.projectId, at, () => ({ name: event.data.name }));
      case 'project.plan-changed':
        return updateProject(view, event.data.projectId, at, () => ({ plan: event.data.plan }));
      case 'project.content-locales-changed':
        return updateProject(view, event.data.projectId, at, () => ({
          contentLocales: { locales: [...event.data.locales], defaultLocale: event.data.defaultLocale },
        }));
      case 'project.domains-changed': {
        const { projectId, domains } = event.data;
        const project = await view.get<Doc<ProjectDoc>>('projects', projectId);
        // Hosts the project no longer has stop resolving to it (unless another project took them since).
        for (const host of project?.customDomains ?? []) {
          if (domains.includes(host)) continue;
          const existing = await view.get<Doc<DomainDoc>>('domains', host);
          if (existing?.projectId === projectId) view.delete('domains', host);
        }
        for (const host of domains) view.put('domains', host, { host, projectId } satisfies DomainDoc);
        if (project) view.put('projects', projectId, { ...project, customDomains: [...domains], updatedAt: at });
        return;
      }
      case 'project.site-settings-changed': {
        const { siteUrl, siteName, description } = event.data;
        return updateProject(view, event.data.projectId, at, () => ({ siteSettings: { siteUrl, siteName, description } }));
      }
      case 'project.login-appearance-changed': {
        const { logoUrl, primaryColor, accentColor, message } = event.data;
        return updateProject(view, event.data.projectId, at, () => ({ loginBranding: { logoUrl, primaryColor, accentColor, message } }));
      }
      case 'project.approval-policy-changed': {
        const { humanApproval, fourEyes } = event.data;
        return updateProject(view, event.data.projectId, at, (project) => ({
          approvalPolicy: { humanApproval, fourEyes },
          usualApprovalPolicy: strictestOf({ humanApproval, fourEyes }, project.usualApprovalPolicy ?? DEFAULT_APPROVAL_POLICY),
        }));
      }
      case 'project.review-notice-chat-changed':
        return updateProject(view, event.data.projectId, at, () => ({ reviewNoticeChat: event.data.chatWebhook?.display ?? null }));
      case 'project.ip-allowlist-entry-added': {
        const { entryId, cidr, label } = event.data;
        return updateProject(view, event.data.projectId, at, (project) => ({
          // Idempotent: an entry id appears once however often the event is folded.
          ipAllowlist: [...project.ipAllowlist.filter((entry) => entry.id !== entryId), { id: entryId, cidr, label }],
        }));
      }
      case 'project.ip-allowlist-entry-removed':
        return updateProject(view, event.data.projectId, at, (project) => ({
          ipAllowlist: project.ipAllowlist.filter((entry) => entry.id !== event.data.entryId),
        }));

      case 'user.created': {
        const d = event.data;
        const doc: UserDoc = {
          userId: d.userId,
          tenantId: d.tenantId,
          email: d.email,
          role: d.role,
          ...(d.roleId ? { roleId: d.roleId } : {}),
          passwordHash: d.passwordHash,
          disabled: false,
          reviewNotices: true,
          createdAt: at,
          updatedAt: at,
        };
        view.put('users', doc.userId, { ...doc });
        return;
      }
      case 'user.role-changed':
        // roleId is recorded when a custom role is given or taken away.
        return updateUser(view, event.data.userId, at, event.data.roleId === undefined && event.data.previousRoleId === undefined ? { role: event.data.role } : { role: event.data.role, roleId: event.data.roleId ?? null });
      case 'user.password-changed':
        return updateUser(view, event.data.userId, at, { passwordHash: event.data.passwordHash });
      case 'user.disabled':
        return updateUser(view, event.data.userId, at, { disabled: true });
      case 'user.invited':
        return updateUser(view, event.data.userId, at, { invitationExpiresAt: event.data.expiresAt });
      case 'user.invitation-accepted':
        return updateUser(view, event.data.userId, at, { invitationExpiresAt: null });
      case 'user.session-revoked': {
        const { userId, sessionId, expiresAt } = event.data;
        const user = await view.get<Doc<UserDoc>>('users', userId);
        if (!user) return;
        // Still-valid revocations only (deterministic: judged at the event's own time), this one once.
        const kept = (user.revokedSessions ?? []).filter((s) => s.expiresAt > at && s.sessionId !== sessionId);
        view.put('users', userId, { ...user, revokedSessions: [...kept, { sessionId, expiresAt }], updatedAt: at });
        view.delete('sso_sessions', sessionId);
        return;
      }
      case 'user.notice-preferences-changed':
        return updateUser(view, event.data.userId, at, { reviewNotices: event.data.reviewNotices });
      case 'user.identity-linked': {
        const { userId, issuer, subject } = event.data;
        const user = await view.get<Doc<UserDoc>>('users', userId);
        if (!user) return;
        view.put('identities', oidcIdentityId(issuer, subject), { issuer, subject, userId } satisfies IdentityDoc);
        view.put('users', userId, { ...user, identities: { ...user.identities, [issuer]: subject }, updatedAt: at });
        return;
      }
      case 'user.signed-in': {
        const { userId, sessionId, issuer, idpSessionId, expiresAt } = event.data;
        if (issuer !== undefined) {
          for (const ended of await view.find<Doc<SsoSessionDoc>>('sso_sessions', { userId })) if (ended.expiresAt <= at) view.delete('sso_sessions', ended.sessionId);
          view.put('sso_sessions', sessionId, { sessionId, userId, issuer, idpSessionId: idpSessionId ?? null, expiresAt } satisfies SsoSessionDoc);
        }
        if (event.data.secondFactor?.method === 'recovery-code') return updateSecondFactor(view, userId, at, (summary) => ({ recoveryCodesLeft: Math.max(0, summary.recoveryCodesLeft - 1) }), { lastSignInAt: at });
        return updateUser(view, userId, at, { lastSignInAt: at });
      }
      case 'user.totp-enrolled':
        return updateSecondFactor(view, event.data.userId, at, () => ({ totp: true }));
      case 'user.totp-removed':
        return updateSecondFactor(view, event.data.userId, at, () => ({ totp: false }));
      case 'user.recovery-codes-issued':
        return updateSecondFactor(view, event.data.userId, at, () => ({ recoveryCodesLeft: event.data.codeHashes.length }));
      case 'user.passkey-registered':
        return updateSecondFactor(view, event.data.userId, at, (summary) => ({ passkeys: summary.passkeys + 1 }));
      case 'user.passkey-removed':
        return updateSecondFactor(view, event.data.userId, at, (summary) => ({ passkeys: Math.max(0, summary.passkeys - 1) }));
      case 'user.second-factor-reset':
        return updateSecondFactor(view, event.data.userId, at, () => NO_SECOND_FACTOR_SUMMARY);

      case 'agent-key.issued': {
        const d = event.data;
        const doc: AgentKeyDoc = {
          keyId: d.keyId,
          hash: d.hash,
          projectId: d.projectId,
          tenantId: d.tenantId,
          scope: d.scope,
          name: d.name,
          prefix: d.prefix,
          createdAt: d.issuedAt,
          revokedAt: null,
          issuedBy: d.issuedBy ? { ...d.issuedBy } : personFromActor(recorded.metadata.actor),
        };
        view.put('agent_keys', doc.hash, { ...doc });
        view.put('agent_keys_by_id', doc.keyId, { ...doc });
        return;
      }
      case 'agent-key.revoked':
        return revokeKey(view, 'agent_keys', event.data.keyId, event.data.revokedAt);
      case 'agent-key.used': {
        // On the listing document only: the one authentication reads (by hash) is not rewritten for it.
        const key = await view.get<Doc<AgentKeyDoc>>('agent_keys_by_id', event.data.keyId);
        if (key && (key.lastUsedAt ?? '') < event.data.usedAt) view.put('agent_keys_by_id', key.keyId, { ...key, lastUsedAt: event.data.usedAt });
        return;
      }
      case 'public-key.issued': {
        const d = event.data;
        const doc: PublicKeyDoc = {
          keyId: d.keyId,
          hash: d.hash,
          projectId: d.projectId,
          tenantId: d.tenantId,
          prefix: d.prefix,
          createdAt: d.issuedAt,
          revokedAt: null,
        };
        view.put('public_keys', doc.hash, { ...doc });
        view.put('public_keys_by_id', doc.keyId, { ...doc });
        return;
      }
      case 'public-key.revoked':
        return revokeKey(view, 'public_keys', event.data.keyId, event.data.revokedAt);
    }
  },
});

async function updateProject(view: ProjectionView, projectId: string, at: string, patch: (project: ProjectDoc) => Partial<ProjectDoc>): Promise<void> {
  const project = await view.get<Doc<ProjectDoc>>('projects', projectId);
  if (!project) return;
  view.put('projects', projectId, { ...project, ...patch(project), updatedAt: at });
}

async function updateTenant(view: ProjectionView, tenantId: string, at: string, patch: Partial<TenantDoc>): Promise<void> {
  const tenant = await view.get<Doc<TenantDoc>>('tenants', tenantId);
  if (!tenant) return;
  view.put('tenants', tenantId, { ...tenant, ...patch, updatedAt: at });
}

async function updateTenantRoles(view: ProjectionView, tenantId: string, at: string, change: (roles: CustomRole[]) => CustomRole[]): Promise<void> {
  const tenant = await view.get<Doc<TenantDoc>>('tenants', tenantId);
  if (!tenant) return;
  const roles = change(tenant.roles ?? []).sort((a, b) => a.name.localeCompare(b.name, 'en') || a.roleId.localeCompare(b.roleId));
  view.put('tenants', tenantId, { ...tenant, roles, updatedAt: at });
}

async function updateSecondFactor(view: ProjectionView, userId: string, at: string, change: (summary: SecondFactorSummary) => Partial<SecondFactorSummary>, patch: Partial<UserDoc> = {}): Promise<void> {
  const user = await view.get<Doc<UserDoc>>('users', userId);
  if (!user) return;
  const summary = user.secondFactor ?? NO_SECOND_FACTOR_SUMMARY;
  view.put('users', userId, { ...user, ...patch, secondFactor: { ...summary, ...change(summary) }, updatedAt: at });
}

async function updateUser(view: ProjectionView, userId: string, at: string, patch: Partial<UserDoc>): Promise<void> {
  const user = await view.get<Doc<UserDoc>>('users', userId);
  if (!user) return;
  view.put('users', userId, { ...user, ...patch, updatedAt: at });
}

/** A revocation names the key by id: the by-id document gives the hash the other document is filed under. */
async function revokeKey(view: ProjectionView, collection: 'agent_keys' | 'public_keys', keyId: string, revokedAt: string): Promise<void> {
  const byId = `${collection}_by_id`;
  const key = await view.get<Doc<AgentKeyDoc | PublicKeyDoc>>(byId, keyId);
  if (!key) return;
  view.put(byId, keyId, { ...key, revokedAt });
  const byHash = await view.get<Doc<AgentKeyDoc | PublicKeyDoc>>(collection, key.hash);
  view.put(collection, key.hash, { ...(byHash ?? key), revokedAt });
}

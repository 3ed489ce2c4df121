import { z } from 'zod';
import { defineEvent, type EventDefinition } from '../../event-store/event-catalog.ts';
import { PLANS } from '../plans.ts';
import { AGENT_KEY_DISPLAY_LENGTH, AGENT_KEY_PREFIX, PUBLIC_KEY_DISPLAY_LENGTH, PUBLIC_KEY_PREFIX } from '../../security/api-keys.ts';
import { isPasswordHash } from '../../security/password-hashing.ts';
import type { EventActor } from '../decider.ts';
import { credentialId, id, keyHash, secondFactorMethod } from './access-event-fields.ts';
import { tenantRoleChanged, tenantRoleDefined, tenantRoleRemoved } from './role-events.ts';
import { userPasskeyRegistered, userPasskeyRemoved, userRecoveryCodesIssued, userSecondFactorFailed, userSecondFactorReset, userTotpEnrolled, userTotpRemoved } from './second-factor-events.ts';

/**
 * Events of tenants, projects, users and keys. Secrets never appear in clear: users carry a password
 * hash (checked to be one), keys carry the SHA-256 of the key and its short display prefix (checked to
 * be no longer than the prefix), so a schema mistake cannot smuggle a password or a whole key into the log.
 *
 * Project events carry the whole value they set (all locales, all domains, all site settings), so a
 * projection folds each one without looking back.
 */
const plan = z.enum(PLANS);
const role = z.enum(['tenant_admin', 'tenant_user']);
const timestamp = z.iso.datetime({ offset: false, precision: 3 });
const agentKeyPrefix = z
  .string()
  .length(AGENT_KEY_DISPLAY_LENGTH)
  .refine((value) => value.startsWith(AGENT_KEY_PREFIX), `starts with ${AGENT_KEY_PREFIX}`);
const publicKeyPrefix = z
  .string()
  .length(PUBLIC_KEY_DISPLAY_LENGTH)
  .refine((value) => value.startsWith(PUBLIC_KEY_PREFIX), `starts with ${PUBLIC_KEY_PREFIX}`);
const passwordHash = z.string().refine(isPasswordHash, 'a password hash (scrypt$N$r$p$salt$hash), never a password');


const contentLocales = z.object({ locales: z.array(z.string().min(2)).min(1), defaultLocale: z.string().min(2) });

// ---- tenants

export const tenantCreated = defineEvent({
  type: 'tenant.created',
  version: 1,
  schema: z.object({ tenantId: id, name: z.string().min(1) }),
});

/**
 * The tenant's OpenID Connect sign-in, as a whole after the change: the provider (`issuer`, whose discovery
 * document names its endpoints and keys), the client registered there (`clientId`, and its secret sealed with the
 * secrets key for the record `oidc:<tenantId>`, never in clear), which e-mail domains may sign in, how the IdP's
 * groups claim chooses a role (`adminGroups` make tenant_admin; `userGroups` tenant_user, any member of an allowed
 * domain when empty), and whether passwords are refused for the tenant (`ssoOnly`).
 */
export const tenantOidcConfigured = defineEvent({
  type: 'tenant.oidc-configured',
  version: 1,
  schema: z.object({
    tenantId: id,
    issuer: z.url(),
    clientId: z.string().min(1).max(500),
    sealedClientSecret: z.string().regex(/^v1\./, 'a sealed secret'),
    allowedEmailDomains: z.array(z.string().min(1).max(253)).min(1),
    groupsClaim: z.string().min(1).max(200),
    adminGroups: z.array(z.string().min(1).max(500)),
    userGroups: z.array(z.string().min(1).max(500)),
    /** Groups whose members sign in with one of the tenant's own roles (absent: none). */
    roleGroups: z.array(z.object({ group: z.string().min(1).max(500), roleId: id })).max(50).optional(),
    ssoOnly: z.boolean(),
    /** The project the tenant admin acted in, whose audit log shows the change (absent when none, e.g. the CLI). */
    projectId: id.optional(),
  }),
});

/** The tenant's OpenID Connect sign-in was removed: people sign in with passwords again. */
export const tenantOidcRemoved = defineEvent({
  type: 'tenant.oidc-removed',
  version: 1,
  schema: z.object({ tenantId: id, projectId: id.optional() }),
});

/**
 * The tenant's SAML 2.0 sign-in, as a whole after the change: the identity provider (`idpEntityId`, where the
 * browser is sent, `ssoUrl`, and its signing certificates, public), which e-mail domains may sign in, the
 * attributes that carry the e-mail address and the groups, how groups choose a role, and single sign-on only.
 * A tenant signs in through one provider: OpenID Connect or SAML.
 */
export const tenantSamlConfigured = defineEvent({
  type: 'tenant.saml-configured',
  version: 1,
  schema: z.object({
    tenantId: id,
    idpEntityId: z.string().min(1).max(1024),
    ssoUrl: z.url(),
    sloUrl: z.url().nullable(),
    idpCertificates: z.array(z.string().regex(/^-----BEGIN CERTIFICATE-----/, 'a PEM certificate').max(16_384)).min(1).max(3),
    allowedEmailDomains: z.array(z.string().min(1).max(253)).min(1),
    emailAttribute: z.string().max(500),
    groupsAttribute: z.string().min(1).max(500),
    adminGroups: z.array(z.string().min(1).max(500)),
    userGroups: z.array(z.string().min(1).max(500)),
    /** Groups whose members sign in with one of the tenant's own roles (absent: none). */
    roleGroups: z.array(z.object({ group: z.string().min(1).max(500), roleId: id })).max(50).optional(),
    ssoOnly: z.boolean(),
    /** This service's certificate for the tenant, and its private key sealed (never in clear); absent on settings recorded before. */
    spCertificate: z.string().regex(/^-----BEGIN CERTIFICATE-----/, 'a PEM certificate').max(16_384).optional(),
    sealedSpKey: z.string().regex(/^v1\./, 'a sealed key').optional(),
    wantAssertionsEncrypted: z.boolean().optional(),
    projectId: id.optional(),
  }),
});

/** The tenant's SAML sign-in was removed. */
export const tenantSamlRemoved = defineEvent({
  type: 'tenant.saml-removed',
  version: 1,
  schema: z.object({ tenantId: id, projectId: id.optional() }),
});

/**
 * Whether the tenant's people must prove a second factor (an authenticator app's code or a passkey) when they
 * sign in with a password: someone who has none is asked to set one up before their session begins. Sign-in
 * through the identity provider is left to the provider's own second factor.
 */
export const tenantSecondFactorPolicyChanged = defineEvent({
  type: 'tenant.second-factor-policy-changed',
  version: 1,
  schema: z.object({ tenantId: id, required: z.boolean(), projectId: id.optional() }),
});

// ---- projects

export const projectCreated = defineEvent({
  type: 'project.created',
  version: 1,
  schema: z.object({
    projectId: id,
    tenantId: id,
    name: z.string().min(1),
    slug: z.string().min(1),
    plan,
    contentLocales,
  }),
});

export const projectRenamed = defineEvent({
  type: 'project.renamed',
  version: 1,
  schema: z.object({ projectId: id, name: z.string().min(1) }),
});

export const projectPlanChanged = defineEvent({
  type: 'project.plan-changed',
  version: 1,
  schema: z.object({ projectId: id, plan, previousPlan: plan }),
});

export const projectContentLocalesChanged = defineEvent({
  type: 'project.content-locales-changed',
  version: 1,
  schema: z.object({ projectId: id, locales: contentLocales.shape.locales, defaultLocale: contentLocales.shape.defaultLocale }),
});

export const projectDomainsChanged = defineEvent({
  type: 'project.domains-changed',
  version: 1,
  schema: z.object({ projectId: id, domains: z.array(z.string().min(1)) }),
});

export const projectSiteSettingsChanged = defineEvent({
  type: 'project.site-settings-changed',
  version: 1,
  schema: z.object({
    projectId: id,
    siteUrl: z.string().nullable(),
    siteName: z.string().nullable(),
    description: z.string().nullable(),
  }),
});

export const projectLoginAppearanceChanged = defineEvent({
  type: 'project.login-appearance-changed',
  version: 1,
  schema: z.object({
    projectId: id,
    logoUrl: z.string().nullable(),
    primaryColor: z.string().nullable(),
    accentColor: z.string().nullable(),
    message: z.string().nullable(),
  }),
});

/**
 * The project's approval policy as a whole after the change (spec section 3 rule 1 made stricter; both off by
 * default): humanApproval, agent keys may not approve or publish, nor rename, delete or withdraw live content;
 * fourEyes, whoever approves or publishes a revision is another person than its last editor and its submitter.
 * `previous`: the policy before the change (absent on changes recorded before it was).
 */
export const projectApprovalPolicyChanged = defineEvent({
  type: 'project.approval-policy-changed',
  version: 1,
  schema: z.object({
    projectId: id,
    humanApproval: z.boolean(),
    fourEyes: z.boolean(),
    previous: z.object({ humanApproval: z.boolean(), fourEyes: z.boolean() }).optional(),
  }),
});

/**
 * Where review notices also go as chat posts (a Slack-compatible incoming webhook, as contact forms' chat):
 * the URL sealed with the secrets key (it is a credential) and its display form (scheme and host), or null.
 */
export const projectReviewNoticeChatChanged = defineEvent({
  type: 'project.review-notice-chat-changed',
  version: 1,
  schema: z.object({ projectId: id, chatWebhook: z.object({ sealedUrl: z.string().regex(/^v1\./, 'a sealed secret'), display: z.string() }).nullable() }),
});

export const projectIpAllowlistEntryAdded = defineEvent({
  type: 'project.ip-allowlist-entry-added',
  version: 1,
  schema: z.object({ projectId: id, entryId: id, cidr: z.string().min(1), label: z.string() }),
});

export const projectIpAllowlistEntryRemoved = defineEvent({
  type: 'project.ip-allowlist-entry-removed',
  version: 1,
  schema: z.object({ projectId: id, entryId: id }),
});

// ---- users

export const userCreated = defineEvent({
  type: 'user.created',
  version: 1,
  // projectId: the project whose audit log shows the creation, when one is named (a sign-in through a provider's).
  // roleId: the tenant's custom role the user holds (role is then tenant_user); absent: none.
  schema: z.object({ userId: id, tenantId: id, email: z.string().min(3), role, roleId: id.optional(), passwordHash, projectId: id.optional() }),
});

export const userRoleChanged = defineEvent({
  type: 'user.role-changed',
  version: 1,
  // projectId: the project whose audit log shows the change (the one a sign-in through a provider came by).
  // roleId and previousRoleId: the custom role after and before (null or absent: none).
  schema: z.object({ userId: id, role, previousRole: role, roleId: id.nullable().optional(), previousRoleId: id.nullable().optional(), projectId: id.optional() }),
});

export const userPasswordChanged = defineEvent({
  type: 'user.password-changed',
  version: 1,
  schema: z.object({ userId: id, passwordHash }),
});

/** The user's own choice of notices: review notices by e-mail (on unless turned off). */
export const userNoticePreferencesChanged = defineEvent({
  type: 'user.notice-preferences-changed',
  version: 1,
  schema: z.object({ userId: id, reviewNotices: z.boolean() }),
});

export const userDisabled = defineEvent({
  type: 'user.disabled',
  version: 1,
  schema: z.object({ userId: id }),
});

/**
 * A console user was invited by e-mail: the link's secret is mailed to them and only its SHA-256 is kept here.
 * Sent again, a newer invitation replaces the older (whose link then fails). Until it is accepted the user has
 * no password anyone knows.
 */
export const userInvited = defineEvent({
  type: 'user.invited',
  version: 1,
  schema: z.object({ userId: id, tokenHash: keyHash, expiresAt: timestamp }),
});

/** The invitation's link was used: the user chose a password (user.password-changed beside it); the link is spent. */
export const userInvitationAccepted = defineEvent({
  type: 'user.invitation-accepted',
  version: 1,
  schema: z.object({ userId: id }),
});

/**
 * A console session was signed out: its token (by `sessionId`, the JWT's jti) is refused from now on.
 * `expiresAt` is when the token would have expired anyway; after it the revocation need not be kept.
 */
export const userSessionRevoked = defineEvent({
  type: 'user.session-revoked',
  version: 1,
  schema: z.object({ userId: id, sessionId: id, expiresAt: timestamp }),
});

/**
 * The user is the person an identity provider knows as `subject` (the ID token's sub under `issuer`): from now on
 * only that subject signs in as them through that provider, even if the provider later gives the e-mail address
 * to someone else.
 */
export const userIdentityLinked = defineEvent({
  type: 'user.identity-linked',
  version: 1,
  // issuer: the OpenID provider's issuer URL, or the SAML provider's entity ID (a URI, not always a URL).
  schema: z.object({ userId: id, protocol: z.enum(['oidc', 'saml']), issuer: z.string().min(1).max(1024), subject: z.string().min(1).max(1024), projectId: id.optional() }),
});

/**
 * A console session began. `method`: how the person proved who they are (`password`; `oidc` or `saml`: through
 * the tenant's identity provider, `issuer` (an OpenID issuer or a SAML entity ID), with its session id
 * `idpSessionId` when the provider sent one).
 * `sessionId` is the session token's id (its jti, not the token).
 */
export const userSignedIn = defineEvent({
  type: 'user.signed-in',
  version: 1,
  schema: z.object({
    userId: id,
    sessionId: id,
    method: z.enum(['password', 'oidc', 'saml']),
    issuer: z.string().min(1).max(1024).optional(),
    idpSessionId: z.string().min(1).max(255).optional(),
    expiresAt: timestamp,
    /** The project whose login page was used: its audit log shows the sign-in (absent for a sign-in without one). */
    projectId: id.optional(),
    /**
     * The second factor a password sign-in was proven with: `totpStep` (the 30-second step of the code, so no code
     * signs in twice), `recoveryCodeHash` (the code spent), or the passkey `credentialId`, its new `counter` and
     * when its challenge was made (`challengedAt`, ms: each challenge is answered once).
     */
    secondFactor: z
      .object({
        method: secondFactorMethod,
        totpStep: z.number().int().min(0).optional(),
        recoveryCodeHash: keyHash.optional(),
        credentialId: credentialId.optional(),
        counter: z.number().int().min(0).optional(),
        challengedAt: z.number().int().min(0).optional(),
      })
      .optional(),
    /** SAML: when the request the provider answered was made (ms): each answer signs in once. */
    requestedAt: z.number().int().min(0).optional(),
  }),
});

// ---- keys

/** A person who issues keys: a console user (tenant_admin session) or an operator at the command line. */
const issuer = z.object({ type: z.enum(['user', 'operator']), id: z.string().min(1).max(200) });

/**
 * `issuedBy`: the person the key acts for (src/domain/access/people.ts). Absent on keys issued before it was
 * recorded: their issuer is the actor of this event, which the log has always recorded.
 */
export const agentKeyIssued = defineEvent({
  type: 'agent-key.issued',
  version: 1,
  schema: z.object({
    keyId: id,
    projectId: id,
    tenantId: id,
    scope: z.enum(['full', 'content', 'schema']),
    name: z.string().min(1),
    prefix: agentKeyPrefix,
    hash: keyHash,
    issuedAt: timestamp,
    issuedBy: issuer.optional(),
  }),
});

export const agentKeyRevoked = defineEvent({
  type: 'agent-key.revoked',
  version: 1,
  schema: z.object({ keyId: id, projectId: id, revokedAt: timestamp }),
});

/** An agent key authenticated a request: recorded at most once per KEY_USAGE_RESOLUTION_MS per key and process, for its "last used" time. */
export const agentKeyUsed = defineEvent({
  type: 'agent-key.used',
  version: 1,
  schema: z.object({ keyId: id, projectId: id, usedAt: timestamp }),
});

export const publicKeyIssued = defineEvent({
  type: 'public-key.issued',
  version: 1,
  schema: z.object({ keyId: id, projectId: id, tenantId: id, prefix: publicKeyPrefix, hash: keyHash, issuedAt: timestamp }),
});

export const publicKeyRevoked = defineEvent({
  type: 'public-key.revoked',
  version: 1,
  schema: z.object({ keyId: id, projectId: id, revokedAt: timestamp }),
});

/** Every access event type, for the service's event catalog. */
export const accessEvents = [
  tenantCreated,
  tenantOidcConfigured,
  tenantOidcRemoved,
  tenantSecondFactorPolicyChanged,
  tenantRoleDefined,
  tenantRoleChanged,
  tenantRoleRemoved,
  tenantSamlConfigured,
  tenantSamlRemoved,
  projectCreated,
  projectRenamed,
  projectPlanChanged,
  projectContentLocalesChanged,
  projectDomainsChanged,
  projectSiteSettingsChanged,
  projectLoginAppearanceChanged,
  projectApprovalPolicyChanged,
  projectReviewNoticeChatChanged,
  projectIpAllowlistEntryAdded,
  projectIpAllowlistEntryRemoved,
  userCreated,
  userRoleChanged,
  userPasswordChanged,
  userNoticePreferencesChanged,
  userDisabled,
  userSessionRevoked,
  userInvited,
  userInvitationAccepted,
  userIdentityLinked,
  userSignedIn,
  userTotpEnrolled,
  userTotpRemoved,
  userRecoveryCodesIssued,
  userPasskeyRegistered,
  userPasskeyRemoved,
  userSecondFactorReset,
  userSecondFactorFailed,
  agentKeyIssued,
  agentKeyRevoked,
  agentKeyUsed,
  publicKeyIssued,
  publicKeyRevoked,
] as const satisfies readonly EventDefinition[];

/** The domain event (type and data, and who caused it once it is in the log) a definition describes. */
export type EventOf<D> = D extends EventDefinition<infer Type, infer Data> ? { type: Type; data: Data; actor?: EventActor } : never;

export type TenantEvent =
  | EventOf<typeof tenantCreated>
  | EventOf<typeof tenantOidcConfigured>
  | EventOf<typeof tenantOidcRemoved>
  | EventOf<typeof tenantSecondFactorPolicyChanged>
  | EventOf<typeof tenantRoleDefined>
  | EventOf<typeof tenantRoleChanged>
  | EventOf<typeof tenantRoleRemoved>
  | EventOf<typeof tenantSamlConfigured>
  | EventOf<typeof tenantSamlRemoved>;
export type ProjectEvent =
  | EventOf<typeof projectCreated>
  | EventOf<typeof projectRenamed>
  | EventOf<typeof projectPlanChanged>
  | EventOf<typeof projectContentLocalesChanged>
  | EventOf<typeof projectDomainsChanged>
  | EventOf<typeof projectSiteSettingsChanged>
  | EventOf<typeof projectLoginAppearanceChanged>
  | EventOf<typeof projectApprovalPolicyChanged>
  | EventOf<typeof projectReviewNoticeChatChanged>
  | EventOf<typeof projectIpAllowlistEntryAdded>
  | EventOf<typeof projectIpAllowlistEntryRemoved>;
export type UserEvent =
  | EventOf<typeof userCreated>
  | EventOf<typeof userRoleChanged>
  | EventOf<typeof userPasswordChanged>
  | EventOf<typeof userNoticePreferencesChanged>
  | EventOf<typeof userDisabled>
  | EventOf<typeof userSessionRevoked>
  | EventOf<typeof userInvited>
  | EventOf<typeof userInvitationAccepted>
  | EventOf<typeof userIdentityLinked>
  | EventOf<typeof userSignedIn>
  | EventOf<typeof userTotpEnrolled>
  | EventOf<typeof userTotpRemoved>
  | EventOf<typeof userRecoveryCodesIssued>
  | EventOf<typeof userPasskeyRegistered>
  | EventOf<typeof userPasskeyRemoved>
  | EventOf<typeof userSecondFactorReset>
  | EventOf<typeof userSecondFactorFailed>;
export type KeyEvent =
  | EventOf<typeof agentKeyIssued>
  | EventOf<typeof agentKeyRevoked>
  | EventOf<typeof publicKeyIssued>
  | EventOf<typeof publicKeyRevoked>;
export type KeyUsageEvent = EventOf<typeof agentKeyUsed>;
export type AccessEvent = TenantEvent | ProjectEvent | UserEvent | KeyEvent | KeyUsageEvent;

import type { Router } from '@koa/router';
import { TRANSLATION_PLAN } from '../../translation/entry-translator.ts';
import { newRouter } from '../router.ts';
import type { Context } from 'koa';
import { z } from 'zod';
import type { Caller } from '../../domain/access/caller.ts';
import { PLANS, planAtLeast } from '../../domain/plans.ts';
import { ROLE_NAMES, type AgentScope, type UserRole } from '../../domain/principal.ts';
import { notFound, unavailable, validationError } from '../errors/error-factory.ts';
import { type ApiRegistry, settleWritten, wrote } from './api-registry.ts';
import { actingProject, type AdminDeps, idempotencyKeyOf, principalOf, projectOf } from './admin-context.ts';
import { idempotentCreate } from './idempotent-create.ts';
import { isUuid } from './request-body.ts';
import { approvalPolicyOf, type ProjectDoc } from '../../../projections/access.ts';
import { accessQueries } from '../../../projections/access-queries.ts';
import { projectionsFolding } from '../../../projections/index.ts';
import type { Doc } from '../../read-models/read-model-store.ts';

/** The access read model's project document, with every setting these routes show. */
type ProjectRecord = ProjectDoc;

interface KeyRecord {
  keyId: string;
  projectId: string;
  scope?: AgentScope;
  name?: string;
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt?: string;
  /** Agent keys: the person the key acts for (absent on public keys, and on documents folded before it was kept). */
  issuedBy?: { type: 'user' | 'operator'; id: string } | null;
}

interface UserRecord {
  userId: string;
  tenantId: string;
  email: string;
  role: UserRole;
  roleId?: string | null;
  disabled: boolean;
  createdAt: string;
  invitationExpiresAt?: string | null;
  secondFactor?: { totp: boolean; passkeys: number; recoveryCodesLeft: number };
}


const KEY_TYPES = ['agent', 'public'] as const;
const AGENT_SCOPES = ['full', 'content', 'schema'] as const satisfies readonly AgentScope[];
export const USER_ROLES = ['tenant_admin', 'tenant_user'] as const satisfies readonly UserRole[];

const nullableText = (max: number) => z.string().max(max).nullable().optional();

const patchLocalesBody = z.object({
  locales: z.array(z.string().min(1).max(35)).min(1).max(30).optional(),
  defaultLocale: z.string().min(1).max(35).optional(),
});

const siteSettingsBody = z.object({
  siteUrl: nullableText(2000),
  siteName: nullableText(200),
  description: nullableText(1000),
});

const customDomainsBody = z.object({ domains: z.array(z.string().max(253)).max(20) });

const loginAppearanceBody = z.object({
  logoUrl: nullableText(2000),
  primaryColor: nullableText(16),
  accentColor: nullableText(16),
  message: nullableText(500),
});

const approvalPolicyBody = z.object({
  humanApproval: z.boolean().optional().describe('Agent keys may save and submit revisions, but not approve or publish them.'),
  fourEyes: z.boolean().optional().describe('Whoever approves or publishes a revision differs from its last editor and from its submitter.'),
});

export const approvalPolicySchema = z.object({
  humanApproval: z.boolean().describe('On: agent keys may save and submit revisions, not approve or publish them (403 HUMAN_APPROVAL_REQUIRED).'),
  fourEyes: z.boolean().describe('On: whoever approves or publishes a revision differs from its last editor and its submitter (403 FOUR_EYES_REQUIRED).'),
});

const ipAllowlistBody = z.object({
  cidr: z.string().min(1).max(100),
  label: z.string().max(100).optional(),
  idempotencyKey: z.string().optional(),
});

const issueKeyBody = z.object({
  type: z.enum(KEY_TYPES),
  /** Agent keys only; default full. */
  scope: z.enum(AGENT_SCOPES).optional(),
  /** Agent keys only; default "Agent key". */
  name: z.string().min(1).max(100).optional(),
  idempotencyKey: z.string().optional(),
});

const updateUserBody = z.object({
  role: z.enum(ROLE_NAMES).optional().describe('The new role; alone, it also takes away a custom role'),
  roleId: z.uuid().nullable().optional().describe("One of the organisation's custom roles (GET /roles), held with role tenant_user (role may be left out); null: none"),
  disabled: z.literal(true, { error: 'only true: a disabled member cannot be enabled again here' }).optional(),
});

const createUserBody = z.object({
  email: z.string().min(3).max(254),
  password: z.string().min(1).max(1024),
  role: z.enum(ROLE_NAMES),
  roleId: z.uuid().nullable().optional().describe("One of the organisation's custom roles (GET /roles): the member holds it with role tenant_user"),
  idempotencyKey: z.string().optional(),
});

// ---- answers

export const contentLocalesSchema = z.object({ locales: z.array(z.string()), defaultLocale: z.string() }).meta({ id: 'ContentLocales' });
const siteSettingsSchema = z.object({ siteUrl: z.string().nullable(), siteName: z.string().nullable(), description: z.string().nullable() }).meta({ id: 'SiteSettings' });
export const publicApiInfoSchema = z.object({
  projectId: z.uuid(),
  publicBase: z.string().describe('The project-pinned base of the public read API, relative to the service root.'),
  publicKeyHeader: z.literal('X-Service-Public-Api-Key'),
}).meta({ id: 'PublicApiInfo' });
export const projectOverviewSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  slug: z.string(),
  plan: z.enum(PLANS),
  contentLocales: contentLocalesSchema,
  customDomains: z.array(z.string()),
  siteSettings: siteSettingsSchema,
  publicApi: publicApiInfoSchema,
  machineTranslation: z.boolean().describe('Whether POST /entries/{id}/translate (translate_entry_locales) can run for this project: the service has a translation provider (TRANSLATION_API_URL) and the plan is Standard or above.'),
}).meta({ id: 'ProjectOverview' });
export const loginAppearanceSchema = z.object({
  logoUrl: z.string().nullable(),
  primaryColor: z.string().nullable(),
  accentColor: z.string().nullable(),
  message: z.string().nullable(),
  projectName: z.string(),
}).meta({ id: 'LoginAppearance' });
export const ipAllowlistEntrySchema = z.object({ id: z.uuid(), cidr: z.string().describe('Canonical CIDR: network address / prefix length.'), label: z.string() }).meta({ id: 'IpAllowlistEntry' });
export const ipAllowlistSchema = z.object({ items: z.array(ipAllowlistEntrySchema), enforced: z.boolean().describe('true on Business and above when the list is not empty.') });
const keySummarySchema = z.object({
  id: z.uuid(),
  type: z.enum(KEY_TYPES),
  prefix: z.string().describe('The first characters of the key, to recognise it.'),
  scope: z.enum(AGENT_SCOPES).nullable().describe('Agent keys: full, content or schema; null for public keys.'),
  name: z.string().nullable(),
  createdAt: z.string(),
  revokedAt: z.string().nullable(),
  lastUsedAt: z.string().nullable().describe('Agent keys: when the key was last used, exact to 10 minutes; null if never (and for public keys).'),
  issuedBy: z
    .object({ type: z.enum(['user', 'operator']).describe('A console user (id: the user id) or an operator at the command line (id: the name the CLI recorded).'), id: z.string() })
    .nullable()
    .describe('Agent keys: the person who issued the key, and for whom it acts (four eyes counts what it writes, submits or approves as theirs); null for public keys.'),
}).meta({ id: 'KeySummary' });
const issuedKeySchema = keySummarySchema.extend({ key: z.string().describe('The key itself, shown in this answer only.'), notice: z.string() }).meta({ id: 'IssuedKey' });
const userSummarySchema = z
  .object({
    id: z.uuid(),
    email: z.string(),
    role: z.enum(USER_ROLES),
    roleId: z.uuid().nullable().describe("The organisation's custom role the member holds (GET /roles); null: none, the role alone says what they may do"),
    disabled: z.boolean(),
    createdAt: z.string(),
    invitationExpiresAt: z.string().nullable().describe('Invited by e-mail and not yet accepted: until when the link works (it may have expired: send it again). null otherwise.'),
    secondFactor: z
      .object({ totp: z.boolean().describe('An authenticator app is set up'), passkeys: z.number().int().describe('How many passkeys'), recoveryCodesLeft: z.number().int() })
      .describe('The second factor the member set up for password sign-in (nothing secret)'),
  })
  .meta({ id: 'UserSummary' });
const createdUserSchema = z.object({ id: z.uuid(), tenantId: z.uuid(), email: z.string(), role: z.enum(USER_ROLES), roleId: z.uuid().nullable().optional().describe("The organisation's custom role the user holds; null: none"), disabled: z.boolean() }).meta({ id: 'CreatedUser' });
const customDomainsSchema = z.object({ domains: z.array(z.string()) });
const keyListSchema = z.object({ items: z.array(keySummarySchema) });
const revokedKeySchema = z.object({ id: z.uuid(), type: z.enum(KEY_TYPES), revokedAt: z.string() });
const projectListSchema = z.object({ items: z.array(z.object({ id: z.uuid(), name: z.string(), slug: z.string(), plan: z.enum(PLANS) })) });
const userListSchema = z.object({ items: z.array(userSummarySchema) });

/**
 * Project settings, console login appearance and IP allowlist, API keys and members (spec sections 4.4,
 * 5 and 8). The access service decides and appends; each write answers once the access read model shows
 * it, so the caller's next request (authentication included) sees its own write.
 */
export function projectRoutes(deps: AdminDeps, api: ApiRegistry, options: { translationProvider: boolean } = { translationProvider: false }): Router {
  const router = newRouter();
  const accessModel = accessQueries(deps.reader);
  const { access, reader } = deps;

  const record = async (ctx: Context): Promise<Doc<ProjectRecord>> => {
    const project = projectOf(ctx);
    const doc = await accessModel.project(project.projectId);
    if (!doc) throw notFound(`No project ${project.projectId}.`);
    return doc;
  };
  /** The caller's address for console users: the allowlist decider refuses changes that would lock them out. */
  const writeOptions = (ctx: Context): { clientIp?: string } => (principalOf(ctx).kind === 'user' ? { clientIp: ctx.ip } : {});
  const keyId = (ctx: Context): string => {
    const value = ctx.params['keyId'];
    if (!isUuid(value)) throw notFound(`No key ${value}.`);
    return value;
  };

  // ---- overview and public API

  api.add(router, { method: 'get', path: '/project', operationId: 'getProjectOverview', permission: 'project.read', summary: 'The project: name, slug, plan, content locales, custom domains, site settings and the public API base', tag: 'Project', responses: { 200: { description: 'The project overview', schema: projectOverviewSchema } }, errors: {} }, async (ctx) => {
    const doc = await record(ctx);
    ctx.body = {
      id: doc.projectId,
      name: doc.name,
      slug: doc.slug,
      plan: doc.plan,
      contentLocales: doc.contentLocales,
      customDomains: doc.customDomains,
      siteSettings: doc.siteSettings,
      publicApi: publicApiInfo(doc.projectId),
      machineTranslation: options.translationProvider && planAtLeast(doc.plan, TRANSLATION_PLAN),
    } satisfies z.input<typeof projectOverviewSchema>;
  });

  api.add(router, { method: 'get', path: '/project/public-api-info', operationId: 'getPublicApiInfo', permission: 'project.read', summary: 'The project id and the base path of its public read API', tag: 'Project', responses: { 200: { description: 'projectId and publicBase', schema: publicApiInfoSchema } }, errors: {} }, async (ctx) => {
    ctx.body = publicApiInfo(projectOf(ctx).projectId);
  });

  // ---- content locales

  api.add(router, { method: 'get', path: '/project/content-locales', operationId: 'getProjectContentLocales', permission: 'locales.read', summary: "The project's content locales and default locale", tag: 'Project', responses: { 200: { description: 'locales and defaultLocale', schema: contentLocalesSchema } }, errors: {} }, async (ctx) => {
    ctx.body = (await record(ctx)).contentLocales;
  });

  api.add(router, { method: 'patch', path: '/project/content-locales', operationId: 'patchProjectContentLocales', permission: 'locales.patch', summary: 'Change the content locales and/or the default locale (tenant_admin session only; agent keys refused)', tag: 'Project', body: patchLocalesBody, responses: { 200: { description: 'locales and defaultLocale after the change', schema: contentLocalesSchema } }, errors: { 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const caller = principalOf(ctx);
    const projectId = projectOf(ctx).projectId;
    const result = await access.patchContentLocales(caller, projectId, body);
    // The public API re-shapes every live entry for the new locales: answered once it serves them.
    wrote(ctx, result.position, projectionsFolding('project.content-locales-changed'));
    ctx.body = result.contentLocales;
  });

  // ---- site settings and custom domains

  api.add(router, { method: 'put', path: '/project/site-settings', operationId: 'updateSiteSettings', permission: 'project.settings.change', summary: 'Set the site URL, site name and description (absent: unchanged; null: cleared)', tag: 'Project', body: siteSettingsBody, responses: { 200: { description: 'The site settings', schema: siteSettingsSchema } }, errors: {} }, async (ctx, { body }) => {
    const caller = principalOf(ctx);
    const projectId = projectOf(ctx).projectId;
    const result = await access.updateSiteSettings(caller, projectId, body);
    wrote(ctx, result.position, ['access']);
    ctx.body = result.value;
  });

  api.add(router, { method: 'put', path: '/project/custom-domains', operationId: 'setCustomDomains', permission: 'project.settings.change', summary: "Replace the project's custom domains (409 when a domain belongs to another project)", tag: 'Project', body: customDomainsBody, responses: { 200: { description: 'The custom domains', schema: customDomainsSchema } }, errors: { 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const caller = principalOf(ctx);
    const projectId = projectOf(ctx).projectId;
    const result = await access.setCustomDomains(caller, projectId, body.domains);
    wrote(ctx, result.position, ['access']);
    ctx.body = { domains: result.value };
  });

  // ---- approval policy (default off: the spec's workflow)

  api.add(router, { method: 'get', path: '/project/approval-policy', operationId: 'getApprovalPolicy', permission: 'approval-policy.read', summary: 'The approval policy: whether approving and publishing need a person (humanApproval) and a second person (fourEyes)', tag: 'Project', responses: { 200: { description: 'The approval policy', schema: approvalPolicySchema } }, errors: {} }, async (ctx) => {
    ctx.body = approvalPolicyOf(await record(ctx));
  });

  api.add(router, { method: 'put', path: '/project/approval-policy', operationId: 'setApprovalPolicy', permission: 'approval-policy.change', summary: 'Turn humanApproval and fourEyes on or off (absent: unchanged; tenant_admin session only: agent keys are refused); every change is in the audit log', tag: 'Project', body: approvalPolicyBody, bodyLimitBytes: 16 * 1024, responses: { 200: { description: 'The approval policy after the change', schema: approvalPolicySchema } }, errors: {} }, async (ctx, { body }) => {
    const caller = principalOf(ctx);
    const result = await access.setApprovalPolicy(caller, projectOf(ctx).projectId, body);
    wrote(ctx, result.position, projectionsFolding('project.approval-policy-changed'));
    ctx.body = result.value;
  });

  // ---- console login appearance (the open read is GET /projects/:projectId/login-branding in auth-routes.ts)

  api.add(router, { method: 'get', path: '/project/login-appearance', operationId: 'getLoginAppearance', permission: 'login-appearance.read', summary: 'The console login page appearance: logo, colours, message', tag: 'Console login', responses: { 200: { description: 'The login appearance', schema: loginAppearanceSchema } }, errors: {} }, async (ctx) => {
    const doc = await record(ctx);
    ctx.body = { ...doc.loginBranding, projectName: doc.name };
  });

  api.add(router, { method: 'put', path: '/project/login-appearance', operationId: 'updateLoginAppearance', permission: 'login-appearance.update', summary: 'Change the console login page appearance (absent: unchanged; null or empty: cleared)', tag: 'Console login', body: loginAppearanceBody, responses: { 200: { description: 'The login appearance', schema: loginAppearanceSchema } }, errors: {} }, async (ctx, { body }) => {
    const caller = principalOf(ctx);
    const project = projectOf(ctx);
    const result = await access.updateLoginAppearance(caller, project.projectId, body);
    wrote(ctx, result.position, ['access']);
    ctx.body = { ...result.value, projectName: project.name };
  });

  // ---- console login IP allowlist (Business plan and above)

  api.add(router, { method: 'get', path: '/project/ip-allowlist', operationId: 'listIpAllowlistEntries', permission: 'ip-allowlist.read', summary: 'List the console login IP allowlist (enforced on Business and above when not empty)', tag: 'Console login', responses: { 200: { description: 'The entries and whether the plan enforces them', schema: ipAllowlistSchema } }, errors: {} }, async (ctx) => {
    const doc = await record(ctx);
    ctx.body = { items: doc.ipAllowlist, enforced: planAtLeast(doc.plan, 'business') && doc.ipAllowlist.length > 0 };
  });

  api.add(router, { method: 'post', path: '/project/ip-allowlist', operationId: 'addIpAllowlistEntry', permission: 'ip-allowlist.manage', summary: 'Add a CIDR range to the console login IP allowlist (Business plan or above; a session cannot lock itself out)', tag: 'Console login', body: ipAllowlistBody, responses: { 201: { description: 'The entry', schema: ipAllowlistEntrySchema } }, errors: { 403: ['PLAN_REQUIRED'], 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const caller = principalOf(ctx);
    const projectId = projectOf(ctx).projectId;
    const input = { cidr: body.cidr, label: body.label ?? null };
    const entry = await idempotentCreate(deps, ctx, { scope: projectId, operation: 'add_ip_allowlist_entry', key: idempotencyKeyOf(ctx, body), request: input, ids: ['entryId'] }, async (ids) => {
      const result = await access.addIpAllowlistEntry(caller, projectId, input, { ...writeOptions(ctx), entryId: ids['entryId']! });
      wrote(ctx, result.position, ['access']);
      return result.entry;
    });
    ctx.status = 201;
    ctx.body = entry;
  });

  api.add(router, { method: 'delete', path: '/project/ip-allowlist/:entryId', operationId: 'deleteIpAllowlistEntry', permission: 'ip-allowlist.manage', summary: 'Remove an entry from the console login IP allowlist', tag: 'Console login', responses: { 204: { description: 'Removed', empty: true } }, errors: { 403: ['PLAN_REQUIRED'], 409: ['CONFLICT'] } }, async (ctx) => {
    const caller = principalOf(ctx);
    const projectId = projectOf(ctx).projectId;
    const entryId = ctx.params['entryId'];
    if (!isUuid(entryId)) throw notFound(`No allowlist entry ${entryId}.`);
    const result = await access.removeIpAllowlistEntry(caller, projectId, entryId, writeOptions(ctx));
    wrote(ctx, result.position, ['access']);
    ctx.status = 204;
  });

  // ---- API keys (console sessions only: agent keys can never issue keys)

  api.add(router, { method: 'get', path: '/keys', operationId: 'listKeys', permission: 'keys.list', summary: "List the project's agent and public keys (prefix only: keys are shown once, at creation), with each agent key's last use (to 10 minutes)", tag: 'Keys', responses: { 200: { description: 'The keys, revoked ones included', schema: keyListSchema } }, errors: {} }, async (ctx) => {
    const projectId = projectOf(ctx).projectId;
    const query = { filter: { projectId }, sort: [['createdAt', 'asc']] as Array<[string, 'asc']>, limit: 1000 };
    const [agents, publics] = await Promise.all([reader.find<Doc<KeyRecord>>('access', 'agent_keys_by_id', query), reader.find<Doc<KeyRecord>>('access', 'public_keys_by_id', query)]);
    ctx.body = { items: [...agents.map((k) => keySummary(k, 'agent')), ...publics.map((k) => keySummary(k, 'public'))] };
  });

  api.add(router, { method: 'post', path: '/keys', operationId: 'issueKey', permission: 'keys.issue', summary: 'Issue an agent key (scope full, content or schema) or a public key; the key is in this answer only', tag: 'Keys', body: issueKeyBody, bodyLimitBytes: 16 * 1024, responses: { 201: { description: 'The key, shown once', schema: issuedKeySchema } }, errors: { 403: ['PLAN_REQUIRED'], 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const caller = principalOf(ctx);
    const projectId = projectOf(ctx).projectId;
    const { idempotencyKey: _key, ...request } = body;
    const key = idempotencyKeyOf(ctx, body);
    const replays = deps.issuedKeys;
    if (key !== undefined && !replays) throw unavailable('Idempotent key issuing is not configured in this process.');
    // With an idempotency key the record keeps the key for a replay, sealed under a data key of its own in the
    // key store, destroyed when its window ends or the key is revoked (application/issued-key-replay.ts).
    let issuedNow: string | undefined;
    const issued = await idempotentCreate<{ keyId: string; prefix: string; createdAt: string; key?: string; sealedKey?: string; replayUntil?: string }>(deps, ctx, { scope: projectId, operation: 'issue_key', key, request, ids: ['keyId'] }, async (ids) => {
      const keyId = ids['keyId']!;
      // Stored before the key is issued, so that no key is issued without a way to shred its replay (an issue
      // refused after it leaves a data key that seals nothing; the retry of the attempt gets it back).
      const dataKey = key === undefined ? undefined : await replays!.prepare(keyId);
      const made =
        body.type === 'agent'
          ? await access.issueAgentKey(caller, projectId, body.scope ?? 'full', body.name ?? 'Agent key', { keyId })
          : await access.issuePublicKey(caller, projectId, { keyId });
      wrote(ctx, made.position, ['access']);
      const createdAt = deps.clock.now().toISOString();
      issuedNow = made.key;
      return dataKey === undefined ? { keyId: made.keyId, prefix: made.prefix, createdAt, key: made.key } : { keyId: made.keyId, prefix: made.prefix, createdAt, ...replays!.seal(dataKey, made.keyId, made.key) };
    });
    // Issued by this request: shown as made. A replay: opened from the record inside its window, else 409.
    const shown = issuedNow ?? issued.key ?? (await replays!.open(issued.keyId, issued));
    // The answer is the stored key's, as a replay's is (its createdAt is the event's, not this handler's clock).
    await settleWritten(ctx);
    const collection = body.type === 'agent' ? 'agent_keys_by_id' : 'public_keys_by_id';
    const stored = await reader.get<Doc<KeyRecord>>('access', collection, issued.keyId);
    ctx.status = 201;
    ctx.body = {
      ...(stored ? keySummary(stored, body.type) : { id: issued.keyId, type: body.type, prefix: issued.prefix, scope: body.type === 'agent' ? (body.scope ?? 'full') : null, name: body.type === 'agent' ? (body.name ?? 'Agent key') : null, createdAt: issued.createdAt, revokedAt: null, lastUsedAt: null, issuedBy: body.type === 'agent' && caller.kind === 'user' ? { type: 'user', id: caller.userId } : null }),
      key: shown,
      notice: 'Store this key now: it is shown only once.',
    } satisfies z.input<typeof issuedKeySchema>;
  });

  api.add(router, { method: 'delete', path: '/keys/:keyId', operationId: 'revokeKey', permission: 'keys.revoke', summary: 'Revoke an agent or public key (it answers 401 from then on)', tag: 'Keys', responses: { 200: { description: 'The revoked key', schema: revokedKeySchema } }, errors: {} }, async (ctx) => {
    const caller = principalOf(ctx);
    const projectId = projectOf(ctx).projectId;
    const result = await access.revokeKey(caller, projectId, keyId(ctx));
    // A revoked key's replay goes at once (its data key destroyed), as it would at the end of its window.
    await deps.issuedKeys?.forget(result.keyId);
    wrote(ctx, result.position, ['access']);
    ctx.body = { id: result.keyId, type: result.type, revokedAt: result.revokedAt };
  });

  // ---- members of the caller's tenant

  // The console's project switcher: every project a session may act in (an agent key: its own project).
  api.add(router, { method: 'get', path: '/projects', operationId: 'listProjects', permission: 'none', summary: "The projects of the caller's tenant, by name, for the console's project switcher (an agent key sees its own project); no X-Project-Id needed", tag: 'Project', responses: { 200: { description: 'The projects, by name', schema: projectListSchema } }, errors: {} }, async (ctx) => {
    const caller = principalOf(ctx);
    const docs = caller.kind === 'agent'
      ? [await accessModel.project(caller.projectId)].filter((d): d is Doc<ProjectRecord> => d !== null)
      : await accessModel.projectsOfTenant(caller.tenantId);
    ctx.body = { items: docs.map((doc) => ({ id: doc.projectId, name: doc.name, slug: doc.slug, plan: doc.plan })) };
  });

  api.add(router, { method: 'get', path: '/users', operationId: 'listUsers', permission: 'members.list', summary: "List the tenant's console users", tag: 'Members', responses: { 200: { description: 'The users', schema: userListSchema } }, errors: {} }, async (ctx) => {
    const caller = principalOf(ctx);
    const users = await accessModel.usersOfTenant(caller.tenantId);
    ctx.body = { items: users.map(userSummary) };
  });

  api.add(router, { method: 'post', path: '/users', operationId: 'createUser', permission: 'members.invite', summary: 'Invite a console user to the tenant (tenant_admin session; agent keys may never invite members; 409 when the e-mail is taken)', tag: 'Members', body: createUserBody, bodyLimitBytes: 16 * 1024, responses: { 201: { description: 'The user', schema: createdUserSchema } }, errors: { 409: ['CONFLICT'] } }, async (ctx, { body }) => {
    const caller: Caller = principalOf(ctx);
    const tenantId = principalOf(ctx).tenantId;
    // The password is no part of what the key is checked against: its hash would be kept in the log.
    const request = { email: body.email, role: body.role, roleId: body.roleId ?? null };
    const created = await idempotentCreate(deps, ctx, { scope: `tenant:${tenantId}`, operation: 'create_user', key: idempotencyKeyOf(ctx, body), request, ids: ['userId'] }, async (ids) => {
      const made = await access.createUser(caller, { tenantId, email: body.email, password: body.password, role: body.role, roleId: body.roleId ?? null, userId: ids['userId']!, ...actingProject(ctx) });
      wrote(ctx, made.position, ['access']);
      return { id: made.userId, tenantId: made.tenantId, email: made.email, role: made.role, roleId: made.roleId, disabled: false };
    });
    ctx.status = 201;
    ctx.body = created;
  });

  api.add(router, { method: 'patch', path: '/users/:userId', operationId: 'updateUser', permission: 'members.manage', summary: "Change a member's role (a spec role, or one of the organisation's custom roles by roleId), or disable the member (people.manage; never one's own account, never a member who may do more than the caller; disabling cannot be undone here)", tag: 'Members', body: updateUserBody, bodyLimitBytes: 16 * 1024, responses: { 200: { description: 'The user as changed', schema: createdUserSchema } }, errors: { 403: ['FORBIDDEN'], 404: ['NOT_FOUND'] } }, async (ctx, { body }) => {
    const caller: Caller = principalOf(ctx);
    const userId = ctx.params['userId'];
    if (!isUuid(userId)) throw notFound(`No user ${userId}.`);
    // One change per request, so that a refusal never leaves half of it written.
    const changingRole = body.role !== undefined || body.roleId !== undefined;
    if (changingRole === (body.disabled !== undefined)) throw validationError('Give either a role (role, roleId or both) or disabled: true (one change per request).');
    const changed = changingRole
      ? await access.changeUserRole(caller, userId, body.role ?? 'tenant_user', { roleId: body.roleId ?? null, ...actingProject(ctx) })
      : await access.disableUser(caller, userId);
    wrote(ctx, changed.position, ['access']);
    ctx.body = { id: changed.userId, tenantId: changed.tenantId, email: changed.email, role: changed.role, roleId: changed.roleId, disabled: changed.disabled } satisfies z.input<typeof createdUserSchema>;
  });

  return router;
}

export function publicApiInfo(projectId: string): z.input<typeof publicApiInfoSchema> {
  return { projectId, publicBase: `/public/p/${projectId}/v1`, publicKeyHeader: 'X-Service-Public-Api-Key' };
}

/** A key as lists show it: never the key, never its hash. */
function keySummary(key: KeyRecord, type: 'agent' | 'public'): z.input<typeof keySummarySchema> {
  return {
    id: key.keyId,
    type,
    prefix: key.prefix,
    scope: type === 'agent' ? (key.scope ?? null) : null,
    name: key.name ?? null,
    createdAt: key.createdAt,
    revokedAt: key.revokedAt,
    lastUsedAt: key.lastUsedAt ?? null,
    issuedBy: type === 'agent' && key.issuedBy ? { type: key.issuedBy.type, id: key.issuedBy.id } : null,
  };
}

/** A user as lists show it: never the password hash. */
function userSummary(user: UserRecord): z.input<typeof userSummarySchema> {
  const { totp = false, passkeys = 0, recoveryCodesLeft = 0 } = user.secondFactor ?? {};
  return { id: user.userId, email: user.email, role: user.role, roleId: user.roleId ?? null, disabled: user.disabled, createdAt: user.createdAt, invitationExpiresAt: user.invitationExpiresAt ?? null, secondFactor: { totp, passkeys, recoveryCodesLeft } };
}

/**
 * What the rest of the service may ask of the access read model (./access.ts), typed: no collection names or
 * casts outside the read-model layer. Every read goes through the ReadModelReader it is given, so reads follow
 * the active generation and its cache as any other.
 */
import type { ReadModelReader } from '../src/read-models/read-model-reader.ts';
import { oidcIdentityId, type AgentKeyDoc, type DomainDoc, type IdentityDoc, type ProjectDoc, type SsoSessionDoc, type PublicKeyDoc, type TenantDoc, type UserDoc } from './access.ts';
import type { Doc } from '../src/read-models/read-model-store.ts';


/** Listed at most by the tenant-wide lists (users, projects). */
export const ACCESS_LIST_LIMIT = 1000;

export function accessQueries(reader: ReadModelReader) {
  return {
    tenant: (tenantId: string) => reader.get<Doc<TenantDoc>>('access', 'tenants', tenantId),
    /** The user an identity provider's subject signs in as, if linked. */
    async userOfIdentity(issuer: string, subject: string): Promise<Doc<UserDoc> | null> {
      const identity = await reader.get<Doc<IdentityDoc>>('access', 'identities', oidcIdentityId(issuer, subject));
      return identity ? reader.get<Doc<UserDoc>>('access', 'users', identity.userId) : null;
    },
    /** Sessions begun through `issuer` in its session `idpSessionId` (the provider's sid). */
    ssoSessionsOfIdpSession: (issuer: string, idpSessionId: string) => reader.find<Doc<SsoSessionDoc>>('access', 'sso_sessions', { filter: { issuer, idpSessionId }, limit: ACCESS_LIST_LIMIT }),
    /** The user's sessions begun through a provider, not yet revoked (some may have expired). */
    ssoSessionsOfUser: (userId: string) => reader.find<Doc<SsoSessionDoc>>('access', 'sso_sessions', { filter: { userId }, limit: ACCESS_LIST_LIMIT }),
    project: (projectId: string) => reader.get<Doc<ProjectDoc>>('access', 'projects', projectId),
    async projectBySlug(slug: string): Promise<Doc<ProjectDoc> | null> {
      const [project] = await reader.find<Doc<ProjectDoc>>('access', 'projects', { filter: { slug }, limit: 1 });
      return project ?? null;
    },
    projectsOfTenant: (tenantId: string) => reader.find<Doc<ProjectDoc>>('access', 'projects', { filter: { tenantId }, sort: [['name', 'asc']], limit: ACCESS_LIST_LIMIT }),
    user: (userId: string) => reader.get<Doc<UserDoc>>('access', 'users', userId),
    /** `email` as user.created carries it: trimmed and lower-cased. */
    async userByEmail(email: string): Promise<Doc<UserDoc> | null> {
      const [user] = await reader.find<Doc<UserDoc>>('access', 'users', { filter: { email }, limit: 1 });
      return user ?? null;
    },
    usersOfTenant: (tenantId: string) => reader.find<Doc<UserDoc>>('access', 'users', { filter: { tenantId }, sort: [['email', 'asc']], limit: ACCESS_LIST_LIMIT }),
    /** An agent key by the SHA-256 of the key (authentication), or by its id (names in the audit trail). */
    agentKeyByHash: (hash: string) => reader.get<Doc<AgentKeyDoc>>('access', 'agent_keys', hash),
    agentKeyById: (keyId: string) => reader.get<Doc<AgentKeyDoc>>('access', 'agent_keys_by_id', keyId),
    publicKeyByHash: (hash: string) => reader.get<Doc<PublicKeyDoc>>('access', 'public_keys', hash),
    /** A custom domain (lower-cased host) and the project it serves. */
    domain: (host: string) => reader.get<Doc<DomainDoc>>('access', 'domains', host),
  };
}

export type AccessQueries = ReturnType<typeof accessQueries>;

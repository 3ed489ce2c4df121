import type { Context, Middleware } from 'koa';
import type { DomainDoc, ProjectDoc, PublicKeyDoc } from '../../../projections/access.ts';
import type { ReadModelReader } from '../../read-models/read-model-reader.ts';
import { accessQueries, type AccessQueries } from '../../../projections/access-queries.ts';
import type { ReadModelVersions } from '../../projection-engine/read-model-versions.ts';
import { VersionedCache } from '../../read-models/versioned-cache.ts';
import { hashApiKey, PUBLIC_KEY_PREFIX } from '../../security/api-keys.ts';
import { isUuid } from '../../event-store/position.ts';
import { notFound } from '../errors/error-factory.ts';
import { setPublicProject } from './public-context.ts';
import { noteQueryParamRead } from './query-params.ts';
import type { Doc } from '../../read-models/read-model-store.ts';

export const PINNED_BASE = '/public/p/:projectId/v1';
export const HOST_BASE = '/public/v1';
export const PUBLIC_KEY_HEADER = 'X-Service-Public-Api-Key';
export const PUBLIC_KEY_QUERY = 'api_key';


/**
 * Resolves the project of a request on the project-pinned base (the path names it) or on the host-resolved
 * base: a public key first (header X-Service-Public-Api-Key, `Authorization: Bearer`, or the query parameter
 * api_key), then the Host header against the projects' custom domains. Host and scheme come from
 * X-Forwarded-Host / X-Forwarded-Proto only when the app trusts its proxy (TRUST_PROXY), through Koa's
 * ctx.host and ctx.protocol. Anything unresolved is 404 NOT_FOUND, with a message that says what was tried.
 */
/** Reads of the access read model, cached while it does not change. */
export class AccessLookups {
  readonly #cache: VersionedCache<Doc<ProjectDoc> | Doc<PublicKeyDoc> | Doc<DomainDoc> | null>;
  readonly #access: AccessQueries;

  constructor(reader: ReadModelReader, versions: ReadModelVersions) {
    this.#access = accessQueries(reader);
    this.#cache = new VersionedCache(() => versions.of('access'));
  }

  project(projectId: string): Promise<Doc<ProjectDoc> | null> {
    return this.#cache.get(`p:${projectId}`, () => this.#access.project(projectId)) as Promise<Doc<ProjectDoc> | null>;
  }

  publicKey(hash: string): Promise<Doc<PublicKeyDoc> | null> {
    return this.#cache.get(`k:${hash}`, () => this.#access.publicKeyByHash(hash)) as Promise<Doc<PublicKeyDoc> | null>;
  }

  domain(host: string): Promise<Doc<DomainDoc> | null> {
    return this.#cache.get(`d:${host}`, () => this.#access.domain(host)) as Promise<Doc<DomainDoc> | null>;
  }
}

export function resolvePinnedProject(access: AccessLookups): Middleware {
  return async function resolvePinned(ctx, next) {
    const projectId = String(ctx.params?.projectId ?? '');
    const project = isUuid(projectId) ? await access.project(projectId) : null;
    if (!project) throw notFound(`No project with id ${JSON.stringify(projectId.slice(0, 64))}.`, { hint: 'Check the projectId in the path: /public/p/{projectId}/v1.' });
    const baseUrl = `${origin(ctx)}/public/p/${projectId}/v1`;
    setPublicProject(ctx, { projectId, project, baseUrl, mediaBaseUrl: baseUrl, resolvedBy: 'path' });
    await next();
  };
}

/**
 * The project of a request on the host-resolved base: the public key's when one is sent (`key-refused` when
 * it is unknown or revoked), else the one whose custom domains hold the host name; null when none does.
 */
export async function hostBaseProject(access: AccessLookups, key: string | undefined, hostname: string): Promise<Doc<ProjectDoc> | null | 'key-refused'> {
  if (key !== undefined) {
    const record = key.startsWith(PUBLIC_KEY_PREFIX) ? await access.publicKey(hashApiKey(key)) : null;
    if (!record || record.revokedAt !== null) return 'key-refused';
    return access.project(record.projectId);
  }
  const host = hostname.toLowerCase();
  const domain = host ? await access.domain(host) : null;
  const candidate = domain ? await access.project(domain.projectId) : null;
  // The domains document can outlive a change on MongoDB (see projections/access.ts): trust the project's list.
  return candidate?.customDomains.includes(host) ? candidate : null;
}

export function resolveHostProject(access: AccessLookups): Middleware {
  return async function resolveByHost(ctx, next) {
    const key = publicKeyOf(ctx);
    const project = await hostBaseProject(access, key, ctx.hostname);
    if (project === 'key-refused') {
      throw notFound('No project for this request: the public API key is unknown or revoked.', {
        hint: `Send a valid ${PUBLIC_KEY_PREFIX} key, or use the project-pinned base /public/p/{projectId}/v1.`,
      });
    }
    if (!project) {
      throw notFound('No project for this request: the host is not a custom domain of any project and no public API key was sent.', {
        hint: `Send a public key (${PUBLIC_KEY_HEADER} header, Authorization: Bearer, or the ${PUBLIC_KEY_QUERY} query parameter), or use /public/p/{projectId}/v1.`,
      });
    }
    const baseUrl = `${origin(ctx)}/public/v1`;
    // A browser loading a media URL sends no key: hand out the project-pinned base when the key chose the project.
    const mediaBaseUrl = key === undefined ? baseUrl : `${origin(ctx)}/public/p/${project.projectId}/v1`;
    setPublicProject(ctx, { projectId: project.projectId, project, baseUrl, mediaBaseUrl, resolvedBy: key === undefined ? 'host' : 'public-key' });
    await next();
  };
}

/** The public key a request carries, if any: header, then bearer token, then query parameter. */
export function publicKeyOf(ctx: Pick<Context, 'get' | 'query' | 'state'>): string | undefined {
  const header = ctx.get(PUBLIC_KEY_HEADER).trim();
  if (header) return header;
  const authorization = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('Authorization'));
  if (authorization) return authorization[1];
  noteQueryParamRead(ctx, PUBLIC_KEY_QUERY);
  const query = ctx.query[PUBLIC_KEY_QUERY];
  const value = Array.isArray(query) ? query[0] : query;
  return value ? value : undefined;
}

/** scheme://host[:port] as the client addressed it (forwarded headers only behind a trusted proxy). */
function origin(ctx: Context): string {
  return `${ctx.protocol}://${ctx.host}`;
}

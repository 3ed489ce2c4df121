import type { Middleware } from 'openapi-fetch';
import type { PathsWithMethod } from 'openapi-typescript-helpers';
import type { components, operations, paths } from './generated/admin.ts';
import { IDEMPOTENT_OPERATIONS } from './generated/idempotent-operations.ts';
import { pagesOf, type Page } from './paging.ts';
import { serviceRoot, typedClient, type InitFor, type InitOf, type SuccessData, type TransportOptions, type TypedClient } from './typed-client.ts';

export type AdminPaths = paths;
export type AdminOperations = operations;
/** A named shape of the admin API: AdminSchema<'EntrySummary'>, AdminSchema<'ErrorNotFound'>, ... */
export type AdminSchema<Name extends keyof components['schemas']> = components['schemas'][Name];

export interface AdminClientOptions extends TransportOptions {
  /** The service's root URL, e.g. https://cms.example.com ('' in a browser page served by the service); the admin API is at /admin/v1. */
  serviceUrl: string;
  /** An agent key (sk-agent-...): bound to its project. */
  agentKey?: string;
  /** A console session token from POST /auth/login; send projectId with it. */
  sessionToken?: string;
  /** The project a session acts in (X-Project-Id). */
  projectId?: string;
  /** Makes the Idempotency-Key of a create sent without one (default crypto.randomUUID()). */
  idempotencyKey?: () => string;
}

type GetPath = PathsWithMethod<paths, 'get'>;
// biome-ignore lint/suspicious/noExplicitAny: openapi-typescript's operations are matched structurally; unknown would not take them.
type GetOperation<P extends GetPath> = paths[P] extends { get: infer O } ? O & Record<string | number, any> : never;
/** The GET paths that answer a page: `items` and `nextCursor`. */
export type PagedPath = { [P in GetPath]: SuccessData<GetOperation<P>, undefined> extends Page<unknown> ? P : never }[GetPath];
type PageOf<P extends PagedPath> = SuccessData<GetOperation<P>, undefined> & Page<unknown>;
type ItemOf<P extends PagedPath> = PageOf<P>['items'][number];

export interface AdminClient extends TypedClient<paths> {
  /** Every page of a paged list (GET with items and nextCursor), following nextCursor; `init` as for GET, without cursor. */
  pages<P extends PagedPath>(path: P, ...init: InitOf<InitFor<paths, P, 'get'>>): AsyncGenerator<PageOf<P>, void, undefined>;
  /** Every item of a paged list, page after page. */
  items<P extends PagedPath>(path: P, ...init: InitOf<InitFor<paths, P, 'get'>>): AsyncGenerator<ItemOf<P>, void, undefined>;
}

/**
 * A client of the admin/agent API (/admin/v1): every path, parameter, body and answer typed from the
 * service's OpenAPI document. Authenticates with an agent key, or a session token and project id;
 * sends an Idempotency-Key with every create that takes one (a fresh one unless given as header or
 * body field), so a create retried after a lost answer is not carried out twice; waits out 429 answers
 * (Retry-After, bounded); throws AnnalsApiError for every error answer.
 */
export function createAdminClient(options: AdminClientOptions): AdminClient {
  const { serviceUrl, agentKey, sessionToken, projectId, idempotencyKey = () => globalThis.crypto.randomUUID(), ...transport } = options;
  const credentials: Middleware = {
    async onRequest({ request, schemaPath }) {
      const token = agentKey ?? sessionToken;
      if (token && !request.headers.has('Authorization')) request.headers.set('Authorization', `Bearer ${token}`);
      if (projectId && !request.headers.has('X-Project-Id')) request.headers.set('X-Project-Id', projectId);
      if (IDEMPOTENT_OPERATIONS.has(`${request.method} ${schemaPath}`) && !request.headers.has('Idempotency-Key') && !(await hasBodyKey(request))) {
        request.headers.set('Idempotency-Key', idempotencyKey());
      }
      return request;
    },
  };
  const client = typedClient<paths>(`${serviceRoot(serviceUrl)}/admin/v1`, transport, [credentials]);
  const pages = (path: string, init?: { params?: { query?: Record<string, unknown> } & Record<string, unknown> } & Record<string, unknown>) =>
    pagesOf((cursor) => (client.GET as unknown as (p: string, i: unknown) => Promise<Page<unknown>>)(path, { ...init, params: { ...init?.params, query: { ...init?.params?.query, cursor } } }), init?.params?.query?.['cursor'] as string | undefined);
  return {
    ...client,
    pages: pages as never,
    items: async function* (path: string, init?: Parameters<typeof pages>[1]) {
      for await (const page of pages(path, init)) yield* page.items;
    } as never,
  };
}

/** Whether a JSON body already carries an idempotencyKey (the service takes the header first). */
async function hasBodyKey(request: Request): Promise<boolean> {
  if (!request.body || !(request.headers.get('Content-Type') ?? '').includes('json')) return false;
  try {
    const body = JSON.parse(await request.clone().text()) as { idempotencyKey?: unknown };
    return typeof body?.idempotencyKey === 'string';
  } catch {
    return false;
  }
}

import createClient, { type Client, type ClientOptions, type FetchResponse, type MaybeOptionalInit, type Middleware } from 'openapi-fetch';
import type { HttpMethod, MediaType, PathsWithMethod, RequiredKeysOf } from 'openapi-typescript-helpers';
import { apiErrorOf } from './errors.ts';
import { retryingFetch, type RetryOptions } from './retry.ts';

/** The methods the APIs use. */
export type Method = Extract<HttpMethod, 'get' | 'put' | 'post' | 'patch' | 'delete'>;

// biome-ignore lint/suspicious/noExplicitAny: openapi-typescript's operations are matched structurally; unknown would not take them.
type OperationOf<Paths, P, M extends Method> = P extends keyof Paths ? (Paths[P] extends { [K in M]: infer O } ? O & Record<string | number, any> : never) : never;

/** The optional or required second argument of a call, as openapi-fetch types it. */
export type InitOf<I> = RequiredKeysOf<I> extends never ? [(I & { [key: string]: unknown })?] : [I & { [key: string]: unknown }];

/** What a successful call answers: the body of its 2xx status (undefined for 204). */
// biome-ignore lint/suspicious/noExplicitAny: as OperationOf.
export type SuccessData<Operation extends Record<string | number, any>, Init> =
  FetchResponse<Operation, Init, MediaType> extends infer R ? (R extends { data: infer D; error?: never } ? ([D] extends [never] ? undefined : D) : never) : never;

/** The second argument of a call of method M on path P (the `& Record<M, unknown>` only says P has M). */
export type InitFor<Paths, P extends keyof Paths, M extends Method> = MaybeOptionalInit<Paths[P] & Record<M, unknown>, M>;

/**
 * A call of method M: the second argument is typed by the path alone (not inferred from what is passed),
 * so an object literal gets TypeScript's excess-property check: a body field the operation does not take
 * is a compile error, as a missing required one is.
 */
type Call<Paths extends {}, M extends Method> = <P extends PathsWithMethod<Paths, M>>(path: P, ...init: InitOf<InitFor<Paths, P, M>>) => Promise<SuccessData<OperationOf<Paths, P, M>, InitFor<Paths, P, M>>>;

/**
 * openapi-fetch's client with the answers unwrapped: a call resolves to the body of a success and
 * throws AnnalsApiError for anything else. `raw` is the openapi-fetch client itself ({data, error,
 * response}), for conditional requests and other answers the caller wants to look at.
 */
export interface TypedClient<Paths extends {}> {
  GET: Call<Paths, 'get'>;
  POST: Call<Paths, 'post'>;
  PUT: Call<Paths, 'put'>;
  PATCH: Call<Paths, 'patch'>;
  DELETE: Call<Paths, 'delete'>;
  raw: Client<Paths>;
}

export interface TransportOptions extends Omit<ClientOptions, 'baseUrl' | 'fetch' | 'headers'> {
  /** The fetch to send requests with (default globalThis.fetch): a browser's, undici's, one with a proxy. */
  fetch?: (request: Request) => Promise<Response>;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** How 429 answers are retried (Retry-After honoured, bounded). */
  retry?: RetryOptions;
}

export function typedClient<Paths extends {}>(baseUrl: string, options: TransportOptions, middleware: Middleware[]): TypedClient<Paths> {
  const { fetch: send = (request: Request) => globalThis.fetch(request), retry, headers, ...init } = options;
  const raw = createClient<Paths>({ ...init, baseUrl, headers, fetch: retryingFetch(send, retry) });
  for (const m of middleware) raw.use(m);
  const call = (method: Method) =>
    (async (path: string, ...rest: unknown[]) => {
      const { data, error, response } = await (raw.request as (m: string, p: string, ...i: unknown[]) => Promise<{ data?: unknown; error?: unknown; response: Response }>)(method, path, ...rest);
      if (!response.ok) throw apiErrorOf(response, error, `${method.toUpperCase()} ${response.url || path}`);
      return data;
    }) as never;
  return { GET: call('get'), POST: call('post'), PUT: call('put'), PATCH: call('patch'), DELETE: call('delete'), raw };
}

/** The service root without a trailing slash ('' for the page's own origin in a browser). */
export function serviceRoot(serviceUrl: string): string {
  return serviceUrl.replace(/\/+$/, '');
}

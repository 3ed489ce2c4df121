import type { components, operations, paths } from './generated/public.ts';
import { serviceRoot, typedClient, type TransportOptions, type TypedClient } from './typed-client.ts';

export type PublicPaths = paths;
export type PublicOperations = operations;
/** A named shape of the public API: PublicSchema<'SingleEntry'>, PublicSchema<'EntryList'>, ... */
export type PublicSchema<Name extends keyof components['schemas']> = components['schemas'][Name];

export interface PublicClientOptions extends TransportOptions {
  /** The service's root URL, or the site's own origin on a custom domain ('' for the page's origin in a browser). */
  serviceUrl: string;
  /** The project, named in the path: the base /public/p/{projectId}/v1. */
  projectId?: string;
  /** A public key (service_pub_...): the base /public/v1, the project resolved from the key (X-Service-Public-Api-Key). */
  publicKey?: string;
}

export type PublicClient = TypedClient<paths> & {
  /** The base URL the client calls. */
  readonly baseUrl: string;
  /**
   * The sync feed (GET /sync) from `cursor` (from the beginning without one), a page at a time, as the caller
   * iterates, until it is up to date. Apply each page's items, then store its `cursor`: the next sync resumes
   * from it (after a crash mid-way, from the last page stored; applying a page again changes nothing).
   */
  sync(options?: SyncOptions): AsyncGenerator<PublicSchema<'SyncPage'>, void, undefined>;
};

export interface SyncOptions {
  /** The cursor stored after the last page applied; null or absent: from the beginning. */
  cursor?: string | null;
  /** Only the entries of this form set (its slug). */
  formSet?: string;
  locale?: string;
  /** Changes per page (1 to 100, default 50). */
  limit?: number;
}

/**
 * A client of the public read API (spec 4.1). Its base is the project-pinned one (/public/p/{projectId}/v1)
 * when projectId is given, else /public/v1, where the service resolves the project from the public key
 * or from the Host (a custom domain). No credentials beyond that: the public API reads published content.
 */
export function createPublicClient(options: PublicClientOptions): PublicClient {
  const { serviceUrl, projectId, publicKey, headers, ...transport } = options;
  const baseUrl = projectId ? `${serviceRoot(serviceUrl)}/public/p/${encodeURIComponent(projectId)}/v1` : `${serviceRoot(serviceUrl)}/public/v1`;
  const client = typedClient<paths>(baseUrl, { ...transport, headers: { ...headers, ...(publicKey ? { 'X-Service-Public-Api-Key': publicKey } : {}) } }, []);
  async function* sync(options: SyncOptions = {}): AsyncGenerator<PublicSchema<'SyncPage'>, void, undefined> {
    let cursor = options.cursor ?? undefined;
    for (;;) {
      const query = { ...(cursor ? { cursor } : {}), ...(options.formSet ? { form_set: options.formSet } : {}), ...(options.locale ? { locale: options.locale } : {}), ...(options.limit ? { limit: options.limit } : {}) };
      const page = await client.GET('/sync', { params: { query } });
      yield page;
      cursor = page.cursor ?? cursor;
      if (!page.hasMore) return;
    }
  }
  return { ...client, baseUrl, sync };
}

export { createAdminClient, type AdminClient, type AdminClientOptions, type AdminOperations, type AdminPaths, type AdminSchema, type PagedPath } from './admin-client.ts';
export { createPublicClient, type PublicClient, type PublicClientOptions, type SyncOptions, type PublicOperations, type PublicPaths, type PublicSchema } from './public-client.ts';
export { AnnalsApiError } from './errors.ts';
export { itemsOf, pagesOf, type Page } from './paging.ts';
export type { RetryOptions } from './retry.ts';
export type { SuccessData, TransportOptions, TypedClient } from './typed-client.ts';

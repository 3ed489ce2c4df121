/**
 * Stream names of the access aggregates. Values unique across aggregates (e-mail addresses, project
 * slugs, custom domains) are reserved by src/application/reservations.ts, in streams named by a
 * SHA-256, so personal data never appears in a stream name.
 */
export const tenantStream = (tenantId: string): string => `tenant-${tenantId}`;
export const projectStream = (projectId: string): string => `project-${projectId}`;
export const userStream = (userId: string): string => `user-${userId}`;
/** All agent and public keys of one project: one stream, so the one-active-key rule holds under concurrency. */
export const projectKeysStream = (projectId: string): string => `project-keys-${projectId}`;
/** When a project's agent key was used: its own stream, so that recording use never contends with issuing or revoking keys. */
export const agentKeyUsageStream = (keyId: string): string => `agent-key-usage-${keyId}`;

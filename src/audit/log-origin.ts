import type { Config } from '../config/config.ts';
import type { AuditPublicKeyInfo } from './audit-keys.ts';

/**
 * The log's name in signed notes: the origin line of its checkpoints and the name of its keys in signed-note
 * form (./note-key.ts). AUDIT_LOG_ORIGIN when set; otherwise `annals/` and the first 16 characters of the
 * first audit key's id, which is the same for the whole life of the key chain and differs between installs.
 */
export function auditLogOrigin(config: { audit: Pick<Config['audit'], 'origin'> }, keys: readonly AuditPublicKeyInfo[]): string {
  if (config.audit.origin) return config.audit.origin;
  const first = keys[0];
  if (!first) throw new Error('the audit key ring lists no key');
  return `annals/${first.keyId.slice(0, 16)}`;
}

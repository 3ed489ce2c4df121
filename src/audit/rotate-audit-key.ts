/**
 * `annals audit rotate-key`: announces the configured key (AUDIT_KEY_FILE, or the PKCS#11 key label) as the
 * successor of the key chain's current key, signed by that current key, whose private half comes from the
 * same token, the key store (the fallback key), or a key file named with --previous-key-file.
 *
 * The new key signs from a short notice after the announcement (ROTATION_NOTICE_MS), so that every process
 * has read the new chain before it: until then they sign with the previous key, which is valid until that
 * instant, and from then on with the new one when they hold it (a key file replaced in place, a token
 * holding it under the same label), refusing to sign otherwise until restarted with the new configuration.
 */
import type { Clock } from '../clock.ts';
import type { AuditKeyRingConfig } from './open-audit-key-ring.ts';
import type { EventStore } from '../event-store/event-store.ts';
import type { KeyStore } from '../key-store/key-store.ts';
import type { AuditSigningKey } from './audit-keys.ts';
import { AuditKeySetupError } from './audit-key-files.ts';
import { announceKey, type KeyChain } from './key-chain.ts';
import { keyStoreAuditKey } from './key-store-audit-key-ring.ts';
import { readAuditKeyFile } from './key-file-audit-key-source.ts';
import { createKeyChain, openAuditKeySource, openKeyChainFile } from './open-audit-key-ring.ts';

/** How long after its announcement a new key begins to sign. */
export const ROTATION_NOTICE_MS = 2000;

export type RotationResult =
  | { outcome: 'rotated'; previousKeyId: string; keyId: string; validFrom: string; chainFile: string; chain: KeyChain }
  | { outcome: 'created'; keyId: string; validFrom: string; chainFile: string; chain: KeyChain }
  | { outcome: 'current'; keyId: string; validFrom: string; chainFile: string; chain: KeyChain };

export async function rotateAuditKey(options: { config: AuditKeyRingConfig; keyStore: KeyStore; clock: Clock; previousKeyFile?: string | undefined; noticeMs?: number; events?: EventStore }): Promise<RotationResult> {
  const { config, keyStore, clock } = options;
  if (config.audit.key.kind === 'key-store') {
    throw new AuditKeySetupError('rotate-key announces the configured key: set AUDIT_KEY_FILE (or the AUDIT_PKCS11_* settings) and AUDIT_KEY_CHAIN_FILE to the new key first, then run it again');
  }
  const chainFile = openKeyChainFile(config);
  const source = await openAuditKeySource(config);
  try {
    const existing = chainFile.readIfExists();
    if (!existing) {
      const chain = await createKeyChain(chainFile, source, keyStore, clock, { events: options.events });
      return { outcome: 'created', keyId: chain.current.statement.keyId, validFrom: chain.current.statement.validFrom, chainFile: chainFile.file, chain };
    }
    const current = existing.current.statement;
    const fresh = source.keys().filter((k) => !existing.entry(k.keyId));
    if (fresh.length === 0) {
      if (source.keys().some((k) => k.keyId === current.keyId)) return { outcome: 'current', keyId: current.keyId, validFrom: current.validFrom, chainFile: chainFile.file, chain: existing };
      throw new AuditKeySetupError(`${source.description} holds only keys ${chainFile.description} has retired: configure a new key (openssl genpkey -algorithm ed25519, or a new key pair in the token), then run rotate-key again`);
    }
    if (fresh.length > 1) throw new AuditKeySetupError(`${source.description} holds ${fresh.length} keys ${chainFile.description} does not list (${fresh.map((k) => k.keyId).join(', ')}): keep one`);
    const previous = await previousKey(existing, source.keys(), source.findByKeyId?.bind(source), keyStore, options.previousKeyFile, config.dataDir);
    const validFrom = new Date(clock.now().getTime() + (options.noticeMs ?? ROTATION_NOTICE_MS));
    const announcement = await announceKey({ chain: existing, previous, key: fresh[0]!, validFrom });
    const chain = chainFile.append(existing, announcement);
    return { outcome: 'rotated', previousKeyId: current.keyId, keyId: fresh[0]!.keyId, validFrom: validFrom.toISOString(), chainFile: chainFile.file, chain };
  } finally {
    await source.close();
  }
}

/** The private half of the chain's current key: in the configured source or token, the key store, or --previous-key-file. */
async function previousKey(
  chain: KeyChain,
  configured: readonly AuditSigningKey[],
  inToken: ((keyId: string) => AuditSigningKey | undefined) | undefined,
  keyStore: KeyStore,
  previousKeyFile: string | undefined,
  dataDir: string,
): Promise<AuditSigningKey> {
  const keyId = chain.current.statement.keyId;
  if (previousKeyFile !== undefined) {
    const { key } = readAuditKeyFile({ file: previousKeyFile, dataDir, setting: '--previous-key-file' });
    if (key.keyId !== keyId) throw new AuditKeySetupError(`--previous-key-file ${previousKeyFile} holds key ${key.keyId}, not the chain's current key ${keyId}`);
    return key;
  }
  const found = configured.find((k) => k.keyId === keyId) ?? inToken?.(keyId) ?? (await keyStoreAuditKey(keyStore).then((stored) => (stored?.key.keyId === keyId ? stored.key : undefined)));
  if (found) return found;
  throw new AuditKeySetupError(`the chain's current key ${keyId} must sign its successor's announcement: name its key file with --previous-key-file`);
}

/**
 * The one way the service and the CLI get the audit key ring, from the configuration (config.audit.key):
 *
 * - AUDIT_KEY_FILE: an Ed25519 key file outside DATA_DIR, read-only to the service;
 * - AUDIT_PKCS11_MODULE (with token, PIN and key label): an Ed25519 key in an HSM;
 * - neither: the key store's key, beside the log (a warning says what that does not protect against).
 *
 * With a key file or a token, the key chain file (AUDIT_KEY_CHAIN_FILE, outside DATA_DIR) lists every key
 * with its validity. The first opening creates it: from the chain the log records when that one lists the
 * configured key (another host of the same log began it, or the file was lost); otherwise with the
 * configured key alone, or, when the key store holds a key that signed before, that key first (retired from
 * now, so what it signed still verifies) announcing the configured key as its successor. Later openings require the configured key to be the chain's current
 * key; a key the chain does not list is refused with the command that announces it (`annals audit
 * rotate-key`, ./rotate-audit-key.ts).
 */
import fs from 'node:fs';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { AuditKeyConfig, Config } from '../config/config.ts';
import type { EventStore } from '../event-store/event-store.ts';
import type { KeyStore } from '../key-store/key-store.ts';
import { readRecordedKeyChain } from './key-announcement-log.ts';
import type { AuditSigningKey } from './audit-keys.ts';
import type { AuditKeySource } from './audit-key-source.ts';
import { AuditKeySetupError, checkSecretFile, refuseInsideDataDir } from './audit-key-files.ts';
import { ChainedAuditKeyRing, type OpenedAuditKeyRing } from './chained-audit-key-ring.ts';
import { announceKey, KeyChain } from './key-chain.ts';
import { KeyChainExistsError, KeyChainFile } from './key-chain-file.ts';
import { KeyFileAuditKeySource } from './key-file-audit-key-source.ts';
import { keyStoreAuditKey, keyStoreKeyGenesis, openKeyStoreAuditKeyRing } from './key-store-audit-key-ring.ts';
import type { Pkcs11AuditKeySource } from './pkcs11-audit-key-source.ts';

/** What the audit key ring needs of the configuration: the key, the log's origin and DATA_DIR (keys stay outside it). */
export type AuditKeyRingConfig = { dataDir: string; audit: Pick<Config['audit'], 'key' | 'origin'> };
type AuditConfig = AuditKeyRingConfig;
type Notices = Pick<Logger, 'warn' | 'info'>;

/** What opening may use besides the configuration: a logger for its warnings, the log whose record of the chain it may adopt. */
export interface AuditKeyRingOptions {
  logger?: Notices | undefined;
  events?: EventStore | undefined;
}

/** What the fallback does not protect against: logged at every start that uses it. */
export const KEY_STORE_KEY_WARNING =
  'audit: AUDIT_KEY_FILE and AUDIT_PKCS11_MODULE are unset, so the audit signing key is kept in the key store beside the log (DATA_DIR/keys.sqlite, or MongoDB): anyone who can read the data folder, its backups or the database can sign exports and checkpoints as this service, so a history they rewrote would verify as authentic. Keep the key out of the database: AUDIT_KEY_FILE or an HSM (docs/operations.md "The tamper-evident log")';

/** Opens the ring the configuration names (see the module comment); AuditKeySetupError naming the fix when it cannot. */
export async function openAuditKeyRing(config: AuditConfig, keyStore: KeyStore, clock: Clock, options: AuditKeyRingOptions = {}): Promise<OpenedAuditKeyRing> {
  const { logger } = options;
  const key = config.audit.key;
  if (key.kind === 'key-store') {
    await refuseMovingBack(options.events);
    logger?.warn(KEY_STORE_KEY_WARNING);
    return openKeyStoreAuditKeyRing(keyStore, clock);
  }
  const source = await openAuditKeySource(config);
  try {
    for (const warning of source.warnings) logger?.warn(`audit: ${warning}`);
    const chainFile = openKeyChainFile(config);
    const chain = chainFile.readIfExists() ?? (await createKeyChain(chainFile, source, keyStore, clock, options));
    refuseUnannounced(chain, source, chainFile, key, clock);
    return new ChainedAuditKeyRing(source, chainFile, clock);
  } catch (error) {
    await source.close();
    throw error;
  }
}

/**
 * Once the log records that the key store's key was succeeded (a key file or an HSM announced), the key
 * store's key never signs again: a configuration that lost AUDIT_KEY_FILE or AUDIT_PKCS11_MODULE would
 * otherwise sign, silently, with a key in the database that auditors hold as retired.
 */
export async function refuseMovingBack(events: EventStore | undefined): Promise<void> {
  const recorded = events ? await readRecordedKeyChain(events) : null;
  if (!recorded || recorded.entries.length < 2) return;
  throw new AuditKeySetupError(
    `AUDIT_KEY_FILE and AUDIT_PKCS11_MODULE are unset, but the log records that the audit key moved out of the key store (its current key is ${recorded.current.statement.keyId}, valid from ${recorded.current.statement.validFrom}): configure that key again (AUDIT_KEY_FILE or AUDIT_PKCS11_*, with AUDIT_KEY_CHAIN_FILE)`,
  );
}

/** The configured key file or token (not the key store); AuditKeySetupError when it cannot serve. */
export async function openAuditKeySource(config: AuditConfig): Promise<AuditKeySource & Partial<Pick<Pkcs11AuditKeySource, 'findByKeyId'>>> {
  const key = config.audit.key;
  if (key.kind === 'key-file') return new KeyFileAuditKeySource(key.file, config.dataDir);
  if (key.kind !== 'pkcs11') throw new AuditKeySetupError('no key file or PKCS#11 token is configured (AUDIT_KEY_FILE, AUDIT_PKCS11_MODULE)');
  let pin: string;
  if ('value' in key.pin) {
    pin = key.pin.value;
  } else {
    checkSecretFile({ setting: 'AUDIT_PKCS11_PIN_FILE', file: key.pin.file, dataDir: config.dataDir });
    pin = fs.readFileSync(key.pin.file, 'utf8').replace(/\r?\n$/, '');
  }
  // Loaded only when configured: the native module stays out of every other process.
  const { Pkcs11AuditKeySource } = await import('./pkcs11-audit-key-source.ts');
  return Pkcs11AuditKeySource.open({ module: key.module, token: key.token, pin, keyLabel: key.keyLabel });
}

/** The configured chain file, refused inside DATA_DIR. */
export function openKeyChainFile(config: AuditConfig): KeyChainFile {
  const key = config.audit.key;
  if (key.kind === 'key-store') throw new AuditKeySetupError('the key store\'s key has no key chain file');
  refuseInsideDataDir({ setting: 'AUDIT_KEY_CHAIN_FILE', file: key.chainFile, dataDir: config.dataDir });
  return new KeyChainFile(key.chainFile);
}

/**
 * The first chain of the file: the log's record when it lists a key of the source; else the configured key
 * alone, or after the key store's key when the key store holds one (which then announces it). Another
 * process creating it at the same time wins; its chain is read.
 */
export async function createKeyChain(chainFile: KeyChainFile, source: AuditKeySource, keyStore: KeyStore, clock: Clock, options: AuditKeyRingOptions = {}): Promise<KeyChain> {
  const { logger } = options;
  const recorded = options.events ? await readRecordedKeyChain(options.events) : null;
  const adopted = recorded && source.keys().some((k) => recorded.entry(k.keyId)) ? recorded : null;
  const now = clock.now();
  const stored = adopted ? null : await keyStoreAuditKey(keyStore);
  const announcements = [];
  if (adopted) {
    announcements.push(...adopted.announcements());
  } else {
    const [key, ...more] = source.keys();
    if (!key || more.length > 0) throw new AuditKeySetupError(`${source.description} holds ${source.keys().length} keys and ${chainFile.description} does not exist yet: keep one key there to begin the chain with`);
    if (stored && stored.key.keyId !== key.keyId) {
      const genesis = await keyStoreKeyGenesis(stored);
      announcements.push(genesis, await announceKey({ chain: KeyChain.verify([genesis]), previous: stored.key, key, validFrom: now }));
    } else {
      announcements.push(await announceKey({ chain: null, key, validFrom: now }));
    }
  }
  let chain: KeyChain;
  try {
    chain = chainFile.create(announcements);
  } catch (error) {
    if (error instanceof KeyChainExistsError) return chainFile.read();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM' || code === 'ENOENT') {
      throw new AuditKeySetupError(`cannot create ${chainFile.description} (${code}): its folder must exist and be writable by the user that starts annals the first time (or run \`annals audit rotate-key\` as a user who can write there)`);
    }
    throw error;
  }
  const current = chain.current.statement;
  if (adopted) {
    logger?.info(`audit: created ${chainFile.description} from the key chain the log records (${chain.entries.length} keys, the current one ${current.keyId})`);
  } else if (chain.entries.length > 1) {
    logger?.info(
      `audit: created ${chainFile.description}: key ${current.keyId} (${source.description}) signs from ${current.validFrom}, announced by the key store's key ${chain.first.statement.keyId}, which is retired from then (listed still, so that what it signed verifies); give auditors the new key list (annals audit public-key --json)`,
    );
  } else {
    logger?.info(`audit: created ${chainFile.description}: key ${current.keyId} (${source.description}) signs from ${current.validFrom}`);
  }
  return chain;
}

/**
 * Refuses a configuration whose key is not the chain's current one: a key the chain never announced (the
 * command that announces it in the message), or one it retired. During a rotation's notice (the successor
 * announced, its validity not begun) the key before it is still accepted.
 */
function refuseUnannounced(chain: KeyChain, source: AuditKeySource, chainFile: KeyChainFile, config: AuditKeyConfig, clock: Clock): void {
  const current = chain.current.statement;
  const held = source.keys();
  if (held.some((k) => k.keyId === current.keyId)) return;
  const listed = held.map((k) => chain.entry(k.keyId)).filter((e) => e !== undefined);
  const newest = listed.at(-1);
  if (newest) {
    if (newest.validUntil !== null && clock.now().getTime() < Date.parse(newest.validUntil)) return;
    throw new AuditKeySetupError(
      `${source.description} holds key ${newest.statement.keyId}, which ${chainFile.description} retired at ${newest.validUntil} when key ${current.keyId} took over: configure the current key instead`,
    );
  }
  const unlisted = held.map((k: AuditSigningKey) => k.keyId).join(', ');
  const previous = config.kind === 'pkcs11' ? 'the current key in the same token, or --previous-key-file <its key file>' : '--previous-key-file <the current key\'s file>';
  throw new AuditKeySetupError(
    `${source.description} holds key ${unlisted}, which ${chainFile.description} does not list (its current key is ${current.keyId}, valid from ${current.validFrom}): a new key is announced by the current one. Run \`annals audit rotate-key\` with this configuration (the current key's signature comes from ${previous}), then start again`,
  );
}

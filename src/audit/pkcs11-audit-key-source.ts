/**
 * Audit keys in a hardware security module, through PKCS#11 (pkcs11js, the binding graphene-pk11 and
 * node-webcrypto-p11 are built on): Ed25519 keys (CKK_EC_EDWARDS) that sign with CKM_EDDSA inside the token
 * and never leave it. Tested with Debian's SoftHSM2.
 *
 * The token is found by its label (AUDIT_PKCS11_TOKEN) or slot id (AUDIT_PKCS11_SLOT); one session, logged
 * in as the user with the PIN (from AUDIT_PKCS11_PIN or the file AUDIT_PKCS11_PIN_FILE; never logged, never
 * in a message), stays open while the ring is. The keys are every Ed25519 private key labelled
 * AUDIT_PKCS11_KEY_LABEL, each with the public key object of the same CKA_ID beside it (which gives its
 * public key): the ring signs with the one the key chain names, so a rotation can add the next key to the
 * token under the same label and the running service takes it up when its validity begins.
 *
 * Signatures are serialised on the session (a session runs one operation at a time) and made off the event
 * loop (C_SignAsync). A session the token dropped (CKR_SESSION_HANDLE_INVALID, a token reinserted) is opened
 * again once before a signature fails.
 */
import pkcs11js from 'pkcs11js';
import type { AuditSigningKey } from './audit-keys.ts';
import type { AuditKeySource } from './audit-key-source.ts';
import { AuditKeySetupError } from './audit-key-files.ts';
import { keyIdOf } from './ed25519.ts';

/** PKCS#11 3.0 values (pkcs11js names those of 2.40 only). */
const CKK_EC_EDWARDS = 0x40;
const CKM_EDDSA = 0x1057;

export interface Pkcs11Settings {
  /** The PKCS#11 module (shared library), e.g. /usr/lib/softhsm/libsofthsm2.so. */
  module: string;
  token: { label: string } | { slot: bigint };
  pin: string;
  keyLabel: string;
}

interface TokenKey {
  key: AuditSigningKey;
  handle: pkcs11js.Handle;
}

export class Pkcs11AuditKeySource implements AuditKeySource {
  readonly kind = 'pkcs11';
  readonly description: string;
  readonly warnings: readonly string[] = [];
  #module: LoadedModule;
  #session: pkcs11js.Handle | undefined;
  #slot: pkcs11js.Handle;
  #keys: TokenKey[] = [];
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;

  private constructor(private readonly settings: Pkcs11Settings) {
    const token = 'label' in settings.token ? `token "${settings.token.label}"` : `slot ${settings.token.slot}`;
    this.description = `the PKCS#11 ${token} of ${settings.module}, keys labelled "${settings.keyLabel}"`;
    this.#module = loadModule(settings.module);
    try {
      this.#slot = this.#findSlot();
      this.#openSession();
      this.#keys = this.#findKeys({ label: settings.keyLabel });
    } catch (error) {
      this.#release();
      throw error;
    }
  }

  /** Opens the session and finds the keys; AuditKeySetupError naming the fix when it cannot. */
  static open(settings: Pkcs11Settings): Pkcs11AuditKeySource {
    return new Pkcs11AuditKeySource(settings);
  }

  keys(): readonly AuditSigningKey[] {
    return this.#keys.map((k) => k.key);
  }

  reload(): void {
    this.#keys = this.#findKeys({ label: this.settings.keyLabel });
  }

  /** Any Ed25519 key of the token whatever its label (a rotation's previous key), or undefined. */
  findByKeyId(keyId: string): AuditSigningKey | undefined {
    return this.#findKeys({}).find((k) => k.key.keyId === keyId)?.key;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#queue.catch(() => undefined);
    this.#release();
  }

  #release(): void {
    if (this.#session) {
      try {
        this.#module.pkcs11.C_CloseSession(this.#session);
      } catch {
        // Already gone with the token: nothing to release.
      }
      this.#session = undefined;
    }
    unloadModule(this.#module);
  }

  #findSlot(): pkcs11js.Handle {
    const { pkcs11 } = this.#module;
    const slots = pkcs11.C_GetSlotList(true);
    const tokens = slots.map((slot) => ({ slot, id: slot.readBigUInt64LE(0), label: pkcs11.C_GetTokenInfo(slot).label.trim() }));
    const wanted = this.settings.token;
    const found = 'label' in wanted ? tokens.filter((t) => t.label === wanted.label) : tokens.filter((t) => t.id === wanted.slot);
    const present = tokens.map((t) => `"${t.label}" (slot ${t.id})`).join(', ') || 'none';
    if (found.length === 0) {
      throw new AuditKeySetupError(`${'label' in wanted ? `AUDIT_PKCS11_TOKEN="${wanted.label}"` : `AUDIT_PKCS11_SLOT=${wanted.slot}`}: no such token in ${this.settings.module} (tokens present: ${present})`);
    }
    if (found.length > 1) throw new AuditKeySetupError(`AUDIT_PKCS11_TOKEN: ${found.length} tokens are labelled "${(wanted as { label: string }).label}" (${present}); name one with AUDIT_PKCS11_SLOT instead`);
    return found[0]!.slot;
  }

  #openSession(): void {
    const { pkcs11 } = this.#module;
    const session = pkcs11.C_OpenSession(this.#slot, pkcs11js.CKF_SERIAL_SESSION);
    try {
      pkcs11.C_Login(session, pkcs11js.CKU_USER, this.settings.pin);
    } catch (error) {
      const code = (error as { code?: number }).code;
      if (code !== pkcs11js.CKR_USER_ALREADY_LOGGED_IN) {
        pkcs11.C_CloseSession(session);
        throw new AuditKeySetupError(`${this.description}: the token refused the login with the configured PIN (${ckr(error)})`);
      }
    }
    this.#session = session;
  }

  #findKeys(filter: { label?: string }): TokenKey[] {
    const { pkcs11 } = this.#module;
    const session = this.#session!;
    const template: pkcs11js.Template = [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
      { type: pkcs11js.CKA_KEY_TYPE, value: CKK_EC_EDWARDS },
    ];
    if (filter.label !== undefined) template.push({ type: pkcs11js.CKA_LABEL, value: filter.label });
    const handles = findObjects(pkcs11, session, template);
    if (filter.label !== undefined && handles.length === 0) {
      throw new AuditKeySetupError(
        `${this.description}: no Ed25519 private key labelled "${filter.label}"; create one with: pkcs11-tool --module ${this.settings.module} --token-label <token> --login --keypairgen --key-type EC:edwards25519 --label ${filter.label} --id <hex id>`,
      );
    }
    return handles.map((handle) => {
      const [id] = pkcs11.C_GetAttributeValue(session, handle, [{ type: pkcs11js.CKA_ID }]);
      const publicKeys = findObjects(pkcs11, session, [
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PUBLIC_KEY },
        { type: pkcs11js.CKA_KEY_TYPE, value: CKK_EC_EDWARDS },
        { type: pkcs11js.CKA_ID, value: id!.value },
      ]);
      if (publicKeys.length !== 1) {
        throw new AuditKeySetupError(`${this.description}: the private key with CKA_ID ${id!.value.toString('hex')} has ${publicKeys.length} public key objects beside it (one is needed, with the same CKA_ID)`);
      }
      const [point] = pkcs11.C_GetAttributeValue(session, publicKeys[0]!, [{ type: pkcs11js.CKA_EC_POINT }]);
      const publicKey = rawEdwardsPoint(point!.value);
      const key: AuditSigningKey = { keyId: keyIdOf(publicKey), publicKey, sign: (message) => this.#sign(key.keyId, message) };
      return { key, handle };
    });
  }

  #sign(keyId: string, message: Uint8Array): Promise<Uint8Array> {
    const run = async (): Promise<Uint8Array> => {
      if (this.#closed) throw new Error(`${this.description}: the key ring is closed`);
      try {
        return await this.#signOnce(keyId, message);
      } catch (error) {
        if (!sessionLost(error)) throw error;
        // The token dropped the session (reinserted, restarted): open another and sign again, once.
        this.#session = undefined;
        this.#openSession();
        this.reload();
        return this.#signOnce(keyId, message);
      }
    };
    const result = this.#queue.then(run, run);
    this.#queue = result.catch(() => undefined);
    return result;
  }

  async #signOnce(keyId: string, message: Uint8Array): Promise<Uint8Array> {
    const token = this.#keys.find((k) => k.key.keyId === keyId) ?? this.#findKeys({}).find((k) => k.key.keyId === keyId);
    if (!token) throw new Error(`${this.description}: the token no longer holds key ${keyId}`);
    const { pkcs11 } = this.#module;
    pkcs11.C_SignInit(this.#session!, { mechanism: CKM_EDDSA }, token.handle);
    const signature = await pkcs11.C_SignAsync(this.#session!, Buffer.from(message), Buffer.alloc(64));
    return new Uint8Array(signature);
  }
}

/** A CKA_EC_POINT of an Ed25519 key: the DER OCTET STRING of the 32-byte key (04 20 ...), or the raw key. */
function rawEdwardsPoint(value: Buffer): Uint8Array {
  if (value.length === 34 && value[0] === 0x04 && value[1] === 0x20) return new Uint8Array(value.subarray(2));
  if (value.length === 32) return new Uint8Array(value);
  throw new AuditKeySetupError(`an Ed25519 public key object's CKA_EC_POINT is ${value.length} bytes, neither a DER OCTET STRING of 32 bytes nor 32 raw bytes`);
}

function findObjects(pkcs11: pkcs11js.PKCS11, session: pkcs11js.Handle, template: pkcs11js.Template): pkcs11js.Handle[] {
  pkcs11.C_FindObjectsInit(session, template);
  try {
    const found: pkcs11js.Handle[] = [];
    for (;;) {
      const batch = pkcs11.C_FindObjects(session, 64);
      found.push(...batch);
      if (batch.length < 64) return found;
    }
  } finally {
    pkcs11.C_FindObjectsFinal(session);
  }
}

function sessionLost(error: unknown): boolean {
  const code = (error as { code?: number }).code;
  return code === pkcs11js.CKR_SESSION_HANDLE_INVALID || code === pkcs11js.CKR_SESSION_CLOSED || code === pkcs11js.CKR_USER_NOT_LOGGED_IN || code === pkcs11js.CKR_DEVICE_REMOVED || code === pkcs11js.CKR_TOKEN_NOT_PRESENT;
}

function ckr(error: unknown): string {
  return /CKR_[A-Z_]+/.exec((error as Error).message)?.[0] ?? (error as Error).message;
}

/**
 * A module is initialised once per process (C_Initialize a second time fails): shared by every source that
 * uses it, finalised when the last one closes.
 */
interface LoadedModule {
  path: string;
  pkcs11: pkcs11js.PKCS11;
  users: number;
}

const modules = new Map<string, LoadedModule>();

function loadModule(path: string): LoadedModule {
  let loaded = modules.get(path);
  if (!loaded) {
    const pkcs11 = new pkcs11js.PKCS11();
    try {
      pkcs11.load(path);
      pkcs11.C_Initialize();
    } catch (error) {
      throw new AuditKeySetupError(`AUDIT_PKCS11_MODULE=${path}: cannot load and initialise the PKCS#11 module (${(error as Error).message})`);
    }
    loaded = { path, pkcs11, users: 0 };
    modules.set(path, loaded);
  }
  loaded.users += 1;
  return loaded;
}

function unloadModule(loaded: LoadedModule): void {
  loaded.users -= 1;
  if (loaded.users > 0) return;
  modules.delete(loaded.path);
  try {
    loaded.pkcs11.C_Finalize();
    loaded.pkcs11.close();
  } catch {
    // Finalising a module that failed half-way: nothing more to release.
  }
}

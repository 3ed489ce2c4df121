/**
 * The audit key ring: the key chain (./key-chain.ts) says which keys ever signed and when, the key source
 * (a key file, a PKCS#11 token, or the key store) holds the private halves. The ring signs with the chain's
 * current key when the source holds it.
 *
 * Rotation reaches a running process at its next signature: before each one the ring looks at the chain
 * again (a stat of its file; a read only when it changed). While a successor's validity has not begun the
 * key before it keeps signing; from then on the ring signs with the successor if its source holds it (a key
 * file replaced in place, a token holding the new key under the same label: read again at that moment),
 * and otherwise refuses with AuditKeyRetiredError, so that nothing is ever signed by a retired key.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../clock.ts';
import { AuditKeyRetiredError, type AuditKeyRing, type AuditPublicKeyInfo, type AuditSigningKey } from './audit-keys.ts';
import type { AuditKeySource } from './audit-key-source.ts';
import type { KeyChain, KeyChainEntry } from './key-chain.ts';

/** The longest a signature waits for its key's validity to begin (a rotation's notice). */
const MAX_WAIT_FOR_VALIDITY_MS = 10_000;

/** Where the ring reads its chain: a file outside DATA_DIR, or a fixed chain (the key store's one key). */
export interface KeyChainSource {
  readonly description: string;
  read(): KeyChain;
}

/** The ring the service and the CLI open (./open-audit-key-ring.ts): the port, and the chain behind it. */
export interface OpenedAuditKeyRing extends AuditKeyRing {
  /** Where its keys are kept: `key-store` is the fallback that protects nothing against DATA_DIR's readers. */
  readonly kind: AuditKeySource['kind'];
  /** Which file, token or store, for messages. */
  readonly description: string;
  /** The verified key chain now: every announcement, for auditors and the log. */
  chain(): KeyChain;
}

export class ChainedAuditKeyRing implements OpenedAuditKeyRing {
  constructor(
    private readonly source: AuditKeySource,
    private readonly chains: KeyChainSource,
    private readonly clock: Clock,
  ) {}

  get kind(): AuditKeySource['kind'] {
    return this.source.kind;
  }

  get description(): string {
    return this.source.description;
  }

  chain(): KeyChain {
    return this.chains.read();
  }

  publicKeys(): readonly AuditPublicKeyInfo[] {
    return this.chain().publicKeys();
  }

  current(): AuditSigningKey {
    const entry = this.#signingEntry(this.chain());
    return { keyId: entry.statement.keyId, publicKey: entry.publicKey, sign: (message) => this.#sign(entry.statement.keyId, message) };
  }

  async close(): Promise<void> {
    await this.source.close();
  }

  /**
   * The key that signs now: the chain's key valid at this instant when the source holds it (read again once
   * if not). Otherwise a key of the source that the chain lists, whose signature then waits for its validity
   * (a successor during the notice) or is refused (a retired key).
   */
  #signingEntry(chain: KeyChain): KeyChainEntry {
    const due = chain.signingAt(this.clock.now()) ?? chain.first;
    if (this.#holds(due.statement.keyId) || this.#reloaded(due.statement.keyId)) return due;
    const held = chain.entries.filter((e) => this.#holds(e.statement.keyId));
    const next = held.find((e) => e.statement.sequence > due.statement.sequence);
    const own = next ?? held.at(-1);
    if (own) return own;
    throw new AuditKeyRetiredError(`${this.source.description} holds none of the keys of ${this.chains.description} (the one that signs now is ${due.statement.keyId}): configure it`);
  }

  async #sign(keyId: string, message: Uint8Array): Promise<Uint8Array> {
    const chain = this.chain();
    const entry = chain.entry(keyId);
    if (!entry) throw new AuditKeyRetiredError(`key ${keyId} is no longer in ${this.chains.description}`);
    const now = this.clock.now().getTime();
    if (entry.validUntil !== null && now >= Date.parse(entry.validUntil)) {
      const successor = chain.entries[entry.statement.sequence + 1]!.statement.keyId;
      throw new AuditKeyRetiredError(
        `the audit key ${keyId} was retired at ${entry.validUntil}, when key ${successor} took over; ${this.source.description} does not hold ${successor}: configure it (docs/operations.md "The tamper-evident log", rotation) and restart`,
      );
    }
    const wait = Date.parse(entry.statement.validFrom) - now;
    if (wait > MAX_WAIT_FOR_VALIDITY_MS) throw new AuditKeyRetiredError(`the audit key ${keyId} signs from ${entry.statement.validFrom} only`);
    if (wait > 0) await sleep(wait);
    const signer = this.source.keys().find((k) => k.keyId === keyId);
    if (!signer) throw new AuditKeyRetiredError(`${this.source.description} no longer holds key ${keyId}`);
    return signer.sign(message);
  }

  #holds(keyId: string): boolean {
    return this.source.keys().some((k) => k.keyId === keyId);
  }

  #reloaded(keyId: string): boolean {
    try {
      this.source.reload();
    } catch {
      // The source cannot be read again now (a key file being replaced): it keeps the keys it held.
      return false;
    }
    return this.#holds(keyId);
  }
}

/** A chain that never changes: the key store's one key, which no file announces. */
export function fixedKeyChain(chain: KeyChain, description: string): KeyChainSource {
  return { description, read: () => chain };
}

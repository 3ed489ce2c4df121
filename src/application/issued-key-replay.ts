import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { DomainError } from '../domain/domain-error.ts';
import { KEY_BYTES, KeyStoreError, type KeyStore } from '../key-store/key-store.ts';
import { SecretBox } from '../security/secret-box.ts';

/**
 * How long after its issue an agent or public key issued with an idempotency key can be shown again to a
 * resent request (POST /keys). The spec (4.3) sets no window; 24 hours covers any client's retries, as the
 * usual idempotency windows of payment APIs do, and keeps the key readable no longer than that.
 */
export const KEY_REPLAY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** The key-store id of the data key that seals an issued key for its replays. */
export function replayKeyId(keyId: string): string {
  return `idempotent-key:${keyId}`;
}

/**
 * What the idempotency record keeps of an issued key for a replay: the key sealed under a data key of its own,
 * and when its replay window ends. Neither opens with anything the log or SECRETS_KEY holds.
 */
export interface SealedIssuedKey {
  sealedKey: string;
  /** ISO 8601: resent requests from then on are refused (the data key is destroyed by then). */
  replayUntil: string;
}

/** The refusal of a replay whose window has passed or whose data key was destroyed (the key was revoked). */
export function replayGone(keyId: string): DomainError {
  return new DomainError(
    'CONFLICT',
    `This idempotency key issued key ${keyId}, which was shown when it was issued; its replay window has passed (${KEY_REPLAY_WINDOW_MS / 3_600_000} hours, or the key was revoked), so it cannot be shown again.`,
    `If the key was lost, revoke it (id ${keyId}) and issue another.`,
  );
}

/**
 * Crypto-shredding of keys kept for idempotent replays (the way contact-form submissions keep their values):
 * the issued key is sealed under a fresh random data key held in the key store under `idempotent-key:<keyId>`,
 * never in the log; destroying the data key (at the end of the window, or when the key is revoked) leaves the
 * ciphertext in the log unreadable for good, whoever holds SECRETS_KEY or a copy of the log.
 */
export class IssuedKeyReplay {
  constructor(private readonly deps: { keyStore: KeyStore; clock: Clock }) {}

  /**
   * The data key for the key about to be issued, stored before the key exists (so that a key is never issued
   * without a way to shred its replay). A retry of an attempt that died gets the same data key back; one whose
   * data key was already destroyed is refused as a replay that has gone.
   */
  async prepare(keyId: string): Promise<Buffer> {
    const id = replayKeyId(keyId);
    const held = await this.deps.keyStore.get(id);
    if (held) return held;
    const key = randomBytes(KEY_BYTES);
    try {
      await this.deps.keyStore.put(id, key);
    } catch (error) {
      if (error instanceof KeyStoreError && (await this.deps.keyStore.destroyed(id))) throw replayGone(keyId);
      throw error;
    }
    return key;
  }

  /** Seals the issued key under its data key; the window runs from now. */
  seal(dataKey: Buffer, keyId: string, key: string): SealedIssuedKey {
    return {
      sealedKey: new SecretBox(dataKey).seal(key, replayKeyId(keyId)),
      replayUntil: new Date(this.deps.clock.now().getTime() + KEY_REPLAY_WINDOW_MS).toISOString(),
    };
  }

  /**
   * The issued key again, for a resent request inside the window; CONFLICT (replayGone) after it, once the data
   * key is destroyed, and for a record written before keys had windows (sealed under SECRETS_KEY).
   */
  async open(keyId: string, sealed: Partial<SealedIssuedKey>): Promise<string> {
    const until = sealed.replayUntil === undefined ? Number.NaN : Date.parse(sealed.replayUntil);
    if (sealed.sealedKey === undefined || !(this.deps.clock.now().getTime() < until)) throw replayGone(keyId);
    const dataKey = await this.deps.keyStore.get(replayKeyId(keyId));
    if (!dataKey) throw replayGone(keyId);
    return new SecretBox(dataKey).open(sealed.sealedKey, replayKeyId(keyId));
  }

  /** Destroys the data key (the key was revoked): its replay is gone for good. Idempotent. */
  async forget(keyId: string): Promise<void> {
    await this.deps.keyStore.destroy(replayKeyId(keyId));
  }
}

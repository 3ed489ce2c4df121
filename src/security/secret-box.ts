import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Seals secrets the service must keep and use again later (webhook signing secrets) with AES-256-GCM
 * under a key from the settings (SECRETS_KEY, see src/security/secrets-key.ts), so the secret itself is
 * never written in clear to the event log or the read models.
 *
 * Sealed form: `v1.<key id>.<iv>.<ciphertext>.<tag>` (base64url parts; the key id is the first 8 hex
 * digits of the key's SHA-256, so opening with another key fails with a message saying so). A context
 * string (e.g. `webhook:<id>`) is bound as additional authenticated data: a sealed value copied onto
 * another record does not open there. Messages never contain the plaintext or the key.
 */
export class SecretBoxError extends Error {
  override name = 'SecretBoxError';
}

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretBox {
  readonly #key: Buffer;
  /** Identifies the key in sealed values (not secret: a hash prefix). */
  readonly keyId: string;

  constructor(key: Uint8Array) {
    if (key.length !== 32) throw new SecretBoxError(`the secrets key must be 32 bytes, got ${key.length}`);
    this.#key = Buffer.from(key);
    this.keyId = createHash('sha256').update(this.#key).digest('hex').slice(0, 8);
  }

  static fromBase64(key: string): SecretBox {
    return new SecretBox(Buffer.from(key, 'base64'));
  }

  seal(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [VERSION, this.keyId, iv.toString('base64url'), ciphertext.toString('base64url'), tag.toString('base64url')].join('.');
  }

  open(sealed: string, context: string): string {
    const parts = sealed.split('.');
    if (parts.length !== 5 || parts[0] !== VERSION) throw new SecretBoxError('not a sealed secret (unknown format)');
    const [, keyId, ivText, ciphertextText, tagText] = parts as [string, string, string, string, string];
    if (keyId !== this.keyId) throw new SecretBoxError(`the secret was sealed with another SECRETS_KEY (key id ${keyId}; the configured key is ${this.keyId})`);
    const iv = Buffer.from(ivText, 'base64url');
    const tag = Buffer.from(tagText, 'base64url');
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new SecretBoxError('not a sealed secret (bad nonce or tag length)');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(Buffer.from(ciphertextText, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError('the sealed secret does not open: altered, or sealed for another record');
    }
  }
}

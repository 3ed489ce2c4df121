/**
 * The audit key in a file outside DATA_DIR (AUDIT_KEY_FILE), read-only to the service: an Ed25519 private key
 * in PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), as `openssl genpkey -algorithm ed25519` writes it. Checked
 * at every read (./audit-key-files.ts); unencrypted, since a passphrase would have to sit beside it.
 */
import fs from 'node:fs';
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import type { AuditSigningKey } from './audit-keys.ts';
import type { AuditKeySource } from './audit-key-source.ts';
import { AuditKeySetupError, checkSecretFile } from './audit-key-files.ts';
import { keyIdOf, rawPublicKeyOf } from './ed25519.ts';

export class KeyFileAuditKeySource implements AuditKeySource {
  readonly kind = 'key-file';
  readonly description: string;
  #key: AuditSigningKey;
  #warnings: string[];

  constructor(
    private readonly file: string,
    private readonly dataDir: string,
    private readonly setting = 'AUDIT_KEY_FILE',
  ) {
    this.description = `the key file ${file}`;
    ({ key: this.#key, warnings: this.#warnings } = readAuditKeyFile({ file, dataDir, setting }));
  }

  get warnings(): readonly string[] {
    return this.#warnings;
  }

  keys(): readonly AuditSigningKey[] {
    return [this.#key];
  }

  reload(): void {
    ({ key: this.#key, warnings: this.#warnings } = readAuditKeyFile({ file: this.file, dataDir: this.dataDir, setting: this.setting }));
  }

  async close(): Promise<void> {}
}

/** Checks the file and reads its key; AuditKeySetupError naming the fix when it cannot serve. */
export function readAuditKeyFile(options: { file: string; dataDir: string; setting: string }): { key: AuditSigningKey; warnings: string[] } {
  const warnings = checkSecretFile(options);
  const { file, setting } = options;
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: fs.readFileSync(file), format: 'pem' });
  } catch (error) {
    const message = (error as Error).message;
    throw new AuditKeySetupError(
      /passphrase/i.test(message)
        ? `${setting}=${file} is encrypted: the service would need its passphrase beside it; store the key unencrypted in a file only the service can read (openssl pkey -in ${file} -out NEW.pem)`
        : `${setting}=${file} is not a PEM private key (${message}); create one with: openssl genpkey -algorithm ed25519 -out ${file}`,
    );
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') {
    throw new AuditKeySetupError(`${setting}=${file} holds a ${privateKey.asymmetricKeyType ?? 'non-asymmetric'} key, not Ed25519; create one with: openssl genpkey -algorithm ed25519 -out NEW.pem`);
  }
  const publicKey = rawPublicKeyOf(privateKey);
  const key: AuditSigningKey = {
    keyId: keyIdOf(publicKey),
    publicKey,
    sign: async (message) => new Uint8Array(sign(null, message, privateKey)),
  };
  return { key, warnings };
}

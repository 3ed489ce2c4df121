import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { SecretBox, SecretBoxError } from '../../src/security/secret-box.ts';
import { resolveSecretsKey } from '../../src/security/secrets-key.ts';
import { tempDir } from '../support/temp-dir.ts';

describe('secret box (AES-256-GCM sealing of stored secrets)', () => {
  const key = Buffer.alloc(32, 7);
  const box = new SecretBox(key);

  it('seals and opens; every seal is different (random nonce) and none holds the plaintext', () => {
    const a = box.seal('whsec_top-secret', 'webhook:1');
    const b = box.seal('whsec_top-secret', 'webhook:1');
    expect(a).to.not.equal(b);
    expect(a).to.match(/^v1\.[0-9a-f]{8}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(a).to.not.include('top-secret');
    expect(Buffer.from(a.split('.')[3]!, 'base64url').toString('utf8')).to.not.include('top-secret');
    expect(box.open(a, 'webhook:1')).to.equal('whsec_top-secret');
    expect(box.open(b, 'webhook:1')).to.equal('whsec_top-secret');
  });

  it('refuses a sealed value used for another record (the context is authenticated)', () => {
    const sealed = box.seal('s3cret', 'webhook:1');
    expect(() => box.open(sealed, 'webhook:2')).to.throw(SecretBoxError, /does not open/);
  });

  it('refuses an altered value, and says so without the secret or the key', () => {
    const sealed = box.seal('s3cret', 'webhook:1');
    const parts = sealed.split('.');
    const ciphertext = Buffer.from(parts[3]!, 'base64url');
    ciphertext[0] = ciphertext[0]! ^ 1;
    parts[3] = ciphertext.toString('base64url');
    let error: Error | undefined;
    try {
      box.open(parts.join('.'), 'webhook:1');
    } catch (e) {
      error = e as Error;
    }
    expect(error).to.be.instanceOf(SecretBoxError);
    expect(error!.message).to.not.include('s3cret');
    expect(error!.message).to.not.include(key.toString('base64'));
    expect(() => box.open('plain text', 'webhook:1')).to.throw(SecretBoxError, /unknown format/);
  });

  it('names a key mismatch (sealed under another SECRETS_KEY)', () => {
    const other = new SecretBox(Buffer.alloc(32, 9));
    expect(() => other.open(box.seal('x', 'c'), 'c')).to.throw(SecretBoxError, /sealed with another SECRETS_KEY/);
    expect(() => new SecretBox(Buffer.alloc(16))).to.throw(SecretBoxError, /32 bytes/);
    expect(SecretBox.fromBase64(key.toString('base64')).open(box.seal('y', 'c'), 'c')).to.equal('y');
  });

  describe('the key (SECRETS_KEY, or DATA_DIR/secrets-key)', () => {
    it('uses SECRETS_KEY when set and writes nothing', () => {
      const dataDir = path.join(tempDir(), 'data');
      expect(resolveSecretsKey({ secretsKey: key.toString('base64'), dataDir }).equals(key)).to.equal(true);
      expect(fs.existsSync(dataDir)).to.equal(false);
    });

    it('generates one into DATA_DIR/secrets-key (0600) on the embedded default and reuses it', () => {
      const dataDir = path.join(tempDir(), 'data');
      const first = resolveSecretsKey({ secretsKey: undefined, dataDir });
      expect(first).to.have.length(32);
      const file = path.join(dataDir, 'secrets-key');
      expect(fs.statSync(file).mode & 0o777).to.equal(0o600);
      expect(Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64').equals(first)).to.equal(true);
      expect(resolveSecretsKey({ secretsKey: undefined, dataDir }).equals(first)).to.equal(true);
    });

    it('refuses a damaged key file instead of replacing it (that would orphan every sealed secret)', () => {
      const dataDir = tempDir();
      fs.writeFileSync(path.join(dataDir, 'secrets-key'), 'too short\n');
      expect(() => resolveSecretsKey({ secretsKey: undefined, dataDir })).to.throw(/does not hold the base64 of 32 bytes/);
    });
  });
});

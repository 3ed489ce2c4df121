import { createPrivateKey, sign } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ManualClock } from '../../src/clock.ts';
import { AuditKeyRetiredError, type AuditSigningKey } from '../../src/audit/audit-keys.ts';
import { AuditKeySetupError } from '../../src/audit/audit-key-files.ts';
import { AuditSignatureError, AuditSigner, signCompactJws, verifyAuditJws } from '../../src/audit/audit-signer.ts';
import { announceKey, KeyChain, KeyChainError, type KeyAnnouncement } from '../../src/audit/key-chain.ts';
import { openAuditKeyRing } from '../../src/audit/open-audit-key-ring.ts';
import { openKeyStoreAuditKeyRing } from '../../src/audit/key-store-audit-key-ring.ts';
import { rotateAuditKey } from '../../src/audit/rotate-audit-key.ts';
import { readAuditKeyFile } from '../../src/audit/key-file-audit-key-source.ts';
import { SqliteKeyStore } from '../../src/key-store/sqlite-key-store.ts';
import { tempDir } from '../support/temp-dir.ts';
import { SqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { EventLog } from '../../src/event-store/event-log.ts';
import { EventCatalog } from '../../src/event-store/event-catalog.ts';
import { auditEvents } from '../../src/audit/audit-events.ts';
import { recordKeyAnnouncements } from '../../src/audit/key-announcement-log.ts';
import { keyFileConfig, memoryKey, writeKeyFile } from './audit-key-support.ts';
import { newEd25519PrivateKey, rawOfJwk, rawPublicKeyOf, verifyEd25519 } from '../../src/audit/ed25519.ts';

const at = (iso: string) => new Date(iso);

/** A chain of `keys`, each valid from the instant given, announced as the service announces them. */
async function chainOf(keys: Array<[AuditSigningKey, string]>): Promise<KeyAnnouncement[]> {
  const announcements: KeyAnnouncement[] = [];
  let chain: KeyChain | null = null;
  let previous: AuditSigningKey | undefined;
  for (const [key, validFrom] of keys) {
    const announcement = await announceKey({ chain, ...(previous ? { previous } : {}), key, validFrom: at(validFrom) });
    announcements.push(announcement);
    chain = KeyChain.verify(announcements);
    previous = key;
  }
  return announcements;
}

const payloadOf = (a: KeyAnnouncement) => JSON.parse(Buffer.from(a.payload, 'base64url').toString('utf8'));
const withPayload = (a: KeyAnnouncement, change: (statement: Record<string, unknown>) => void): KeyAnnouncement => {
  const statement = payloadOf(a);
  change(statement);
  return { ...a, payload: Buffer.from(JSON.stringify(statement)).toString('base64url') };
};

describe('a new Ed25519 key (made from 32 random bytes, not by generateKeyPair)', () => {
  it('signs and verifies as Ed25519, exports as a JWK with its seed and public key, and is new each time', () => {
    const keys = Array.from({ length: 50 }, () => newEd25519PrivateKey());
    const jwks = keys.map((key) => key.export({ format: 'jwk' }));
    for (const [i, key] of keys.entries()) {
      expect(key.asymmetricKeyType).to.equal('ed25519');
      const jwk = jwks[i]!;
      expect(jwk).to.include({ kty: 'OKP', crv: 'Ed25519' });
      expect(jwk.d).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(rawOfJwk(jwk)).to.deep.equal(rawPublicKeyOf(key));
      const message = Buffer.from(`message ${i}`);
      expect(verifyEd25519(rawPublicKeyOf(key), message, new Uint8Array(sign(null, message, key)))).to.equal(true);
      // The JWK read back is the same key.
      expect(createPrivateKey({ key: jwk, format: 'jwk' }).export({ format: 'jwk' })).to.deep.equal(jwk);
    }
    expect(new Set(jwks.map((jwk) => jwk.d)).size).to.equal(50);
  });
});

describe('audit key chain: every key with its validity, each announced by the one before', () => {
  const [a, b, c] = [memoryKey(), memoryKey(), memoryKey()];

  it('lists every key with its validity, back to back: a key signs from its announcement until its successor\'s', async () => {
    const chain = KeyChain.verify(await chainOf([[a, '2026-01-01T00:00:00.000Z'], [b, '2026-06-01T00:00:00.000Z'], [c, '2026-09-01T00:00:00.000Z']]));
    expect(chain.publicKeys().map(({ keyId, validFrom, validUntil }) => ({ keyId, validFrom, validUntil }))).to.deep.equal([
      { keyId: a.keyId, validFrom: '2026-01-01T00:00:00.000Z', validUntil: '2026-06-01T00:00:00.000Z' },
      { keyId: b.keyId, validFrom: '2026-06-01T00:00:00.000Z', validUntil: '2026-09-01T00:00:00.000Z' },
      { keyId: c.keyId, validFrom: '2026-09-01T00:00:00.000Z', validUntil: null },
    ]);
    expect(chain.current.statement.keyId).to.equal(c.keyId);
    expect(chain.signingAt(at('2026-07-01T00:00:00.000Z'))?.statement.keyId).to.equal(b.keyId);
  });

  it('refuses a key added without the previous key\'s announcement: signed by itself, or by a key not in the chain', async () => {
    const honest = await chainOf([[a, '2026-01-01T00:00:00.000Z'], [b, '2026-06-01T00:00:00.000Z']]);
    const insider = memoryKey();
    // The insider's key, announced as b's successor but signed by the insider's key only (as if by both).
    const chain = KeyChain.verify(honest);
    const bySelf = await announceKey({ chain, previous: { ...insider, keyId: b.keyId }, key: insider, validFrom: at('2026-03-01T00:00:00.000Z') }).catch((error: Error) => error);
    expect(bySelf).to.be.instanceOf(KeyChainError);
    const forged = await announceKey({ chain, previous: b, key: insider, validFrom: at('2026-07-01T00:00:00.000Z') });
    const selfSigned: KeyAnnouncement = { ...forged, signatures: forged.signatures.filter((s) => JSON.parse(Buffer.from(s.protected, 'base64url').toString()).kid === insider.keyId) };
    expect(() => KeyChain.verify([...honest, selfSigned])).to.throw(KeyChainError, /key announcement 3: no valid signature by the previous key/);
    // The previous key's signature over another statement, moved onto this one.
    const moved: KeyAnnouncement = { ...selfSigned, signatures: [...selfSigned.signatures, honest[1]!.signatures[0]!] };
    expect(() => KeyChain.verify([...honest, moved])).to.throw(KeyChainError, /no valid signature by the previous key/);
    // A key announced by a key that is not the chain's last (a fork from a retired key).
    const fromRetired = await announceKey({ chain: KeyChain.verify(honest.slice(0, 1)), previous: a, key: insider, validFrom: at('2026-07-01T00:00:00.000Z') });
    expect(() => KeyChain.verify([...honest, fromRetired])).to.throw(KeyChainError, /key announcement 3: it says it is number 2/);
  });

  it('refuses a backdated key, a changed validity, an announcement removed or moved, and a retired key announced again', async () => {
    const honest = await chainOf([[a, '2026-01-01T00:00:00.000Z'], [b, '2026-06-01T00:00:00.000Z'], [c, '2026-09-01T00:00:00.000Z']]);
    await announceKey({ chain: KeyChain.verify(honest), previous: c, key: memoryKey(), validFrom: at('2026-08-01T00:00:00.000Z') }).then(
      () => expect.fail('a successor valid before its predecessor was announced'),
      (error: Error) => expect(error.message).to.match(/cannot be backdated/),
    );
    // b's validity moved earlier, its signatures kept: they no longer cover the statement.
    expect(() => KeyChain.verify([honest[0], withPayload(honest[1]!, (s) => (s['validFrom'] = '2026-02-01T00:00:00.000Z')), honest[2]])).to.throw(KeyChainError, /key announcement 2: no valid signature/);
    expect(() => KeyChain.verify([honest[0], honest[2]])).to.throw(KeyChainError, /number 3 of the chain/);
    expect(() => KeyChain.verify([honest[1], honest[0], honest[2]])).to.throw(KeyChainError, /key announcement 1/);
    await announceKey({ chain: KeyChain.verify(honest), previous: c, key: a, validFrom: at('2026-12-01T00:00:00.000Z') }).then(
      () => expect.fail('a retired key announced again'),
      (error: Error) => expect(error.message).to.match(/was announced before/),
    );
  });

  it('a JWS verifies only with a listed key, signed at an instant inside that key\'s validity', async () => {
    const keys = KeyChain.verify(await chainOf([[a, '2026-01-01T00:00:00.000Z'], [b, '2026-06-01T00:00:00.000Z']])).publicKeys();
    const signedAt = (payload: Record<string, unknown>) => payload['signedAt'];
    const jws = (key: AuditSigningKey, instant: string) => signCompactJws(key, { signedAt: instant, n: 1 });
    const byA = await jws(a, '2026-03-01T00:00:00.000Z');
    expect(verifyAuditJws(byA, keys, signedAt).key.keyId).to.equal(a.keyId);
    expect(verifyAuditJws(await jws(b, '2026-06-01T00:00:00.000Z'), keys, signedAt).key.keyId).to.equal(b.keyId);
    // a, retired on 2026-06-01, signing something dated after it; b signing before its time; a key not listed.
    const retired = await jws(a, '2026-06-01T00:00:00.000Z');
    expect(() => verifyAuditJws(retired, keys, signedAt)).to.throw(AuditSignatureError, /signed at 2026-06-01T00:00:00.000Z by key .* until 2026-06-01T00:00:00.000Z: outside its validity/);
    const early = await jws(b, '2026-05-31T23:59:59.999Z');
    expect(() => verifyAuditJws(early, keys, signedAt)).to.throw(AuditSignatureError, /outside its validity/);
    const stranger = await jws(memoryKey(), '2026-07-01T00:00:00.000Z');
    expect(() => verifyAuditJws(stranger, keys, signedAt)).to.throw(AuditSignatureError, /not among the audit keys/);
    // The payload edited under its signature.
    const [header, , signature] = byA.split('.');
    const edited = `${header}.${Buffer.from(JSON.stringify({ signedAt: '2026-03-01T00:00:00.000Z', n: 2 })).toString('base64url')}.${signature}`;
    expect(() => verifyAuditJws(edited, keys, signedAt)).to.throw(AuditSignatureError, /does not verify/);
  });
});

describe('audit key file: outside DATA_DIR, read-only to the service, unreadable by others', () => {
  let dataDir: string;
  let keysDir: string;
  beforeEach(() => {
    dataDir = path.join(tempDir(), 'data');
    keysDir = path.join(tempDir(), 'keys');
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  });
  const check = (file: string) => () => readAuditKeyFile({ file, dataDir, setting: 'AUDIT_KEY_FILE' });

  it('works read-only (0400, 0440): the key signs and its id is its public key\'s thumbprint', async () => {
    for (const mode of [0o400, 0o440]) {
      const { key } = readAuditKeyFile({ file: writeKeyFile(keysDir, `key-${mode.toString(8)}.pem`, mode), dataDir, setting: 'AUDIT_KEY_FILE' });
      expect(key.keyId).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(await key.sign(Buffer.from('m'))).to.have.length(64);
    }
  });

  it('refuses a key file writable by the service\'s user or its group, or open to others, naming the chmod that fixes it', () => {
    expect(check(writeKeyFile(keysDir, 'owner-writable.pem', 0o600))).to.throw(AuditKeySetupError, /writable by the service's user .*mode 0600.*chmod 0440/);
    expect(check(writeKeyFile(keysDir, 'group-writable.pem', 0o460))).to.throw(AuditKeySetupError, /writable by (the service's group|its group).*mode 0460/);
    expect(check(writeKeyFile(keysDir, 'others.pem', 0o404))).to.throw(AuditKeySetupError, /open to other users \(mode 0404\): .*chmod o-rwx/);
  });

  it('refuses a key file inside DATA_DIR, also through a symbolic link from outside; and files that are not an Ed25519 PEM key', () => {
    expect(check(writeKeyFile(path.join(dataDir, 'keys'), 'audit.pem'))).to.throw(AuditKeySetupError, /is inside DATA_DIR .*move it out/);
    const inside = writeKeyFile(dataDir, 'hidden.pem');
    const link = path.join(keysDir, 'link.pem');
    fs.mkdirSync(keysDir, { recursive: true });
    fs.symlinkSync(inside, link);
    expect(check(link)).to.throw(AuditKeySetupError, /inside DATA_DIR/);
    expect(check(path.join(keysDir, 'missing.pem'))).to.throw(AuditKeySetupError, /no such file/);
    const notKey = path.join(keysDir, 'not-a-key.pem');
    fs.writeFileSync(notKey, 'hello', { mode: 0o400 });
    expect(check(notKey)).to.throw(AuditKeySetupError, /not a PEM private key.*openssl genpkey -algorithm ed25519/);
  });
});

describe('audit key ring: a key file with its chain, the key store\'s key moved to retirement, rotation reaching a running process', () => {
  let clock: ManualClock;
  let dataDir: string;
  let keysDir: string;
  let keyStore: SqliteKeyStore;
  beforeEach(() => {
    clock = new ManualClock('2026-12-01T10:00:00.000Z');
    dataDir = path.join(tempDir(), 'data');
    keysDir = path.join(tempDir(), 'keys');
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    keyStore = SqliteKeyStore.open(path.join(dataDir, 'keys.sqlite'));
  });
  afterEach(() => keyStore.close());

  it('the first opening creates the chain: the key store\'s key first (it signed before; retired from now) announcing the key file\'s key', async () => {
    const fallback = await openKeyStoreAuditKeyRing(keyStore, clock);
    const anchorKey = fallback.current();
    clock.advance(60_000);
    const config = keyFileConfig(dataDir, writeKeyFile(keysDir, 'audit.pem'), path.join(keysDir, 'chain.ndjson'));
    const ring = await openAuditKeyRing(config, keyStore, clock);
    try {
      const keys = ring.publicKeys();
      expect(keys.map((k) => k.keyId)).to.deep.equal([anchorKey.keyId, ring.current().keyId]);
      expect(keys[0]).to.include({ validUntil: '2026-12-01T10:01:00.000Z' });
      expect(keys[1]).to.include({ validFrom: '2026-12-01T10:01:00.000Z', validUntil: null });
      expect(ring.kind).to.equal('key-file');
      // The file is the chain: read back by another opening, unchanged.
      const again = await openAuditKeyRing(config, keyStore, clock);
      expect(again.chain().announcements()).to.deep.equal(ring.chain().announcements());
      await again.close();
    } finally {
      await ring.close();
    }
  });

  it('refuses to open on a key the chain does not list (naming rotate-key) or has retired; signs with the successor once its validity begins', async () => {
    const chainFile = path.join(keysDir, 'chain.ndjson');
    const first = writeKeyFile(keysDir, 'first.pem');
    const second = writeKeyFile(keysDir, 'second.pem');
    const firstPem = fs.readFileSync(first);
    const running = await openAuditKeyRing(keyFileConfig(dataDir, first, chainFile), keyStore, clock);
    const signer = new AuditSigner(running, clock);
    try {
      const before = await signer.sign(({ signedAt }) => ({ signedAt }));
      await openAuditKeyRing(keyFileConfig(dataDir, second, chainFile), keyStore, clock).then(
        () => expect.fail('an unannounced key was accepted'),
        (error: Error) => expect(error).to.be.instanceOf(AuditKeySetupError).and.have.property('message').that.matches(/does not list .*annals audit rotate-key.*--previous-key-file/),
      );

      clock.advance(1000);
      const rotated = await rotateAuditKey({ config: keyFileConfig(dataDir, second, chainFile), keyStore, clock, previousKeyFile: first });
      expect(rotated).to.include({ outcome: 'rotated', validFrom: '2026-12-01T10:00:03.000Z' });
      // During the notice the running process still signs with the first key, valid until then.
      const during = await signer.sign(({ signedAt }) => ({ signedAt }));
      expect(during.keyId).to.equal(before.keyId);
      clock.advance(2000);
      // From then on its key file holds a retired key: it refuses to sign rather than sign with it.
      await signer.sign(({ signedAt }) => ({ signedAt })).then(
        () => expect.fail('signed with a retired key'),
        (error: Error) => expect(error).to.be.instanceOf(AuditKeyRetiredError).and.have.property('message').that.matches(/retired at 2026-12-01T10:00:03.000Z/),
      );
      // The operator moves the new key over the configured path: the running process takes it up.
      fs.copyFileSync(second, `${first}.new`);
      fs.renameSync(`${first}.new`, first);
      const after = await signer.sign(({ signedAt }) => ({ signedAt }));
      expect(after.keyId).to.equal(rotated.keyId);
      const keys = running.publicKeys();
      for (const jws of [before.jws, during.jws, after.jws]) expect(verifyAuditJws(jws, keys, (p) => p['signedAt']).key.keyId).to.be.oneOf([before.keyId, after.keyId]);

      // The first key in a file of its own: retired, refused; the second in another file: the current key.
      await openAuditKeyRing(keyFileConfig(dataDir, keyFileWith(keysDir, 'old.pem', firstPem), chainFile), keyStore, clock).then(
        () => expect.fail('opened on a retired key'),
        (error: Error) => expect(error).to.be.instanceOf(AuditKeySetupError).and.have.property('message').that.matches(/retired at 2026-12-01T10:00:03.000Z when key .* took over: configure the current key/),
      );
      const elsewhere = await openAuditKeyRing(keyFileConfig(dataDir, keyFileWith(keysDir, 'copy.pem', fs.readFileSync(second)), chainFile), keyStore, clock);
      expect(elsewhere.current().keyId).to.equal(rotated.keyId);
      await elsewhere.close();
    } finally {
      await running.close();
    }
  });

  it('a host without the chain file takes the one the log records (another host began it), not a chain of its own; the key store\'s key never signs again once the log records a move away from it', async () => {
    const store = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
    const log = new EventLog(store, new EventCatalog([...auditEvents]), clock);
    try {
      const key = writeKeyFile(keysDir, 'shared.pem');
      const first = await openAuditKeyRing(keyFileConfig(dataDir, key, path.join(keysDir, 'host-a.ndjson')), keyStore, clock, { events: store });
      expect(await recordKeyAnnouncements(log, first.chain())).to.equal(1);
      expect(await recordKeyAnnouncements(log, first.chain()), 'recorded once').to.equal(0);
      await first.close();
      clock.advance(3_600_000);
      const second = await openAuditKeyRing(keyFileConfig(dataDir, key, path.join(keysDir, 'host-b.ndjson')), keyStore, clock, { events: store });
      expect(fs.readFileSync(path.join(keysDir, 'host-b.ndjson'), 'utf8')).to.equal(fs.readFileSync(path.join(keysDir, 'host-a.ndjson'), 'utf8'));
      expect(second.publicKeys()[0]).to.include({ validFrom: '2026-12-01T10:00:00.000Z' });
      await second.close();
      // Back to the key store's key (the settings lost) once the log records a move away from it: refused.
      clock.advance(1000);
      await rotateAuditKey({ config: keyFileConfig(dataDir, writeKeyFile(keysDir, 'next.pem'), path.join(keysDir, 'host-b.ndjson')), keyStore, clock, previousKeyFile: key, events: store });
      expect(await recordKeyAnnouncements(log, KeyChain.verify(fs.readFileSync(path.join(keysDir, 'host-b.ndjson'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))))).to.equal(1);
      await openAuditKeyRing({ dataDir, audit: { key: { kind: 'key-store' }, origin: undefined } }, keyStore, clock, { events: store }).then(
        () => expect.fail('signed with the key store\'s key after a move away from it'),
        (error: Error) => expect(error).to.be.instanceOf(AuditKeySetupError).and.have.property('message').that.matches(/the log records that the audit key moved out of the key store .*configure that key again/),
      );
      // A key the record does not list begins a chain of its own.
      const other = await openAuditKeyRing(keyFileConfig(dataDir, writeKeyFile(keysDir, 'other.pem'), path.join(keysDir, 'host-c.ndjson')), keyStore, clock, { events: store });
      expect(other.publicKeys()).to.have.length(1);
      expect(other.publicKeys()[0]).to.include({ validFrom: '2026-12-01T11:00:01.000Z' });
      await other.close();
    } finally {
      await store.close();
    }
  });

  it('a chain file changed behind the ring\'s back (a line removed) stops every signature, loudly', async () => {
    const chainFile = path.join(keysDir, 'chain.ndjson');
    const first = writeKeyFile(keysDir, 'first.pem');
    const ring = await openAuditKeyRing(keyFileConfig(dataDir, first, chainFile), keyStore, clock);
    try {
      clock.advance(1000);
      await rotateAuditKey({ config: keyFileConfig(dataDir, writeKeyFile(keysDir, 'second.pem'), chainFile), keyStore, clock, previousKeyFile: first });
      const lines = fs.readFileSync(chainFile, 'utf8').split('\n');
      fs.writeFileSync(chainFile, `${lines.slice(1).join('\n')}`);
      await Promise.resolve()
        .then(() => ring.current().sign(Buffer.from('m')))
        .then(
        () => expect.fail('signed on a broken chain'),
        (error: Error) => expect(error).to.be.instanceOf(KeyChainError).and.have.property('message').that.matches(/chain\.ndjson: key announcement 1/),
      );
    } finally {
      await ring.close();
    }
  });
});

function keyFileWith(dir: string, name: string, pem: Buffer): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, pem, { mode: 0o400 });
  return file;
}

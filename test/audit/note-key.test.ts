import { createPrivateKey } from 'node:crypto';
import { expect } from 'chai';
import { isNoteKeyName, noteKeyHash, noteVerifierKey } from '../../src/audit/note-key.ts';
import { rawPublicKeyOf } from '../../src/audit/ed25519.ts';

/**
 * The signed-note verifier key of an audit key, against the known vector of golang.org/x/mod/sumdb/note
 * (its package example: the key named PeterNeumann): the Go implementation derives this vkey from this
 * private key, so `annals audit public-key` prints what a Go note verifier and a C2SP witness read.
 */
describe('audit keys in C2SP signed-note form', () => {
  // PRIVATE+KEY+PeterNeumann+c74f20a3+<base64 of 0x01 || Ed25519 seed>, from the note package's example.
  const skeyData = 'AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';
  const seed = Buffer.from(skeyData, 'base64').subarray(1);
  const privateKey = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
  const publicKey = rawPublicKeyOf(privateKey);

  it('derives the verifier key golang.org/x/mod/sumdb/note derives: name, 4-byte key hash, 0x01 and the key in base64', () => {
    expect(noteVerifierKey('PeterNeumann', publicKey)).to.equal('PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW');
    expect(noteKeyHash('PeterNeumann', publicKey)).to.equal(0xc74f20a3);
  });

  it('the key hash depends on the name (the log\'s origin), so each log names its keys apart', () => {
    expect(noteVerifierKey('annals/abc', publicKey).split('+')[1]).to.not.equal('c74f20a3');
    expect(noteVerifierKey('cms.example.com/annals', publicKey)).to.match(/^cms\.example\.com\/annals\+[0-9a-f]{8}\+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq\/LDE4izWy10TW$/);
  });

  it('refuses names a note cannot carry: empty, with a space or a "+"', () => {
    for (const name of ['', 'a b', 'a+b', 'a\tb', 'a\u00a0b']) {
      expect(isNoteKeyName(name), JSON.stringify(name)).to.equal(false);
      expect(() => noteVerifierKey(name, publicKey)).to.throw(TypeError);
    }
    expect(isNoteKeyName('annals/AbC-_09')).to.equal(true);
  });
});

import { createHash, createPrivateKey, createPublicKey, sign } from 'node:crypto';
import { expect } from 'chai';
import { checkpointBody, parseCheckpointBody, parseNote, parseVerifierKey, signNote, verifiedSigners, verifierKey, verifyCosignature, SignedNoteError, type NoteSigner } from '../../src/audit/signed-note.ts';

/** An Ed25519 key from its 32-byte seed, as a note signer. */
function signerFromSeed(name: string, seed: Buffer): NoteSigner & { privateKey: ReturnType<typeof createPrivateKey> } {
  const privateKey = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
  const publicKey = new Uint8Array(createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(12));
  return { name, publicKey, privateKey, sign: async (message) => new Uint8Array(sign(null, message, privateKey)) };
}

describe('audit: C2SP signed notes and checkpoints', () => {
  // The example of golang.org/x/mod/sumdb/note's documentation: its keys and its signed note.
  const skey = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';
  const vkey = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
  const text = 'If you think cryptography is the answer to your problem,\nthen you don\'t know what your problem is.\n';
  const signed = `${text}\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`;
  const peter = signerFromSeed('PeterNeumann', Buffer.from(skey.split('+').slice(4).join('+'), 'base64').subarray(1));

  it('derives the key hash and vkey the Go note package does, and signs its example note byte for byte', async () => {
    expect(verifierKey('PeterNeumann', peter.publicKey)).to.equal(vkey);
    expect(parseVerifierKey(vkey)).to.include({ name: 'PeterNeumann', keyHash: 0xc74f20a3, algorithm: 1 });
    expect(await signNote(text, [peter])).to.equal(signed);
    expect(verifiedSigners(signed, [peter])).to.deep.equal(['PeterNeumann']);
  });

  it('refuses an edited note, a note signed by another key under the same name, and malformed vkeys and notes', async () => {
    expect(verifiedSigners(signed.replace('answer', 'question'), [peter])).to.deep.equal([]);
    const impostor = signerFromSeed('PeterNeumann', Buffer.alloc(32, 7));
    expect(verifiedSigners(await signNote(text, [impostor]), [peter])).to.deep.equal([]);
    expect(() => parseVerifierKey(vkey.replace('c74f20a3', 'c74f20a4'))).to.throw(SignedNoteError);
    expect(() => parseNote(text)).to.throw(SignedNoteError);
    expect(() => verifierKey('has space', peter.publicKey)).to.throw(SignedNoteError);
  });

  it('writes and reads tlog-checkpoint bodies: origin, size, base64 root, extension lines', () => {
    const checkpoint = { origin: 'example.com/log', size: 12345, rootHash: new Uint8Array(32).fill(9), extensions: ['timestamp 1700000000'] };
    const body = checkpointBody(checkpoint);
    expect(body).to.equal(`example.com/log\n12345\n${Buffer.alloc(32, 9).toString('base64')}\ntimestamp 1700000000\n`);
    expect(parseCheckpointBody(body)).to.deep.equal(checkpoint);
    expect(() => parseCheckpointBody('example.com/log\n012\nAAAA\n')).to.throw(SignedNoteError);
  });

  it('verifies a witness cosignature/v1 over the checkpoint body, and refuses it over another body or time', () => {
    const witness = signerFromSeed('witness.example', Buffer.alloc(32, 3));
    const witnessVkey = verifierKey('witness.example', witness.publicKey);
    const body = checkpointBody({ origin: 'example.com/log', size: 3, rootHash: new Uint8Array(32).fill(1), extensions: [] });
    const time = 1_760_000_000n;
    const message = Buffer.from(`cosignature/v1\ntime ${time}\n${body}`);
    const timeBytes = Buffer.alloc(8);
    timeBytes.writeBigUInt64BE(time);
    // The cosignature key hash: the key under algorithm 0x04.
    const keyHash = parseVerifierKey(`witness.example+00000000+${Buffer.concat([Buffer.from([4]), witness.publicKey]).toString('base64')}`.replace('00000000', cosignatureKeyHash('witness.example', witness.publicKey)));
    const hash = Buffer.alloc(4);
    hash.writeUInt32BE(keyHash.keyHash);
    const line = `\u2014 witness.example ${Buffer.concat([hash, timeBytes, sign(null, message, witness.privateKey)]).toString('base64')}`;
    expect(verifyCosignature(body, line, witnessVkey)).to.deep.equal({ time: Number(time) });
    expect(verifyCosignature(body.replace('\n3\n', '\n4\n'), line, witnessVkey)).to.equal(null);
  });
});

function cosignatureKeyHash(name: string, publicKey: Uint8Array): string {
  return createHash('sha256').update(name).update('\n').update(Buffer.from([4])).update(publicKey).digest().subarray(0, 4).toString('hex');
}

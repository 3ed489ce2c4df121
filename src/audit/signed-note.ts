/**
 * C2SP signed notes (https://c2sp.org/signed-note) and the checkpoints they carry (https://c2sp.org/tlog-checkpoint),
 * with the witness cosignatures of https://c2sp.org/tlog-cosignature. Pure, apart from the signer it is given.
 *
 *   <origin>\n<tree size>\n<base64 root hash>\n[<extension line>\n ...]
 *   \n
 *   — <key name> <base64(4-byte key hash || 64-byte Ed25519 signature)>\n     one per signature
 *
 * - The key hash is the first 4 bytes of SHA-256(key name || "\n" || 0x01 || Ed25519 public key); a verifier key
 *   (vkey) is `<name>+<8 hex digits of the key hash>+<base64(0x01 || public key)>`, what a witness or the Go note
 *   package is configured with.
 * - A witness cosignature (cosignature/v1, algorithm 0x04) signs "cosignature/v1\ntime <unix seconds>\n" followed
 *   by the checkpoint's body; its signature is key hash || 8-byte big-endian time || Ed25519 signature, and its key
 *   hash is computed with 0x04 in place of 0x01. A witness's Ed25519 vkey (type 0x01 or 0x04) names it.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';

const SIGNATURE_PREFIX = '\u2014 ';
const ALG_ED25519 = 0x01;
const ALG_COSIGNATURE_V1 = 0x04;

/** A key signs a note: its name, raw Ed25519 public key, and raw signatures. */
export interface NoteSigner {
  name: string;
  publicKey: Uint8Array;
  sign(message: Uint8Array): Promise<Uint8Array>;
}

export interface NoteSignature {
  name: string;
  keyHash: number;
  /** The signature's bytes after the key hash. */
  signature: Uint8Array;
  /** The line as it is in the note, without its newline. */
  line: string;
}

export interface Checkpoint {
  origin: string;
  size: number;
  rootHash: Uint8Array;
  extensions: string[];
}

export class SignedNoteError extends Error {
  override name = 'SignedNoteError';
}

/** Whether a key name is one a note may carry: not empty, no whitespace, no '+'. */
export function isValidKeyName(name: string): boolean {
  return name.length > 0 && name.length <= 255 && !/[\s+]/u.test(name);
}

function keyHashOf(name: string, algorithm: number, publicKey: Uint8Array): number {
  return createHash('sha256').update(name).update('\n').update(new Uint8Array([algorithm])).update(publicKey).digest().readUInt32BE(0);
}

/** The signed-note key hash of an Ed25519 key under `name`. */
export function noteKeyHash(name: string, publicKey: Uint8Array): number {
  return keyHashOf(name, ALG_ED25519, publicKey);
}

/** The verifier key (vkey) of an Ed25519 key under `name`: `<name>+<hex key hash>+<base64(0x01 || key)>`. */
export function verifierKey(name: string, publicKey: Uint8Array): string {
  if (!isValidKeyName(name)) throw new SignedNoteError(`a key name must be non-empty, without spaces or "+": ${JSON.stringify(name)}`);
  const hash = noteKeyHash(name, publicKey).toString(16).padStart(8, '0');
  return `${name}+${hash}+${Buffer.concat([Buffer.from([ALG_ED25519]), publicKey]).toString('base64')}`;
}

export interface VerifierKey {
  name: string;
  keyHash: number;
  algorithm: number;
  publicKey: Uint8Array;
}

/** Parses a vkey (Ed25519, type 0x01 or a cosignature/v1 key 0x04), checking its key hash. */
export function parseVerifierKey(vkey: string): VerifierKey {
  // The key's base64 may hold "+" too: the name and the hash are the first two parts.
  const [name = '', hash = '', ...key64] = vkey.trim().split('+');
  const parts = [name, hash, key64.join('+')];
  if (key64.length === 0 || !isValidKeyName(parts[0]!) || !/^[0-9a-f]{8}$/.test(parts[1]!)) throw new SignedNoteError(`not a verifier key (name+hash+key): ${JSON.stringify(vkey)}`);
  const key = Buffer.from(parts[2]!, 'base64');
  if (key.length !== 33 || (key[0] !== ALG_ED25519 && key[0] !== ALG_COSIGNATURE_V1)) throw new SignedNoteError(`verifier key ${parts[0]}: not an Ed25519 key`);
  const publicKey = new Uint8Array(key.subarray(1));
  const keyHash = Number.parseInt(parts[1]!, 16);
  if (keyHash !== keyHashOf(parts[0]!, key[0]!, publicKey)) throw new SignedNoteError(`verifier key ${parts[0]}: its key hash does not match its key`);
  return { name: parts[0]!, keyHash, algorithm: key[0]!, publicKey };
}

/** The checkpoint's note body (every line ends with "\n"). */
export function checkpointBody(checkpoint: Checkpoint): string {
  if (checkpoint.origin.length === 0 || /[\n]/.test(checkpoint.origin)) throw new SignedNoteError('a checkpoint\'s origin is one non-empty line');
  for (const line of checkpoint.extensions) if (line.length === 0 || line.includes('\n')) throw new SignedNoteError('an extension is one non-empty line');
  return `${checkpoint.origin}\n${checkpoint.size}\n${Buffer.from(checkpoint.rootHash).toString('base64')}\n${checkpoint.extensions.map((line) => `${line}\n`).join('')}`;
}

/** Parses a checkpoint body (the note's text before its signatures). */
export function parseCheckpointBody(body: string): Checkpoint {
  if (!body.endsWith('\n')) throw new SignedNoteError('a checkpoint body ends with a newline');
  const lines = body.slice(0, -1).split('\n');
  if (lines.length < 3) throw new SignedNoteError('a checkpoint has an origin, a size and a root hash');
  const [origin, sizeText, rootText, ...extensions] = lines as [string, string, string, ...string[]];
  if (!/^(0|[1-9][0-9]*)$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText))) throw new SignedNoteError(`a checkpoint's size is a decimal number, not ${JSON.stringify(sizeText)}`);
  const rootHash = Buffer.from(rootText, 'base64');
  if (rootHash.length !== 32 || rootHash.toString('base64') !== rootText) throw new SignedNoteError('a checkpoint\'s root hash is 32 bytes in base64');
  if (origin.length === 0 || extensions.some((line) => line.length === 0)) throw new SignedNoteError('a checkpoint has no empty line before its signatures');
  return { origin, size: Number(sizeText), rootHash: new Uint8Array(rootHash), extensions };
}

/** Signs a body with each signer, in order: the note's text. */
export async function signNote(body: string, signers: readonly NoteSigner[]): Promise<string> {
  if (!body.endsWith('\n') || body.includes('\n\n')) throw new SignedNoteError('a note body is non-empty lines, each ending with a newline');
  const message = Buffer.from(body, 'utf8');
  const lines: string[] = [];
  for (const signer of signers) {
    const signature = await signer.sign(message);
    const hash = Buffer.alloc(4);
    hash.writeUInt32BE(noteKeyHash(signer.name, signer.publicKey));
    lines.push(`${SIGNATURE_PREFIX}${signer.name} ${Buffer.concat([hash, signature]).toString('base64')}\n`);
  }
  return `${body}\n${lines.join('')}`;
}

/** Splits a note into its body and signature lines (not verified). */
export function parseNote(text: string): { body: string; signatures: NoteSignature[] } {
  const split = text.lastIndexOf('\n\n');
  if (split < 0 || !text.endsWith('\n')) throw new SignedNoteError('not a signed note: no empty line before the signatures');
  const body = text.slice(0, split + 1);
  const signatures = text
    .slice(split + 2, -1)
    .split('\n')
    .map((line): NoteSignature => {
      if (!line.startsWith(SIGNATURE_PREFIX)) throw new SignedNoteError(`not a signature line: ${JSON.stringify(line)}`);
      const [name, encoded, extra] = line.slice(SIGNATURE_PREFIX.length).split(' ');
      const bytes = Buffer.from(encoded ?? '', 'base64');
      if (!name || !isValidKeyName(name) || extra !== undefined || bytes.length < 5 || bytes.toString('base64') !== encoded) throw new SignedNoteError(`a malformed signature line: ${JSON.stringify(line)}`);
      return { name, keyHash: bytes.readUInt32BE(0), signature: new Uint8Array(bytes.subarray(4)), line };
    });
  if (signatures.length === 0) throw new SignedNoteError('a signed note has at least one signature');
  return { body, signatures };
}

function ed25519Verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== 64) return false;
  const key = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), publicKey]), format: 'der', type: 'spki' });
  return verify(null, message, key, signature);
}

/** The names of `keys` (name and Ed25519 public key) whose signatures on the note verify. */
export function verifiedSigners(text: string, keys: ReadonlyArray<{ name: string; publicKey: Uint8Array }>): string[] {
  const { body, signatures } = parseNote(text);
  const message = Buffer.from(body, 'utf8');
  const found: string[] = [];
  for (const key of keys) {
    const hash = noteKeyHash(key.name, key.publicKey);
    if (signatures.some((s) => s.name === key.name && s.keyHash === hash && ed25519Verify(key.publicKey, message, s.signature))) found.push(key.name);
  }
  return found;
}

/** A witness's cosignature on a checkpoint body: its time, when it verifies with the witness's vkey. */
export function verifyCosignature(body: string, signatureLine: string, witnessVkey: string): { time: number } | null {
  const key = parseVerifierKey(witnessVkey);
  const [signature] = parseNote(`${body}\n${signatureLine.endsWith('\n') ? signatureLine : `${signatureLine}\n`}`).signatures;
  if (!signature || signature.name !== key.name) return null;
  if (signature.keyHash !== keyHashOf(key.name, ALG_COSIGNATURE_V1, key.publicKey) || signature.signature.length !== 8 + 64) return null;
  const time = Buffer.from(signature.signature).readBigUInt64BE(0);
  const message = Buffer.from(`cosignature/v1\ntime ${time}\n${body}`, 'utf8');
  return ed25519Verify(key.publicKey, message, signature.signature.subarray(8)) ? { time: Number(time) } : null;
}

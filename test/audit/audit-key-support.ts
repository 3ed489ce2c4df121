import type { AuditKeyRingConfig } from '../../src/audit/open-audit-key-ring.ts';
import fs from 'node:fs';
import path from 'node:path';
import { createHash, sign } from 'node:crypto';
import type { AuditSigningKey } from '../../src/audit/audit-keys.ts';
import { jwkOf, keyIdOf, newEd25519PrivateKey, rawPublicKeyOf } from '../../src/audit/ed25519.ts';
import { signCompactJws } from '../../src/audit/audit-signer.ts';
import { leafText } from '../../src/audit/log-leaf.ts';
import { inclusionRanges, leafHash, rootOfLeaves } from '../../src/audit/merkle-tree.ts';
import { checkpointBody, signNote } from '../../src/audit/signed-note.ts';
import { tempDir } from '../support/temp-dir.ts';

/** One line of an audit export. */
export type Line = Record<string, unknown> & { kind: string };

/** A new Ed25519 key as PKCS#8 PEM, as `openssl genpkey -algorithm ed25519` writes it, with the given mode. */
export function writeKeyFile(dir: string, name: string, mode = 0o400): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  const privateKey = newEd25519PrivateKey();
  fs.writeFileSync(file, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
  fs.chmodSync(file, mode);
  return file;
}

/** An in-memory signing key (a key an insider made, or a test's). */
export function memoryKey(): AuditSigningKey & { pem: string } {
  const privateKey = newEd25519PrivateKey();
  const publicKey = rawPublicKeyOf(privateKey);
  return {
    keyId: keyIdOf(publicKey),
    publicKey,
    sign: async (message) => new Uint8Array(sign(null, message, privateKey)),
    pem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  };
}

/** The audit part of a configuration with a key file and its chain file. */
export function keyFileConfig(dataDir: string, file: string, chainFile: string): AuditKeyRingConfig {
  return { dataDir, audit: { key: { kind: 'key-file', file, chainFile }, origin: undefined } };
}

/** The environment that configures a key file for the service and the CLI. */
export function keyFileEnv(file: string, chainFile: string): Record<string, string> {
  return { AUDIT_KEY_FILE: file, AUDIT_KEY_CHAIN_FILE: chainFile };
}

/** An export's lines, parsed. */
export function readLines(file: string): Line[] {
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Line);
}

/** Lines written as an export file of their own (what an insider hands over). */
export function writeLines(lines: Line[]): string {
  const file = path.join(tempDir(), 'forged.ndjson');
  fs.writeFileSync(file, lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
  return file;
}

/**
 * An export signed anew, as whoever holds `key` would: the header naming the key and carrying `keyChain` (none
 * when null), the end line's counts, digest and signature made again (`lines` without their end line).
 */
export async function resign(lines: Line[], key: AuditSigningKey, keyChain: unknown[] | null, signedAt = new Date().toISOString()): Promise<Line[]> {
  const { keyChain: _chain, ...own } = lines[0]!;
  const header: Line = { ...own, keyId: key.keyId, publicKey: jwkOf(key.publicKey), ...(keyChain ? { keyChain } : {}) };
  const body = [header, ...lines.slice(1)];
  const digest = `sha256:${createHash('sha256').update(body.map((l) => `${JSON.stringify(l)}\n`).join('')).digest('hex')}`;
  const counts = { events: body.filter((l) => l.kind === 'event').length, ...(header['version'] === 2 ? { actorEvents: body.filter((l) => l.kind === 'actor').length } : {}), streams: body.filter((l) => l.kind === 'stream').length };
  const selection = header['version'] === 2 ? { selection: header['selection'], through: (header['log'] as { through: unknown }).through } : {};
  const signed = { format: header['format'], version: header['version'], projectId: header['projectId'], ...selection, from: header['from'], to: header['to'], exportedAt: header['exportedAt'], ...counts, digest, keyId: key.keyId, signedAt };
  return [...body, { kind: 'end', ...counts, digest, signature: await signCompactJws(key, signed) }];
}

/**
 * The lines re-proved as a forger who builds a Merkle tree of their own over them would: each event and actor
 * line a leaf (hashed as it now reads; one the service redacted keeps its leaf's hash), in order, with its
 * inclusion proof, under a checkpoint of that tree signed by `key` as the log `origin`.
 */
export async function reprove(lines: Line[], key: AuditSigningKey, origin: string): Promise<Line[]> {
  const proved = lines.filter((l) => l.kind === 'event' || l.kind === 'actor');
  const given = (l: Line) => (l['redacted'] ? (l['proof'] as { leafHash?: string } | undefined)?.leafHash : undefined);
  const leaves = proved.map((l) => (given(l) ? new Uint8Array(Buffer.from(given(l)!, 'base64')) : leafHash(leafText(l as never))));
  const b64 = (h: Uint8Array) => Buffer.from(h).toString('base64');
  const proofs = new Map(proved.map((l, i) => [l, { leafIndex: i, hashes: inclusionRanges(leaves.length, i).map(({ lo, hi }) => b64(rootOfLeaves(leaves.slice(lo, hi)))), ...(l['redacted'] ? { leafHash: b64(leaves[i]!) } : {}) }]));
  const rootHash = rootOfLeaves(leaves);
  const note = await signNote(checkpointBody({ origin, size: leaves.length, rootHash, extensions: [] }), [{ name: origin, publicKey: key.publicKey, sign: (message) => key.sign(message) }]);
  const header = lines[0]!;
  const log = header['log'] as Record<string, unknown>;
  return [{ ...header, log: { ...log, checkpoint: { size: leaves.length, rootHash: b64(rootHash), note, signedAt: header['exportedAt'] } } }, ...lines.slice(1).map((l) => (proofs.has(l) ? { ...l, proof: proofs.get(l) } : l))];
}

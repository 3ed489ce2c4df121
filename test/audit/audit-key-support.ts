import type { AuditKeyRingConfig } from '../../src/audit/open-audit-key-ring.ts';
import fs from 'node:fs';
import path from 'node:path';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import type { Config } from '../../src/config/config.ts';
import type { AuditSigningKey } from '../../src/audit/audit-keys.ts';
import { jwkOf, keyIdOf, rawPublicKeyOf } from '../../src/audit/ed25519.ts';
import { signCompactJws } from '../../src/audit/audit-signer.ts';
import { tempDir } from '../support/temp-dir.ts';

/** One line of an audit export. */
export type Line = Record<string, unknown> & { kind: string };

/** A new Ed25519 key as PKCS#8 PEM, as `openssl genpkey -algorithm ed25519` writes it, with the given mode. */
export function writeKeyFile(dir: string, name: string, mode = 0o400): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  const { privateKey } = generateKeyPairSync('ed25519');
  fs.writeFileSync(file, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
  fs.chmodSync(file, mode);
  return file;
}

/** An in-memory signing key (a key an insider made, or a test's). */
export function memoryKey(): AuditSigningKey & { pem: string } {
  const { privateKey } = generateKeyPairSync('ed25519');
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
 * An export signed anew, as whoever holds `key` would: the header naming the key and carrying `keyChain`, the
 * end line's counts, digest and signature made again (`lines` without their end line).
 */
export async function resign(lines: Line[], key: AuditSigningKey, keyChain: unknown[], signedAt = new Date().toISOString()): Promise<Line[]> {
  const header: Line = { ...lines[0]!, keyId: key.keyId, publicKey: jwkOf(key.publicKey), keyChain };
  const body = [header, ...lines.slice(1)];
  const digest = `sha256:${createHash('sha256').update(body.map((l) => `${JSON.stringify(l)}\n`).join('')).digest('hex')}`;
  const events = body.filter((l) => l.kind === 'event').length;
  const streams = body.filter((l) => l.kind === 'stream').length;
  const signed = { format: header['format'], version: header['version'], projectId: header['projectId'], from: header['from'], to: header['to'], exportedAt: header['exportedAt'], events, streams, digest, keyId: key.keyId, signedAt };
  return [...body, { kind: 'end', events, streams, digest, signature: await signCompactJws(key, signed) }];
}
